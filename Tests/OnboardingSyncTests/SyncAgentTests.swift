import Foundation
import Synchronization
import Testing
import OnboardingModel
import OnboardingStore

@Suite struct SyncAgentTests {
    @Test func updatesReportSignInEachRunItsBatchesAndSignOut() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SyncFixture.openStore(in: directory)
        defer { store.close() }
        try await SyncFixture.append(120, to: store)
        let server = FakeSyncServer()
        let client = SyncClient(
            store: store, transport: InMemoryTransport { server.handle($0) }, token: SyncFixture.token,
            batchEvents: 50, sleep: ManualClock().sleep)
        let agent = SyncAgent(client: client, interval: .seconds(3600))
        let updates = agent.updates()
        await agent.start()
        _ = try await store.append(SyncFixture.event(120, payload: .signInSucceeded(method: .passcode, secondFactor: false)))
        #expect(await eventually { server.log().count == 121 })
        #expect(await eventually { await agent.completedRuns >= 1 }, "the run reports before sign-out")
        _ = try await store.append(SyncFixture.event(121, payload: .signedOut(reason: .user)))
        #expect(await eventually { await !agent.isSignedIn })
        await agent.shutdown()

        var seen: [SyncAgent.Update] = []
        for await update in updates { seen.append(update) } // ends with the shutdown
        #expect(seen.first == .signedIn)
        #expect(seen.last == .signedOut)
        let started = seen.firstIndex(of: .started)
        let finished = seen.firstIndex { if case .finished = $0 { return true } else { return false } }
        let batches = seen.compactMap { update -> UInt64? in
            if case .progress(let progress) = update { return progress.acknowledgedSeq } else { return nil }
        }
        #expect(started != nil && finished != nil && started! < finished!)
        #expect(batches == [50, 100, 121], "one update per acknowledged batch, in order")
        if let finished, case .finished(let summary) = seen[finished] {
            #expect(summary.appended == 121 && summary.acknowledgedSeq == 121)
        }
    }

    @Test func aFailedRunIsReportedAndTheUpdatesEndOnShutdown() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SyncFixture.openStore(in: directory)
        defer { store.close() }
        try await SyncFixture.append(3, to: store)
        let client = SyncClient(
            store: store, transport: InMemoryTransport { _ in SyncResponse.status(401) },
            token: "wrong-token", sleep: ManualClock().sleep)
        let agent = SyncAgent(client: client)
        let updates = agent.updates()
        await #expect(throws: SyncError.self) { _ = try await agent.syncNow() }
        await agent.shutdown()
        var seen: [SyncAgent.Update] = []
        for await update in updates { seen.append(update) }
        #expect(seen.first == .started)
        #expect(seen.contains { if case .failed = $0 { return true } else { return false } })
    }

    @Test func syncsOnSignInPeriodicallyWhileSignedInAndStopsOnSignOut() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SyncFixture.openStore(in: directory)
        defer { store.close() }
        let server = FakeSyncServer()
        let client = SyncClient(
            store: store, transport: InMemoryTransport { server.handle($0) }, token: SyncFixture.token,
            batchEvents: 50, sleep: ManualClock().sleep)
        // The period is the test's to end: each wait of the agent lasts until `clock.advance()`.
        let clock = StepClock()
        let agent = SyncAgent(client: client, interval: .seconds(30), sleep: clock.sleep)
        await agent.start()

        // Nothing happens before a sign-in: events that are not a sign-in give the agent no
        // signal (the observer classifies them before the append returns) and no period runs.
        try await SyncFixture.append(100, to: store)
        #expect(server.requestCount == 0 && clock.slept == 0)

        _ = try await store.append(SyncFixture.event(100, payload: .signInSucceeded(method: .passcode, secondFactor: false)))
        #expect(await eventually { server.log().count == 101 })
        #expect(await agent.isSignedIn)
        #expect(await eventually { clock.sleeping == 1 }, "signed in, the agent waits for its next period")

        // While signed in, new events reach the server at the next period, without a new sign-in.
        try await SyncFixture.append(20, to: store, from: 101)
        #expect(server.log().count == 101, "not before the period ends")
        clock.advance()
        #expect(await eventually { server.log().count == 121 })
        #expect(await eventually { clock.sleeping == 1 })

        // Signed out, the period ends (its wait is cancelled) and nothing is sent any more.
        _ = try await store.append(SyncFixture.event(121, payload: .signedOut(reason: .user)))
        #expect(await eventually { await !agent.isSignedIn })
        #expect(await eventually { clock.sleeping == 0 }, "the periodic wait was cancelled")
        let settled = server.requestCount
        try await SyncFixture.append(20, to: store, from: 122)
        clock.advance()
        #expect(server.requestCount == settled, "no request after signed_out")
        #expect(server.log().count <= 122)

        // On demand, even signed out.
        let summary = try await agent.syncNow()
        #expect(summary.acknowledgedSeq == 142)
        #expect(server.log() == (try SyncFixture.allRecords(store)))
        await agent.shutdown()
    }

    @Test func signOutDuringARunLetsTheCurrentRequestFinishAndSendsNothingAfter() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SyncFixture.openStore(in: directory)
        defer { store.close() }
        try await SyncFixture.append(1000, to: store)
        let server = FakeSyncServer()
        // The run's fourth request (the cursor, then the third batch) waits until the test has
        // signed out.
        let gate = GateTransport(wrapping: InMemoryTransport { server.handle($0) }, holding: 4)
        let transport = ScriptedTransport(wrapping: gate)
        let client = SyncClient(store: store, transport: transport, token: SyncFixture.token, batchEvents: 10)
        let clock = StepClock()
        let agent = SyncAgent(client: client, interval: .seconds(60), sleep: clock.sleep)
        await agent.start()
        _ = try await store.append(SyncFixture.event(1000, payload: .signInSucceeded(method: .passcode, secondFactor: false)))
        #expect(await eventually { gate.isHolding })
        _ = try await store.append(SyncFixture.event(1001, payload: .signedOut(reason: .user)))
        #expect(await eventually { await !agent.isSignedIn })
        gate.open()
        #expect(await eventually { await agent.completedRuns == 1 })
        // The held request finished; the run stopped after it: three whole batches.
        #expect(server.log().count == 30, "only whole batches, and the run stopped after the request in flight")
        #expect(try store.syncCursor() == 30)
        #expect(transport.requests.count == 4)
        if case .success(let summary)? = await agent.lastResult { #expect(summary.wasStopped) } else { Issue.record("the run failed") }
        // Nothing is left to send anything: no period waits, and later events give no signal.
        #expect(clock.slept == 0 && clock.sleeping == 0)
        try await SyncFixture.append(5, to: store, from: 1002)
        #expect(transport.requests.count == 4)
        await agent.shutdown()
    }
}
