import Foundation
import OnboardingModel
import OnboardingProjections
@testable import OnboardingServer
import OnboardingStore
import Testing
import TestSupport

/// A user forgotten on one side (the device or the server) before the other: resends, the
/// global lockout and forget requests must not depend on which side went first.
@Suite struct ForgetOrderTests {
    typealias Fixture = SyncServerTests.Fixture
    static let start = SyncServerTests.start

    static func failure(_ device: String, _ index: Int, user: String = "alice") -> Event {
        Event(
            id: UUID(), device: device, at: start.adding(milliseconds: Int64(index) * 1000), user: user, flow: nil,
            payload: .signInFailed(method: .password, reason: .invalidPassword))
    }

    static func body(_ store: OnboardingStore, _ range: ClosedRange<UInt64>) throws -> [UInt8] {
        let records = try store.records(in: range)
        return SyncWire.uploadBody(device: store.deviceID, records: records, keys: try store.syncKeys(for: records))
    }

    /// The device forgot alice, then sent records of hers (by pseudonym); the answer was lost and
    /// the same request goes again. The replica, which still held her key, reads them by name.
    @Test(arguments: TestDatabase.storages) func aResendAfterTheDeviceForgotIsAnsweredAsDuplicates(storage: String) async throws {
        let fixture = try Fixture(storage: storage)
        defer { fixture.close() }
        let (store, token) = try await fixture.device("kiosk-7", events: 3)
        defer { store.close() }
        #expect(try fixture.upload(store, 1...2, token: token).status == 200)
        _ = try await store.forgetUser("alice", at: Self.start.adding(milliseconds: 5_000))
        let resent = try Self.body(store, 3...3)
        let first = fixture.call("POST", SyncPaths.events(device: "kiosk-7"), token: token, body: resent)
        #expect(first.status == 200)
        let again = fixture.call("POST", SyncPaths.events(device: "kiosk-7"), token: token, body: resent)
        #expect(again.status == 200, "\(String(decoding: again.body, as: UTF8.self))")
        #expect(try SyncWire.outcomes(from: again.body).map(\.kind) == [.duplicate])
    }

    /// The server forgot alice after appending a batch whose answer was lost: the same request
    /// (records by name) goes again and the replica now reads them by pseudonym.
    @Test(arguments: TestDatabase.storages) func aResendAfterTheServerForgotIsAnsweredAsDuplicates(storage: String) async throws {
        let fixture = try Fixture(storage: storage)
        defer { fixture.close() }
        let (store, token) = try await fixture.device("kiosk-7", events: 3)
        defer { store.close() }
        let sent = try Self.body(store, 1...3)
        #expect(fixture.call("POST", SyncPaths.events(device: "kiosk-7"), token: token, body: sent).status == 200)
        #expect(try fixture.server.forgetUser("alice").map { $0.outcome } == [.erased])
        let again = fixture.call("POST", SyncPaths.events(device: "kiosk-7"), token: token, body: sent)
        #expect(again.status == 200, "\(String(decoding: again.body, as: UTF8.self))")
        #expect(try SyncWire.outcomes(from: again.body).map(\.kind) == [.duplicate, .duplicate, .duplicate])
    }

    /// After the server forgot alice, a device that has not forgotten her yet still uploads her
    /// records by name; the replica stores them under the pseudonym, and so must the global
    /// lockout fold them: her success there must not clear the failures another device (enrolled
    /// after the forget) counts under her name.
    @Test(arguments: TestDatabase.storages) func theGlobalLockoutFoldsUploadsAsTheReplicaReadsThem(storage: String) async throws {
        let fixture = try Fixture(storage: storage)
        defer { fixture.close() }
        let (kiosk, kioskToken) = try await fixture.device("kiosk-7", events: 1)
        defer { kiosk.close() }
        #expect(try fixture.upload(kiosk, 1...1, token: kioskToken).status == 200)
        #expect(try fixture.server.forgetUser("alice").map { $0.device } == ["kiosk-7"])

        let (phone, phoneToken) = try await fixture.device("phone-1", events: 3)
        defer { phone.close() }
        #expect(try fixture.upload(phone, 1...3, token: phoneToken).status == 200)
        _ = try await kiosk.append(
            Event(
                id: UUID(), device: "kiosk-7", at: Self.start.adding(milliseconds: 4_000), user: "alice",
                flow: nil, payload: .signInSucceeded(method: .password, secondFactor: false)))
        #expect(try fixture.upload(kiosk, 2...2, token: kioskToken).status == 200)

        #expect(try fixture.server.globalLockoutMatchesRebuild())
        let at = Self.start.adding(milliseconds: 5_000)
        #expect(try fixture.server.globalLockoutEntries(user: "alice", at: at).map(\.failures) == [3])
    }

