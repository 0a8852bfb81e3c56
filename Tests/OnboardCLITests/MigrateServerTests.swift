import Foundation
import PostgreSQL
import Testing
import TestSupport

/// `onboard migrate-server`: an LMDB-backed server that devices synced to (with signed heads,
/// two devices, a forgotten user) is copied into PostgreSQL; the devices sync on against
/// `onboard serve --database` with the same tokens and pinned key; a rerun copies nothing; an
/// interrupted run resumes.
@Suite(.serialized, .timed, .enabled(if: TestDatabase.isEnabled, TestDatabase.skipNote), .slow)
struct MigrateServerTests {
    /// A data directory with `kiosk-7` (signing key registered, 700 events) and `tablet-2` (300
    /// events) synced into it through `onboard serve --data`, and the users the first one names.
    static func syncedServer(in scratch: TemporaryDirectory) throws -> (data: String, stores: [String: String], tokens: [String: String]) {
        let data = scratch.appending("server-data")
        var stores: [String: String] = [:]
        var tokens: [String: String] = [:]
        for (device, count, seed) in [("kiosk-7", 700, UInt64(5)), ("tablet-2", 300, UInt64(6))] {
            let store = scratch.appending(device)
            let events = Corpus.generated(count: count, seed: seed).map { event -> Event in
                var event = event
                event.device = device
                return event
            }
            let file = try scratch.write("\(device).jsonl", Corpus.jsonl(events))
            let imported = try CLI.run(["import", file, "--store", store, "--device", device])
            guard imported.status == 0 else { throw TestFailure("import failed: \(imported.stderr)") }
            var arguments = ["enroll", "--data", data, "--device", device]
            if device == "kiosk-7" {
                let verified = try CLI.run(["verify", "--store", store])
                guard let range = verified.stdout.range(of: "(key "),
                    case let key = verified.stdout[range.upperBound...].prefix(64), key.count == 64
                else {
                    throw TestFailure("verify printed no signing key: \(verified.stdout)")
                }
                arguments += ["--public-key", String(key)]
            }
            let enrolled = try CLI.run(arguments)
            guard enrolled.status == 0 else { throw TestFailure("enroll failed: \(enrolled.stderr)") }
            stores[device] = store
            tokens[device] = enrolled.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let node = try PostgresServeTests.Node(dataDirectory: data, scratch: scratch, name: "lmdb")
        defer { node.stop() }
        for (device, store) in stores {
            let synced = try CLI.run(["sync", "--store", store, "--server", node.url, "--token", tokens[device]!, "--server-key", node.serverKey])
            guard synced.status == 0 else { throw TestFailure("sync of \(device) failed: \(synced.stderr)") }
        }
        return (data, stores, tokens)
    }

    /// Runs `body` on its own thread with a fresh database (its URL and the URL text), a scratch
    /// directory, and an LMDB server synced there (``syncedServer(in:)``).
    static func withMigrationSetup(
        _ body:
            @escaping @Sendable (
                DatabaseURL, String, TemporaryDirectory,
                (data: String, stores: [String: String], tokens: [String: String])
            ) throws -> Void
    ) async throws {
        try await onOwnThread {
            try withFreshDatabase { url in
                let scratch = try TemporaryDirectory()
                defer { scratch.remove() }
                try body(url, try TestDatabase.url(database: url.parameters["dbname"]!), scratch, try syncedServer(in: scratch))
            }
        }
    }

    @Test func aServerMovesToPostgreSQLAndItsDevicesSyncOn() async throws {
        try await Self.withMigrationSetup { url, database, scratch, server in
            let lmdbAudit = try CLI.run(["audit", "--data", server.data])
            #expect(lmdbAudit.status == 0, "\(lmdbAudit.stdout)")

            let migrated = try CLI.run(["migrate-server", "--data", server.data, "--database", database])
            #expect(migrated.status == 0, "\(migrated.stdout)\(migrated.stderr)")
            #expect(migrated.stdout.contains("kiosk-7: 700 records, 700 copied now; audit ok"), "\(migrated.stdout)")
            #expect(migrated.stdout.contains("tablet-2: 300 records, 300 copied now; audit ok"), "\(migrated.stdout)")
            #expect(migrated.stderr.contains("700/700 records"), "a progress line per device")
            // The same audit on both sides, signed heads included.
            let pgAudit = try CLI.run(["audit", "--database", database])
            #expect(pgAudit.status == 0 && pgAudit.stdout == lmdbAudit.stdout, "\(pgAudit.stdout) vs \(lmdbAudit.stdout)")

            // Idempotent: a second run copies nothing.
            let again = try CLI.run(["migrate-server", "--data", server.data, "--database", database])
            #expect(again.status == 0 && again.stdout.contains("kiosk-7: 700 records, 0 copied now; audit ok"), "\(again.stdout)")

            // The devices sync on against a node on the database, with the same token and key.
            let node = try PostgresServeTests.Node(database: database, scratch: scratch, name: "pg")
            defer { node.stop() }
            let lmdbKey = try OnboardingStoreKeyFile.publicKeyHex(data: server.data)
            #expect(node.serverKey == lmdbKey, "the database serves under the LMDB server's key")
            for _ in 0..<5 {
                let recorded = try CLI.run([
                    "record", "--store", server.stores["kiosk-7"]!,
                    #"{"type":"sign_in_failed","user":"nurse-9","method":"passcode","reason":"invalid_passcode"}"#
                ])
                #expect(recorded.status == 0, "\(recorded.stderr)")
            }
            let synced = try CLI.run([
                "sync", "--store", server.stores["kiosk-7"]!, "--server", node.url, "--token", server.tokens["kiosk-7"]!,
                "--server-key", node.serverKey
            ])
            #expect(synced.status == 0 && synced.stdout.contains("5 appended, 0 already on the server"), "\(synced.stdout)\(synced.stderr)")
            #expect(try CLI.run(["audit", "--database", database]).stdout.contains("kiosk-7: ok, 705 records"))
        }
    }

    @Test func anInterruptedMigrationResumesWhereItStopped() async throws {
        try await Self.withMigrationSetup { url, database, scratch, server in
            // Cut short after the first commit of kiosk-7 (the test hook kills the process
            // as a crash would, after a commit).
            let cut = try CLI.run(
                ["migrate-server", "--data", server.data, "--database", database],
                environment: ["ONBOARD_TEST_FAULTS": "migrate-exit-after-first-commit"])
            #expect(cut.status != 0)
            let connection = try PGConnection(url: url)
            defer { connection.close() }
            let partial = try connection.execute("SELECT count(*) FROM events")[0].int64(0)
            #expect(partial > 0 && partial < 1000, "\(partial) rows after the cut")
            let resumed = try CLI.run(["migrate-server", "--data", server.data, "--database", database])
            #expect(resumed.status == 0, "\(resumed.stdout)\(resumed.stderr)")
            #expect(try connection.execute("SELECT count(*) FROM events")[0].int64(0) == 1000)
            #expect(try CLI.run(["audit", "--database", database]).status == 0)
        }
    }

    @Test func aDatabaseServingOtherDevicesIsNotOverwritten() async throws {
        try await Self.withMigrationSetup { url, database, scratch, server in
            #expect(try CLI.run(["enroll", "--database", database, "--device", "other-1"]).status == 0)
            let refused = try CLI.run(["migrate-server", "--data", server.data, "--database", database])
            #expect(refused.status == 65 && refused.stderr.contains("already serves devices under another server key"), "\(refused.stderr)")
            let connection = try PGConnection(url: url)
            defer { connection.close() }
            #expect(try connection.execute("SELECT count(*) FROM events")[0].int64(0) == 0)
        }
    }
}

/// The public half of an LMDB server's signing key, as `onboard serve --data` prints it.
enum OnboardingStoreKeyFile {
    static func publicKeyHex(data: String) throws -> String {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: data + "/server/signing.key"))
        return bytes.suffix(32).map { String(format: "%02x", $0) }.joined()
    }
}
