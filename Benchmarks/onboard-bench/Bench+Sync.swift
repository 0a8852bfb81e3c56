import Foundation
import HTTPServer
import OnboardingModel
import OnboardingServer
import OnboardingStore

extension Bench {
    /// A fresh reference server in its own data directory, with the bench device enrolled through
    /// the router as `onboard enroll` does over HTTP (admin token, `POST /v1/devices`), which also
    /// opens the device's replica, so neither side times that.
    struct EnrolledServer {
        let path: String
        let server: SyncServer
        let deviceToken: String
    }

    /// Sync of N events to the reference server over loopback HTTP against the same server's
    /// ingest of the same upload requests called in-process, alternating A B A B.
    ///
    /// - A: the device store holding the N bench events (filled once, untimed, `full` durability as
    ///   on a device; every round syncs it from seq 1, since each round's server is new); a fresh
    ///   server behind `SyncHTTPHandler` on `HTTPServer` at 127.0.0.1 (ephemeral
    ///   port); timed: `SyncClient.run()` over `URLSessionTransport` until the server acknowledged
    ///   the head (the cursor read, every upload, the client's durable cursor writes).
    /// - B: a fresh server; timed: `SyncServer.handle` of the same cursor request and the same
    ///   upload requests (same batches, same bodies, built untimed), no HTTP and no client.
    ///
    /// Both sides pay the server's work: JSON decoding, validation against the replica, the hash
    /// check, the durable replica append (`full`) and the global lockout. Only HTTP and the client
    /// differ.
    func measureSyncVersusLocalIngest() {
        let count = options.syncEvents
        let batchSize = SyncLimits.maximumBatchEvents
        let events = BenchEvents.make(count: count, seed: 55)
        // One device store for every round: its pseudonym key is random, so a refilled store would
        // hash differently from the one the baseline's bodies were built from.
        let devicePath = freshDirectory("sync-device")
        defer { remove(devicePath) }
        let store = filledDeviceStore(at: devicePath, events)
        defer { store.close() }
        let (bodies, expectedHead) = uploadBodies(store, batchSize: batchSize)
        var paired = Paired()

        for round in 1...options.repetitions {
            paired.subject.append(syncPass(store, eventCount: events.count, expectedHead: expectedHead, round: round))
            paired.baseline.append(localIngestPass(bodies, expectedHead: expectedHead, round: round))
        }

        let sizeNote = options.quick || count >= 1_000_000 ? "" : " (the issue asks for 10^6; fewer keep the full suite under 15 min)"
        report.add(
            BenchResult(
                name: "sync_vs_local_ingest", unit: "events/s", paired: paired,
                baseline: "server-local ingest", target: "≥ 0.5 × server-local ingest", threshold: 0.5,
                note: "\(count) events\(sizeNote), \(batchSize)/upload, loopback HTTP vs router in-process"))
    }

    /// The bodies of the uploads the client sends for `store`'s records at seqs 1…n in batches of
    /// `batchSize` (with the keys of § Keys, exactly as `SyncClient` builds them), and its head.
    func uploadBodies(_ store: OnboardingStore, batchSize: Int) -> (bodies: [[UInt8]], head: (seq: UInt64, hash: Digest)) {
        do {
            let head = try store.head()
            var bodies: [[UInt8]] = []
            for start in Swift.stride(from: UInt64(1), through: head.seq, by: batchSize) {
                let records = try store.records(in: start...min(head.seq, start + UInt64(batchSize) - 1))
                bodies.append(SyncWire.uploadBody(device: store.deviceID, records: records, keys: try store.syncKeys(for: records)))
            }
            precondition(bodies.allSatisfy { $0.count <= SyncLimits.maximumBodyBytes }, "an upload body exceeds the protocol's limit")
            return (bodies, head)
        } catch {
            fatalError("sync bench: cannot read the device log: \(error)")
        }
    }

    /// A new device store (full durability) holding `events`, appended in batches of 1,000.
    func filledDeviceStore(at path: String, _ events: [Event]) -> OnboardingStore {
        let store = openStore(at: path, relaxed: false)
        for start in Swift.stride(from: 0, to: events.count, by: 1_000) {
            do {
                _ = try store.appendBlocking(Array(events[start..<min(start + 1_000, events.count)]))
            } catch {
                fatalError("sync bench: filling the device store failed: \(error)")
            }
        }
        return store
    }

    private func enrolledServer(_ label: String) -> EnrolledServer {
        let path = freshDirectory(label)
        do {
            let server = try SyncServer(dataDirectory: path, options: Bench.serverOptions)
            guard let admin = server.createdAdminToken else { fatalError("sync bench: a fresh server made no admin token") }
            let response = server.handle(
                SyncRequest(
                    method: "POST", path: SyncPaths.devices,
                    headers: ["authorization": "Bearer \(admin)", "content-type": SyncWire.contentType],
                    body: SyncWire.enrolBody(device: BenchEvents.device)))
            guard response.status == 201 else {
                fatalError(
                    "sync bench: enrolling \(BenchEvents.device) answered \(response.status): \(SyncWire.error(from: response.body).map { "\($0)" } ?? "")")
            }
            return EnrolledServer(path: path, server: server, deviceToken: try SyncWire.token(from: response.body))
        } catch {
            fatalError("sync bench: cannot start a server in \(path): \(error)")
        }
    }

