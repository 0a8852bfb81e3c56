import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Token lifetimes and rotation from the command line, against a running `onboard serve`:
/// `onboard enroll` prints the expiry, `onboard token` shows and rotates a token, `onboard enroll
/// --rotate-admin` replaces the admin token in its file only, and `onboard sync` says what to do
/// with an expired token. The admin token is checked with curl, a client we did not write.
@Suite(.serialized, .slow) struct TokenRotationCLITests {
    static func curlStatus(_ port: Int, _ path: String, token: String) throws -> String {
        try TLSServeTests.curl(["-o", "/dev/null", "-w", "%{http_code}", "-H", "Authorization: Bearer \(token)", "http://127.0.0.1:\(port)\(path)"]).stdout
    }

    static func line(_ text: String) -> String { text.trimmingCharacters(in: .whitespacesAndNewlines) }

    /// `body` on a thread of its own with a running `onboard serve` (plain HTTP): its scratch
    /// directory, the server, its data directory and its URL.
    static func withServer(_ body: @escaping @Sendable (TemporaryDirectory, TLSServeTests.Server, String, String) throws -> Void) async throws {
        try await onOwnThread {
            let scratch = try TemporaryDirectory()
            defer { scratch.remove() }
            let server = try TLSServeTests.Server([], scratch: scratch, scheme: "http")
            defer { _ = server.stop() }
            try body(scratch, server, scratch.appending("data"), "http://127.0.0.1:\(server.port)")
        }
    }

    @Test func aDeviceRotatesItsTokenWithoutDowntimeAndTheAdminTokenIsReplacedInItsFileOnly() async throws {
        try await Self.withServer { scratch, server, data, url in

            let enrolled = try CLI.run(["enroll", "--data", data, "--device", "kiosk-7"])
            #expect(enrolled.status == 0, "\(enrolled.stderr)")
            let old = Self.line(enrolled.stdout)
            #expect(old.hasPrefix("obt_") && enrolled.stderr.contains("the token expires at "), "\(enrolled.stderr)")
            let shown = try CLI.run(["token", "--server", url, "--token", old])
            #expect(
                shown.status == 0 && shown.stdout.contains("device token ") && shown.stdout.contains(" of kiosk-7: expires "), "\(shown.stdout)\(shown.stderr)")
            #expect(shown.stdout.contains("(in 90 days)"), "\(shown.stdout)")

            // Rotation: the new token alone on stdout; the old one keeps working.
            let rotated = try CLI.run(["token", "--server", url, "--token", old, "--rotate"])
            #expect(rotated.status == 0, "\(rotated.stderr)")
            let new = Self.line(rotated.stdout)
            #expect(new.hasPrefix("obt_") && new != old && rotated.stdout.split(separator: "\n").count == 1)
            #expect(rotated.stderr.contains("stays valid until"), "\(rotated.stderr)")
            let store = scratch.appending("kiosk.lmdb")
            #expect(
                try CLI.run([
                    "record", #"{"type":"sign_in_failed","user":"bob","method":"password","reason":"invalid_password"}"#,
                    "--store", store, "--device", "kiosk-7"
                ]).status == 0)
            let synced = try CLI.run(["sync", "--store", store, "--server", url, "--token", new])
            #expect(synced.status == 0, "\(synced.stderr)")
            #expect(try Self.curlStatus(server.port, "/v1/devices/kiosk-7/cursor", token: old) == "200")

