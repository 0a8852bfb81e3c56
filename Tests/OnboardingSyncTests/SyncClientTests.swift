import Foundation
import Synchronization
import Testing
import OnboardingModel
@testable import OnboardingStore

@Suite struct SyncClientTests {
    @Test func fullSyncUploadsEverythingInBoundedBatchesAndStoresTheCursorBeforeReporting() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SyncFixture.openStore(in: directory)
        defer { store.close() }
        try await SyncFixture.append(3000, to: store)
        let server = FakeSyncServer()
        let transport = ScriptedTransport(wrapping: InMemoryTransport { server.handle($0) })
        let client = SyncClient(store: store, transport: transport, token: SyncFixture.token, batchEvents: 250, seed: 1)
        let reports = Mutex<[(SyncProgress, UInt64)]>([])

        let summary = try await client.run { progress in
            let stored = (try? store.syncCursor()) ?? 0
            reports.withLock { $0.append((progress, stored)) }
        }

        #expect(summary.appended == 3000 && summary.duplicates == 0 && summary.batches == 12)
        #expect(summary.retries == 0 && summary.rewinds == 0 && summary.acknowledgedSeq == 3000 && !summary.wasStopped)
        #expect(server.log() == (try SyncFixture.allRecords(store)))
        #expect(try store.syncCursor() == 3000)
        let uploads = transport.requests.filter { $0.method == "POST" }
        #expect(uploads.count == 12)
        for upload in uploads {
            let records = try SyncWire.upload(from: upload.body).records
            #expect(records.count == 250)
            #expect(upload.headers["content-type"] == "application/json" && upload.bearerToken == SyncFixture.token)
        }
        let progress = reports.withLock { $0 }
        #expect(progress.map(\.0.acknowledgedSeq) == (1...12).map { UInt64($0 * 250) })
        #expect(progress.map(\.0.uploaded) == (1...12).map { $0 * 250 })
        #expect(progress.allSatisfy { $0.0.acknowledgedSeq == $0.1 && $0.0.headSeq == 3000 }, "cursor stored before progress")

