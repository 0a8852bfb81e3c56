import Foundation
import HTTPServer
import OnboardingModel
import OnboardingServer
import OnboardingStore
import PostgreSQL

extension Bench {
    /// `--only server-scale` (never in the default run: it loads millions of rows): a fleet on
    /// PostgreSQL, loaded straight into the tables with COPY as devices' uploads would have
    /// left them (real records, sealed users, the user index), first with ``scaleSmallDevices``
    /// devices, then with ``scaleDevices``. At each size: how long a server takes to start, its
    /// resident memory and open descriptors after serving requests, and the p99 over loopback
    /// HTTP of a user's history across devices (limit 100) and of a user's global lockout.
    func measureServerScale() {
        guard let base = ProcessInfo.processInfo.environment["ONBOARD_BENCH_DATABASE_URL"], !base.isEmpty else {
            report.add(
                BenchResult(
                    name: "scale_server_start", unit: "s", value: 0,
                    note: "skipped: set ONBOARD_BENCH_DATABASE_URL to a PostgreSQL server the bench may create databases on"))
            return
        }
        let small = options.quick ? 100 : 1_000
        let large = options.quick ? 1_000 : 100_000
        let eventsPerDevice = options.quick ? 10 : 100
        let database = freshDatabase(base: base)
        defer { database.drop() }
        let storage: PostgresStorage
        do { storage = try PostgresStorage(url: DatabaseURL(database.url), policy: .mediawiki) } catch {
            failOperation("scale bench: cannot open the database: \(error)")
        }
        defer { storage.close() }
        let users = max(100, large / 2)
        loadFleet(storage, devices: 0..<small, eventsPerDevice: eventsPerDevice, users: users)
        measureAtScale(database.url, devices: small, events: small * eventsPerDevice, users: users)
        loadFleet(storage, devices: small..<large, eventsPerDevice: eventsPerDevice, users: users)
        measureAtScale(database.url, devices: large, events: large * eventsPerDevice, users: users)
    }

    /// Devices `scale-<n>` with `eventsPerDevice` sign-in events each by 5 of `users` users, as
    /// the server would hold them, written with COPY in commits of 200 devices.
    private func loadFleet(_ storage: PostgresStorage, devices: Range<Int>, eventsPerDevice: Int, users: Int) {
        let start = now()
        var random = SplitMix64(state: 0x5CA1E ^ UInt64(devices.lowerBound))
        do {
            try storage.pool.withConnection { connection in
                // A bulk load on a shared machine: the server's 10 s bound on a statement is for
                // requests, not for COPYing 20,000 rows or the ANALYZE of 10^7 (the session ends
                // with the bench's storage).
                try connection.execute("SET statement_timeout = 0")
                for chunk in Swift.stride(from: devices.lowerBound, to: devices.upperBound, by: 200) {
                    var deviceRows: [[PGValue]] = [], userRows: [[PGValue]] = [], eventRows: [[PGValue]] = []
                    for index in chunk..<min(chunk + 200, devices.upperBound) {
                        let device = "scale-\(index)"
                        let pseudonymKey = SecretKey.random()
                        var directory = UserDirectory(pseudonymKey: pseudonymKey)
                        var names: [String] = []
                        for number in 1...5 {
                            let name = "user-\(Int(random.next() % UInt64(users)))"
                            guard directory.liveRef(of: name) == nil else { continue }
                            let key = SecretKey.random()
                            let ref = directory.newRef(of: name)
                            directory.add(ref, name: name, key: key)
                            names.append(name)
                            userRows.append([
                                .text(device), .bytes(ref.bytes), .int64(Int64(number)), .bytes(key.bytes),
                                .bytes(PersonalData.sealRandom(Array(name.utf8), key: key))
                            ])
                        }
                        var previous = Digest.zero
                        for seq in 1...eventsPerDevice {
                            let name = names[Int(random.next() % UInt64(names.count))]
                            let payload: Payload =
                                random.next() % 4 == 0
                                ? .signInSucceeded(method: .password, secondFactor: false)
                                : .signInFailed(method: .password, reason: .invalidPassword)
                            let event = Event(
                                id: UUID(), device: device, at: Timestamp(millisecondsSince1970: BenchEvents.startMilliseconds + Int64(seq) * 60_000),
                                user: name, flow: nil, payload: payload)
                            // As the store seals: the key only for a type with personal fields.
                            let ref = directory.ref(of: name)
                            let seal = UserSeal(ref: ref, key: event.hasPersonalFields ? directory.key(of: ref) : nil)
                            let bytes = RecordCodec.encode(event, seq: UInt64(seq), previousHash: previous, seal: seal)
                            let hash = Array(bytes[RecordCodec.hashOffset..<(RecordCodec.hashOffset + Digest.byteCount)])
                            previous = Digest(bytes: hash)
                            eventRows.append([
                                .text(device), .int64(Int64(seq)), .uuid(event.id), .int64(event.at.millisecondsSince1970),
                                .int16(Int16(event.type.code)), .bytes(storage.userKey(of: name)), .bytes(hash), .bytes(bytes)
                            ])
                        }
                        deviceRows.append([.text(device), .bytes(pseudonymKey.bytes), .bool(true), .int64(Int64(eventsPerDevice)), .bytes(previous.bytes)])
                    }
                    try connection.transaction { connection in
                        try connection.copy(
                            into: "devices", columns: ["device", "pseudonym_key", "holds_device_pseudonym_key", "head_seq", "head_hash"], rows: deviceRows)
                        try connection.copy(into: "device_users", columns: ["device", "ref", "number", "key", "sealed_name"], rows: userRows)
                        try connection.copy(into: "events", columns: ["device", "seq", "id", "at_ms", "type", "user_key", "hash", "record"], rows: eventRows)
                    }
                }
                // Settled before measuring, as a server's tables are between bulk loads: the
                // rows' hint bits and visibility map set (VACUUM), the statistics fresh, and the
                // gigabyte of dirty pages written (CHECKPOINT) rather than flushed under the
                // measured queries, which then read at the disk's leisure (p99 ×2 in one run).
                try connection.execute("VACUUM (ANALYZE)")
                try connection.execute("CHECKPOINT")
            }
        } catch {
            failOperation("scale bench: loading the fleet failed: \(error)")
        }
        emit(
            "   loaded devices \(devices.lowerBound)…\(devices.upperBound - 1) (\(devices.count * eventsPerDevice) events) in \(format(seconds(since: start))) s"
        )
    }