    /// The server's cursor of the bench device, asked through the router; must equal `expected`.
    private func checkServerHolds(_ enrolled: EnrolledServer, expected: (seq: UInt64, hash: Digest), side: String, round: Int) {
        let response = enrolled.server.handle(
            SyncRequest(
                method: "GET", path: SyncPaths.cursor(device: BenchEvents.device),
                headers: ["authorization": "Bearer \(enrolled.deviceToken)"]))
        guard response.status == 200, let cursor = try? SyncWire.cursor(from: response.body) else {
            fatalError("sync bench: \(side) round \(round): the server's cursor answered \(response.status)")
        }
        guard cursor.acknowledgedSeq == expected.seq, cursor.headHash == expected.hash else {
            fatalError(
                "sync bench: \(side) round \(round): the server holds seq \(cursor.acknowledgedSeq) hash \(cursor.headHash.hex), the device log ends at seq \(expected.seq) hash \(expected.hash.hex)"
            )
        }
    }

    private func shutDown(_ enrolled: EnrolledServer, http: HTTPServer? = nil) {
        enrolled.server.beginShutdown()
        http?.stop()
        enrolled.server.close()
        remove(enrolled.path)
    }

    /// A: one end-to-end sync over loopback HTTP; events per second.
    private func syncPass(_ store: OnboardingStore, eventCount: Int, expectedHead head: (seq: UInt64, hash: Digest), round: Int) -> Double {
        let enrolled = enrolledServer("sync-server")
        let http = HTTPServer(port: 0, limits: SyncHTTPHandler.limits, handler: SyncHTTPHandler(server: enrolled.server))
        do { try http.start() } catch { fatalError("sync bench: cannot start the HTTP server: \(error)") }
        defer { shutDown(enrolled, http: http) }
        let transport: HTTPTransport
        do { transport = try HTTPTransport(baseURL: URL(string: "http://127.0.0.1:\(http.port)")!) } catch { fatalError("sync bench: \(error)") }
        let client = SyncClient(store: store, transport: transport, token: enrolled.deviceToken)

        let start = now()
        let outcome = runBlocking { () async -> Result<SyncSummary, SyncError> in
            do throws(SyncError) { return .success(try await client.run()) } catch { return .failure(error) }
        }
        let elapsed = seconds(since: start)

        let summary: SyncSummary
        switch outcome {
        case .success(let value): summary = value
        case .failure(let error): fatalError("sync bench: round \(round): the sync failed: \(error)")
        }
        guard summary.acknowledgedSeq == head.seq, summary.appended == eventCount, summary.retries == 0, !summary.wasStopped else {
            fatalError(
                "sync bench: round \(round): the sync ended at seq \(summary.acknowledgedSeq) with \(summary.appended) appended, \(summary.retries) retries, stopped \(summary.wasStopped); expected seq \(head.seq), \(eventCount) appended, no retries"
            )
        }
        checkServerHolds(enrolled, expected: (head.seq, head.hash), side: "sync", round: round)
        return Double(eventCount) / elapsed
    }

    /// B: the server's ingest of the same requests through its router, in this thread; events per second.
    private func localIngestPass(_ bodies: [[UInt8]], expectedHead: (seq: UInt64, hash: Digest), round: Int) -> Double {
        let enrolled = enrolledServer("ingest-server")
        defer { shutDown(enrolled) }
        let cursorRequest = SyncRequest(
            method: "GET", path: SyncPaths.cursor(device: BenchEvents.device),
            headers: ["authorization": "Bearer \(enrolled.deviceToken)"])
        let requests = bodies.map { body in
            SyncRequest(
                method: "POST", path: SyncPaths.events(device: BenchEvents.device),
                headers: ["authorization": "Bearer \(enrolled.deviceToken)", "content-type": SyncWire.contentType],
                body: body)
        }
        var statuses: [Int] = []
        statuses.reserveCapacity(requests.count + 1)

        let start = now()
        statuses.append(enrolled.server.handle(cursorRequest).status)
        for request in requests { statuses.append(enrolled.server.handle(request).status) }
        let elapsed = seconds(since: start)

        if let index = statuses.firstIndex(where: { $0 != 200 }) {
            fatalError("sync bench: local ingest round \(round): request \(index) answered \(statuses[index])")
        }
        checkServerHolds(enrolled, expected: expectedHead, side: "local ingest", round: round)
        return Double(expectedHead.seq) / elapsed
    }
}
