import Foundation
import OnboardingModel
import OnboardingProjections
@testable import OnboardingServer
import OnboardingStore
import Testing
import TestSupport

/// `GET /v1/token` (what the presented token may do: the console's role check) and `GET
/// /v1/policy` (the lockout policy the server runs, shown beside a user's lockout).
@Suite struct TokenAndPolicyEndpointTests {
    static func isTokenID(_ value: JSONValue?) -> Bool {
        guard let text = value?.stringValue else { return false }
        return text.count == 16 && text.allSatisfy { $0.isHexDigit && !$0.isUppercase }
    }

    @Test(arguments: TestDatabase.storages) func eachRoleIsDescribedAndNothingElseIsLetIn(storage: String) async throws {
        let fixture = try ConsoleFixture(storage: storage)
        defer { fixture.close() }
        let admin = try fixture.get(SyncPaths.token, token: fixture.admin)
        #expect(admin.status == 200)
        #expect(admin.body["role"] == .string("admin") && admin.body["device"] == .null)
        #expect(Self.isTokenID(admin.body["id"]))
        // The actor is the one the admin's actions are recorded under.
        let clear = ServerActionTests.clear(fixture, "alice")
        #expect(clear.status == 200)
        let action = try JSONValue.parse(bytes: clear.body)["action"]
        #expect(admin.body["actor"] != nil && admin.body["actor"] == action?["actor"], "\(admin.body)")

        let auditor = try fixture.get(SyncPaths.token)
        #expect(auditor.status == 200)
        #expect(auditor.body["role"] == .string("auditor") && auditor.body["device"] == .null && auditor.body["actor"] == .null)
        #expect(Self.isTokenID(auditor.body["id"]) && auditor.body["id"] != admin.body["id"])

        let (_, deviceToken) = try fixture.device("kiosk-7")
        let device = try fixture.get(SyncPaths.token, token: deviceToken)
        #expect(device.status == 200)
        #expect(device.body["role"] == .string("device") && device.body["device"] == .string("kiosk-7") && device.body["actor"] == .null)
        // The id is the one the device's token list shows (and revokes by).
        let listed = try fixture.get(SyncPaths.devices, token: fixture.admin)
        let entry = ConsoleFixture.array(listed.body["devices"]).first { $0["device"] == .string("kiosk-7") }
        let ids = ConsoleFixture.array(entry?["tokens"]).compactMap { $0["id"]?.stringValue }
        #expect(ids.contains(device.body["id"]?.stringValue ?? "?"), "\(listed.body)")

        #expect(fixture.call("GET", SyncPaths.token, token: nil).status == 401)
        #expect(fixture.call("GET", SyncPaths.token, token: String(repeating: "0", count: 64)).status == 401)
        #expect(fixture.call("GET", SyncPaths.token, token: "bad\u{7}token").status == 401)
        #expect(fixture.call("DELETE", SyncPaths.token, token: fixture.admin).status == 405)
        // A revoked token is no longer described.
        #expect(fixture.call("DELETE", SyncPaths.tokens(device: "kiosk-7"), token: fixture.admin).status == 204)
        #expect(fixture.call("GET", SyncPaths.token, token: deviceToken).status == 401)
    }

    @Test(arguments: TestDatabase.storages) func thePolicyIsTheServersAndReadsBackAsAPolicyFile(storage: String) async throws {
        let fixture = try ConsoleFixture(storage: storage)
        defer { fixture.close() }
        let response = fixture.call("GET", SyncPaths.policy, token: fixture.auditor)
        #expect(response.status == 200)
        #expect(response.headers["content-type"]?.hasPrefix("application/json") == true)
        let policy = try LockoutPolicy.parse(json: String(decoding: response.body, as: UTF8.self))
        #expect(policy == .mediawiki)
        // The preset's first password tier as docs/lockout.md § Presets gives it: 5 per 300 s.
        #expect(policy.password.tiers.first.map { [$0.limit, $0.windowSeconds] } == [5, 300])
        #expect(fixture.call("GET", SyncPaths.policy, token: fixture.admin).status == 200)
        let (_, deviceToken) = try fixture.device("a")
        #expect(fixture.call("GET", SyncPaths.policy, token: deviceToken).status == 403)
        #expect(fixture.call("GET", SyncPaths.policy, token: nil).status == 401)
    }

    @Test func aServerGivenAnotherPolicyServesThatOne() throws {
        let directory = try TemporaryDirectory()
        let owasp = try #require(LockoutPolicy.named("owasp"))
        let server = try SyncServer(dataDirectory: directory.appending("server"), policy: owasp)
        defer { server.close() }
        let auditor = try server.issueToken(role: .auditor)
        let response = server.handle(SyncRequest(method: "GET", path: SyncPaths.policy, headers: ["authorization": "Bearer \(auditor)"]))
        #expect(response.status == 200)
        #expect(try LockoutPolicy.parse(json: String(decoding: response.body, as: UTF8.self)) == owasp)
        #expect(owasp != .mediawiki)
    }
}
