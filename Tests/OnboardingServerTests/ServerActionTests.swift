import Foundation
import OnboardingModel
import OnboardingProjections
@testable import OnboardingServer
import OnboardingStore
import PostgreSQL
import Testing
import TestSupport

/// `POST /v1/users/{user}/lockout/clear` and `GET /v1/actions`: an admin's clear is folded into
/// the global lockout at its time, in `(at, "", seq)` order with the records, from the storage —
/// the same on every node and after a restart — and a forget erases the user from it.
@Suite struct ServerActionTests {
    typealias Clock = ServerHardeningTests.ManualServerClock

    static func clear(
        _ fixture: ConsoleFixture, _ user: String = "alice", factor: String? = nil, reason: String = "helpdesk ticket 4711",
        through node: SyncServer? = nil
    ) -> SyncResponse {
        let factorText = factor.map { "\"\($0)\"" } ?? "null"
        return fixture.call(
            "POST", "/v1/users/\(SyncPaths.percentEncoded(user))/lockout/clear", token: fixture.admin,
            body: Array(#"{"factor":\#(factorText),"reason":\#(String(decoding: SyncWire.encode(.string(reason)), as: UTF8.self))}"#.utf8),
            through: node)
    }

    static func lockout(_ fixture: ConsoleFixture, _ user: String = "alice", through node: SyncServer? = nil) throws -> [String: Int] {
        var failures: [String: Int] = [:]
        for entry in ConsoleFixture.array(
            try JSONValue.parse(
                bytes: fixture.call(
                    "GET", SyncPaths.lockout(user: user) + "?at=2026-11-30T16:10:00Z",
                    token: fixture.auditor, through: node
                ).body))
        {
            failures[entry["factor"]?.stringValue ?? ""] = ConsoleFixture.integer(entry["failures"])
        }
        return failures
    }

    /// Five password failures (locked, MediaWiki: 5 per 5 min) and two second-factor failures on
    /// two devices, then clears: one factor, then all; failures after a clear count again.
    @Test(arguments: TestDatabase.storages) func aClearEndsTheGlobalLockoutOfItsFactorFromItsTime(storage: String) async throws {
        let clock = Clock(ConsoleFixture.start.adding(milliseconds: 60_000))
        let fixture = try ConsoleFixture(storage: storage, clock: { clock.now })
        defer { fixture.close() }
        try await fixture.record((0..<3).map { ConsoleFixture.event("a", $0) } + [ConsoleFixture.event("a", 3, .secondFactorFailed(method: .totp))])
        try await fixture.record((10..<12).map { ConsoleFixture.event("b", $0) } + [ConsoleFixture.event("b", 13, .secondFactorFailed(method: .sms))])
        #expect(try Self.lockout(fixture) == ["password": 5, "second_factor": 2])

        let cleared = Self.clear(fixture, factor: "password")
        #expect(cleared.status == 200, "\(String(decoding: cleared.body, as: UTF8.self))")
        let action = try JSONValue.parse(bytes: cleared.body)["action"]
        #expect(action?["action"] == .string("lockout_cleared") && action?["factor"] == .string("password") && action?["user"] == .string("alice"))
        #expect(action?["at"] == .string("2026-11-30T16:01:00.000Z") && action?["reason"] == .string("helpdesk ticket 4711"))
        #expect(UUID(uuidString: action?["id"]?.stringValue ?? "") != nil)
        #expect(action?["actor"]?.stringValue == "admin:" + TokenStore.tokenID(of: fixture.admin))
        #expect(try Self.lockout(fixture) == ["second_factor": 2], "the password key is cleared, the second factor's stays")

        // An offline device's failures from before the clear arrive later: cleared too. One
        // after it counts.
        try await fixture.record([ConsoleFixture.event("c", 30), ConsoleFixture.event("c", 61)])
        #expect(try Self.lockout(fixture) == ["password": 1, "second_factor": 2])

        clock.set(ConsoleFixture.start.adding(milliseconds: 120_000))
        #expect(Self.clear(fixture, factor: nil).status == 200)
        #expect(try Self.lockout(fixture) == [:], "null clears every factor")
        try await fixture.record([ConsoleFixture.event("a", 121)])
        #expect(try Self.lockout(fixture) == ["password": 1])

        // From the storage: another node (PostgreSQL) or the restarted server (LMDB) answers alike.
        let other = try fixture.reopen()
        #expect(try Self.lockout(fixture, through: other) == ["password": 1])
        #expect(try other.globalLockoutMatchesRebuild())
        let (_, page) = try fixture.get("/v1/actions", through: other)
        #expect(ConsoleFixture.array(page["actions"]).map { $0["factor"] } == [.null, .string("password")], "newest first")
    }

    /// Two clears and records at the same millisecond: the clear sorts first (device ""), so a
    /// failure of that millisecond counts after it.
    @Test(arguments: TestDatabase.storages) func aClearSortsBeforeTheRecordsOfItsMillisecond(storage: String) async throws {
        let clock = Clock(ConsoleFixture.start.adding(milliseconds: 5_000))
        let fixture = try ConsoleFixture(storage: storage, clock: { clock.now })
        defer { fixture.close() }
        try await fixture.record((0..<5).map { ConsoleFixture.event("a", $0) } + [ConsoleFixture.event("a", 5)])
        #expect(Self.clear(fixture, factor: "password").status == 200)
        #expect(try Self.lockout(fixture) == ["password": 1], "the failure at 5 s comes after the clear at 5 s")
    }

    @Test(arguments: TestDatabase.storages) func actionsPageNewestFirstWithACursor(storage: String) async throws {
        let clock = Clock(ConsoleFixture.start)
        let fixture = try ConsoleFixture(storage: storage, clock: { clock.now })
        defer { fixture.close() }
        try await fixture.record([ConsoleFixture.event("a", 0)])
        for index in 0..<7 {
            // Two at each millisecond: the seq orders them.
            clock.set(ConsoleFixture.start.adding(milliseconds: Int64(index / 2) * 1000))
            #expect(Self.clear(fixture, reason: "r\(index)").status == 200)
        }
        var reasons: [String] = []
        var cursor: String?
        repeat {
            let (status, page) = try fixture.get("/v1/actions?limit=3" + (cursor.map { "&cursor=\($0)" } ?? ""))
            #expect(status == 200)
            reasons += ConsoleFixture.array(page["actions"]).compactMap { $0["reason"]?.stringValue }
            cursor = page["next_cursor"]?.stringValue
        } while cursor != nil && reasons.count < 50
        #expect(reasons == (0..<7).reversed().map { "r\($0)" })
        for (query, message) in [
            ("limit=", "query parameter limit: limit \"\" must be a whole number from 1 to 1000"),
            ("limit=0", "query parameter limit: limit \"0\" must be a whole number from 1 to 1000"),
            ("limit=-1", "query parameter limit: limit \"-1\" must be a whole number from 1 to 1000"),
            ("limit=1001", "query parameter limit: limit \"1001\" must be a whole number from 1 to 1000"),
            ("limit=18446744073709551615", "query parameter limit: limit \"18446744073709551615\" must be a whole number from 1 to 1000"),
            ("cursor=nonsense", "query parameter cursor: cursor \"nonsense\" is not one this server issued; pass next_cursor from the previous page unchanged"),
            ("cursor=\(HistoryCursor(at: ConsoleFixture.start, device: "a", seq: 1).token)", nil),
            ("before=x", "unknown query parameter before; this endpoint takes limit, cursor")
        ] {
            let (status, text) = fixture.refusal("/v1/actions?" + query)
            #expect(status == 400, "\(query)")
            if let message { #expect(text == message) }
        }
    }

    @Test(arguments: TestDatabase.storages) func aHostileClearIs400AndStoresNothing(storage: String) async throws {
        let fixture = try ConsoleFixture(storage: storage)
        defer { fixture.close() }
        let path = "/v1/users/alice/lockout/clear"
        for (body, message) in [
            ("  ", "body: malformed JSON"),
            ("[]", "the body must be an object {\"factor\", \"reason\"}, not an array"),
            (#"{"reason":"x","extra":1}"#, "body has unknown member \"extra\" (allowed: factor, reason)"),
            (#"{"factor":"retina","reason":"x"}"#, "body.factor \"retina\" must be password, second_factor or null (every factor)"),
            (#"{"factor":1,"reason":"x"}"#, "body.factor must be a string or null, not a number"),
            (#"{"factor":null}"#, "body.reason is required: 1 to 200 characters saying why (a ticket, a call)"),
            (#"{"reason":""}"#, "body.reason must be 1 to 200 characters, got 0"),
            (#"{"reason":7}"#, "body.reason is required: 1 to 200 characters saying why (a ticket, a call)"),
            ("{\"reason\":\"\(String(repeating: "é", count: 201))\"}", "body.reason must be 1 to 200 characters, got 201"),
            (#"{"reason":"line\nbreak"}"#, "body.reason must not contain control characters"),
            (#"{"reason":"bell\u0007"}"#, "body.reason must not contain control characters"),
            (#"{"reason":"x","reason":"y"}"#, nil)
        ] {
            let response = fixture.call("POST", path, token: fixture.admin, body: Array(body.utf8))
            #expect(response.status == 400, "\(body.prefix(40))")
            if let message {
                #expect(
                    SyncWire.error(from: response.body)?.message.hasPrefix(message.prefix(30)) == true, "\(SyncWire.error(from: response.body)?.message ?? "")")
            }
        }
        let huge = fixture.call("POST", path, token: fixture.admin, body: Array("{\"reason\":\"\(String(repeating: "x", count: 9 << 20))\"}".utf8))
        #expect([400, 413].contains(huge.status))
        let plain = fixture.server.handle(
            SyncRequest(
                method: "POST", path: path, headers: ["authorization": "Bearer \(fixture.admin)", "content-type": "text/plain"],
                body: Array(#"{"reason":"x"}"#.utf8)))
        #expect(plain.status == 415)
        #expect(fixture.call("POST", path, token: fixture.auditor, body: Array(#"{"reason":"x"}"#.utf8)).status == 403)
        let (_, device) = try fixture.device("a")
        #expect(fixture.call("POST", path, token: device, body: Array(#"{"reason":"x"}"#.utf8)).status == 403)
        #expect(fixture.call("POST", path, token: nil, body: Array(#"{"reason":"x"}"#.utf8)).status == 401)
        #expect(fixture.call("POST", "/v1/users/%ff/lockout/clear", token: fixture.admin, body: Array(#"{"reason":"x"}"#.utf8)).status == 400)
        #expect(fixture.call("POST", "/v1/users/a%01b/lockout/clear", token: fixture.admin, body: Array(#"{"reason":"x"}"#.utf8)).status == 400)
        #expect(ConsoleFixture.array(try fixture.get("/v1/actions").body["actions"]).isEmpty, "nothing was stored")
    }

    /// A forget: the user's actions keep what and when, name a pseudonym instead (one for all of
    /// them, unlinked to any device's), lose their reason; the user's lockout has no trace.
    @Test(arguments: TestDatabase.storages) func aForgetErasesTheUserFromTheActions(storage: String) async throws {
        let fixture = try ConsoleFixture(storage: storage)
        defer { fixture.close() }
        try await fixture.record((0..<3).map { ConsoleFixture.event("a", $0, user: "zoë.marsh") })
        #expect(Self.clear(fixture, "zoë.marsh", reason: "called from zoë's desk").status == 200)
        #expect(Self.clear(fixture, "zoë.marsh", factor: "second_factor", reason: "second call").status == 200)
        #expect(Self.clear(fixture, "bob", reason: "bob's call").status == 200)
        #expect(fixture.call("POST", SyncPaths.forget(user: "zoë.marsh"), token: fixture.admin).status == 200)
        let actions = ConsoleFixture.array(try fixture.get("/v1/actions").body["actions"])
        let erased = actions.filter { $0["user"]?.stringValue != "bob" }
        #expect(erased.count == 2)
        #expect(erased.allSatisfy { UserRef.isLiteral($0["user"]?.stringValue ?? "") && $0["reason"] == .null && $0["action"] == .string("lockout_cleared") })
        #expect(Set(erased.compactMap { $0["user"]?.stringValue }).count == 1)
        #expect(actions.contains { $0["user"] == .string("bob") && $0["reason"] == .string("bob's call") })
        #expect(ConsoleFixture.array(try fixture.get(SyncPaths.history(user: "zoë.marsh")).body["actions"]).isEmpty)
        // Nothing the server keeps holds the id or the reason in clear.
        for needle in ["zoë.marsh", "zoë's desk", "second call"] {
            #expect(try !Self.storedBytes(fixture).contains(Array(needle.utf8)), "\(needle)")
        }
        #expect(try Self.storedBytes(fixture).contains(Array("bob's call".utf8)) == false, "sealed while live too")
    }

    /// The server's own files (LMDB: the actions store) or tables (PostgreSQL: every row of the
    /// console's tables) as bytes, to look for text in clear.
    static func storedBytes(_ fixture: ConsoleFixture) throws -> ByteHaystack {
        if let url = fixture.databaseURL {
            let connection = try PGConnection(url: DatabaseURL(url))
            defer { connection.close() }
            var bytes: [UInt8] = []
            for table in ["server_actions", "user_names"] {
                for row in try connection.execute("SELECT convert_to(t::text, 'UTF8') FROM \(table) t") { bytes += try row.bytes(0) }
            }
            return ByteHaystack(bytes: bytes)
        }
        let file = fixture.directory.appending("server-data/actions/data.mdb")
        return ByteHaystack(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: file))))
    }
}

/// Bytes to search for a needle in.
struct ByteHaystack {
    let bytes: [UInt8]

    func contains(_ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, bytes.count >= needle.count else { return false }
        for start in 0...(bytes.count - needle.count) where bytes[start] == needle[0] && Array(bytes[start..<(start + needle.count)]) == needle {
            return true
        }
        return false
    }
}
