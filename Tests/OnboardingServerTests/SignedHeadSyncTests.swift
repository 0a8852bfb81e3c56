import Foundation
import LMDB
import OnboardingModel
@testable import OnboardingServer
import OnboardingStore
import Testing
import TestSupport

/// Signed heads over the sync protocol: enrolment registers the key, the server checks every
/// batch's signature, keeps what it accepted and refuses history that contradicts it; the audit
/// names a tampered replica.
@Suite struct SignedHeadSyncTests {
    typealias Fixture = SyncServerTests.Fixture

    /// A device store with `count` events (users and times from `offset`), its key registered.
    static func enrolledDevice(_ fixture: Fixture, name: String = "kiosk-7", count: Int) async throws -> (OnboardingStore, String) {
        let store = try openStore(fixture.directory.appending("device-\(name)"), device: name)
        _ = try await store.append(events(device: name, count: count))
        let publicKey: SigningPublicKey = try #require(try store.signingPublicKey())
        let response = fixture.call("POST", SyncPaths.devices, token: fixture.admin,
                                    body: SyncWire.enrolBody(device: name, publicKey: publicKey))
        #expect(response.status == 201)
        return (store, try SyncWire.token(from: response.body))
    }

    static func openStore(_ path: String, device: String) throws -> OnboardingStore {
        var options = OnboardingStore.Options()
        options.deviceID = device
        return try OnboardingStore.open(at: path, options: options)
    }

    static func events(device: String, count: Int, user: String = "alice", from first: Int = 0) -> [Event] {
        (first..<(first + count)).map { index in
            Event(id: UUID(), device: device, at: SyncServerTests.start.adding(milliseconds: Int64(index) * 1000),
                  user: user, flow: nil, payload: .signInFailed(method: .password, reason: .invalidPassword))
        }
    }

    /// POSTs `range` of `store` with `signedHead` (default: the store's own signature of its last record).
    static func upload(_ fixture: Fixture, _ store: OnboardingStore, _ range: ClosedRange<UInt64>, token: String,
                       signedHead: SignedHead?? = .none) throws -> SyncResponse {
        let head: SignedHead? = switch signedHead {
        case .none: try store.signHead(through: range.upperBound)
        case .some(let given): given
        }
        return fixture.call("POST", SyncPaths.events(device: store.deviceID), token: token,
                            body: SyncWire.uploadBody(device: store.deviceID, records: try store.records(in: range), signedHead: head,
                                                          keys: try store.syncKeys(for: store.records(in: range))))
    }

    @Test func theServerKeepsTheSignedHeadOfEveryAcceptedBatch() async throws {
        let fixture = try Fixture()
        defer { fixture.close() }
        let (store, token) = try await Self.enrolledDevice(fixture, count: 8)
        defer { store.close() }
        let summary = try await SyncClient(store: store, transport: InMemoryTransport(handler: fixture.server.handle), token: token, batchEvents: 3).run()
        #expect(summary.acknowledgedSeq == 8)
        let replica = try fixture.server.replicas.pinnedStore(for: "kiosk-7")
        #expect(try replica.signedHeads().map(\.seq) == [3, 6, 8])
        #expect(try replica.signingPublicKey() == store.signingPublicKey())
        let audits = try fixture.server.audit()
        #expect(audits.map(\.device) == ["kiosk-7"] && audits[0].isValid && audits[0].signedHeadSeq == 8, "\(audits)")
    }

