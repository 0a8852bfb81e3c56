import Foundation
import OnboardingModel
import OnboardingServer
import OnboardingStore
import Testing
import TestSupport

/// What docs/openapi.yaml promises and HTTP requires of every answer, checked on the router
/// (the schemathesis run in OnboardCLITests checks the same over HTTP, with generated requests).
@Suite struct ProtocolConformanceTests {
    typealias Fixture = SyncServerTests.Fixture

    /// RFC 9110 § 15.5.6: a 405 carries `Allow` with the methods the path takes.
    @Test(arguments: TestDatabase.storages) func a405NamesTheMethodsOfItsPathInAllow(storage: String) throws {
        let fixture = try Fixture(storage: storage)
        defer { fixture.close() }
        for (method, path, allowed) in [
            ("POST", "/v1/health", "GET"), ("PUT", "/v1/devices", "GET, POST"), ("PUT", "/v1/auditors", "POST, DELETE"),
            ("DELETE", "/v1/token", "GET, POST"),
            ("POST", "/v1/users", "GET"), ("DELETE", "/v1/actions", "GET"), ("POST", "/v1/devices/kiosk-7/audit", "GET"),
            ("GET", "/v1/devices/kiosk-7/tokens/0123456789abcdef", "DELETE"), ("GET", "/v1/users/alice/lockout/clear", "POST"),
            ("PUT", "/v1/users/alice/counts", "GET"), ("POST", "/v1/devices/kiosk-7/counts", "GET"),
            ("POST", "/v1/users/alice/export?format=csv", "GET"), ("DELETE", "/v1/devices/kiosk-7/export", "GET"),
            ("POST", "/v1/audit", "GET"), ("PUT", "/v1/devices/kiosk-7/tokens", "POST, DELETE"),
            ("TRACE", "/v1/devices/kiosk-7/cursor", "GET"), ("GET", "/v1/devices/kiosk-7/events", "POST"),
            ("POST", "/v1/devices/kiosk-7/history", "GET"), ("DELETE", "/v1/users/alice/history", "GET"),
            ("PATCH", "/v1/users/alice/lockout?at=2026-11-29T16:00:00Z", "GET"), ("GET", "/v1/users/alice/forget", "POST")
        ] {
            let response = fixture.call(method, path, token: fixture.admin)
            #expect(response.status == 405, "\(method) \(path)")
            #expect(response.headers["allow"] == allowed, "\(method) \(path)")
            #expect(SyncServerTests.errorCode(response) == "method_not_allowed")
        }
        // A path the router does not know has no methods to list: 404, no Allow.
        let unknown = fixture.call("PUT", "/v1/devices/kiosk-7/elsewhere", token: fixture.admin)
        #expect(unknown.status == 404 && unknown.headers["allow"] == nil)
    }

    /// Every endpoint with `{user}` in its path checks it as the envelope's `user`: 1–256 bytes
    /// of UTF-8 without a control character, else 400 — a history or lockout of an id that no
    /// event can carry is a client bug, not an empty answer.
    @Test(arguments: TestDatabase.storages) func everyUserEndpointRefusesAnInvalidUserIdWith400(storage: String) throws {
        let fixture = try Fixture(storage: storage)
        defer { fixture.close() }
        let auditor = try fixture.server.issueToken(role: .auditor)
        let longest = String(repeating: "é", count: Limits.maximumUserBytes / 2)
        for (user, valid) in [
            ("alice", true), (longest, true), (longest + "x", false), ("a\u{1B}b", false),
            ("a\u{85}", false), ("a\u{7F}", false), ("a\nb", false), ("\u{9F}", false)
        ] {
            let encoded = SyncPaths.percentEncoded(user)
            for (method, path, token) in [
                ("GET", "/v1/users/\(encoded)/history", auditor), ("GET", "/v1/users/\(encoded)/lockout", auditor),
                ("POST", "/v1/users/\(encoded)/forget", fixture.admin)
            ] {
                let response = fixture.call(method, path, token: token)
                #expect(response.status == (valid ? 200 : 400), "\(method) \(path)")
                if !valid { #expect(SyncWire.error(from: response.body)?.message.hasPrefix("user must ") == true) }
            }
        }
    }

    /// `device=` of a user's history is a device id like the one in a path: an id no device can
    /// have is 400, a valid one that never uploaded is an empty page, an empty one no filter.
    @Test(arguments: TestDatabase.storages) func theHistoryDeviceParameterIsCheckedLikeAPathDevice(storage: String) async throws {
        let fixture = try Fixture(storage: storage)
        defer { fixture.close() }
        let (store, token) = try await fixture.device("kiosk-7", events: 2)
        defer { store.close() }
        #expect(try fixture.upload(store, 1...2, token: token).status == 200)
        let auditor = try fixture.server.issueToken(role: .auditor)
        let path = SyncPaths.history(user: "alice")
        for invalid in ["%C3%97%C3%B8%C2%9B", "bad%20id", "a%2Fb", String(repeating: "x", count: 65), "%0A"] {
            let response = fixture.call("GET", path + "?device=" + invalid, token: auditor)
            #expect(response.status == 400, "device=\(invalid)")
            #expect(SyncServerTests.errorCode(response) == "malformed")
            #expect(SyncWire.error(from: response.body)?.message.hasPrefix("query parameter device: device id ") == true)
        }
        func attempts(_ query: String) throws -> Int? {
            let response = fixture.call("GET", path + query, token: auditor)
            guard response.status == 200, case .object(let members) = try JSONValue.parse(bytes: response.body),
                case .array(let attempts)? = members.first(where: { $0.key == "attempts" })?.value
            else { return nil }
            return attempts.count
        }
        #expect(try attempts("?device=tablet-9") == 0, "a valid id that was never enrolled: an empty page")
        #expect(try attempts("?device=kiosk-7") == 2)
        #expect(try attempts("?device=") == 2, "empty: no filter")
    }
}