            // The admin token: replaced in its 0600 file, never printed; the running server
            // refuses the old one at once.
            let tokenFile = scratch.appending("data/admin.token")
            let firstAdmin = Self.line(try String(contentsOfFile: tokenFile, encoding: .utf8))
            #expect(try Self.curlStatus(server.port, "/v1/token", token: firstAdmin) == "200")
            let rotation = try CLI.run(["enroll", "--data", data, "--rotate-admin"])
            #expect(rotation.status == 0 && rotation.stdout.isEmpty, "\(rotation.stdout)\(rotation.stderr)")
            #expect(rotation.stderr.contains("the new one is in \(tokenFile) (mode 0600); 1 old admin token revoked"), "\(rotation.stderr)")
            let secondAdmin = Self.line(try String(contentsOfFile: tokenFile, encoding: .utf8))
            #expect(secondAdmin.hasPrefix("obt_") && secondAdmin != firstAdmin && !rotation.stderr.contains(secondAdmin))
            #expect(try FileManager.default.attributesOfItem(atPath: tokenFile)[.posixPermissions] as? Int == 0o600)
            #expect(!FileManager.default.fileExists(atPath: tokenFile + ".new"))
            #expect(try Self.curlStatus(server.port, "/v1/token", token: firstAdmin) == "401")
            #expect(try Self.curlStatus(server.port, "/v1/devices", token: secondAdmin) == "200")
            // The server's log never holds a token.
            for token in [old, new, firstAdmin, secondAdmin] { #expect(!server.errors.contains(token) && !server.banner.contains(token)) }

            // Hostile or contradictory options: one line, exit 64, nothing rotated.
            for arguments in [
                ["--rotate-admin", "--device", "kiosk-7"], ["--rotate-admin", "--token-lifetime", "1d"],
                ["--rotate-admin", "--admin-token-file", scratch.appending("x")], ["--auditor", "--token-lifetime", "-1d"],
                ["--auditor", "--token-lifetime", "18446744073709551615d"], ["--auditor", "--token-lifetime", "90d\u{1b}[2J"],
                ["--device", "kiosk-7", "--revoke", "--token-lifetime", "1d"]
            ] {
                let refused = try CLI.run(["enroll", "--data", data] + arguments)
                #expect(
                    refused.status == 64 && refused.stderr.split(separator: "\n").count == 1 && refused.stdout.isEmpty,
                    "\(arguments): \(refused.status) \(refused.stderr)")
                #expect(!refused.stderr.contains("\u{1b}"), "control characters are escaped: \(refused.stderr.debugDescription)")
            }
            #expect(Self.line(try String(contentsOfFile: tokenFile, encoding: .utf8)) == secondAdmin)
            let nowhere = try CLI.run(["enroll", "--data", scratch.appending("no-such-server"), "--rotate-admin"])
            #expect(nowhere.status == 66 && nowhere.stderr.contains("holds no sync server"), "\(nowhere.stderr)")
        }
    }

    @Test func anExpiredTokenIsNamedAsSuchAndCannotBeRotated() async throws {
        try await Self.withServer { scratch, server, data, url in
            let enrolled = try CLI.run(["enroll", "--data", data, "--device", "kiosk-7", "--token-lifetime", "1s"])
            #expect(enrolled.status == 0, "\(enrolled.stderr)")
            let token = Self.line(enrolled.stdout)
            let store = scratch.appending("kiosk.lmdb")
            #expect(
                try CLI.run([
                    "record", #"{"type":"sign_in_failed","user":"bob","method":"password","reason":"invalid_password"}"#,
                    "--store", store, "--device", "kiosk-7"
                ]).status == 0)
            // The command line takes no clock: the lifetime is real time, a second of it.
            Thread.sleep(forTimeInterval: 1.2)
            let synced = try CLI.run(["sync", "--store", store, "--server", url, "--token", token])
            #expect(synced.status == 77, "\(synced.stderr)")
            #expect(synced.stderr.contains("expired") && synced.stderr.contains("onboard enroll --device kiosk-7"), "\(synced.stderr)")
            #expect(synced.stderr.split(separator: "\n").count == 1 && !synced.stderr.contains(token))
            let rotation = try CLI.run(["token", "--server", url, "--token", token, "--rotate"])
            #expect(rotation.status == 77 && rotation.stdout.isEmpty && rotation.stderr.contains("token_expired"), "\(rotation.stderr)")
        }
    }

    @Test func theServersLifetimeComesFromItsOptionsAndBadOnesAreRefused() async throws {
        try await onOwnThread {
            let scratch = try TemporaryDirectory()
            defer { scratch.remove() }
            for value in ["0s", "-1d", "18446744073709551615s", "1.5d", "forever", ""] {
                let refused = try CLI.run(["serve", "--port", "0", "--data", scratch.appending("d"), "--token-lifetime", value])
                #expect(refused.status == 64 && refused.stderr.contains("--token-lifetime must be"), "\(value): \(refused.stderr)")
                guard !value.isEmpty else { continue } // an empty variable is no setting (docs/operations.md § Configuration)
                let fromEnvironment = try CLI.run(
                    ["serve", "--port", "0", "--data", scratch.appending("d"), "--check-config"],
                    environment: ["ONBOARD_SERVE_TOKEN_LIFETIME": value])
                #expect(fromEnvironment.status == 64, "$ONBOARD_SERVE_TOKEN_LIFETIME=\(value): \(fromEnvironment.stderr)")
            }
            let checked = try CLI.run(
                ["serve", "--port", "0", "--data", scratch.appending("d"), "--check-config"],
                environment: ["ONBOARD_SERVE_TOKEN_LIFETIME": "12h"])
            #expect(checked.status == 0 && checked.stdout.contains("token-lifetime = 12h  (environment)"), "\(checked.stdout)\(checked.stderr)")
            // A server with a 12-hour lifetime issues tokens that say so.
            let server = try TLSServeTests.Server(["--token-lifetime", "12h"], scratch: scratch, scheme: "http")
            defer { _ = server.stop() }
            let admin = Self.line(try String(contentsOfFile: scratch.appending("data/admin.token"), encoding: .utf8))
            let issued = try TLSServeTests.curl(["-X", "POST", "-H", "Authorization: Bearer \(admin)", "http://127.0.0.1:\(server.port)/v1/auditors"])
            let token = try #require(issued.stdout.split(separator: "\"").first { $0.hasPrefix("obt_") }.map(String.init), "\(issued.stdout)")
            let shown = try CLI.run(["token", "--server", "http://127.0.0.1:\(server.port)", "--token", token])
            #expect(shown.stdout.contains("auditor token ") && shown.stdout.contains("(within a day)"), "\(shown.stdout)\(shown.stderr)")
        }
    }
}
