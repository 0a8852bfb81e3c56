import Foundation
import OnboardingModel
import OnboardingProjections
@testable import OnboardingServer
import OnboardingStore
import Testing
import TestSupport

/// The server's router, called directly (the HTTP tests reuse these rules over real sockets).
@Suite struct SyncServerTests {
    static let start = Timestamp(millisecondsSince1970: 1_796_054_400_000)

    /// A server and a device store with `count` events, under one temporary directory.
    struct Fixture {
        let directory: TemporaryDirectory
        let server: SyncServer
        let admin: String
        /// Where the server keeps its data (a restart opens it again).
        let storage: TestServerStorage

        /// `storage`: `lmdb` (replicas in the fixture's directory) or `postgres` (a fresh database).
        init(storage: String = "lmdb") throws {
            directory = try TemporaryDirectory()
            self.storage = try TestServerStorage(storage, in: directory)
            server = try self.storage.open()
            admin = try #require(server.createdAdminToken)
        }

        func device(
            _ name: String, events: Int, user: String = "alice",
            payload: Payload = .signInFailed(method: .password, reason: .invalidPassword)
        ) async throws -> (OnboardingStore, String) {
            var options = OnboardingStore.Options()
            options.deviceID = name
            let store = try OnboardingStore.open(at: directory.appending("device-\(name)"), options: options)
            let events = (0..<events).map { index in
                Event(
                    id: UUID(), device: name, at: SyncServerTests.start.adding(milliseconds: Int64(index) * 1000),
                    user: user, flow: nil, payload: payload)
            }
            if !events.isEmpty { _ = try await store.append(events) }
            let token = try server.issueToken(role: .device, device: name)
            return (store, token)
        }

        func call(
            _ method: String, _ path: String, token: String?, body: [UInt8] = [],
            contentType: String? = "application/json"
        ) -> SyncResponse {
            var headers: [String: String] = [:]
            if let token { headers["authorization"] = "Bearer \(token)" }
            if let contentType, !body.isEmpty { headers["content-type"] = contentType }
            return server.handle(SyncRequest(method: method, path: path, headers: headers, body: body))
        }

        func upload(_ store: OnboardingStore, _ range: ClosedRange<UInt64>, token: String) throws -> SyncResponse {
            call(
                "POST", SyncPaths.events(device: store.deviceID), token: token,
                body: SyncWire.uploadBody(
                    device: store.deviceID, records: try store.records(in: range), keys: try store.syncKeys(for: store.records(in: range))))
        }

        func close() {
            server.close()
            storage.remove()
            directory.remove()
        }
    }

    static func errorCode(_ response: SyncResponse) -> String? { SyncWire.error(from: response.body)?.wireCode }

    /// `store`'s record at `seq`, re-hashed with the event id of its record at `original`: a
    /// record whose chain checks out but whose id the log already holds at another seq.
    static func recordReusingID(of original: UInt64, at seq: UInt64, in store: OnboardingStore) throws -> Record {
        let record = try #require(try store.storedRecord(at: seq))
        let id = try #require(try store.storedRecord(at: original)).event.id
        let event = Event(
            id: id, device: record.event.device, at: record.event.at, user: record.event.user, flow: record.event.flow,
            payload: record.event.payload)
        precondition(!event.hasPersonalFields, "the forged record is re-hashed without a user key")
        let seal = event.user.map { UserSeal(ref: store.userRef(of: $0), key: nil) }
        let bytes = RecordCodec.encode(event, seq: seq, previousHash: record.previousHash, seal: seal)
        let hash = Digest(bytes: Array(bytes[RecordCodec.hashOffset..<(RecordCodec.hashOffset + Digest.byteCount)]))
        return Record(seq: seq, event: event, previousHash: record.previousHash, hash: hash)
    }

