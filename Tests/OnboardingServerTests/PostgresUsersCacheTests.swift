import Foundation
import OnboardingModel
import OnboardingProjections
@testable import OnboardingServer
import OnboardingStore
import PostgreSQL
import Testing
import TestSupport

/// A node keeps the users of device logs it used in memory (``DeviceUsersCache``), valid for one
/// `devices.users_version`. Whatever another node changes, or a transaction leaves undone, this
/// node must read the database's users, never its stale copy.
@Suite(.enabled(if: TestDatabase.isEnabled, TestDatabase.skipNote))
struct PostgresUsersCacheTests {
    static let start = SyncServerTests.start

    static func failure(_ index: Int, user: String) -> Event {
        Event(
            id: UUID(), device: "kiosk-7", at: start.adding(milliseconds: Int64(index) * 1000), user: user, flow: nil,
            payload: .signInFailed(method: .password, reason: .invalidPassword))
    }

    struct TwoNodes {
        let directory: TemporaryDirectory
        let first: SyncServer
        let second: SyncServer
        let drop: @Sendable () -> Void
        let databaseURL: String
        let store: OnboardingStore
        let token: String

        init() async throws {
            directory = try TemporaryDirectory()
            let database = try TestDatabase.freshDatabase()
            drop = database.drop
            databaseURL = database.url
            first = try SyncServer(databaseURL: database.url, options: SyncServer.Options())
            second = try SyncServer(databaseURL: database.url, options: SyncServer.Options(), createsAdminToken: false)
            var options = OnboardingStore.Options()
            options.deviceID = "kiosk-7"
            store = try OnboardingStore.open(at: directory.appending("device"), options: options)
            token = try first.issueToken(role: .device, device: "kiosk-7")
        }

        func upload(_ range: ClosedRange<UInt64>, through server: SyncServer) throws -> SyncResponse {
            let records = try store.records(in: range)
            return server.handle(
                SyncRequest(
                    method: "POST", path: SyncPaths.events(device: "kiosk-7"),
                    headers: ["authorization": "Bearer \(token)", "content-type": SyncWire.contentType],
                    body: SyncWire.uploadBody(device: "kiosk-7", records: records, keys: try store.syncKeys(for: records))))
        }

        func close() {
            store.close()
            first.close()
            second.close()
            drop()
            directory.remove()
        }
    }

    /// The first node holds alice as live in memory; the second forgets her. The first node's
    /// next upload of hers must store her records as erased: her history finds none of them.
    @Test func aForgetThroughAnotherNodeIsSeenByThisNodesNextUpload() async throws {
        let nodes = try await TwoNodes()
        defer { nodes.close() }
        _ = try await nodes.store.append((0..<5).map { Self.failure($0, user: "alice") })
        #expect(try nodes.upload(1...5, through: nodes.first).status == 200)
        #expect(try nodes.first.history(HistoryQuery(user: "alice")).attempts.count == 5)
        #expect(try nodes.second.forgetUser("alice").map(\.outcome) == [.erased])
        // The device has not learnt of the forget yet: it sends more of alice by name.
        _ = try await nodes.store.append((5..<8).map { Self.failure($0, user: "alice") })
        #expect(try nodes.upload(6...8, through: nodes.first).status == 200)
        for node in [nodes.first, nodes.second] {
            #expect(try node.history(HistoryQuery(user: "alice")).attempts.isEmpty)
        }
        let erased = try nodes.second.history(HistoryQuery(device: "kiosk-7"))
        #expect(erased.attempts.count == 8)
    }

    /// The second node adds bob to the device's users; the first node, which read the users
    /// before, must see bob as live (not as a user whose key it lacks) on its next upload.
    @Test func usersAddedThroughAnotherNodeAreSeenByThisNode() async throws {
        let nodes = try await TwoNodes()
        defer { nodes.close() }
        _ = try await nodes.store.append((0..<3).map { Self.failure($0, user: "alice") })
        #expect(try nodes.upload(1...3, through: nodes.first).status == 200)
        _ = try await nodes.store.append((3..<6).map { Self.failure($0, user: "bob") })
        #expect(try nodes.upload(4...6, through: nodes.second).status == 200)
        // A resend of bob's records through the first node: duplicates of live records by name.
        let resent = try nodes.upload(4...6, through: nodes.first)
        #expect(resent.status == 200)
        #expect(try SyncWire.outcomes(from: resent.body).map(\.kind) == [.duplicate, .duplicate, .duplicate])
        #expect(try nodes.first.history(HistoryQuery(user: "bob")).attempts.count == 3)
        #expect(try nodes.first.history(HistoryQuery(user: "alice")).attempts.count == 3)
    }

