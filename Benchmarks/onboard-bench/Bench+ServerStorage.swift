import Foundation
import HTTPServer
import OnboardingModel
import OnboardingServer
import OnboardingStore
import PostgreSQL

extension Bench {
    /// `--only server`: the sync server on PostgreSQL, on the server `$ONBOARD_BENCH_DATABASE_URL`
    /// names (its `postgres` database; the bench creates and drops databases of its own there).
    /// Alternating per round, each pass on a fresh database:
    ///
    /// - `pg_ingest_vs_copy`: the server's ingest of the upload requests through its router
    ///   (JSON, every protocol check, one transaction per batch) against `COPY` of the same rows
    ///   into the same tables and indexes by libpq directly, in durable commits of 1,000 rows —
    ///   the floor on that database.
    /// - `pg_sync_vs_pg_ingest`: the whole sync over loopback HTTP to a node on PostgreSQL against
    ///   that node's ingest of the same requests in-process.
    /// - `pg_ingest_vs_lmdb_ingest`: the server's ingest on PostgreSQL against the same on LMDB
    ///   replicas (reported).
    func measureServerStorage() {
        guard let base = ProcessInfo.processInfo.environment["ONBOARD_BENCH_DATABASE_URL"], !base.isEmpty else {
            report.add(
                BenchResult(
                    name: "pg_ingest_vs_copy", unit: "events/s", value: 0,
                    note: "skipped: set ONBOARD_BENCH_DATABASE_URL to a PostgreSQL server the bench may create databases on"))
            return
        }
        let count = options.quick ? 5_000 : 200_000
        let rounds = options.quick ? 1 : 3
        let events = BenchEvents.make(count: count, seed: 56)
        let devicePath = freshDirectory("pg-device")
        defer { remove(devicePath) }
        let store = filledDeviceStore(at: devicePath, events)
        defer { store.close() }
        let (bodies, head) = uploadBodies(store, batchSize: SyncLimits.maximumBatchEvents)
        var versusCopy = Paired(), versusIngest = Paired(), versusLMDB = Paired()

        for round in 1...rounds {
            let (ingest, rows) = pgIngestPass(base: base, bodies, expectedHead: head, round: round)
            versusCopy.subject.append(ingest)
            versusCopy.baseline.append(copyPass(base: base, rows: rows, round: round))
            versusIngest.subject.append(pgSyncPass(base: base, store, eventCount: count, expectedHead: head, round: round))
            versusIngest.baseline.append(ingest)
            versusLMDB.subject.append(ingest)
            versusLMDB.baseline.append(lmdbIngestPass(bodies, expectedHead: head, round: round))
        }
        let note = "\(count) events, \(SyncLimits.maximumBatchEvents)/upload, \(rounds) rounds"
        report.add(
            BenchResult(
                name: "pg_ingest_vs_copy", unit: "events/s", paired: versusCopy, baseline: "COPY of the same rows",
                target: "≥ 0.3 × COPY", threshold: 0.3, note: note))
        report.add(
            BenchResult(
                name: "pg_sync_vs_pg_ingest", unit: "events/s", paired: versusIngest, baseline: "server-local ingest on PostgreSQL",
                target: "≥ 0.5 × server-local ingest", threshold: 0.5, note: note + ", loopback HTTP"))
        report.add(
            BenchResult(
                name: "pg_ingest_vs_lmdb_ingest", unit: "events/s", paired: versusLMDB, baseline: "server-local ingest on LMDB",
                note: note))
        measureTwoNodes(base: base)
    }

    /// A new database on the bench's server, and a way to drop it.
    func freshDatabase(base: String) -> (url: String, drop: () -> Void) {
        let name = "onboard_bench_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(12).lowercased()
        guard let slash = base.lastIndex(of: "/") else { failOperation("ONBOARD_BENCH_DATABASE_URL must end in /DATABASE") }
        let adminURL = base
        do {
            let admin = try PGConnection(url: DatabaseURL(adminURL))
            defer { admin.close() }
            try admin.execute("CREATE DATABASE \(name)")
        } catch {
            failOperation("server bench: cannot create a database on \(adminURL): \(error)")
        }
        return (
            base[..<slash] + "/" + name,
            {
                guard let admin = try? PGConnection(url: DatabaseURL(adminURL)) else { return }
                defer { admin.close() }
                _ = try? admin.execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
            }
        )
    }

    private func enrolledPostgresServer(_ url: String) -> (server: SyncServer, token: String) {
        do {
            let server = try SyncServer(databaseURL: url, options: Bench.serverOptions)
            let token = try server.enroll(device: BenchEvents.device)
            return (server, token)
        } catch {
            failOperation("server bench: cannot start a server on PostgreSQL: \(error)")
        }
    }

    private func ingest(_ server: SyncServer, token: String, _ bodies: [[UInt8]], round: Int, side: String) -> Double {
        let requests = bodies.map { body in
            SyncRequest(
                method: "POST", path: SyncPaths.events(device: BenchEvents.device),
                headers: ["authorization": "Bearer \(token)", "content-type": SyncWire.contentType], body: body)
        }
        let start = now()
        for (index, request) in requests.enumerated() {
            let status = server.handle(request).status
            guard status == 200 else { failOperation("server bench: \(side) round \(round): upload \(index) answered \(status)") }
        }
        return seconds(since: start)
    }