    /// An event id the log holds at another seq: a fork, on either storage, and nothing is stored.
    @Test(arguments: TestDatabase.storages) func anEventIDReusedAtAnotherSeqIsAForkAndStoresNothing(storage: String) async throws {
        let fixture = try Fixture(storage: storage)
        defer { fixture.close() }
        let (store, token) = try await fixture.device("kiosk-7", events: 4)
        defer { store.close() }
        #expect(try fixture.upload(store, 1...3, token: token).status == 200)
        let forged = try Self.recordReusingID(of: 2, at: 4, in: store)
        let refused = fixture.call(
            "POST", SyncPaths.events(device: "kiosk-7"), token: token,
            body: SyncWire.uploadBody(device: "kiosk-7", records: [forged], keys: try store.syncKeys(for: [forged])))
        #expect(refused.status == 409)
        #expect(Self.errorCode(refused) == "fork")
        #expect(try fixture.server.withDeviceLog(of: "kiosk-7") { try $0.head().seq } == 3)
        #expect(try fixture.upload(store, 4...4, token: token).status == 200)
        #expect(try fixture.server.history(HistoryQuery(device: "kiosk-7")).attempts.count == 4)
    }

    @Test func uploadsAreAppendedThenAnsweredAsDuplicates() async throws {
        let fixture = try Fixture()
        defer { fixture.close() }
        let (store, token) = try await fixture.device("kiosk-7", events: 30)
        defer { store.close() }

        let first = try fixture.upload(store, 1...20, token: token)
        #expect(first.status == 200, "\(String(decoding: first.body, as: UTF8.self))")
        #expect(try SyncWire.cursor(from: first.body).acknowledgedSeq == 20)
        #expect(try SyncWire.outcomes(from: first.body).allSatisfy { $0.kind == .appended })

        // Overlapping re-send: 11…20 are duplicates, 21…30 new.
        let second = try fixture.upload(store, 11...30, token: token)
        #expect(second.status == 200)
        let outcomes = try SyncWire.outcomes(from: second.body)
        #expect(outcomes.prefix(10).allSatisfy { $0.kind == .duplicate })
        #expect(outcomes.suffix(10).allSatisfy { $0.kind == .appended })

        // The replica is the device's log: same seqs, same hashes.
        let replica = try fixture.server.replicas.pinnedStore(for: "kiosk-7")
        #expect(try replica.records(in: 1...30).map(\.hash) == (try store.records(in: 1...30)).map(\.hash))
        #expect(try replica.head() == (try store.head()))
        let cursor = fixture.call("GET", SyncPaths.cursor(device: "kiosk-7"), token: token)
        #expect(cursor.status == 200)
        #expect(try SyncWire.cursor(from: cursor.body).headHash == (try store.head()).hash)
    }

    @Test func gapForkAndForgeryAreRefusedAndNothingIsAppended() async throws {
        let fixture = try Fixture()
        defer { fixture.close() }
        let (store, token) = try await fixture.device("kiosk-7", events: 10)
        defer { store.close() }
        #expect(try fixture.upload(store, 1...4, token: token).status == 200)

        let gap = try fixture.upload(store, 6...8, token: token)
        #expect(gap.status == 409)
        #expect(SyncWire.error(from: gap.body) == .init(code: .gap, message: "the server holds kiosk-7 up to seq 4; send from seq 5", expectedSeq: 5))

        // A fork: another record at seq 3 (valid on its own, different event).
        var forked = try store.records(in: 3...3)
        forked[0].event.at = forked[0].event.at.adding(milliseconds: 1)
        let fork = fixture.call(
            "POST", SyncPaths.events(device: "kiosk-7"), token: token,
            body: try SyncWire.uploadBody(device: "kiosk-7", records: forked, keys: store.syncKeys(for: forked)))
        #expect(fork.status == 409)
        #expect(Self.errorCode(fork) == "fork")

        // A forgery: valid JSON at the next seq whose hash does not follow from its content.
        var forged = try store.records(in: 5...6)
        forged[1].event.user = "mallory"
        let forgery = fixture.call(
            "POST", SyncPaths.events(device: "kiosk-7"), token: token,
            body: try SyncWire.uploadBody(device: "kiosk-7", records: forged, keys: store.syncKeys(for: forged)))
        #expect(forgery.status == 409)
        #expect(Self.errorCode(forgery) == "chain_broken")
        let outcomes = try SyncWire.outcomes(from: forgery.body)
        #expect(outcomes.map(\.kind) == [.refused, .refused], "the batch is atomic: seq 5 was not kept either")
        #expect(try fixture.server.replicas.pinnedStore(for: "kiosk-7").head().seq == 4)

        // And the honest rest still goes through.
        #expect(try fixture.upload(store, 5...10, token: token).status == 200)
        #expect(try fixture.server.replicas.pinnedStore(for: "kiosk-7").head().seq == 10)
    }

