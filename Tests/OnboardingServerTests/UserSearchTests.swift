import Foundation
import OnboardingModel
import OnboardingProjections
@testable import OnboardingServer
import OnboardingStore
import PostgreSQL
import Synchronization
import Testing
import TestSupport

/// `GET /v1/users?search=`: folded prefixes of the words of a user's id and latest display name,
/// kept only as keyed MACs and sealed names, gone with a forget.
@Suite struct UserSearchTests {
    static func names(_ fixture: ConsoleFixture, _ search: String, limit: Int? = nil, through node: SyncServer? = nil) throws -> [String] {
        let (status, body) = try fixture.get("/v1/users?search=\(SyncPaths.percentEncoded(search))" + (limit.map { "&limit=\($0)" } ?? ""), through: node)
        #expect(status == 200, "\(body)")
        return ConsoleFixture.array(body["users"]).compactMap { $0["user"]?.stringValue }
    }

    /// josé (as "José Álvarez" on a, renamed "José Ávila" later on b), zoë on a, bob on b.
    static func scenario(_ fixture: ConsoleFixture) async throws {
        try await fixture.record([
            ConsoleFixture.event("a", 0, user: "josé", .userAdded(displayName: "José Álvarez", passcodePolicy: .numeric, passcodeMinLength: 6)),
            ConsoleFixture.event("a", 1, user: "josé"),
            ConsoleFixture.event("a", 2, user: "zoë.marsh", .userAdded(displayName: "Zoë Marsh", passcodePolicy: .numeric, passcodeMinLength: 6))
        ])
        try await fixture.record([
            ConsoleFixture.event("b", 10, user: "josé", .userProfileUpdated(displayName: "José Ávila")),
            ConsoleFixture.event("b", 11, user: "bob")
        ])
    }

    @Test(arguments: TestDatabase.storages) func foldedPrefixesOfIdAndLatestNameFindAUser(storage: String) async throws {
        let fixture = try ConsoleFixture(storage: storage)
        defer { fixture.close() }
        try await Self.scenario(fixture)
        for (search, expected) in [
            ("jose", ["josé"]), ("JOSÉ", ["josé"]), ("jo", ["josé"]), ("avi", ["josé"]), ("ÁVILA", ["josé"]), ("jose avi", ["josé"]),
            ("alv", []), ("zoe", ["zoë.marsh"]), ("marsh", ["zoë.marsh"]), ("zoë.mar", ["zoë.marsh"]), ("b", ["bob"]),
            ("o", []), ("jose bob", []), ("!!!", []), ("josé ávila extra", [])
        ] {
            #expect(try Self.names(fixture, search) == expected, "\(search)")
        }
        let (_, found) = try fixture.get("/v1/users?search=jose")
        let jose = ConsoleFixture.array(found["users"]).first
        #expect(jose?["display_name"] == .string("José Ávila") && ConsoleFixture.integer(jose?["devices"]) == 2)
        // A rename dated earlier than the latest one, uploaded later, does not win.
        try await fixture.record([ConsoleFixture.event("c", 5, user: "josé", .userProfileUpdated(displayName: "José Old"))])
        #expect(try Self.names(fixture, "old").isEmpty)
        #expect(ConsoleFixture.integer(ConsoleFixture.array(try fixture.get("/v1/users?search=jose").body["users"]).first?["devices"]) == 3)
        // The same on another node (PostgreSQL) and after a restart (LMDB).
        let other = try fixture.reopen()
        #expect(try Self.names(fixture, "ávila", through: other) == ["josé"])
        #expect(try Self.names(fixture, "old", through: other).isEmpty)
    }

    @Test(arguments: TestDatabase.storages) func resultsAreInByteOrderOfTheIdAndLimited(storage: String) async throws {
        let fixture = try ConsoleFixture(storage: storage)
        defer { fixture.close() }
        let ids = ["sam", "Sam", "samuel", "sam-2", "sámi", "SAMANTHA", "sam.o", "sam_x", "sam9", "xsam"]
        try await fixture.record(ids.enumerated().map { ConsoleFixture.event("a", $0.offset, user: $0.element) })
        let all = try Self.names(fixture, "sam", limit: 100)
        #expect(all == ids.filter { $0 != "xsam" }.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
        #expect(try Self.names(fixture, "sam", limit: 3) == Array(all.prefix(3)))
        #expect(try Self.names(fixture, "x") == ["sam_x", "xsam"], "sam_x: x is a word of its id")
        #expect(try Self.names(fixture, "sam", limit: 1) == ["SAMANTHA"])
    }