    /// An upload refused inside its transaction (an event id reused at another seq) leaves the
    /// users as they were: the user it named first is not taken as known afterwards.
    @Test func aRefusedUploadLeavesTheUsersAsTheyWere() async throws {
        let nodes = try await TwoNodes()
        defer { nodes.close() }
        _ = try await nodes.store.append((0..<3).map { Self.failure($0, user: "alice") })
        #expect(try nodes.upload(1...3, through: nodes.first).status == 200)
        _ = try await nodes.store.append([Self.failure(3, user: "carol")])
        let forged = try SyncServerTests.recordReusingID(of: 1, at: 4, in: nodes.store)
        let refused = nodes.first.handle(
            SyncRequest(
                method: "POST", path: SyncPaths.events(device: "kiosk-7"),
                headers: ["authorization": "Bearer \(nodes.token)", "content-type": SyncWire.contentType],
                body: SyncWire.uploadBody(device: "kiosk-7", records: [forged], keys: try nodes.store.syncKeys(for: [forged]))))
        #expect(refused.status == 409)
        #expect(SyncServerTests.errorCode(refused) == "fork")
        #expect(try nodes.second.withDeviceLog(of: "kiosk-7") { try $0.head().seq } == 3)
        // The device's true seq 4 then goes in through the same node, carol by name.
        #expect(try nodes.upload(4...4, through: nodes.first).status == 200)
        #expect(try nodes.second.history(HistoryQuery(user: "carol")).attempts.count == 1)
        #expect(try nodes.first.history(HistoryQuery(user: "alice")).attempts.count == 3)
    }

    /// A database written by the schema's version 1 (no `users_version`) is brought to version 2
    /// in place at the next start: its devices read as before, and uploads go on.
    @Test func aVersionOneDatabaseIsMigratedInPlace() async throws {
        let nodes = try await TwoNodes()
        defer { nodes.close() }
        _ = try await nodes.store.append((0..<3).map { Self.failure($0, user: "alice") })
        #expect(try nodes.upload(1...3, through: nodes.first).status == 200)
        let url = try DatabaseURL(nodes.databaseURL)
        // Back to version 1, as a database an older onboard wrote.
        let connection = try PGConnection(url: url)
        defer { connection.close() }
        try PostgresSchemaRollback.undoVersionThree(connection)
        try connection.execute("ALTER TABLE devices DROP COLUMN users_version")
        try connection.execute("DELETE FROM onboard_schema WHERE version = 2")
        let restarted = try SyncServer(databaseURL: nodes.databaseURL, options: SyncServer.Options(), createsAdminToken: false)
        defer { restarted.close() }
        #expect(try connection.execute("SELECT max(version)::int8 FROM onboard_schema")[0].int64(0) == Int64(PostgresSchema.currentVersion))
        #expect(try restarted.history(HistoryQuery(user: "alice")).attempts.count == 3)
        _ = try await nodes.store.append([Self.failure(3, user: "bob")])
        let records = try nodes.store.records(in: 4...4)
        let answer = restarted.handle(
            SyncRequest(
                method: "POST", path: SyncPaths.events(device: "kiosk-7"),
                headers: ["authorization": "Bearer \(nodes.token)", "content-type": SyncWire.contentType],
                body: SyncWire.uploadBody(device: "kiosk-7", records: records, keys: try nodes.store.syncKeys(for: records))))
        #expect(answer.status == 200)
        #expect(try restarted.history(HistoryQuery(user: "bob")).attempts.count == 1)
    }
}

/// The cache itself, without a database.
@Suite struct DeviceUsersCacheTests {
    @Test func theCacheIsBoundedAndKeyedByVersionAndPseudonymKey() {
        let cache = DeviceUsersCache(capacity: 10)
        let key = SecretKey.random()
        func entry(users: Int, version: Int64, key: SecretKey = key) -> DeviceUsersCache.Entry {
            var directory = UserDirectory(pseudonymKey: key)
            for index in 0..<users { directory.add(directory.ref(of: "user-\(index)"), name: "user-\(index)", key: .random()) }
            return .init(version: version, directory: directory, nextNumber: Int64(users) + 1)
        }
        cache.store(entry(users: 3, version: 7), of: "a")
        #expect(cache.entry(of: "a", version: 7, pseudonymKey: key)?.directory.entries.count == 3)
        #expect(cache.entry(of: "a", version: 8, pseudonymKey: key) == nil)
        #expect(cache.entry(of: "a", version: 7, pseudonymKey: .random()) == nil)
        cache.store(entry(users: 3, version: 1), of: "b")
        // 4 + 4 + 4 > 10: the oldest device goes.
        cache.store(entry(users: 3, version: 1), of: "c")
        #expect(cache.entry(of: "a", version: 7, pseudonymKey: key) == nil)
        #expect(cache.entry(of: "c", version: 1, pseudonymKey: key) != nil)
        #expect(cache.count.users <= 10)
        // Larger than the whole cache: never kept, and an older copy of it is dropped.
        cache.store(entry(users: 20, version: 2), of: "b")
        #expect(cache.entry(of: "b", version: 1, pseudonymKey: key) == nil)
        #expect(cache.entry(of: "b", version: 2, pseudonymKey: key) == nil)
        #expect(cache.count.users <= 10)
    }
}