    @Test(arguments: TestDatabase.storages) func everyRefusalHasItsStatus(storage: String) async throws {
        let fixture = try Fixture(storage: storage)
        defer { fixture.close() }
        let (store, token) = try await fixture.device("kiosk-7", events: 3)
        defer { store.close() }
        let (other, otherToken) = try await fixture.device("phone-1", events: 3)
        defer { other.close() }
        let body = SyncWire.uploadBody(device: "kiosk-7", records: try store.records(in: 1...3), keys: try store.syncKeys(for: store.records(in: 1...3)))
        let path = SyncPaths.events(device: "kiosk-7")

        #expect(fixture.call("POST", path, token: nil, body: body).status == 401)
        #expect(fixture.call("POST", path, token: "obt_forged", body: body).status == 401)
        let foreign = fixture.call("POST", path, token: otherToken, body: body)
        #expect(foreign.status == 403)
        #expect(SyncWire.error(from: foreign.body)?.message == "this token belongs to device phone-1, not kiosk-7; a device may only write its own log")
        #expect(fixture.call("POST", path, token: token, body: Array("{".utf8)).status == 400)
        #expect(fixture.call("POST", path, token: token, body: Array(#"{"device":"kiosk-7","records":[],"extra":1}"#.utf8)).status == 400)
        #expect(fixture.call("POST", path, token: token, body: body, contentType: "text/plain").status == 415)
        let huge = [UInt8](repeating: 0x20, count: SyncLimits.maximumBodyBytes + 1)
        #expect(fixture.call("POST", path, token: token, body: huge).status == 413)
        #expect(fixture.call("GET", "/v1/nowhere", token: token).status == 404)
        #expect(fixture.call("PUT", path, token: token, body: body).status == 405)
        #expect(fixture.call("GET", SyncPaths.cursor(device: "phone-1"), token: token).status == 403)
        #expect(fixture.call("GET", SyncPaths.history(user: "alice"), token: token).status == 403)

        // After all that, both devices still sync correctly.
        #expect(fixture.call("POST", path, token: token, body: body).status == 200)
        #expect(try fixture.upload(other, 1...3, token: otherToken).status == 200)

        fixture.server.beginShutdown()
        let closing = fixture.call("GET", SyncPaths.cursor(device: "kiosk-7"), token: token)
        #expect(closing.status == 503)
        #expect(closing.retryAfterSeconds == 5)
    }