    @Test func aHistoryRewrittenAfterASignedHeadWasAcceptedIsRefused() async throws {
        let fixture = try Fixture()
        defer { fixture.close() }
        let (store, token) = try await Self.enrolledDevice(fixture, count: 5)
        #expect(try Self.upload(fixture, store, 1...5, token: token).status == 200)
        let keyFile = store.signingKeyPath
        store.close()

        // The same device, its log rebuilt with other events and signed with its real key.
        let rewrittenPath = fixture.directory.appending("rewritten")
        var keyless = OnboardingStore.Options()
        keyless.deviceID = "kiosk-7"
        keyless.signsHeads = false
        try OnboardingStore.open(at: rewrittenPath, options: keyless).close()
        try FileManager.default.copyItem(atPath: keyFile, toPath: rewrittenPath + "/signing.key")
        let rewritten = try Self.openStore(rewrittenPath, device: "kiosk-7")
        defer { rewritten.close() }
        _ = try await rewritten.append(Self.events(device: "kiosk-7", count: 6, user: "mallory"))

        let whole = try Self.upload(fixture, rewritten, 1...6, token: token)
        #expect(whole.status == 409)
        #expect(SyncServerTests.errorCode(whole) == "history_rewritten")
        #expect(SyncWire.error(from: whole.body)?.message.contains("signed up to seq 5") == true)
        let tail = try Self.upload(fixture, rewritten, 6...6, token: token)
        #expect(tail.status == 409)
        #expect(SyncServerTests.errorCode(tail) == "history_rewritten")
        #expect(try fixture.server.replicas.pinnedStore(for: "kiosk-7").head().seq == 5, "nothing of the rewrite was stored")

        let error = await #expect(throws: SyncError.self) {
            try await SyncClient(store: rewritten, transport: InMemoryTransport(handler: fixture.server.handle), token: token).run()
        }
        #expect(error == .fork, "the honest client notices the divergence from the cursor before uploading")
    }

    @Test func aBadOrMissingSignatureIsRefusedWithItsOwnCode() async throws {
        let fixture = try Fixture()
        defer { fixture.close() }
        let (store, token) = try await Self.enrolledDevice(fixture, count: 3)
        defer { store.close() }
        let record = try #require(try store.storedRecord(at: 3))
        let forged = SignedHead.sign(device: "kiosk-7", seq: 3, hash: record.hash, with: SigningKeyPair.generate())
        let bad = try Self.upload(fixture, store, 1...3, token: token, signedHead: .some(forged))
        #expect(bad.status == 422)
        #expect(SyncServerTests.errorCode(bad) == "bad_signature")
        let missing = try Self.upload(fixture, store, 1...3, token: token, signedHead: .some(nil))
        #expect(missing.status == 422)
        #expect(SyncServerTests.errorCode(missing) == "signature_required")
        #expect(try fixture.server.replicas.pinnedStore(for: "kiosk-7").head().seq == 0)

        // Re-enrolling with another key is refused; the registered key stays.
        let other = fixture.call("POST", SyncPaths.devices, token: fixture.admin,
                                 body: SyncWire.enrolBody(device: "kiosk-7", publicKey: SigningKeyPair.generate().publicKey))
        #expect(other.status == 409)
        #expect(SyncServerTests.errorCode(other) == "key_mismatch")
        #expect(try Self.upload(fixture, store, 1...3, token: token).status == 200)
    }

    /// Two enrolled devices synced to the fixture's server: kiosk-1 with 4 events, kiosk-2 with 6
    /// (user "alice"); the device stores are closed. Returns the server's data directory and the
    /// path of kiosk-2's replica.
    static func twoSyncedDevices(_ fixture: Fixture) async throws -> (data: String, victimReplica: String) {
        let (honest, honestToken) = try await enrolledDevice(fixture, name: "kiosk-1", count: 4)
        let (victim, victimToken) = try await enrolledDevice(fixture, name: "kiosk-2", count: 6)
        #expect(try upload(fixture, honest, 1...4, token: honestToken).status == 200)
        #expect(try upload(fixture, victim, 1...6, token: victimToken).status == 200)
        honest.close()
        victim.close()
        return (fixture.directory.appending("server-data"), fixture.server.replicas.path(for: "kiosk-2"))
    }

    @Test func aDamagedReplicaDoesNotKeepTheServerFromStarting() async throws {
        let fixture = try Fixture()
        defer { fixture.directory.remove() }
        let (data, replicaPath) = try await Self.twoSyncedDevices(fixture)
        let user = "alice"
        let at = SyncServerTests.start.adding(milliseconds: 10_000)
        fixture.server.close()

        // A flipped byte in seq 5 of kiosk-2's replica (disk damage): its hash no longer matches.
        let environment = try Environment.open(path: replicaPath)
        let events = try #require(try environment.openDatabase("events", create: false))
        let seqKey = withUnsafeBytes(of: UInt64(5).bigEndian) { Array($0) }
        try environment.write { transaction in
            var value = try #require(try transaction.get(events, key: seqKey))
            value[value.count - 1] ^= 0x01
            try transaction.put(events, key: seqKey, value: value)
        }
        environment.close()

        let server = try SyncServer(dataDirectory: data)
        defer { server.close() }
        #expect(server.unreadableReplicas.count == 1)
        #expect(server.unreadableReplicas.first?.hasPrefix("kiosk-2: ") == true, "\(server.unreadableReplicas)")
        // The cross-device views still work (the readable records count), and the audit names the damage.
        #expect(try !server.globalLockoutEntries(user: user, at: at).isEmpty)
        let audits = try ReplicaAudit.run(dataDirectory: data)
        #expect(audits.first { $0.device == "kiosk-2" }?.firstProblem?.seq == 5)
    }

    @Test func theAuditNamesATamperedReplica() async throws {
        let fixture = try Fixture()
        defer { fixture.directory.remove() }
        let (data, replicaPath) = try await Self.twoSyncedDevices(fixture)
        let auditor = try fixture.server.issueToken(role: .auditor)
        fixture.server.close()

        // Someone with the server's disk rewrites seq 4 of kiosk-2's replica and re-chains
        // everything after it: every hash, link and the head agree; only the device's signature
        // over seq 6 no longer does.
        let environment = try Environment.open(path: replicaPath)
        let events = try #require(try environment.openDatabase("events", create: false))
        let meta = try #require(try environment.openDatabase("meta", create: false))
        func key(_ seq: UInt64) -> [UInt8] { withUnsafeBytes(of: seq.bigEndian) { Array($0) } }
        try environment.write { transaction in
            var previous = try RecordCodec.decode(try #require(try transaction.get(events, key: key(3)))).hash
            for seq in UInt64(4)...6 {
                var event = try RecordCodec.decode(try #require(try transaction.get(events, key: key(seq)))).event
                if seq == 4 { event.at = event.at.adding(milliseconds: 1) }
                let bytes = RecordCodec.encode(event, seq: seq, previousHash: previous)
                try transaction.put(events, key: key(seq), value: bytes)
                previous = try RecordCodec.decode(bytes).hash
            }
            try transaction.put(meta, key: Array("head".utf8), value: key(6) + previous.bytes)
        }
        environment.close()

        let audits = try ReplicaAudit.run(dataDirectory: data)
        #expect(audits.map(\.device) == ["kiosk-1", "kiosk-2"])
        #expect(audits[0].isValid && audits[0].signedHeadSeq == 4)
        #expect(!audits[1].isValid)
        #expect(audits[1].firstProblem?.seq == 6)
        #expect(audits[1].firstProblem?.kind == .modified)
        #expect(audits[1].firstProblem?.message.contains("rewritten after it was signed") == true, "\(audits[1].problems)")

        // The same report over HTTP, for an auditor.
        let server = try SyncServer(dataDirectory: data)
        defer { server.close() }
        let response = server.handle(SyncRequest(method: "GET", path: "/v1/audit", headers: ["authorization": "Bearer \(auditor)"]))
        #expect(response.status == 200)
        let body = try JSONValue.parse(bytes: response.body)
        #expect(body["ok"] == .bool(false))
        guard case .array(let devices)? = body["devices"] else { throw TestFailure("no devices in \(body)") }
        #expect(devices[1]["device"] == .string("kiosk-2") && devices[1]["first_bad_seq"] == .number("6"))
        guard case .array(let problems)? = devices[1]["problems"] else { throw TestFailure("no problems in \(devices[1])") }
        #expect(problems.first?["kind"] == .string("modified"))
        #expect(devices[0]["ok"] == .bool(true))
    }
}
