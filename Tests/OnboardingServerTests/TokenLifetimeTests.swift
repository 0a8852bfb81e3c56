import Foundation
import OnboardingModel
@testable import OnboardingServer
import OnboardingStore
import PostgreSQL
import Synchronization
import Testing
import TestSupport

/// Token lifetimes (docs/operations.md § Rotating tokens and keys): device and auditor tokens
/// expire after the server's lifetime (90 days by default) and are then refused with 401
/// `token_expired`; a token is rotated with `POST /v1/token`, the old one valid until its own
/// expiry; the admin token never expires and is replaced in one transaction.
@Suite struct TokenLifetimeTests {
    static let day: Int64 = 86_400_000
    static let start = ConsoleFixture.start

    /// A server clock the test moves.
    final class Clock: Sendable {
        let now = Mutex(TokenLifetimeTests.start)
        var read: @Sendable () -> Timestamp { { self.now.withLock { $0 } } }
        func set(days: Int64, plus milliseconds: Int64 = 0) {
            now.withLock { $0 = TokenLifetimeTests.start.adding(milliseconds: days * TokenLifetimeTests.day + milliseconds) }
        }
    }

    static func code(_ response: SyncResponse) -> String? { SyncWire.error(from: response.body)?.wireCode }

    @Test(arguments: TestDatabase.storages) func deviceAndAuditorTokensExpireWithTheirOwnCodeAndTheAdminsNever(storage: String) async throws {
        let clock = Clock()
        let fixture = try ConsoleFixture(storage: storage, clock: clock.read)
        defer { fixture.close() }
        let (_, device) = try fixture.device("kiosk-7")
        let described = try fixture.get(SyncPaths.token, token: device)
        #expect(described.body["expires_at"] == .string(Self.start.adding(milliseconds: 90 * Self.day).iso8601), "\(described.body)")
        // The device list shows the expiry beside each token's id.
        let listed = ConsoleFixture.array(try fixture.get(SyncPaths.devices).body["devices"]).first { $0["device"] == .string("kiosk-7") }
        #expect(ConsoleFixture.array(listed?["tokens"]).first?["expires_at"] == described.body["expires_at"])

        clock.set(days: 90, plus: -1)
        #expect(fixture.call("GET", SyncPaths.cursor(device: "kiosk-7"), token: device).status == 200)
        #expect(fixture.call("GET", SyncPaths.devices, token: fixture.auditor).status == 200)
        clock.set(days: 90)
        let expired = fixture.call("GET", SyncPaths.cursor(device: "kiosk-7"), token: device)
        #expect(expired.status == 401 && Self.code(expired) == "token_expired")
        let message = SyncWire.error(from: expired.body)?.message ?? ""
        #expect(
            message.contains("expired at \(Self.start.adding(milliseconds: 90 * Self.day).iso8601)") && message.contains("onboard enroll --device kiosk-7"),
            "\(message)")
        #expect(!message.contains(device), "an error never echoes the token")
        let auditor = fixture.call("GET", SyncPaths.devices, token: fixture.auditor)
        #expect(auditor.status == 401 && Self.code(auditor) == "token_expired")
        #expect(SyncWire.error(from: auditor.body)?.message.contains("onboard enroll --auditor") == true)
        // Far in the future the admin token still works: it is rotated, never expired.
        clock.set(days: 3_650 * 3)
        let admin = try fixture.get(SyncPaths.token, token: fixture.admin)
        #expect(admin.status == 200 && admin.body["expires_at"] == .null)
        // A token issued now lives its own 90 days from now.
        let fresh = try SyncWire.token(from: fixture.call("POST", SyncPaths.auditorTokens, token: fixture.admin).body)
        #expect(fixture.call("GET", SyncPaths.devices, token: fresh).status == 200)
    }

    @Test(arguments: TestDatabase.storages) func rotationIssuesANewTokenWhileTheOldOneLivesOutItsLifetime(storage: String) async throws {
        let clock = Clock()
        let fixture = try ConsoleFixture(storage: storage, clock: clock.read)
        defer { fixture.close() }
        let (store, old) = try fixture.device("kiosk-7")
        clock.set(days: 30)
        let answer = fixture.call("POST", SyncPaths.token, token: old)
        #expect(answer.status == 201, "\(String(decoding: answer.body, as: UTF8.self))")
        let body = try JSONValue.parse(bytes: answer.body)
        #expect(body["role"] == .string("device") && body["device"] == .string("kiosk-7"))
        #expect(body["server_key"] == .string(fixture.server.signingKey.publicKey.hex))
        #expect(body["expires_at"] == .string(Self.start.adding(milliseconds: 120 * Self.day).iso8601))
        let new = try SyncWire.token(from: answer.body)
        #expect(new != old)

        // Both work: a device switches whenever it likes.
        _ = try await store.append([ConsoleFixture.event("kiosk-7", 0)])
        try fixture.upload("kiosk-7", token: new)
        #expect(fixture.call("GET", SyncPaths.cursor(device: "kiosk-7"), token: old).status == 200)
        // The old one ends at its own expiry, the new one at its own.
        clock.set(days: 90)
        #expect(Self.code(fixture.call("GET", SyncPaths.cursor(device: "kiosk-7"), token: old)) == "token_expired")
        #expect(fixture.call("GET", SyncPaths.cursor(device: "kiosk-7"), token: new).status == 200)
        // An expired token cannot rotate itself: the admin issues a new one.
        let late = fixture.call("POST", SyncPaths.token, token: old)
        #expect(late.status == 401 && Self.code(late) == "token_expired")
        // An auditor rotates too; the admin token is rotated on the server machine only.
        let auditor = fixture.call(
            "POST", SyncPaths.token, token: try SyncWire.token(from: fixture.call("POST", SyncPaths.auditorTokens, token: fixture.admin).body))
        #expect(auditor.status == 201)
        #expect(try JSONValue.parse(bytes: auditor.body)["role"] == .string("auditor"))
        let admin = fixture.call("POST", SyncPaths.token, token: fixture.admin)
        #expect(admin.status == 403 && SyncWire.error(from: admin.body)?.message.contains("onboard enroll --rotate-admin") == true)
        // DELETE /v1/auditors ends every auditor token, rotated ones included; the admin's stays.
        let rotatedAuditor = try SyncWire.token(from: auditor.body)
        #expect(fixture.call("DELETE", SyncPaths.auditorTokens, token: rotatedAuditor).status == 403)
        #expect(fixture.call("DELETE", SyncPaths.auditorTokens, token: fixture.admin).status == 204)
        #expect(Self.code(fixture.call("GET", SyncPaths.devices, token: rotatedAuditor)) == "unauthorized")
        #expect(fixture.call("GET", SyncPaths.devices, token: fixture.admin).status == 200)
        // A revoke ends every token of the device, rotated ones included.
        #expect(fixture.call("DELETE", SyncPaths.tokens(device: "kiosk-7"), token: fixture.admin).status == 204)
        #expect(Self.code(fixture.call("GET", SyncPaths.cursor(device: "kiosk-7"), token: new)) == "unauthorized")
    }

    @Test func theClientLearnsOfAnExpiredTokenAndRotatesThroughTheTransport() async throws {
        let clock = Clock()
        let fixture = try ConsoleFixture(storage: "lmdb", clock: clock.read)
        defer { fixture.close() }
        let (store, token) = try fixture.device("kiosk-7")
        _ = try await store.append([ConsoleFixture.event("kiosk-7", 0)])
        let server = fixture.server
        let transport = InMemoryTransport { server.handle($0) }
        let tokens = SyncTokenClient(transport: transport, token: token)
        let status = try await tokens.status()
        #expect(status.role == "device" && status.device == "kiosk-7" && status.id == TokenStore.tokenID(of: token))
        #expect(status.expiresAt == Self.start.adding(milliseconds: 90 * Self.day))
        clock.set(days: 60)
        let renewed = try await tokens.rotate()
        #expect(renewed.expiresAt == Self.start.adding(milliseconds: 150 * Self.day))

        clock.set(days: 100)
        let client = SyncClient(store: store, transport: transport, token: token, sleep: { _ in })
        await #expect { try await client.run() } throws: { error in
            guard let error = error as? SyncError else { return false }
            return error.code == .tokenExpired && error.message.contains("expired") && error.message.contains("onboard enroll --device kiosk-7")
        }
        await #expect { try await tokens.rotate() } throws: { ($0 as? SyncError)?.code == .tokenExpired }
        let summary = try await SyncClient(store: store, transport: transport, token: renewed.token, sleep: { _ in }).run()
        #expect(summary.acknowledgedSeq == 1)
    }

    @Test func expiredTokensCountAsFailedAuthentication() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let clock = Clock()
        var options = SyncServer.Options()
        options.clock = clock.read
        options.rateLimits = .off
        options.rateLimits.failedAuthenticationPerAddress = RequestRate(perSecond: 1, burst: 3)
        let server = try SyncServer(dataDirectory: directory.appending("server"), options: options)
        defer { server.close() }
        let token = try server.enroll(device: "kiosk-7")
        clock.set(days: 91)
        let request = SyncRequest(
            method: "GET", path: SyncPaths.cursor(device: "kiosk-7"), headers: ["authorization": "Bearer \(token)"],
            clientAddress: "192.0.2.9")
        let statuses = (0..<5).map { _ in server.handle(request).status }
        #expect(statuses == [401, 401, 401, 429, 429])
    }

    @Test(arguments: TestDatabase.storages) func theAdminTokenIsReplacedInOneTransaction(storage: String) async throws {
        let fixture = try ConsoleFixture(storage: storage)
        defer { fixture.close() }
        struct Refused: Error {}
        // A failure before the commit (the token file could not be written) changes nothing.
        #expect(throws: Refused.self) { try fixture.server.rotateAdminToken { _ in throw Refused() } }
        #expect(fixture.call("GET", SyncPaths.token, token: fixture.admin).status == 200)
        var seen: String?
        let rotated = try fixture.server.rotateAdminToken { seen = $0 }
        #expect(seen == rotated.token && rotated.revoked == 1)
        #expect(Self.code(fixture.call("GET", SyncPaths.token, token: fixture.admin)) == "unauthorized")
        let admin = try fixture.get(SyncPaths.token, token: rotated.token)
        #expect(admin.body["role"] == .string("admin") && admin.body["expires_at"] == .null)
        // Every node sees it at once (on LMDB: the server after a restart).
        let other = try fixture.reopen()
        #expect(fixture.call("GET", SyncPaths.token, token: rotated.token, through: other).status == 200)
        #expect(fixture.call("GET", SyncPaths.token, token: fixture.admin, through: other).status == 401)
    }

    @Test func lmdbTokensFromBeforeLifetimesGetTheDefaultOneAtTheUpgrade() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.appending("server")
        let before = Timestamp.now
        do {
            let tokens = try TokenStore(directory: path)
            defer { tokens.close() }
            // As an older onboard wrote them: no issue time, then one without an expiry line.
            try tokens.environment.write { transaction in
                try transaction.put(tokens.tokens, key: TokenStore.key("obt_old_device"), value: Array("device\nkiosk-7".utf8))
                try transaction.put(tokens.tokens, key: TokenStore.key("obt_old_auditor"), value: Array("auditor\n\n1796054400000".utf8))
                try transaction.put(tokens.tokens, key: TokenStore.key("obt_old_admin"), value: Array("admin\n\n1796054400000".utf8))
            }
        }
        let tokens = try TokenStore(directory: path)
        defer { tokens.close() }
        for name in ["obt_old_device", "obt_old_auditor"] {
            let expiry = try #require(tokens.grant(for: name)?.expiresAt)
            #expect(expiry.millisecondsSince1970 >= before.millisecondsSince1970 + TokenLifetime.defaultMilliseconds)
            #expect(expiry.millisecondsSince1970 <= Timestamp.now.millisecondsSince1970 + TokenLifetime.defaultMilliseconds)
        }
        #expect(tokens.grant(for: "obt_old_device")?.device == "kiosk-7")
        #expect(tokens.grant(for: "obt_old_admin").map { $0.role == .admin && $0.expiresAt == nil } == true)
        #expect(try tokens.allTokens().first { $0.grant.role == .auditor }?.issuedAt == Self.start)
    }

    @Test(.enabled(if: TestDatabase.isEnabled, TestDatabase.skipNote))
    func postgresTokensFromBeforeLifetimesGetTheDefaultOneAtTheUpgrade() async throws {
        try await onOwnThread {
            try withFreshDatabase { url in
                let text = try TestDatabase.url(database: url.parameters["dbname"]!)
                let first = try SyncServer(databaseURL: text, options: SyncServer.Options())
                let admin = try #require(first.createdAdminToken)
                let device = try first.enroll(device: "kiosk-7")
                first.close()
                // Back to version 3, as the previous onboard left it.
                let connection = try PGConnection(url: url)
                defer { connection.close() }
                try PostgresSchemaRollback.undoVersionFour(connection)
                let before = Timestamp.now
                let upgraded = try SyncServer(databaseURL: text, options: SyncServer.Options(), createsAdminToken: false)
                defer { upgraded.close() }
                #expect(try connection.execute("SELECT max(version)::int8 FROM onboard_schema")[0].int64(0) == 4)
                let expiry = try #require(try upgraded.storage.grant(for: device)?.expiresAt)
                #expect(expiry.millisecondsSince1970 >= before.millisecondsSince1970 + TokenLifetime.defaultMilliseconds - 1_000)
                #expect(expiry.millisecondsSince1970 <= Timestamp.now.millisecondsSince1970 + TokenLifetime.defaultMilliseconds + 1_000)
                #expect(try upgraded.storage.grant(for: admin).map { $0.role == .admin && $0.expiresAt == nil } == true)
                // A node not yet upgraded inserts tokens without an expiry: the column's default gives one.
                try connection.execute("INSERT INTO tokens (token_hash, role) VALUES ($1, 'auditor')", [.bytes(TokenStore.key("obt_from_an_old_node"))])
                let old = try #require(try upgraded.storage.grant(for: "obt_from_an_old_node")?.expiresAt)
                #expect(old.millisecondsSince1970 >= before.millisecondsSince1970 + TokenLifetime.defaultMilliseconds - 1_000)
                #expect(try upgraded.rotateAdminToken().revoked == 1)
                #expect(try connection.execute("SELECT count(*)::int8 FROM tokens WHERE role = 'admin' AND expires_at_ms IS NULL")[0].int64(0) == 1)
            }
        }
    }

    /// `--token-lifetime` as `onboard serve` and `onboard enroll` read it, hostile values included.
    @Test func lifetimesParseStrictly() {
        #expect(TokenLifetime.parse("90d") == .some(90 * Self.day))
        #expect(TokenLifetime.parse("12h") == .some(12 * 3_600_000))
        #expect(TokenLifetime.parse("30m") == .some(30 * 60_000))
        #expect(TokenLifetime.parse("45s") == .some(45_000))
        #expect(TokenLifetime.parse("3650d") == .some(TokenLifetime.maximumMilliseconds))
        #expect(TokenLifetime.parse("off") == .some(nil))
        for bad in [
            "", "0d", "-1d", "3651d", "18446744073709551615s", "9223372036854775807s", "1.5d", "d", "90", "90D", " 90d", "90d\n",
            "+90d", "90 d", "OFF", "9e1d", "٩٠d", "90\u{0}d", "87600h1"
        ] {
            #expect(TokenLifetime.parse(bad) == nil, "\(bad.debugDescription)")
        }
        for lifetime: Int64? in [nil, 90 * Self.day, 36 * 3_600_000, 90 * 60_000, 45_000] {
            #expect(TokenLifetime.parse(TokenLifetime.describe(lifetime)) == .some(lifetime))
        }
    }
}