    /// Resident memory and open descriptors of this process now.
    private func processFootprint() -> (residentBytes: Int, descriptors: Int) {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0
        return (kilobytes * 1024, descriptors)
    }

    private func measureAtScale(_ url: String, devices: Int, events: Int, users: Int) {
        let before = processFootprint()
        let started = now()
        let server: SyncServer
        do { server = try SyncServer(databaseURL: url, options: Bench.serverOptions, createsAdminToken: false) } catch {
            failOperation("scale bench: the server did not start: \(error)")
        }
        let http = HTTPServer(port: 0, limits: SyncHTTPHandler.limits, handler: SyncHTTPHandler(server: server))
        do { try http.start() } catch { failOperation("scale bench: \(error)") }
        let startSeconds = seconds(since: started)
        defer {
            server.beginShutdown()
            http.stop()
            server.close()
        }
        let auditor: String
        let transport: HTTPTransport
        do {
            auditor = try server.issueToken(role: .auditor)
            transport = try HTTPTransport(baseURL: URL(string: "http://127.0.0.1:\(http.port)")!)
        } catch {
            failOperation("scale bench: \(error)")
        }
        let requests = options.quick ? 100 : 1_000
        var random = SplitMix64(state: UInt64(devices))
        func latencies(_ path: (String) -> String) -> [Double] {
            (0..<requests).map { _ in
                let user = "user-\(Int(random.next() % UInt64(users)))"
                let request = SyncRequest(method: "GET", path: path(user), headers: ["authorization": "Bearer \(auditor)"])
                let start = now()
                let status = runBlocking { () async -> Int in (try? await transport.send(request))?.status ?? 0 }
                let elapsed = seconds(since: start)
                guard status == 200 else { failOperation("scale bench: \(request.path) answered \(status)") }
                return elapsed * 1e3
            }
        }
        let history = latencies { "/v1/users/\($0)/history?limit=100" }.sorted()
        let lockout = latencies { "/v1/users/\($0)/lockout" }.sorted()
        let after = processFootprint()
        func p99(_ sorted: [Double]) -> Double { sorted[min(sorted.count - 1, Int(Double(sorted.count) * 0.99))] }
        func spread(_ sorted: [Double]) -> String { "p50 \(format(sorted[sorted.count / 2])) ms, p90 \(format(sorted[sorted.count * 9 / 10])) ms" }
        let size = "\(devices) devices, \(events) events"
        report.add(
            BenchResult(
                name: "scale_server_start_\(devices)", unit: "s", value: startSeconds, target: "≤ 1 s",
                met: startSeconds <= 1, note: size))
        report.add(
            BenchResult(
                name: "scale_history_p99_\(devices)", unit: "ms p99", value: p99(history), target: "≤ 5 ms",
                met: p99(history) <= 5, note: size + ", limit 100, loopback HTTP, \(requests) users; \(spread(history))"))
        report.add(
            BenchResult(
                name: "scale_lockout_p99_\(devices)", unit: "ms p99", value: p99(lockout), target: "≤ 3 ms",
                met: p99(lockout) <= 3, note: size + ", loopback HTTP, \(requests) users; \(spread(lockout))"))
        report.add(
            BenchResult(
                name: "scale_server_rss_growth_\(devices)", unit: "MiB", value: Double(after.residentBytes - before.residentBytes) / 1_048_576,
                note: size + ": resident memory the server added, started and after the queries"))
        report.add(
            BenchResult(
                name: "scale_server_fds_\(devices)", unit: "descriptors", value: Double(after.descriptors - before.descriptors),
                note: size + ": descriptors the server added (listener, pool, transport)"))
    }
}

extension Bench {
    /// The servers the bench measures: `onboard serve`'s defaults but no rate limits — a bench
    /// sends a thousand requests a second with one token, and measures the work, not the limit.
    static var serverOptions: SyncServer.Options {
        var options = SyncServer.Options()
        options.rateLimits = .off
        return options
    }
}