        // New events later: only they are sent.
        try await SyncFixture.append(10, to: store, from: 3000)
        let again = try await client.run()
        #expect(again.appended == 10 && again.batches == 1 && again.acknowledgedSeq == 3010)
        #expect(server.log() == (try SyncFixture.allRecords(store)))
    }

    @Test func aLostLocalCursorResumesFromTheServersCursorWithoutResending() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SyncFixture.openStore(in: directory)
        defer { store.close() }
        try await SyncFixture.append(500, to: store)
        let server = FakeSyncServer()
        _ = try await SyncClient(store: store, transport: InMemoryTransport { server.handle($0) }, token: SyncFixture.token).run()
        try store.setSyncCursor(0)

        let transport = ScriptedTransport(wrapping: InMemoryTransport { server.handle($0) })
        let summary = try await SyncClient(store: store, transport: transport, token: SyncFixture.token).run()

        #expect(summary.appended == 0 && summary.batches == 0 && summary.acknowledgedSeq == 500)
        #expect(transport.uploads == 0)
        #expect(try store.syncCursor() == 500)
        #expect(server.log() == (try SyncFixture.allRecords(store)))
    }

    @Test func aResendAfterALostAnswerIsAnsweredAsDuplicatesAndNothingIsDoubled() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SyncFixture.openStore(in: directory)
        defer { store.close() }
        try await SyncFixture.append(300, to: store)
        let server = FakeSyncServer()
        // The server commits the first upload, then the answer is lost, as if the client crashed
        // before setSyncCursor.
        let transport = ScriptedTransport(wrapping: InMemoryTransport { server.handle($0) }) { number, _ in
            number == 2 ? .forwardThenFail : .forward
        }
        let clock = ManualClock()
        let summary = try await SyncClient(
            store: store, transport: transport, token: SyncFixture.token, batchEvents: 100,
            sleep: clock.sleep, seed: 2
        ).run()

        #expect(summary.duplicates == 100 && summary.appended == 200 && summary.retries == 1 && summary.batches == 3)
        #expect(server.log() == (try SyncFixture.allRecords(store)))
        #expect(try store.syncCursor() == 300)
        #expect(clock.waits.count == 1)
    }

    @Test func aServerThatLostDataGetsTheMissingRecordsAgain() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SyncFixture.openStore(in: directory)
        defer { store.close() }
        try await SyncFixture.append(500, to: store)
        let server = FakeSyncServer()
        _ = try await SyncClient(store: store, transport: InMemoryTransport { server.handle($0) }, token: SyncFixture.token).run()
        server.truncate(to: 100)

        let summary = try await SyncClient(store: store, transport: InMemoryTransport { server.handle($0) }, token: SyncFixture.token).run()

        #expect(summary.appended == 400 && summary.acknowledgedSeq == 500)
        #expect(server.log() == (try SyncFixture.allRecords(store)))
        #expect(try store.syncCursor() == 500)
    }

    @Test func aGapAnswerRewindsToTheExpectedSeq() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SyncFixture.openStore(in: directory)
        defer { store.close() }
        try await SyncFixture.append(400, to: store)
        let server = FakeSyncServer()
        server.setLog(Array(try SyncFixture.allRecords(store).prefix(200)))
        let cursorClaims = Mutex<[UInt64]>([])
        // The server loses records between the client's GET and its first upload.
        let transport = ScriptedTransport(wrapping: InMemoryTransport { server.handle($0) }) { number, _ in
            if number == 2 { server.truncate(to: 150) }
            cursorClaims.withLock { $0.append((try? store.syncCursor()) ?? .max) }
            return .forward
        }
        let summary = try await SyncClient(store: store, transport: transport, token: SyncFixture.token, batchEvents: 100).run()

        #expect(summary.rewinds == 1 && summary.appended == 250 && summary.acknowledgedSeq == 400)
        let posts = transport.requests.filter { $0.method == "POST" }.map { try! SyncWire.upload(from: $0.body).records.first!.seq }
        #expect(posts == [201, 151, 251, 351])
        #expect(server.log() == (try SyncFixture.allRecords(store)))
        // The durable cursor went back to what the gap said the server holds.
        #expect(cursorClaims.withLock { $0 }[2] == 150)
    }

    @Test func aDivergentServerHeadIsAForkAndNothingIsUploaded() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SyncFixture.openStore(in: directory)
        let other = try SyncFixture.openStore(in: directory, name: "other")
        defer { store.close(); other.close() }
        try await SyncFixture.append(20, to: store)
        try await SyncFixture.append(5, to: other)
        let server = FakeSyncServer()
        server.setLog(try SyncFixture.allRecords(other))
        let transport = ScriptedTransport(wrapping: InMemoryTransport { server.handle($0) })

        let error = await #expect(throws: SyncError.self) {
            try await SyncClient(store: store, transport: transport, token: SyncFixture.token).run()
        }
        #expect(error == .fork)
        #expect(error?.message.contains("diverged") == true && error?.message.contains("seq 5") == true)
        #expect(transport.uploads == 0)
        #expect(server.log() == (try SyncFixture.allRecords(other)))
    }

    @Test func aForkAnswerStopsWithoutResending() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SyncFixture.openStore(in: directory)
        let other = try SyncFixture.openStore(in: directory, name: "other")
        defer { store.close(); other.close() }
        try await SyncFixture.append(20, to: store)
        try await SyncFixture.append(15, to: other)
        let server = FakeSyncServer()
        server.setLog(try SyncFixture.allRecords(other))
        // A cursor that claims nothing is held (a stale answer), so the client sends from seq 1.
        let transport = ScriptedTransport(wrapping: InMemoryTransport { server.handle($0) }) { _, request in
            request.method == "GET"
                ? .answer(SyncResponse(status: 200, body: SyncWire.cursorBody(.init(device: SyncFixture.device, acknowledgedSeq: 0, headHash: .zero))))
                : .forward
        }
        let clock = ManualClock()
        let error = await #expect(throws: SyncError.self) {
            try await SyncClient(store: store, transport: transport, token: SyncFixture.token, sleep: clock.sleep).run()
        }
        #expect(error == .fork)
        #expect(transport.uploads == 1 && clock.waits.isEmpty)
        #expect(server.log() == (try SyncFixture.allRecords(other)))
    }

    @Test func aBrokenChainStopsWithAClearError() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SyncFixture.openStore(in: directory)
        defer { store.close() }
        try await SyncFixture.append(10, to: store)
        let server = FakeSyncServer()
        let transport = ScriptedTransport(wrapping: InMemoryTransport { server.handle($0) }) { _, request in
            guard request.method == "POST", let upload = try? SyncWire.uploadWithKeys(from: request.body) else { return .forward }
            var records = upload.records
            records[3].previousHash = records[1].hash
            var tampered = request
            tampered.body = SyncWire.uploadBody(device: SyncFixture.device, records: records, keys: upload.keys)
            return .forwardModified(tampered)
        }
        let error = await #expect(throws: SyncError.self) {
            try await SyncClient(store: store, transport: transport, token: SyncFixture.token).run()
        }
        #expect(error == .chainBroken)
        #expect(error?.message.contains("onboard verify") == true)
        #expect(transport.uploads == 1 && server.log().isEmpty)
    }

    @Test(arguments: [("wrong-token", SyncError.unauthorized), ("token-other", SyncError.forbidden)])
    func refusedCredentialsStopAtOnce(token: String, expected: SyncError) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SyncFixture.openStore(in: directory)
        defer { store.close() }
        try await SyncFixture.append(10, to: store)
        let server = FakeSyncServer(tokens: [SyncFixture.token: SyncFixture.device, "token-other": "kiosk-8"])
        let transport = ScriptedTransport(wrapping: InMemoryTransport { server.handle($0) })
        let clock = ManualClock()
        let error = await #expect(throws: SyncError.self) {
            try await SyncClient(store: store, transport: transport, token: token, sleep: clock.sleep).run()
        }
        #expect(error == expected)
        #expect(transport.requests.count == 1 && clock.waits.isEmpty && server.log().isEmpty)
    }

    @Test func retryAfterIsHonouredAndClamped() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SyncFixture.openStore(in: directory)
        defer { store.close() }
        try await SyncFixture.append(10, to: store)
        let server = FakeSyncServer()
        let transport = ScriptedTransport(wrapping: InMemoryTransport { server.handle($0) }) { number, _ in
            switch number {
            case 2: .answer(.status(429, retryAfter: 7))
            case 3: .answer(.status(503, retryAfter: 100_000))
            default: .forward
            }
        }
        let clock = ManualClock()
        let summary = try await SyncClient(store: store, transport: transport, token: SyncFixture.token, sleep: clock.sleep).run()

        #expect(clock.waits == [.seconds(7), .seconds(SyncLimits.maximumRetryAfterSeconds)])
        #expect(summary.retries == 2 && summary.appended == 10)
        #expect(server.log() == (try SyncFixture.allRecords(store)))
    }

    @Test func backOffGrowsIsBoundedAndGivesUpAfterTheAttemptLimit() async throws {
        #expect(SyncClient.backoffCap(afterFailures: 1) == .milliseconds(SyncLimits.initialBackoffMilliseconds))
        #expect(SyncClient.backoffCap(afterFailures: 2) == .milliseconds(2 * SyncLimits.initialBackoffMilliseconds))
        #expect(SyncClient.backoffCap(afterFailures: 60) == .milliseconds(SyncLimits.maximumBackoffMilliseconds))
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SyncFixture.openStore(in: directory)
        defer { store.close() }
        try await SyncFixture.append(10, to: store)
        let server = FakeSyncServer()

        var firstWaits: [Duration] = []
        var lastWaits: [Duration] = []
        for seed in UInt64(1)...32 {
            let transport = ScriptedTransport(wrapping: InMemoryTransport { server.handle($0) }) { _, _ in .fail }
            let clock = ManualClock()
            let error = await #expect(throws: SyncError.self) {
                try await SyncClient(store: store, transport: transport, token: SyncFixture.token, sleep: clock.sleep, seed: seed).run()
            }
            #expect(error == .unavailable)
            #expect(error?.message.contains("\(SyncLimits.maximumAttempts) times in a row") == true)
            #expect(transport.requests.count == SyncLimits.maximumAttempts)
            let waits = clock.waits
            #expect(waits.count == SyncLimits.maximumAttempts - 1)
            for (index, wait) in waits.enumerated() {
                #expect(wait >= .zero && wait <= SyncClient.backoffCap(afterFailures: index + 1), "seed \(seed) wait \(index + 1)")
            }
            firstWaits.append(waits.first!)
            lastWaits.append(waits.last!)
        }
        // Full jitter: single waits vary, but on average they grow with the failures.
        let total = { (waits: [Duration]) in waits.reduce(Duration.zero, +) }
        #expect(total(lastWaits) > total(firstWaits) * 8)
        #expect(server.log().isEmpty)
    }

    @Test func aFailureCountsOnlyWhileConsecutive() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SyncFixture.openStore(in: directory)
        defer { store.close() }
        try await SyncFixture.append(100, to: store)
        let server = FakeSyncServer()
        // Every upload fails maximumAttempts - 1 times before it goes through.
        let transport = ScriptedTransport(wrapping: InMemoryTransport { server.handle($0) }) { number, _ in
            number == 1 || (number - 1) % SyncLimits.maximumAttempts == 0 ? .forward : .answer(.status(503))
        }
        let summary = try await SyncClient(
            store: store, transport: transport, token: SyncFixture.token, batchEvents: 25,
            sleep: ManualClock().sleep
        ).run()
        #expect(summary.batches == 4 && summary.retries == 4 * (SyncLimits.maximumAttempts - 1))
        #expect(server.log() == (try SyncFixture.allRecords(store)))
    }

    @Test func aTooLargeAnswerHalvesTheBatch() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SyncFixture.openStore(in: directory)
        defer { store.close() }
        try await SyncFixture.append(1000, to: store)
        let server = FakeSyncServer(maximumBodyBytes: 40_000)
        let transport = ScriptedTransport(wrapping: InMemoryTransport { server.handle($0) })
        let summary = try await SyncClient(store: store, transport: transport, token: SyncFixture.token).run()

        #expect(summary.appended == 1000)
        #expect(server.log() == (try SyncFixture.allRecords(store)))
        let sizes = transport.requests.filter { $0.method == "POST" }.map { try! SyncWire.upload(from: $0.body).records.count }
        #expect(Array(sizes.prefix(4)) == [1000, 500, 250, 125])
        #expect(sizes.allSatisfy { $0 <= 1000 })
    }

    @Test func stopReturnsCleanlyAfterTheCurrentRequest() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SyncFixture.openStore(in: directory)
        defer { store.close() }
        try await SyncFixture.append(1000, to: store)
        let server = FakeSyncServer()
        // The third request (the cursor, then the second batch) waits until the test has
        // asked the run to stop.
        let gate = GateTransport(wrapping: InMemoryTransport { server.handle($0) }, holding: 3)
        let client = SyncClient(store: store, transport: gate, token: SyncFixture.token, batchEvents: 100)
        let run = Task { try await client.run() }
        #expect(await eventually { gate.isHolding })
        await client.stop()
        gate.open()
        let summary = try await run.value

        #expect(summary.wasStopped)
        #expect(summary.batches == 2, "the batch in flight finished, and no other began")
        #expect(server.log().count == summary.batches * 100)
        #expect(try store.syncCursor() == UInt64(server.log().count))
        // The next run finishes the job.
        let rest = try await client.run()
        #expect(!rest.wasStopped && rest.acknowledgedSeq == 1000)
    }
}

