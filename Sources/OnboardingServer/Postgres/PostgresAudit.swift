import Foundation
import OnboardingModel
import OnboardingStore
import PostgreSQL

/// The audit of one device's log in PostgreSQL: the steps of a replica's `verify()` (docs/audit.md,
/// "Verification procedure"), named with the same kinds, so an auditor reads the same report
/// whichever storage the server keeps. In one snapshot of the database (as `verify()` reads one
/// LMDB transaction), so uploads committing meanwhile are not taken for damage.
///
/// 1. Records: seqs from 1 without a gap (else **missing**).
/// 2. Each record: its bytes hash to its hash (else **modified**), it decodes with the device's
///    users, and its body's seq is its row's (else **reordered**).
/// 3. Chain: each record links to the one before (else **modified**).
/// 4. Head: the devices row's head is the last record (a head beyond it is **missing**).
/// 5. Indexes: the columns the server derives from each record (`id`, `at_ms`, `type`,
///    `user_key`, `hash`) are the record's, and every user a record names has a `device_users`
///    row (else **index**): histories, the lockout and the refusal of a reused event id read
///    them, not the record.
/// 6. Signatures: every signed head verifies with the key registered at enrolment (else **bad
///    signature**), lies within the log (else **missing**) and vouches for the record at its seq
///    (else **modified**: rewritten after it was signed).
enum PostgresAudit {
    static func audit(_ device: String, connection: PGConnection, storage: PostgresStorage) throws -> DeviceAudit {
        try connection.transaction { connection in
            try connection.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            return try audit(device, inSnapshot: connection, storage: storage)
        }
    }

    /// At most this many problems per device, as `verify()` reports (a log damaged throughout
    /// would otherwise answer `GET /v1/audit` with a problem per record).
    static let maximumProblems = VerifyReport.maximumProblems