    /// The device forgot alice and synced its user_forgotten; the server's forget then finds her
    /// forgotten and must not ask the device for a user_forgotten it already sent (nothing would
    /// ever end the request).
    @Test(arguments: TestDatabase.storages) func aServerForgetOfAUserTheDeviceForgotLeavesNoRequest(storage: String) async throws {
        let fixture = try Fixture(storage: storage)
        defer { fixture.close() }
        let (store, token) = try await fixture.device("kiosk-7", events: 2)
        defer { store.close() }
        _ = try await store.forgetUser("alice", at: Self.start.adding(milliseconds: 3_000))
        #expect(try fixture.upload(store, 1...3, token: token).status == 200)
        #expect(try fixture.server.forgetUser("alice").map { $0.outcome } == [.alreadyForgotten])
        let cursor = fixture.call("GET", SyncPaths.cursor(device: "kiosk-7"), token: token)
        #expect(try SyncWire.cursor(from: cursor.body).forgetUsers.isEmpty)
    }

    /// The user_forgotten a client writes when the server asks is dated by the device's clock
    /// (the store's), which the store checks it against — not by the machine's: a device on a
    /// clock of its own (a simulation, a test) would have it refused as dated in the future.
    @Test(arguments: TestDatabase.storages) func aForgetOnRequestIsDatedByTheStoresClock(storage: String) async throws {
        let fixture = try Fixture(storage: storage)
        defer { fixture.close() }
        var options = OnboardingStore.Options()
        options.deviceID = "kiosk-7"
        let deviceNow = Self.start.adding(milliseconds: 60_000)
        options.clock = { deviceNow }
        let store = try OnboardingStore.open(at: fixture.directory.appending("device-clocked"), options: options)
        defer { store.close() }
        _ = try await store.append(Self.failure("kiosk-7", 0))
        let token = try fixture.server.issueToken(role: .device, device: "kiosk-7")
        let client = SyncClient(
            store: store, transport: InMemoryTransport { fixture.server.handle($0) }, token: token,
            serverKey: fixture.server.signingKey.publicKey)
        #expect(try await client.run().acknowledgedSeq == 1)
        _ = try fixture.server.forgetUser("alice")
        let summary = try await client.run()
        #expect(summary.forgetFailures.isEmpty, "\(summary.forgetFailures)")
        #expect(summary.forgottenOnRequest == [store.userRef(of: "alice").literal])
        #expect(try store.storedRecord(at: 2)?.event.type == .userForgotten)
        #expect(try store.storedRecord(at: 2)?.event.at == deviceNow)
    }

    /// A user_forgotten arrives while the upload holds its replica and the server may open only
    /// one: the refold of the global lockout must still read every replica.
    @Test func theRefoldAfterAUserForgottenReadsEveryReplica() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var options = SyncServer.Options()
        options.maximumOpenReplicas = 1
        let server = try SyncServer(dataDirectory: directory.appending("server-data"), options: options)
        defer { server.close() }
        func device(_ name: String) throws -> (OnboardingStore, String) {
            var storeOptions = OnboardingStore.Options()
            storeOptions.deviceID = name
            return (
                try OnboardingStore.open(at: directory.appending(name), options: storeOptions),
                try server.issueToken(role: .device, device: name)
            )
        }
        func upload(_ store: OnboardingStore, _ token: String, from first: UInt64 = 1) throws -> Int {
            server.handle(
                SyncRequest(
                    method: "POST", path: SyncPaths.events(device: store.deviceID),
                    headers: ["authorization": "Bearer \(token)", "content-type": SyncWire.contentType],
                    body: try Self.body(store, first...(try store.head().seq)))
            ).status
        }
        let (kiosk, kioskToken) = try device("kiosk-7")
        let (phone, phoneToken) = try device("phone-1")
        defer {
            kiosk.close()
            phone.close()
        }
        _ = try await kiosk.append([Self.failure("kiosk-7", 0, user: "bob"), Self.failure("kiosk-7", 1, user: "bob")])
        _ = try await phone.append(Self.failure("phone-1", 2))
        #expect(try upload(kiosk, kioskToken) == 200)
        #expect(try upload(phone, phoneToken) == 200)
        _ = try await phone.forgetUser("alice", at: Self.start.adding(milliseconds: 3_000))
        #expect(try upload(phone, phoneToken, from: 2) == 200)

        #expect(try server.globalLockoutMatchesRebuild())
        #expect(try server.globalLockoutEntries(user: "bob", at: Self.start.adding(milliseconds: 4_000)).map(\.failures) == [2])
    }
}
