import Foundation
import PostgreSQL
import Synchronization
import Testing
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// `onboard serve`, `enroll`, `audit`, `forget-user` and `sync` as real processes on a real
/// PostgreSQL: bad URLs and unreachable or newer databases give one line and a documented exit
/// status; two server nodes on one database serve the same device as one server would.
@Suite(.serialized, .timed, .enabled(if: TestDatabase.isEnabled, TestDatabase.skipNote), .slow)
struct PostgresServeTests {
    /// A running `onboard serve` (the sync process tests' server), on a database or a data directory.
    typealias Node = SyncProcessTests.Server

    static func get(_ url: String, token: String) throws -> (status: Int, body: String) {
        let result = try CLI.run(
            ["-s", "-w", "\n%{http_code}", "-H", "authorization: Bearer \(token)", url],
            executable: URL(fileURLWithPath: "/usr/bin/curl"))
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        return (Int(lines.last ?? "") ?? 0, lines.dropLast().joined(separator: "\n"))
    }

    @Test(arguments: [["serve", "--port", "0"], ["enroll", "--auditor"], ["audit"], ["forget-user", "alice"]])
    func aBadURLIsOneLineExit64WithoutThePassword(command: [String]) async throws {
        try await onOwnThread {
            for url in ["mysql://root:hunter2@127.0.0.1/db", "postgres://u:hunter2@127.0.0.1:99999/db"] {
                let result = try CLI.run(command + ["--database", url])
                #expect(result.status == 64, "\(command) \(url): \(result.stderr)")
                #expect(result.stderr.hasPrefix("onboard \(command[0]): ") && result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
                #expect(!result.stderr.contains("hunter2"))
            }
            // The environment variable is the same option for the server commands (forget-user
            // without --database forgets on a device's store).
            if command[0] != "forget-user" {
                let fromEnvironment = try CLI.run(command, environment: ["ONBOARD_DATABASE_URL": "mysql://root:hunter2@127.0.0.1/db"])
                #expect(fromEnvironment.status == 64 && !fromEnvironment.stderr.contains("hunter2"), "\(fromEnvironment.stderr)")
            }
        }
    }

