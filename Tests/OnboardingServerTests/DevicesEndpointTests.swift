import Foundation
import OnboardingModel
import OnboardingProjections
@testable import OnboardingServer
import OnboardingStore
import Testing
import TestSupport

/// `GET /v1/devices`, `GET /v1/devices/{device}/audit` and `DELETE /v1/devices/{device}/tokens/{id}`.
@Suite struct DevicesEndpointTests {
    static func devices(_ fixture: ConsoleFixture, _ query: String = "") throws -> (devices: [JSONValue], next: String?) {
        let (status, page) = try fixture.get("/v1/devices" + (query.isEmpty ? "" : "?" + query))
        #expect(status == 200, "\(page)")
        return (ConsoleFixture.array(page["devices"]), page["next_after"]?.stringValue)
    }

    @Test(arguments: TestDatabase.storages) func devicesArePagedInByteOrderWithTheirStatus(storage: String) async throws {
        let fixture = try ConsoleFixture(storage: storage)
        defer { fixture.close() }
        let before = Timestamp.now
        // Byte order: "B" < "a" < "a-1" < "a.1" < "a1".
        for device in ["a1", "a.1", "B", "a", "a-1"] { _ = try fixture.device(device) }
        try await fixture.record([ConsoleFixture.event("a", 0), ConsoleFixture.event("a", 1)])
        let after = Timestamp.now
        var names: [String] = []
        var cursor: String?
        repeat {
            let page = try Self.devices(fixture, "limit=2" + (cursor.map { "&after=\($0)" } ?? ""))
            #expect(page.devices.count <= 2)
            names += page.devices.compactMap { $0["device"]?.stringValue }
            cursor = page.next
        } while cursor != nil && names.count < 20
        #expect(names == ["B", "a", "a-1", "a.1", "a1"])
        let all = try Self.devices(fixture)
        #expect(all.next == nil)
        let a = try #require(all.devices.first { $0["device"] == .string("a") })
        let cursorBody = try SyncWire.cursor(from: fixture.call("GET", SyncPaths.cursor(device: "a"), token: fixture.auditor).body)
        #expect(ConsoleFixture.integer(a["acknowledged_seq"]) == 2 && a["head_hash"] == .string(cursorBody.headHash.hex))
        let uploaded = try Timestamp(iso8601: try #require(a["last_upload_at"]?.stringValue))
        #expect(before.adding(milliseconds: -1000) <= uploaded && uploaded <= after.adding(milliseconds: 1000))
        let enrolled = try Timestamp(iso8601: try #require(a["enrolled_at"]?.stringValue))
        #expect(before.adding(milliseconds: -1000) <= enrolled && enrolled <= uploaded)
        #expect(a["signed_head"] == .null && a["signed_head_status"] == .string("none") && a["public_key"] == .bool(false))
        let b = try #require(all.devices.first { $0["device"] == .string("B") })
        #expect(b["last_upload_at"] == .null && ConsoleFixture.integer(b["acknowledged_seq"]) == 0)
        #expect(b["head_hash"] == .string(Digest.zero.hex))
        let tokens = ConsoleFixture.array(a["tokens"])
        let (_, token) = try fixture.device("a")
        #expect(tokens.map { $0["id"] } == [.string(TokenStore.tokenID(of: token))])
        #expect(tokens.first?["issued_at"]?.stringValue.map { (try? Timestamp(iso8601: $0)) != nil } == true)
        #expect(!String(decoding: fixture.call("GET", "/v1/devices", token: fixture.auditor).body, as: UTF8.self).contains(token), "no token, ever")
        // On the other node, or after a restart, the same (the upload time included).
        let other = try fixture.reopen()
        let again = ConsoleFixture.array(try fixture.get("/v1/devices", through: other).body["devices"])
        #expect(again.first { $0["device"] == .string("a") } == a)
    }

    /// A device enrolled with a key: `current` while its latest signed head is its head, `behind`
    /// once records are held past it.
    @Test(arguments: TestDatabase.storages) func signedHeadStatusIsCurrentBehindOrNone(storage: String) async throws {
        let fixture = try ConsoleFixture(storage: storage)
        defer { fixture.close() }
        var options = OnboardingStore.Options()
        options.deviceID = "kiosk-7"
        let store = try OnboardingStore.open(at: fixture.directory.appending("signing-device"), options: options)
        defer { store.close() }
        _ = try await store.append((0..<5).map { ConsoleFixture.event("kiosk-7", $0) })
        let publicKey = try #require(try store.signingPublicKey())
        let enrolled = fixture.call("POST", SyncPaths.devices, token: fixture.admin, body: SyncWire.enrolBody(device: "kiosk-7", publicKey: publicKey))
        let token = try SyncWire.token(from: enrolled.body)
        let records = try store.records(in: 1...3)
        let upload = fixture.call(
            "POST", SyncPaths.events(device: "kiosk-7"), token: token,
            body: SyncWire.uploadBody(
                device: "kiosk-7", records: records, signedHead: try store.signHead(through: 3),
                keys: try store.syncKeys(for: records)))
        #expect(upload.status == 200)
        var entry = try #require(try Self.devices(fixture).devices.first)
        #expect(entry["signed_head_status"] == .string("current") && entry["public_key"] == .bool(true))
        #expect(ConsoleFixture.integer(entry["signed_head"]?["seq"]) == 3 && entry["signed_head"]?["hash"] == .string(records[2].hash.hex))
        // Records appended past the signed head (as an older server could hold them).
        let more = try store.records(in: 4...5)
        try fixture.server.withDeviceLog(of: "kiosk-7") { log in
            try log.append(more.map(\.event), claimedSeqs: [4, 5], expectedHead: 3, sealedSections: nil)
        }
        entry = try #require(try Self.devices(fixture).devices.first)
        #expect(entry["signed_head_status"] == .string("behind") && ConsoleFixture.integer(entry["acknowledged_seq"]) == 5)
    }

    @Test(arguments: TestDatabase.storages) func oneTokenIsRevokedByItsIdAndTheActionRecorded(storage: String) async throws {
        let fixture = try ConsoleFixture(storage: storage)
        defer { fixture.close() }
        let (_, first) = try fixture.device("kiosk-7")
        let second = try fixture.server.issueToken(role: .device, device: "kiosk-7")
        let (_, other) = try fixture.device("kiosk-8")
        let ids = ConsoleFixture.array(try Self.devices(fixture).devices.first?["tokens"]).compactMap { $0["id"]?.stringValue }
        #expect(Set(ids) == [TokenStore.tokenID(of: first), TokenStore.tokenID(of: second)])
        let path = "/v1/devices/kiosk-7/tokens/" + TokenStore.tokenID(of: first)
        #expect(fixture.call("DELETE", path, token: fixture.auditor).status == 403, "revoking is the admin's")
        #expect(fixture.call("DELETE", path, token: first).status == 403)
        let revoked = fixture.call("DELETE", path, token: fixture.admin)
        #expect(revoked.status == 204 && revoked.body.isEmpty)
        #expect(fixture.call("GET", SyncPaths.cursor(device: "kiosk-7"), token: first).status == 401, "the revoked token is refused")
        #expect(fixture.call("GET", SyncPaths.cursor(device: "kiosk-7"), token: second).status == 200, "the other still works")
        let again = fixture.call("DELETE", path, token: fixture.admin)
        #expect(again.status == 404)
        #expect(SyncWire.error(from: again.body)?.message == "no token \(TokenStore.tokenID(of: first)) for device kiosk-7")
        // Another device's token is not this device's to revoke.
        #expect(fixture.call("DELETE", "/v1/devices/kiosk-7/tokens/" + TokenStore.tokenID(of: other), token: fixture.admin).status == 404)
        #expect(fixture.call("GET", SyncPaths.cursor(device: "kiosk-8"), token: other).status == 200)
        let action = try #require(ConsoleFixture.array(try fixture.get("/v1/actions").body["actions"]).first)
        #expect(
            action["action"] == .string("token_revoked") && action["device"] == .string("kiosk-7") && action["token"] == .string(TokenStore.tokenID(of: first)))
        #expect(action["user"] == .null && action["actor"]?.stringValue == "admin:" + TokenStore.tokenID(of: fixture.admin))
        for id in [
            "", "0123456789abcde", "0123456789abcdef0", "0123456789ABCDEF", "0123456789abcdeg", "%00%00%00%00%00%00%00%00",
            "0123456789abcde%0A", String(repeating: "a", count: 5_000), "18446744073709551615", "-1"
        ] {
            let response = fixture.call("DELETE", "/v1/devices/kiosk-7/tokens/" + id, token: fixture.admin)
            #expect(response.status == (id.isEmpty ? 404 : 400), "\(id.prefix(20)): \(response.status)")
        }
        #expect(fixture.call("GET", SyncPaths.cursor(device: "kiosk-7"), token: second).status == 200, "no hostile id revoked anything")
        #expect(fixture.call("DELETE", "/v1/devices/bad%20id/tokens/0123456789abcdef", token: fixture.admin).status == 400)
        #expect(fixture.call("DELETE", "/v1/devices/nobody/tokens/0123456789abcdef", token: fixture.admin).status == 404)
    }

    @Test(arguments: TestDatabase.storages) func aDevicesAuditIsItsEntryOfTheWholeAudit(storage: String) async throws {
        let fixture = try ConsoleFixture(storage: storage)
        defer { fixture.close() }
        try await fixture.record((0..<4).map { ConsoleFixture.event("a", $0) })
        _ = try fixture.device("b")
        let (_, whole) = try fixture.get("/v1/audit")
        for device in ["a", "b"] {
            let (status, one) = try fixture.get("/v1/devices/\(device)/audit")
            #expect(status == 200)
            #expect(ConsoleFixture.array(whole["devices"]).first { $0["device"] == .string(device) } == one)
        }
        #expect(fixture.call("GET", "/v1/devices/nobody/audit", token: fixture.auditor).status == 404)
        #expect(fixture.call("GET", "/v1/devices/a%2Fb/audit", token: fixture.auditor).status == 400)
        let (_, device) = try fixture.device("a")
        #expect(fixture.call("GET", "/v1/devices/a/audit", token: device).status == 403)
    }

    @Test(arguments: TestDatabase.storages) func hostileDevicesParametersAre400(storage: String) throws {
        let fixture = try ConsoleFixture(storage: storage)
        defer { fixture.close() }
        for (query, message) in [
            ("limit=", "query parameter limit: limit \"\" must be a whole number from 1 to 1000"),
            ("limit=0", "query parameter limit: limit \"0\" must be a whole number from 1 to 1000"),
            ("limit=-1", "query parameter limit: limit \"-1\" must be a whole number from 1 to 1000"),
            ("limit=1001", "query parameter limit: limit \"1001\" must be a whole number from 1 to 1000"),
            ("limit=18446744073709551615", "query parameter limit: limit \"18446744073709551615\" must be a whole number from 1 to 1000"),
            ("after=a%2Fb", nil),
            ("after=" + String(repeating: "x", count: 65), nil),
            ("after=%01", nil),
            ("cursor=x", "unknown query parameter cursor; this endpoint takes limit, after")
        ] {
            let (status, text) = fixture.refusal("/v1/devices?" + query)
            #expect(status == 400, "\(query)")
            if let message { #expect(text == message, "\(query)") }
        }
        let (_, device) = try fixture.device("a")
        #expect(fixture.call("GET", "/v1/devices", token: device).status == 403)
        #expect(try Self.devices(fixture, "after=zzz").devices.isEmpty)
    }
}
