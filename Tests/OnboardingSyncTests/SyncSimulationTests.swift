import Foundation
import Synchronization
import Testing
import TestSupport
import OnboardingModel
import OnboardingStore

/// VOPR-style: a seeded FaultyTransport between the client and a server; after every request the
/// server's log must be a gap-free prefix of the device's, and in the end equal to it.
@Suite(.slow) struct SyncSimulationTests {
    static let seeds = UInt64(1)...12
    static let maximumRunsPerSeed = 20

    @Test(arguments: ["fake"] + TestDatabase.serverBackends)
    func faultyNetworkNeverBreaksThePrefixAndEventuallyConverges(server kind: String) async throws {
        var logs = ""
        for seed in Self.seeds {
            logs += try await simulate(seed: seed, kind: kind)
        }
        // The seeds exercise every fault.
        for fault in ["dropped the request", "dropped the answer", "delivered again", "delayed", "holding a copy", "replayed stale"] {
            #expect(logs.contains(fault), "no seed made the transport do: \(fault)")
        }
    }

    @Test(arguments: ["fake"] + TestDatabase.serverBackends)
    func aFullSyncOfThousandsOfEvents(server kind: String) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SyncFixture.openStore(in: directory)
        defer { store.close() }
        try await SyncFixture.append(3500, to: store)
        let server = try ServerUnderTest.make(kind, in: directory)
        defer { server.close() }
        let client = SyncClient(store: store, transport: InMemoryTransport(handler: server.handle), token: server.token)

        let summary = try await client.run()
        #expect(summary.appended == 3500 && summary.batches == 4 && summary.acknowledgedSeq == 3500)
        let head = try store.head()
        #expect(server.cursor() == SyncWire.Cursor(device: SyncFixture.device, acknowledgedSeq: head.seq, headHash: head.hash))

        // Forget the local cursor and resend a batch the server holds: answered as duplicates.
        try store.setSyncCursor(0)
        let resend = SyncRequest(
            method: "POST", path: SyncPaths.events(device: SyncFixture.device),
            headers: ["authorization": "Bearer \(server.token)", "content-type": SyncWire.contentType],
            body: SyncWire.uploadBody(
                device: SyncFixture.device, records: try store.records(in: 1...10),
                keys: try store.syncKeys(for: store.records(in: 1...10))))
        let response = server.handle(resend)
        #expect(response.status == 200)
        #expect(try SyncWire.outcomes(from: response.body).allSatisfy { $0.kind == .duplicate })
        let again = try await client.run()
        #expect(again.appended == 0 && again.batches == 0 && again.acknowledgedSeq == 3500)
        #expect(try store.syncCursor() == 3500)
    }

    /// Returns the transport's log.
    private func simulate(seed: UInt64, kind: String) async throws -> String {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SyncFixture.openStore(in: directory)
        defer { store.close() }
        try await SyncFixture.append(300, to: store)
        let server = try ServerUnderTest.make(kind, in: directory)
        defer { server.close() }

        let violations = Mutex<[String]>([])
        let checked = InMemoryTransport { request in
            let response = server.handle(request)
            if let problem = server.prefixProblem(of: store) {
                violations.withLock { $0.append("after \(request.method) \(request.path) → \(response.status): \(problem)") }
            }
            return response
        }
        let clock = ManualClock()
        let faulty = FaultyTransport(
            wrapping: checked, seed: seed,
            faults: .init(dropRequest: 0.15, dropResponse: 0.15, duplicate: 0.15, delay: 0.2, reorder: 0.15),
            sleep: clock.sleep)
        let client = SyncClient(store: store, transport: faulty, token: server.token, batchEvents: 16, sleep: clock.sleep, seed: seed)

        var outcomes: [String] = []
        var converged = false
        for run in 1...Self.maximumRunsPerSeed where !converged {
            // New events arrive while syncing goes on.
            if run == 2 || run == 4 { try await SyncFixture.append(7, to: store, from: 300 + run * 10) }
            let localHead = try store.head().seq
            do throws(SyncError) {
                let summary = try await client.run()
                outcomes.append("run \(run): \(summary)")
                converged = run >= 4 && summary.acknowledgedSeq == localHead
            } catch {
                outcomes.append("run \(run): \(error)")
                if error != .unavailable { break }
            }
        }
        try await faulty.replayHeld()

        let head = try store.head()
        let cursor = server.cursor()
        let log = await faulty.log.joined(separator: "\n")
        let story = "seed \(seed) on the \(kind) server (replay with this seed)\n\(outcomes.joined(separator: "\n"))\n\(log)"
        #expect(converged, "\(story)")
        #expect(violations.withLock { $0 }.isEmpty, "\(violations.withLock { $0 }.joined(separator: "\n"))\n\(story)")
        #expect(cursor?.acknowledgedSeq == head.seq && cursor?.headHash == head.hash, "\(story)")
        #expect(try store.syncCursor() == head.seq, "\(story)")
        return log
    }
}
