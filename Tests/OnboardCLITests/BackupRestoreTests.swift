import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// docs/operations.md § Backups and § Restoring: a backup taken while the server runs
/// (`tools/backup-server.sh`, LMDB's own `mdb_copy`; `pg_dump` and `pg_restore` for PostgreSQL)
/// restores to a server that audits clean, keeps its tokens and its key — so devices that pinned
/// it sync on — and is brought up to date by the devices themselves, which resend what it lacks.
@Suite(.serialized, .slow) struct BackupRestoreTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func record(_ store: String, _ device: String, users: [String]) throws {
        for user in users {
            let result = try CLI.run([
                "record", #"{"type":"sign_in_failed","user":"\#(user)","method":"password","reason":"invalid_password"}"#,
                "--store", store, "--device", device
            ])
            guard result.status == 0 else { throw TestFailure("record: \(result.stderr)") }
        }
    }

    static func sync(_ store: String, _ url: String, _ token: String, serverKey: String? = nil) throws -> CLI.Result {
        try CLI.run(["sync", "--store", store, "--server", url, "--token", token] + (serverKey.map { ["--server-key", $0] } ?? []))
    }

    @Test func anLMDBServerBackedUpWhileServingRestoresAndTheDevicesFillItIn() async throws {
        try await onOwnThread {
            let scratch = try TemporaryDirectory()
            defer { scratch.remove() }
            let data = scratch.appending("data")
            var server = try TLSServeTests.Server([], scratch: scratch, scheme: "http")
            var url = "http://127.0.0.1:\(server.port)"
            let serverKey = server.serverKey
            var tokens: [String: String] = [:]
            for device in ["kiosk-1", "kiosk-2"] {
                tokens[device] = try CLI.run(["enroll", "--data", data, "--device", device]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
                try Self.record(scratch.appending(device), device, users: ["alice", "bob"])
                let synced = try Self.sync(scratch.appending(device), url, tokens[device]!, serverKey: serverKey)
                #expect(synced.status == 0, "\(synced.stderr)")
            }
            // The backup, while the server runs.
            let backup = scratch.appending("backup")
            let script = Self.repository.appendingPathComponent("tools/backup-server.sh").path
            let copied = try CLI.run([script, "--data", data, "--to", backup, "--onboard", CLI.binary.path], executable: URL(fileURLWithPath: "/bin/bash"))
            #expect(
                copied.status == 0 && copied.stdout.contains("(2 device replicas)") && copied.stderr.contains("audits clean"),
                "\(copied.stdout)\(copied.stderr)")
            #expect(try FileManager.default.attributesOfItem(atPath: backup + "/server/signing.key")[.posixPermissions] as? Int == 0o600)
            // A second backup into the same place is refused and leaves the first intact.
            let again = try CLI.run([script, "--data", data, "--to", backup], executable: URL(fileURLWithPath: "/bin/bash"))
            #expect(again.status == 73 && FileManager.default.fileExists(atPath: backup + "/server/data.mdb"), "\(again.stderr)")

            // After the backup kiosk-1 uploads more; then the server's disk is lost.
            try Self.record(scratch.appending("kiosk-1"), "kiosk-1", users: ["carol"])
            #expect(try Self.sync(scratch.appending("kiosk-1"), url, tokens["kiosk-1"]!).status == 0)
            #expect(server.stop() == 0)
            try FileManager.default.removeItem(atPath: data)
            try FileManager.default.moveItem(atPath: backup, toPath: data)

            // The restored server: same key, same tokens; kiosk-1's cursor moves back and it resends.
            let audited = try CLI.run(["audit", "--data", data])
            #expect(audited.status == 0 && audited.stdout.contains("2 devices audited, 0 failed"), "\(audited.stdout)\(audited.stderr)")
            server = try TLSServeTests.Server([], scratch: scratch, scheme: "http")
            defer { _ = server.stop() }
            url = "http://127.0.0.1:\(server.port)"
            #expect(server.serverKey == serverKey)
            let resent = try Self.sync(scratch.appending("kiosk-1"), url, tokens["kiosk-1"]!)
            #expect(
                resent.status == 0 && resent.stdout.contains("1 appended") && resent.stdout.contains("the server holds seq 3"),
                "\(resent.stdout)\(resent.stderr)")
            let unchanged = try Self.sync(scratch.appending("kiosk-2"), url, tokens["kiosk-2"]!)
            #expect(
                unchanged.status == 0 && unchanged.stdout.contains("0 appended") && unchanged.stdout.contains("the server holds seq 2"), "\(unchanged.stdout)")
            let admin = try String(contentsOfFile: data + "/admin.token", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            let history = try TLSServeTests.curl(["-H", "Authorization: Bearer \(admin)", "\(url)/v1/users/alice/history"]).stdout
            #expect(history.components(separatedBy: "\"invalid_password\"").count - 1 == 2, "\(history)")
            #expect(try CLI.run(["audit", "--data", data]).status == 0)
            #expect(server.stop() == 0)

            // No backup at all but the server's signing key (kept apart, docs/operations.md §
            // Restoring from the devices): a new data directory, the devices enrolled again, and
            // each uploads its whole log — to the key it pinned.
            let rebuilt = scratch.appending("rebuilt")
            try FileManager.default.createDirectory(atPath: rebuilt + "/server", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            try FileManager.default.copyItem(atPath: data + "/server/signing.key", toPath: rebuilt + "/server/signing.key")
            try FileManager.default.removeItem(atPath: data)
            try FileManager.default.moveItem(atPath: rebuilt, toPath: data)
            let fresh = try TLSServeTests.Server([], scratch: scratch, scheme: "http")
            defer { _ = fresh.stop() }
            #expect(fresh.serverKey == serverKey)
            for (device, head) in [("kiosk-1", 3), ("kiosk-2", 2)] {
                let token = try CLI.run(["enroll", "--data", data, "--device", device]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
                let uploaded = try Self.sync(scratch.appending(device), "http://127.0.0.1:\(fresh.port)", token)
                #expect(
                    uploaded.status == 0 && uploaded.stdout.contains("\(head) appended") && uploaded.stdout.contains("the server holds seq \(head)"),
                    "\(device): \(uploaded.stdout)\(uploaded.stderr)")
            }
        }
    }

    @Test(.enabled(if: TestDatabase.isEnabled, TestDatabase.skipNote))
    func aPostgreSQLServerDumpedWhileServingRestoresIntoANewDatabase() async throws {
        try await onOwnThread {
            let scratch = try TemporaryDirectory()
            defer { scratch.remove() }
            let source = try TestDatabase.freshDatabase()
            defer { source.drop() }
            let restored = try TestDatabase.freshDatabase()
            defer { restored.drop() }
            let tokenFile = scratch.appending("admin.token")
            let server = try TLSServeTests.Server(["--database", source.url, "--admin-token-file", tokenFile], scratch: scratch, scheme: "http")
            let url = "http://127.0.0.1:\(server.port)"
            let serverKey = server.serverKey
            let token = try CLI.run(["enroll", "--database", source.url, "--device", "kiosk-1"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            let store = scratch.appending("kiosk-1")
            try Self.record(store, "kiosk-1", users: ["alice", "bob"])
            #expect(try Self.sync(store, url, token, serverKey: serverKey).status == 0)

            // pg_dump's custom format while the server runs (one snapshot), pg_restore into a new database.
            let bin = "/usr/lib/postgresql/15/bin/"
            let dump = scratch.appending("onboard.dump")
            let dumped = try CLI.run(["--format=custom", "--file", dump, source.url], executable: URL(fileURLWithPath: bin + "pg_dump"))
            #expect(dumped.status == 0, "pg_dump: \(dumped.stderr)")
            try Self.record(store, "kiosk-1", users: ["carol"])
            #expect(try Self.sync(store, url, token).status == 0)
            #expect(server.stop() == 0)
            let loaded = try CLI.run(["--no-owner", "--exit-on-error", "--dbname", restored.url, dump], executable: URL(fileURLWithPath: bin + "pg_restore"))
            #expect(loaded.status == 0, "pg_restore: \(loaded.stderr)")

            let audited = try CLI.run(["audit", "--database", restored.url])
            #expect(audited.status == 0 && audited.stdout.contains("1 device audited, 0 failed"), "\(audited.stdout)\(audited.stderr)")
            let second = try TemporaryDirectory()
            defer { second.remove() }
            let node = try TLSServeTests.Server(["--database", restored.url], scratch: second, scheme: "http")
            defer { _ = node.stop() }
            #expect(node.serverKey == serverKey && !node.banner.contains("created the admin token"), "\(node.banner)")
            let resent = try Self.sync(store, "http://127.0.0.1:\(node.port)", token)
            #expect(
                resent.status == 0 && resent.stdout.contains("1 appended") && resent.stdout.contains("the server holds seq 3"),
                "\(resent.stdout)\(resent.stderr)")
            let admin = try String(contentsOfFile: tokenFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(
                try TLSServeTests.curl([
                    "-o", "/dev/null", "-w", "%{http_code}", "-H", "Authorization: Bearer \(admin)", "http://127.0.0.1:\(node.port)/v1/devices"
                ]).stdout == "200")
        }
    }
}