    @Test func dataAndDatabaseExcludeEachOther() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            for command in [["serve"], ["enroll", "--auditor"], ["audit"], ["forget-user", "alice"]] {
                let result = try CLI.run(command + ["--data", directory.appending("d"), "--database", "postgres://127.0.0.1/x"])
                #expect(result.status == 64 && result.stderr.contains("--data and --database exclude each other"), "\(command): \(result.stderr)")
            }
            #expect(!FileManager.default.fileExists(atPath: directory.appending("d")), "nothing was created")
        }
    }

    @Test func anUnreachableDatabaseIsExit69NamingWhereButNotThePassword() async throws {
        try await onOwnThread {
            let port = try LoopbackSockets.freePort()
            let result = try CLI.run(["serve", "--port", "0", "--database", "postgres://onboard:hunter2@127.0.0.1:\(port)/fleet"])
            #expect(result.status == 69, "\(result.stderr)")
            #expect(result.stderr.contains("postgres://onboard@127.0.0.1:\(port)/fleet") && !result.stderr.contains("hunter2"), "\(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1)
        }
    }

    @Test func aDatabaseANewerOnboardMigratedIsRefusedAndLeftAsItIs() async throws {
        try await onOwnThread {
            try withFreshDatabase { url in
                let text = try TestDatabase.url(database: url.parameters["dbname"]!)
                #expect(try CLI.run(["enroll", "--database", text, "--auditor"]).status == 0)
                let connection = try PGConnection(url: url)
                defer { connection.close() }
                try connection.execute("UPDATE onboard_schema SET version = 99")
                let tables = try connection.execute("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")[0].int64(0)
                let result = try CLI.run(["serve", "--port", "0", "--database", text])
                #expect(result.status == 69 && result.stderr.contains("schema version 99") && result.stderr.contains("upgrade onboard"), "\(result.stderr)")
                #expect(try connection.execute("SELECT max(version)::int8 FROM onboard_schema")[0].int64(0) == 99)
                #expect(try connection.execute("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")[0].int64(0) == tables)
            }
        }
    }

    /// Two nodes on one database: the device syncs through both at once, is forgotten through
    /// one and learns it through the other; both answer the same lockout and history.
    @Test func twoNodesServeOneDeviceAsOneServer() async throws {
        try await onOwnThread {
            try withFreshDatabase { url in
                let database = try TestDatabase.url(database: url.parameters["dbname"]!)
                let scratch = try TemporaryDirectory()
                defer { scratch.remove() }
                let first = try Node(database: database, scratch: scratch, name: "a")
                defer { first.stop() }
                let second = try Node(database: database, scratch: scratch, name: "b")
                defer { second.stop() }
                #expect(first.serverKey.count == 64 && first.serverKey == second.serverKey, "both nodes sign as one server")
                #expect(first.banner.contains("created the admin token") != second.banner.contains("created the admin token"), "one admin token")

                let store = scratch.appending("device")
                let text = Corpus.jsonl(Corpus.generated(count: 1_500, seed: 41))
                #expect(try CLI.run(["import", try scratch.write("events.jsonl", text), "--store", store, "--device", "kiosk-7"]).status == 0)
                let enrolled = try CLI.run(["enroll", "--database", database, "--device", "kiosk-7"])
                let token = enrolled.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
                #expect(enrolled.status == 0 && token.hasPrefix("obt_"), "\(enrolled.stderr)")

                // Both nodes get the same device's batches at once: every event exactly once.
                let outcomes = Mutex<[CLI.Result]>([])
                let group = DispatchGroup()
                for (address, key) in [(first.url, first.serverKey), (second.url, second.serverKey)] {
                    group.enter()
                    detachThread {
                        defer { group.leave() }
                        if let result = try? CLI.run(["sync", "--store", store, "--server", address, "--token", token, "--server-key", key]) {
                            outcomes.withLock { $0.append(result) }
                        }
                    }
                }
                #expect(group.wait(timeout: .now() + 120) == .success)
                let results = outcomes.withLock { $0 }
                #expect(results.count == 2 && results.allSatisfy { $0.status == 0 }, "\(results.map(\.stderr))")
                let audited = try CLI.run(["audit", "--database", database])
                #expect(audited.status == 0 && audited.stdout.contains("kiosk-7: ok, 1500 records"), "\(audited.stdout)\(audited.stderr)")

                let auditor = try CLI.run(["enroll", "--database", database, "--auditor"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
                let user = try #require(Corpus.generated(count: 1_500, seed: 41).compactMap(\.user).first { !$0.hasPrefix("~") })
                let unreserved = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")
                let path = "/v1/users/\(user.addingPercentEncoding(withAllowedCharacters: unreserved) ?? user)"
                for endpoint in ["/lockout", "/history?limit=50"] {
                    let a = try Self.get(first.url + path + endpoint, token: auditor)
                    let b = try Self.get(second.url + path + endpoint, token: auditor)
                    #expect(a.status == 200 && a == b, "\(user) \(endpoint): \(a) vs \(b)")
                }

                // Forgotten through the database (as through the first node); the device learns
                // it at its next sync through the second.
                let forgot = try CLI.run(["forget-user", user, "--database", database])
                #expect(forgot.status == 0 && forgot.stdout.contains("kiosk-7: key destroyed"), "\(forgot.stdout)\(forgot.stderr)")
                let next = try CLI.run(["sync", "--store", store, "--server", second.url, "--token", token, "--server-key", second.serverKey])
                #expect(next.status == 0, "\(next.stderr)")
                let exported = try CLI.run(["export", "--store", store])
                #expect(exported.stdout.contains("\"type\":\"user_forgotten\""), "the device forgot the user at the server's request")
                let after = try Self.get(first.url + path + "/history", token: auditor)
                #expect(after.status == 200 && after.body.contains("\"attempts\":[]") && after.body.contains("\"devices\":[]"), "\(after.body)")
                #expect(try CLI.run(["audit", "--database", database]).status == 0)
            }
        }
    }

    /// A node killed with SIGKILL in the middle of a device's sync: what the database holds is
    /// a prefix of the device's log (the audit passes, nothing acknowledged is missing), and the
    /// sync through another node on the same database resumes to the device's whole log.
    @Test func aNodeKilledMidSyncLosesNothingAndAnotherNodeResumes() async throws {
        try await onOwnThread {
            try withFreshDatabase { url in
                let database = try TestDatabase.url(database: url.parameters["dbname"]!)
                let scratch = try TemporaryDirectory()
                defer { scratch.remove() }
                let store = scratch.appending("device")
                let text = Corpus.jsonl(Corpus.generated(count: 6_000, seed: 77))
                #expect(try CLI.run(["import", try scratch.write("events.jsonl", text), "--store", store, "--device", "kiosk-7"]).status == 0)
                let token = try CLI.run(["enroll", "--database", database, "--device", "kiosk-7"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
                let first = try Node(database: database, scratch: scratch, name: "first")
                let sync = ChildProcess()
                sync.executableURL = CLI.binary
                sync.arguments = [
                    "sync", "--store", store, "--server", first.url, "--token", token, "--server-key", first.serverKey,
                    "--batch", "100", "--max-time", "20"
                ]
                sync.standardOutput = FileHandle.nullDevice
                sync.standardError = FileHandle.nullDevice
                try sync.run()
                // Killed once some batches are in, well before the last.
                let connection = try PGConnection(url: url)
                defer { connection.close() }
                let deadline = Date().addingTimeInterval(30)
                var held: Int64 = 0
                while held < 300 && Date() < deadline {
                    held = try connection.execute("SELECT coalesce(max(head_seq), 0) FROM devices WHERE device = 'kiosk-7'")[0].int64(0)
                    Thread.sleep(forTimeInterval: 0.01)
                }
                kill(first.process.processIdentifier, SIGKILL)
                first.process.waitUntilExit()
                // The client would retry for a while; it is stopped the same way.
                kill(sync.processIdentifier, SIGKILL)
                sync.waitUntilExit()
                let atKill = try connection.execute("SELECT head_seq FROM devices WHERE device = 'kiosk-7'")[0].int64(0)
                #expect(atKill >= 300 && atKill < 6_000, "the kill came mid-sync (the database held seq \(atKill))")
                let audited = try CLI.run(["audit", "--database", database])
                #expect(audited.status == 0 && audited.stdout.contains("kiosk-7: ok, \(atKill) records"), "\(audited.stdout)")

                let second = try Node(database: database, scratch: scratch, name: "second")
                defer { second.stop() }
                let resumed = try CLI.run(["sync", "--store", store, "--server", second.url, "--token", token, "--server-key", second.serverKey])
                #expect(resumed.status == 0, "\(resumed.stderr)")
                let stats = try CLI.run(["stats", "--store", store, "--json"])
                let headHash = try #require(stats.stdout.range(of: "\"head_hash\":\"").map { String(stats.stdout[$0.upperBound...].prefix(64)) })
                let row = try connection.execute("SELECT head_seq, encode(head_hash, 'hex') FROM devices WHERE device = 'kiosk-7'")[0]
                #expect(try row.int64(0) == 6_000 && row.string(1) == headHash)
                #expect(try CLI.run(["audit", "--database", database]).stdout.contains("kiosk-7: ok, 6000 records"))
            }
        }
    }
}