/// Sync of a store whose acknowledged prefix was pruned.
@Suite struct PrunedStoreSyncTests {
    static let farFuture = Timestamp(millisecondsSince1970: 4_000_000_000_000)

    @Test(arguments: ["fake"] + TestDatabase.serverBackends)
    func aPrunedStoreKeepsSyncingFromItsPrunePoint(server name: String) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let server = try ServerUnderTest.make(name, in: directory)
        defer { server.close() }
        let store = try SyncFixture.openStore(in: directory)
        defer { store.close() }
        try await SyncFixture.append(300, to: store)
        _ = try await SyncClient(store: store, transport: InMemoryTransport(handler: server.handle), token: server.token).run()

        let pruned = try store.prune(before: Self.farFuture)
        #expect(pruned.removed == 1...300)
        // The server's head is exactly the prune point: the hash the prune left stands for the record.
        let idle = try await SyncClient(store: store, transport: InMemoryTransport(handler: server.handle), token: server.token).run()
        #expect(idle.appended == 0 && idle.acknowledgedSeq == 300)

        try await SyncFixture.append(50, to: store, from: 300)
        let summary = try await SyncClient(store: store, transport: InMemoryTransport(handler: server.handle), token: server.token).run()
        #expect(summary.appended == 50 && summary.acknowledgedSeq == 350)
        #expect(server.prefixProblem(of: store) == nil)
    }

    @Test func aServerThatLostPrunedRecordsIsToldSoAndNothingIsSent() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SyncFixture.openStore(in: directory)
        defer { store.close() }
        try await SyncFixture.append(200, to: store)
        let server = FakeSyncServer()
        _ = try await SyncClient(store: store, transport: InMemoryTransport { server.handle($0) }, token: SyncFixture.token).run()
        _ = try store.prune(before: Self.farFuture)
        server.truncate(to: 120)
        let requests = server.requestCount

        let error = await #expect(throws: SyncError.self) {
            try await SyncClient(store: store, transport: InMemoryTransport { server.handle($0) }, token: SyncFixture.token).run()
        }
        #expect(error == .refused)
        #expect(error?.message.contains("only up to seq 120") == true && error?.message.contains("pruned seq 1…200") == true)
        #expect(server.requestCount == requests + 1, "only the cursor was read")
        #expect(server.log().count == 120)
    }
}