    private static func audit(_ device: String, inSnapshot connection: PGConnection, storage: PostgresStorage) throws -> DeviceAudit {
        var audit = DeviceAudit(device: device)
        let rows = try connection.execute(
            prepared: "audit_device", "SELECT head_seq, head_hash, public_key, pseudonym_key FROM devices WHERE device = $1",
            [.text(device)])
        guard let row = rows.first else { return audit }
        let headSeq = UInt64(max(0, try row.int64(0)))
        let headHash = try row.bytes(1)
        audit.registeredKey = try row.optionalBytes(2).flatMap { SigningPublicKey(bytes: $0) }
        let users = try PostgresStorage.loadUsers(
            of: device, pseudonymKey: try PostgresStorage.pseudonymKey(try row.bytes(3)),
            connection: connection
        ).directory
        var problems: [VerifyReport.Problem] = []
        func add(_ message: String, seq: UInt64? = nil, kind: VerifyReport.Problem.Kind) {
            if problems.count < maximumProblems { problems.append(.init(seq: seq, kind: kind, message: message)) }
        }

        // The signed heads first: the scan keeps the hashes of their seqs only, not of the whole log.
        let heads = try connection.execute(
            prepared: "audit_heads", "SELECT seq, hash, signature FROM signed_heads WHERE device = $1 ORDER BY seq",
            [.text(device)]
        ).map { head in
            SignedHead(device: device, seq: UInt64(max(0, try head.int64(0))), hash: Digest(bytes: try head.bytes(1)), signature: try head.bytes(2))
        }
        let signedSeqs = Set(heads.map(\.seq))
        var hashesAtSignedSeqs: [UInt64: Digest] = [:]
        var unreadable = Set<UInt64>()

        var expected: UInt64 = 1
        var previous = Digest.zero
        var lastSeq: UInt64 = 0
        var after: Int64 = 0
        while true {
            let batch = try connection.execute(
                prepared: "audit_events",
                """
                SELECT seq, hash, record, id, at_ms, type, user_key FROM events WHERE device = $1 AND seq > $2 ORDER BY seq LIMIT $3
                """, [.text(device), .int64(after), .int64(Int64(PostgresStorage.readBatchRows))])
            for event in batch {
                let seq = UInt64(max(1, try event.int64(0)))
                let bytes = try event.bytes(2)
                after = Int64(seq)
                audit.records += 1
                // After a gap the broken link is the gap's consequence, not a second finding.
                let followsGap = seq != expected
                if followsGap {
                    add("\(seqRange(expected, seq - 1)) deleted from the log (seq \(seq) follows seq \(expected - 1))", seq: expected, kind: .missing)
                }
                expected = seq + 1
                lastSeq = seq
                let record: Record
                do { record = try RecordCodec.decode(bytes, expectedSeq: seq, users: users) } catch {
                    switch error.reason {
                    case .modified: add("record cannot be read: its bytes no longer match its hash (the record was changed)", seq: seq, kind: .modified)
                    case .misplaced: add("record cannot be read: \(error.message)", seq: seq, kind: .reordered)
                    case .damaged: add("record cannot be read: \(error.message)", seq: seq, kind: .damaged)
                    }
                    unreadable.insert(seq)
                    if let links = try? bytes.withUnsafeBytes({ try RecordCodec.links(of: $0) }) { previous = links.hash }
                    continue
                }
                if record.previousHash != previous && !followsGap {
                    add(
                        "previous-hash link does not match the hash of the record before it (this record or the one before was replaced, inserted or moved)",
                        seq: seq, kind: .modified)
                }
                previous = record.hash
                if signedSeqs.contains(seq) { hashesAtSignedSeqs[seq] = record.hash }
                let userKey = try event.optionalBytes(6)
                if try event.bytes(1) != record.hash.bytes || event.uuid(3) != record.event.id || event.int64(4) != record.event.at.millisecondsSince1970
                    || event.int64(5) != Int64(record.event.type.code) || userKey != record.event.user.map(storage.userKey(of:))
                {
                    add(
                        "the columns of the row (hash, id, at_ms, type, user_key) are not the record's: histories and the lockout read them", seq: seq,
                        kind: .index)
                }
                if let ref = (try? bytes.withUnsafeBytes { try RecordCodec.userRef(of: $0) }) ?? nil, users.entries[ref] == nil, !users.isForgotten(ref) {
                    add(
                        "the record's user \(ref.literal) has no row in device_users: the user's readable id and key are lost, so the record reads as the pseudonym with its personal fields erased",
                        seq: seq, kind: .index)
                }
            }
            if batch.count < PostgresStorage.readBatchRows { break }
        }

        audit.headSeq = headSeq
        if headSeq > lastSeq {
            add(
                "\(seqRange(lastSeq + 1, headSeq)) deleted from the end of the log (the devices row's head is seq \(headSeq), the last record seq \(lastSeq))",
                seq: lastSeq + 1, kind: .missing)
        } else if headSeq != lastSeq {
            add("the devices row's head is seq \(headSeq) but the last record is seq \(lastSeq)", kind: .index)
        } else if headHash != previous.bytes {
            add("the devices row's head hash does not match the hash of the last record (the record or the row was changed)", seq: lastSeq, kind: .modified)
        }

        for head in heads {
            audit.signedHeadCount += 1
            guard let key = audit.registeredKey else { continue }
            if !head.isValid(for: key) {
                add(
                    "the signed head of seq \(head.seq) does not verify with the key \(device) enrolled with (it was re-signed with another key or altered)",
                    seq: head.seq, kind: .badSignature)
            } else if head.seq > lastSeq {
                add(
                    "a valid signed head vouches for seq \(head.seq) but the log ends at seq \(lastSeq): \(seqRange(lastSeq + 1, head.seq)) removed from the tail",
                    seq: lastSeq + 1, kind: .missing)
            } else if let hash = hashesAtSignedSeqs[head.seq], hash != head.hash {
                add(
                    "the record differs from the one signed at seq \(head.seq) (signed hash \(head.hash.hex), log \(hash.hex)): the history was rewritten after it was signed",
                    seq: head.seq, kind: .modified)
            } else if hashesAtSignedSeqs[head.seq] == nil {
                if !unreadable.contains(head.seq) { add("a valid signed head vouches for seq \(head.seq), which the log lacks", seq: head.seq, kind: .missing) }
            } else {
                audit.signedHeadSeq = max(audit.signedHeadSeq ?? 0, head.seq)
            }
        }
        if audit.registeredKey == nil, audit.signedHeadCount > 0 {
            problems.insert(.init(seq: nil, kind: .badSignature, message: "the log keeps signed heads but \(device) has no key registered at enrolment"), at: 0)
        }
        audit.problems = problems
        return audit
    }

    private static func seqRange(_ first: UInt64, _ last: UInt64) -> String {
        first == last ? "seq \(first)" : "seq \(first)…\(last)"
    }
}