    @Test(arguments: TestDatabase.storages) func adminEnrolsAuditorReadsAcrossDevicesAndLockoutIsGlobal(storage: String) async throws {
        let fixture = try Fixture(storage: storage)
        defer { fixture.close() }
        // Enrolment over the protocol.
        let enrolled = fixture.call("POST", SyncPaths.devices, token: fixture.admin, body: SyncWire.enrolBody(device: "tablet-3"))
        #expect(enrolled.status == 201)
        let deviceToken = try SyncWire.token(from: enrolled.body)
        #expect(try fixture.server.storage.grant(for: deviceToken).map { [$0.role.rawValue, $0.device] } == ["device", "tablet-3"])
        #expect(fixture.call("POST", SyncPaths.devices, token: deviceToken, body: SyncWire.enrolBody(device: "x")).status == 403)
        #expect(fixture.call("POST", SyncPaths.devices, token: fixture.admin, body: SyncWire.enrolBody(device: "../etc")).status == 400)

        // Four failures on each of three devices: none locks alone (mediawiki: 5 per 5 min), together they do.
        var stores: [OnboardingStore] = []
        for name in ["a", "b", "c"] {
            let (store, token) = try await fixture.device(name, events: 4)
            stores.append(store)
            #expect(try fixture.upload(store, 1...4, token: token).status == 200)
            #expect(try store.signInDecision(user: "alice", at: Self.start.adding(milliseconds: 5000)).isAllowed)
        }
        defer { stores.forEach { $0.close() } }
        let auditor = try SyncWire.token(from: fixture.call("POST", SyncPaths.auditorTokens, token: fixture.admin).body)
        let lockout = fixture.server.handle(
            SyncRequest(
                method: "GET", path: SyncPaths.lockout(user: "alice") + "?at=2026-11-30T16:01:00.000Z",
                headers: ["authorization": "Bearer \(auditor)"]))
        #expect(lockout.status == 200)
        let text = String(decoding: lockout.body, as: UTF8.self)
        // The fifth failure across devices locks the account; the later ones came while locked.
        #expect(text == #"[{"user":"alice","device":null,"factor":"password","failures":5,"locked_until":"2026-11-30T16:05:00.000Z","permanent":false}]"#)

        let history = fixture.call("GET", SyncPaths.history(user: "alice"), token: auditor)
        #expect(history.status == 200)
        let value = try JSONValue.parse(bytes: history.body)
        #expect(value["devices"] == .array([.string("a"), .string("b"), .string("c")]))
        if case .array(let attempts)? = value["attempts"] { #expect(attempts.count == 12) } else { Issue.record("no attempts") }

        // Revocation.
        #expect(fixture.call("DELETE", SyncPaths.tokens(device: "tablet-3"), token: fixture.admin).status == 204)
        #expect(fixture.call("GET", SyncPaths.cursor(device: "tablet-3"), token: deviceToken).status == 401)
    }

    @Test func aRestartedServerKeepsEverythingAndRefoldsTheGlobalLockout() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let data = directory.appending("data")
        var server = try SyncServer(dataDirectory: data)
        let token = try server.issueToken(role: .device, device: "kiosk-7")
        var options = OnboardingStore.Options()
        options.deviceID = "kiosk-7"
        let store = try OnboardingStore.open(at: directory.appending("device"), options: options)
        defer { store.close() }
        _ = try await store.append(
            (0..<6).map { index in
                Event(
                    id: UUID(), device: "kiosk-7", at: Self.start.adding(milliseconds: Int64(index) * 1000), user: "bob", flow: nil,
                    payload: .signInFailed(method: .password, reason: .invalidPassword))
            })
        let body = SyncWire.uploadBody(device: "kiosk-7", records: try store.records(in: 1...6), keys: try store.syncKeys(for: store.records(in: 1...6)))
        let headers = ["authorization": "Bearer \(token)", "content-type": "application/json"]
        #expect(server.handle(SyncRequest(method: "POST", path: SyncPaths.events(device: "kiosk-7"), headers: headers, body: body)).status == 200)
        server.close()

        server = try SyncServer(dataDirectory: data)
        defer { server.close() }
        #expect(server.createdAdminToken == nil, "the admin token is created once")
        let cursor = server.handle(SyncRequest(method: "GET", path: SyncPaths.cursor(device: "kiosk-7"), headers: headers))
        #expect(try SyncWire.cursor(from: cursor.body).acknowledgedSeq == 6)
        let entries = try server.globalLockoutEntries(user: "bob")
        #expect(entries.count == 1)
        #expect(entries.first?.failures == 5, "the sixth failure came while locked and did not count")
    }
}