    @Test(arguments: TestDatabase.storages) func aForgottenUserIsNeverFoundAgain(storage: String) async throws {
        let fixture = try ConsoleFixture(storage: storage)
        defer { fixture.close() }
        try await Self.scenario(fixture)
        #expect(fixture.call("POST", SyncPaths.forget(user: "josé"), token: fixture.admin).status == 200)
        for search in ["jose", "avila", "alvarez", "josé"] { #expect(try Self.names(fixture, search).isEmpty, "\(search)") }
        #expect(try Self.names(fixture, "zoe") == ["zoë.marsh"])
        // A device that forgets a user itself: found while another device still names them.
        let (storeA, _) = try fixture.device("a")
        _ = try await storeA.forgetUser("zoë.marsh", at: ConsoleFixture.start.adding(milliseconds: 60_000))
        try fixture.upload("a")
        #expect(try Self.names(fixture, "zoe").isEmpty, "no device's records read as zoë any more")
        let other = try fixture.reopen()
        #expect(try Self.names(fixture, "jose", through: other).isEmpty && Self.names(fixture, "zoe", through: other).isEmpty)
        #expect(try Self.names(fixture, "bob", through: other) == ["bob"])
    }

    /// What the server keeps for the search holds no readable name (PostgreSQL: its tables).
    @Test(.enabled(if: TestDatabase.isEnabled, TestDatabase.skipNote)) func theTablesHoldNoNameInClear() async throws {
        let fixture = try ConsoleFixture(storage: "postgres")
        defer { fixture.close() }
        try await Self.scenario(fixture)
        #expect(try Self.names(fixture, "jose") == ["josé"])
        let stored = try ServerActionTests.storedBytes(fixture)
        for needle in ["josé", "jose", "José", "Ávila", "avila", "Álvarez", "alv", "zoë", "marsh", "bob"] {
            #expect(!stored.contains(Array(needle.utf8)), "\(needle)")
        }
        #expect(stored.bytes.count > 1_000, "the tables were read")
    }

    /// A database an onboard before the search wrote: filled from its logs at the next start.
    @Test(.enabled(if: TestDatabase.isEnabled, TestDatabase.skipNote)) func aVersionTwoDatabaseIsSearchableAfterItsMigration() async throws {
        let fixture = try ConsoleFixture(storage: "postgres")
        defer { fixture.close() }
        try await Self.scenario(fixture)
        let connection = try PGConnection(url: DatabaseURL(try #require(fixture.databaseURL)))
        defer { connection.close() }
        try PostgresSchemaRollback.undoVersionThree(connection)
        let migrated = try fixture.reopen()
        #expect(try connection.execute("SELECT max(version)::int8 FROM onboard_schema")[0].int64(0) == Int64(PostgresSchema.currentVersion))
        #expect(try Self.names(fixture, "avila", through: migrated) == ["josé"])
        #expect(try Self.names(fixture, "zoe", through: migrated) == ["zoë.marsh"])
        #expect(ConsoleFixture.integer(ConsoleFixture.array(try fixture.get("/v1/users?search=jose", through: migrated).body["users"]).first?["devices"]) == 2)
        // Once: a second start does not fill it again.
        #expect(try connection.execute("SELECT count(*)::int8 FROM server_state WHERE name = 'user_search'")[0].int64(0) == 1)
    }

    /// Four devices upload at once, each naming the same 300 new users (in its own order, with
    /// display names): every upload is stored, every user found, on all four devices.
    @Test(arguments: TestDatabase.storages) func devicesNamingTheSameNewUsersAtOnceAllGetIn(storage: String) async throws {
        let fixture = try ConsoleFixture(storage: storage)
        defer { fixture.close() }
        var requests: [SyncRequest] = []
        var orders: [[String]] = []
        for index in 0..<4 {
            let device = "site-\(index)"
            let (store, token) = try fixture.device(device)
            var users = (0..<300).map { "shared-\($0)" }
            var random = SplitMix64(seed: UInt64(index + 1))
            users.shuffle(using: &random)
            orders.append(users)
            _ = try await store.append(
                users.enumerated().map { offset, user in
                    ConsoleFixture.event(
                        device, offset, user: user, .userAdded(displayName: "Name \(user) \(index)", passcodePolicy: .numeric, passcodeMinLength: 6))
                })
            let records = try store.records(in: 1...300)
            requests.append(
                SyncRequest(
                    method: "POST", path: SyncPaths.events(device: device),
                    headers: ["authorization": "Bearer \(token)", "content-type": SyncWire.contentType],
                    body: SyncWire.uploadBody(device: device, records: records, keys: try store.syncKeys(for: records))))
        }
        let server = fixture.server
        let all = requests
        let statuses = try await onOwnThread { () -> [Int] in
            let results = Mutex<[Int]>([])
            let group = DispatchGroup()
            for request in all {
                group.enter()
                detachThread {
                    defer { group.leave() }
                    let status = server.handle(request).status
                    results.withLock { $0.append(status) }
                }
            }
            _ = group.wait(timeout: .now() + 120)
            return results.withLock { $0 }
        }
        #expect(statuses == [200, 200, 200, 200])
        let (_, found) = try fixture.get("/v1/users?search=shared&limit=100")
        let users = ConsoleFixture.array(found["users"])
        #expect(users.count == 100)
        #expect(users.allSatisfy { ConsoleFixture.integer($0["devices"]) == 4 })
        // The latest name over the four: the device that named the user last (by time, then id).
        for user in users {
            let id = try #require(user["user"]?.stringValue)
            let last = (0..<4).max { (orders[$0].firstIndex(of: id)!, $0) < (orders[$1].firstIndex(of: id)!, $1) }!
            #expect(user["display_name"] == .string("Name \(id) \(last)"), "\(id)")
        }
    }

    @Test(arguments: TestDatabase.storages) func hostileSearchParametersAre400(storage: String) async throws {
        let fixture = try ConsoleFixture(storage: storage)
        defer { fixture.close() }
        try await Self.scenario(fixture)
        for (query, message) in [
            ("", "query parameter search is required: 1 to 100 characters of a user id or display name"),
            ("search=", "query parameter search is required: 1 to 100 characters of a user id or display name"),
            ("search=" + String(repeating: "é", count: 101), "query parameter search: at most 100 characters, got 101"),
            ("search=jo%0Ase", "query parameter search must not contain control characters"),
            ("search=jo%00", "query parameter search must not contain control characters"),
            ("search=jo&limit=", "query parameter limit: limit \"\" must be a whole number from 1 to 100"),
            ("search=jo&limit=0", "query parameter limit: limit \"0\" must be a whole number from 1 to 100"),
            ("search=jo&limit=-1", "query parameter limit: limit \"-1\" must be a whole number from 1 to 100"),
            ("search=jo&limit=101", "query parameter limit: limit \"101\" must be a whole number from 1 to 100"),
            ("search=jo&limit=18446744073709551615", "query parameter limit: limit \"18446744073709551615\" must be a whole number from 1 to 100"),
            ("search=jo&after=x", "unknown query parameter after; this endpoint takes search, limit")
        ] {
            let (status, text) = fixture.refusal("/v1/users?" + query)
            #expect(status == 400, "\(query.prefix(40))")
            #expect(text == message, "\(query.prefix(40))")
        }
        #expect(try Self.names(fixture, String(repeating: "j", count: 100)).isEmpty)
        #expect(try Self.names(fixture, "%25_*").isEmpty)
        let (_, device) = try fixture.device("a")
        #expect(fixture.call("GET", "/v1/users?search=jo", token: device).status == 403)
        #expect(fixture.call("GET", "/v1/users?search=jo", token: nil).status == 401)
    }
}