    /// The server's ingest into a fresh database; events per second, and the rows it wrote (for COPY).
    private func pgIngestPass(base: String, _ bodies: [[UInt8]], expectedHead: (seq: UInt64, hash: Digest), round: Int) -> (Double, [[PGValue]]) {
        let database = freshDatabase(base: base)
        defer { database.drop() }
        let (server, token) = enrolledPostgresServer(database.url)
        defer { server.close() }
        let elapsed = ingest(server, token: token, bodies, round: round, side: "PostgreSQL ingest")
        do {
            let held = try server.withDeviceLog(of: BenchEvents.device) { try $0.head() }
            guard held == expectedHead else { failOperation("server bench: round \(round): the database holds seq \(held.seq), not \(expectedHead.seq)") }
            let connection = try PGConnection(url: DatabaseURL(database.url))
            defer { connection.close() }
            let rows = try connection.execute("SELECT device, seq, id, at_ms, type::int8, user_key, hash, record FROM events ORDER BY seq").map {
                row -> [PGValue] in
                [
                    .text(try row.string(0)), .int64(try row.int64(1)), .uuid(try row.uuid(2)), .int64(try row.int64(3)),
                    .int64(try row.int64(4)), try row.optionalBytes(5).map { .bytes($0) } ?? .null, .bytes(try row.bytes(6)), .bytes(try row.bytes(7))
                ]
            }
            return (Double(expectedHead.seq) / elapsed, rows)
        } catch {
            failOperation("server bench: round \(round): reading the database back failed: \(error)")
        }
    }

    /// COPY of `rows` into a fresh database with the server's schema, 1,000 rows per commit.
    private func copyPass(base: String, rows: [[PGValue]], round: Int) -> Double {
        let database = freshDatabase(base: base)
        defer { database.drop() }
        let (server, _) = enrolledPostgresServer(database.url)
        server.close()
        do {
            let connection = try PGConnection(url: DatabaseURL(database.url))
            defer { connection.close() }
            // The type column is int2 in the table; COPY's binary format takes it as sent.
            let typed = rows.map { row -> [PGValue] in
                var row = row
                if case .int64(let type) = row[4] { row[4] = .int16(Int16(type)) }
                return row
            }
            let start = now()
            for chunk in Swift.stride(from: 0, to: typed.count, by: 1_000) {
                try connection.transaction { connection in
                    try connection.copy(
                        into: "events", columns: ["device", "seq", "id", "at_ms", "type", "user_key", "hash", "record"],
                        rows: Array(typed[chunk..<min(chunk + 1_000, typed.count)]))
                }
            }
            return Double(rows.count) / seconds(since: start)
        } catch {
            failOperation("server bench: COPY round \(round) failed: \(error)")
        }
    }

    /// The whole sync over loopback HTTP to a node on a fresh database; events per second.
    private func pgSyncPass(base: String, _ store: OnboardingStore, eventCount: Int, expectedHead: (seq: UInt64, hash: Digest), round: Int) -> Double {
        let database = freshDatabase(base: base)
        defer { database.drop() }
        let (server, token) = enrolledPostgresServer(database.url)
        let http = HTTPServer(port: 0, limits: SyncHTTPHandler.limits, handler: SyncHTTPHandler(server: server))
        do { try http.start() } catch { failOperation("server bench: cannot start the HTTP server: \(error)") }
        defer {
            server.beginShutdown()
            http.stop()
            server.close()
        }
        let transport: HTTPTransport
        do { transport = try HTTPTransport(baseURL: URL(string: "http://127.0.0.1:\(http.port)")!) } catch { failOperation("server bench: \(error)") }
        let client = SyncClient(store: store, transport: transport, token: token)
        let start = now()
        let outcome = runBlocking { () async -> Result<SyncSummary, SyncError> in
            do throws(SyncError) { return .success(try await client.run()) } catch { return .failure(error) }
        }
        let elapsed = seconds(since: start)
        guard case .success(let summary) = outcome, summary.acknowledgedSeq == expectedHead.seq, summary.appended == eventCount else {
            failOperation("server bench: round \(round): the sync to PostgreSQL ended as \(outcome)")
        }
        return Double(eventCount) / elapsed
    }

    /// The same ingest into fresh LMDB replicas; events per second.
    private func lmdbIngestPass(_ bodies: [[UInt8]], expectedHead: (seq: UInt64, hash: Digest), round: Int) -> Double {
        let path = freshDirectory("lmdb-ingest")
        defer { remove(path) }
        do {
            let server = try SyncServer(dataDirectory: path, options: Bench.serverOptions)
            defer { server.close() }
            let token = try server.enroll(device: BenchEvents.device)
            let elapsed = ingest(server, token: token, bodies, round: round, side: "LMDB ingest")
            return Double(expectedHead.seq) / elapsed
        } catch {
            failOperation("server bench: LMDB round \(round): \(error)")
        }
    }
}
