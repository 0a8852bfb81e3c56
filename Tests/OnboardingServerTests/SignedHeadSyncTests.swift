import Foundation
import LMDB
import OnboardingModel
@testable import OnboardingServer
import OnboardingStore
import PostgreSQL
import Synchronization
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
        let response = fixture.call(
            "POST", SyncPaths.devices, token: fixture.admin,
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
            Event(
                id: UUID(), device: device, at: SyncServerTests.start.adding(milliseconds: Int64(index) * 1000),
                user: user, flow: nil, payload: .signInFailed(method: .password, reason: .invalidPassword))
        }
    }

    /// POSTs `range` of `store` with `signedHead` (default: the store's own signature of its last record).
    static func upload(
        _ fixture: Fixture, _ store: OnboardingStore, _ range: ClosedRange<UInt64>, token: String,
        signedHead: SignedHead?? = .none
    ) throws -> SyncResponse {
        let head: SignedHead? =
            switch signedHead {
            case .none: try store.signHead(through: range.upperBound)
            case .some(let given): given
            }
        return fixture.call(
            "POST", SyncPaths.events(device: store.deviceID), token: token,
            body: SyncWire.uploadBody(
                device: store.deviceID, records: try store.records(in: range), signedHead: head,
                keys: try store.syncKeys(for: store.records(in: range))))
    }

    @Test(arguments: TestDatabase.storages) func theServerKeepsTheSignedHeadOfEveryAcceptedBatch(storage: String) async throws {
        let fixture = try Fixture(storage: storage)
        defer { fixture.close() }
        let (store, token) = try await Self.enrolledDevice(fixture, count: 8)
        defer { store.close() }
        let summary = try await SyncClient(store: store, transport: InMemoryTransport(handler: fixture.server.handle), token: token, batchEvents: 3).run()
        #expect(summary.acknowledgedSeq == 8)
        #expect(try fixture.server.heldSignedHeadSeqs(of: "kiosk-7") == [3, 6, 8])
        #expect(try fixture.server.heldSigningPublicKey(of: "kiosk-7") == store.signingPublicKey())
        let audits = try fixture.server.audit()
        #expect(audits.map(\.device) == ["kiosk-7"] && audits[0].isValid && audits[0].signedHeadSeq == 8, "\(audits)")
    }

    @Test(arguments: TestDatabase.storages) func aHistoryRewrittenAfterASignedHeadWasAcceptedIsRefused(storage: String) async throws {
        let fixture = try Fixture(storage: storage)
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
        #expect(try fixture.server.heldHead(of: "kiosk-7").seq == 5, "nothing of the rewrite was stored")

        let error = await #expect(throws: SyncError.self) {
            try await SyncClient(store: rewritten, transport: InMemoryTransport(handler: fixture.server.handle), token: token).run()
        }
        #expect(error == .fork, "the honest client notices the divergence from the cursor before uploading")
    }

    @Test(arguments: TestDatabase.storages) func aBadOrMissingSignatureIsRefusedWithItsOwnCode(storage: String) async throws {
        let fixture = try Fixture(storage: storage)
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
        #expect(try fixture.server.heldHead(of: "kiosk-7").seq == 0)

        // Re-enrolling with another key is refused; the registered key stays.
        let other = fixture.call(
            "POST", SyncPaths.devices, token: fixture.admin,
            body: SyncWire.enrolBody(device: "kiosk-7", publicKey: SigningKeyPair.generate().publicKey))
        #expect(other.status == 409)
        #expect(SyncServerTests.errorCode(other) == "key_mismatch")
        #expect(try Self.upload(fixture, store, 1...3, token: token).status == 200)
    }

    /// Two enrolled devices synced to the fixture's server: kiosk-1 with 4 events, kiosk-2 with 6
    /// (user "alice"); the device stores are closed. Returns the path of kiosk-2's replica (LMDB).
    static func twoSyncedDevices(_ fixture: Fixture) async throws -> String? {
        let (honest, honestToken) = try await enrolledDevice(fixture, name: "kiosk-1", count: 4)
        let (victim, victimToken) = try await enrolledDevice(fixture, name: "kiosk-2", count: 6)
        #expect(try upload(fixture, honest, 1...4, token: honestToken).status == 200)
        #expect(try upload(fixture, victim, 1...6, token: victimToken).status == 200)
        honest.close()
        victim.close()
        return fixture.server.replicaPath(for: "kiosk-2")
    }

    // About a replica's file damaged on disk and the start-up scan of the replicas, which a
    // server on PostgreSQL has neither of (the database checks its own pages): LMDB only.
    @Test func aDamagedReplicaDoesNotKeepTheServerFromStarting() async throws {
        let fixture = try Fixture()
        defer { fixture.directory.remove() }
        let replicaPath = try #require(try await Self.twoSyncedDevices(fixture))
        let data = try #require(fixture.storage.dataDirectory)
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

    @Test(arguments: TestDatabase.storages) func theAuditNamesATamperedLog(storage: String) async throws {
        let fixture = try Fixture(storage: storage)
        defer { fixture.close() }
        let replicaPath = try await Self.twoSyncedDevices(fixture)
        let auditor = try fixture.server.issueToken(role: .auditor)
        fixture.server.close()

        // Someone with the server's disk or database rewrites seq 4 of kiosk-2's log and
        // re-chains everything after it: every hash, link and the head agree; only the device's
        // signature over seq 6 no longer does.
        let tampering = try LogTampering(fixture.storage, device: "kiosk-2", replicaPath: replicaPath)
        var previous = try RecordCodec.decode(try tampering.record(at: 3)).hash
        for seq in UInt64(4)...6 {
            var event = try RecordCodec.decode(try tampering.record(at: seq)).event
            if seq == 4 { event.at = event.at.adding(milliseconds: 1) }
            let bytes = RecordCodec.encode(event, seq: seq, previousHash: previous)
            try tampering.put(bytes, at: seq)
            previous = try RecordCodec.decode(bytes).hash
        }
        try tampering.setHead(6, previous)
        tampering.close()
        // `onboard audit --data` reads the replicas' files (with no server open in this process,
        // which would hold them).
        let offline = try fixture.storage.dataDirectory.map { try ReplicaAudit.run(dataDirectory: $0) }

        // The server's audit (`GET /v1/audit`, and `onboard audit --database`) reads the same on either storage.
        let server = try fixture.storage.open()
        defer { server.close() }
        let audits = try server.audit()
        #expect(audits.map(\.device) == ["kiosk-1", "kiosk-2"])
        #expect(audits[0].isValid && audits[0].signedHeadSeq == 4)
        #expect(!audits[1].isValid)
        #expect(audits[1].firstProblem?.seq == 6)
        #expect(audits[1].firstProblem?.kind == .modified)
        #expect(audits[1].firstProblem?.message.contains("rewritten after it was signed") == true, "\(audits[1].problems)")
        if let offline {
            #expect(
                offline.map(\.firstProblem?.seq) == audits.map(\.firstProblem?.seq) && offline.map(\.firstProblem?.kind) == audits.map(\.firstProblem?.kind))
        }

        // The same report over HTTP, for an auditor.
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

    /// What someone editing one device's log behind the server does, and what the audit must
    /// name first (docs/audit.md, "Verification procedure"): on kiosk-7's 6 records, signed at
    /// seqs 3 and 6.
    enum Tampering: String, CaseIterable, CustomTestStringConvertible {
        /// A byte of seq 5 changed: it no longer hashes to its hash.
        case byteChanged
        /// Seq 4 replaced by a record that hashes and links to seq 3, the rest left as it was.
        case recordReplaced
        /// Seqs 4 and 5 swapped.
        case recordsSwapped
        /// Seq 3 deleted.
        case recordDeleted
        /// Seqs 5 and 6 deleted and the head moved back to seq 4: the signed head of seq 6 lies beyond it.
        case tailRemoved
        /// Seq 6 deleted but the head left at seq 6.
        case headBeyondTheLog

        var testDescription: String { rawValue }

        var firstProblem: (seq: UInt64, kind: VerifyReport.Problem.Kind) {
            switch self {
            case .byteChanged: (5, .modified)
            case .recordReplaced: (5, .modified)
            case .recordsSwapped: (4, .reordered)
            case .recordDeleted: (3, .missing)
            case .tailRemoved: (5, .missing)
            case .headBeyondTheLog: (6, .missing)
            }
        }

        func apply(_ tampering: LogTampering) throws {
            switch self {
            case .byteChanged:
                var bytes = try tampering.record(at: 5)
                bytes[bytes.count - 1] ^= 0x01
                try tampering.put(bytes, at: 5)
            case .recordReplaced:
                var event = try RecordCodec.decode(try tampering.record(at: 4)).event
                event.at = event.at.adding(milliseconds: 1)
                try tampering.put(RecordCodec.encode(event, seq: 4, previousHash: try RecordCodec.decode(try tampering.record(at: 3)).hash), at: 4)
            case .recordsSwapped:
                let (four, five) = (try tampering.record(at: 4), try tampering.record(at: 5))
                try tampering.put(five, at: 4)
                try tampering.put(four, at: 5)
            case .recordDeleted:
                try tampering.delete(3)
            case .tailRemoved:
                let four = try RecordCodec.decode(try tampering.record(at: 4)).hash
                try tampering.delete(6)
                try tampering.delete(5)
                try tampering.setHead(4, four)
            case .headBeyondTheLog:
                try tampering.delete(6)
            }
        }
    }

    @Test(arguments: TestDatabase.storages, Tampering.allCases)
    func theAuditNamesEachKindOfTampering(storage: String, tampering kind: Tampering) async throws {
        let fixture = try Fixture(storage: storage)
        defer { fixture.close() }
        let (store, token) = try await Self.enrolledDevice(fixture, count: 6)
        #expect(try Self.upload(fixture, store, 1...3, token: token).status == 200)
        #expect(try Self.upload(fixture, store, 4...6, token: token).status == 200)
        store.close()
        #expect(try fixture.server.audit(of: "kiosk-7").isValid)
        let replicaPath = fixture.server.replicaPath(for: "kiosk-7")
        fixture.server.close()

        let tampering = try LogTampering(fixture.storage, device: "kiosk-7", replicaPath: replicaPath)
        try kind.apply(tampering)
        tampering.close()

        let server = try fixture.storage.open()
        defer { server.close() }
        let audit = try server.audit(of: "kiosk-7")
        #expect(!audit.isValid)
        let first = try #require(audit.firstProblem, "\(audit.problems)")
        #expect(first.seq == kind.firstProblem.seq && first.kind == kind.firstProblem.kind, "\(audit.problems)")
    }

    /// Events the device uploads while the audit runs, in batches of ``concurrentAuditBatch``: enough
    /// uploads (100) that audits overlap many commits, few enough to take about a second.
    static let concurrentAuditEvents = 400
    static let concurrentAuditBatch = 4
    /// The most the audits may go on while the uploads do (a bound, not an expectation).
    static let concurrentAuditSeconds: TimeInterval = 60

    /// The audit while the device uploads (docs/audit.md: it may run while the server serves):
    /// each device's log is read as of one moment, so a batch committed during an audit is never
    /// taken for a gap, a head beyond the log or a signed head the log lacks.
    @Test(arguments: TestDatabase.storages) func theAuditOfALogBeingUploadedFindsNothingWrong(storage: String) async throws {
        let fixture = try Fixture(storage: storage)
        defer { fixture.close() }
        let (store, token) = try await Self.enrolledDevice(fixture, count: Self.concurrentAuditEvents)
        defer { store.close() }
        let bodies = try stride(from: 1, through: Self.concurrentAuditEvents, by: Self.concurrentAuditBatch).map { first in
            let range = UInt64(first)...UInt64(first + Self.concurrentAuditBatch - 1)
            let records = try store.records(in: range)
            return SyncWire.uploadBody(
                device: "kiosk-7", records: records, signedHead: try store.signHead(through: range.upperBound),
                keys: try store.syncKeys(for: records))
        }
        let server = fixture.server
        let (problems, audits, statuses) = try await onOwnThread { () throws -> ([String], Int, [Int]) in
            let uploaded = DispatchSemaphore(value: 0)
            let statuses = Mutex<[Int]>([])
            detachThread {
                defer { uploaded.signal() }
                for body in bodies {
                    let response = server.handle(
                        SyncRequest(
                            method: "POST", path: SyncPaths.events(device: "kiosk-7"),
                            headers: ["authorization": "Bearer \(token)", "content-type": SyncWire.contentType], body: body))
                    statuses.withLock { $0.append(response.status) }
                }
            }
            var problems: [String] = []
            var audits = 0
            let deadline = Date().addingTimeInterval(Self.concurrentAuditSeconds)
            while uploaded.wait(timeout: .now()) == .timedOut && Date() < deadline {
                let audit = try server.audit(of: "kiosk-7")
                audits += 1
                problems += audit.problems.map { "after \(audit.records) records: \($0)" }
            }
            return (problems, audits, statuses.withLock { $0 })
        }
        #expect(statuses.count == bodies.count && statuses.allSatisfy { $0 == 200 }, "\(statuses)")
        #expect(audits > 1, "the audits ran while the uploads did")
        #expect(problems.isEmpty, "\(problems.prefix(5))")
        let final = try server.audit(of: "kiosk-7")
        #expect(final.isValid && final.records == Self.concurrentAuditEvents && final.signedHeadSeq == UInt64(Self.concurrentAuditEvents))
    }

    // About the columns PostgreSQL keeps beside each record (an LMDB replica's indexes are the
    // store's verify tests'): PostgreSQL only.
    @Test(.enabled(if: TestDatabase.isEnabled, TestDatabase.skipNote))
    func theAuditNamesARowWhoseColumnsAreNotItsRecord() async throws {
        let fixture = try Fixture(storage: "postgres")
        defer { fixture.close() }
        let (store, token) = try await Self.enrolledDevice(fixture, count: 6)
        defer { store.close() }
        #expect(try Self.upload(fixture, store, 1...6, token: token).status == 200)
        let at = SyncServerTests.start.adding(milliseconds: 10_000)
        #expect(try fixture.server.globalLockoutEntries(user: "alice", at: at).first?.failures == 5)
        // Someone with the database hides alice's failures at seq 2 and 3 from the lockout and her
        // history: the records stay as the device signed them, only the user column changes.
        let url = try #require(fixture.storage.databaseURL)
        let connection = try PGConnection(url: DatabaseURL(url))
        defer { connection.close() }
        try connection.execute("UPDATE events SET user_key = NULL WHERE device = 'kiosk-7' AND seq IN (2, 3)")
        #expect(try fixture.server.globalLockoutEntries(user: "alice", at: at).first?.failures == 4)

        let audit = try fixture.server.audit(of: "kiosk-7")
        #expect(audit.problems.map(\.seq) == [2, 3] && audit.problems.allSatisfy { $0.kind == .index }, "\(audit.problems)")
        #expect(audit.problems.first?.message.contains("user_key") == true)
        #expect(audit.signedHeadSeq == 6, "the records themselves are intact")
    }
}
