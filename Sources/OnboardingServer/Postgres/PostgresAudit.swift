import Foundation
import OnboardingModel
import OnboardingStore
import PostgreSQL

/// The audit of one device's log in PostgreSQL, as a replica's `verify()` checks its log: seqs
/// from 1 without a gap, each record hashing to its hash and linking to the one before, the
/// device row's head, and every signed head verifying with the key registered at enrolment.
enum PostgresAudit {
    static func audit(_ device: String, connection: PGConnection, storage: PostgresStorage) throws -> DeviceAudit {
        var audit = DeviceAudit(device: device)
        let rows = try connection.execute(prepared: "audit_device", "SELECT head_seq, head_hash, public_key FROM devices WHERE device = $1", [.text(device)])
        guard let row = rows.first else { return audit }
        let headSeq = UInt64(max(0, try row.int64(0)))
        let headHash = try row.bytes(1)
        audit.registeredKey = try row.optionalBytes(2).flatMap { SigningPublicKey(bytes: $0) }
        var problems: [VerifyReport.Problem] = []
        var expected: UInt64 = 1
        var previous = Digest.zero
        var hashes: [UInt64: Digest] = [:]
        var after: Int64 = 0
        while true {
            let batch = try connection.execute(prepared: "audit_events", "SELECT seq, hash, record FROM events WHERE device = $1 AND seq > $2 ORDER BY seq LIMIT $3",
                                               [.text(device), .int64(after), .int64(Int64(PostgresStorage.readBatchRows))])
            for event in batch {
                let seq = UInt64(max(0, try event.int64(0)))
                let hash = try event.bytes(1)
                let record = try event.bytes(2)
                after = Int64(seq)
                if seq != expected {
                    problems.append(.init(seq: expected, kind: .missing, message: "seq \(expected)…\(seq - 1) are missing from the log of \(device)"))
                }
                expected = seq + 1
                audit.records += 1
                guard record.count > RecordCodec.headerByteCount,
                      let links = try? record.withUnsafeBytes({ try RecordCodec.links(of: $0) }) else {
                    problems.append(.init(seq: seq, kind: .damaged, message: "the record at seq \(seq) is too short to be one"))
                    continue
                }
                let computed = Digest.hash(Array(record[(RecordCodec.hashOffset + Digest.byteCount)...]))
                if computed != links.hash || links.hash.bytes != hash {
                    problems.append(.init(seq: seq, kind: .modified, message: "the record at seq \(seq) does not hash to its stored hash: it was changed"))
                } else if links.previous != previous {
                    problems.append(.init(seq: seq, kind: .reordered, message: "the record at seq \(seq) does not follow seq \(seq - 1) in the chain"))
                }
                previous = links.hash
                hashes[seq] = links.hash
            }
            if batch.count < PostgresStorage.readBatchRows { break }
        }
        audit.headSeq = expected - 1
        if audit.headSeq != headSeq || (headSeq > 0 && previous.bytes != headHash) {
            problems.append(.init(seq: nil, kind: .missing, message: "the devices row says the log of \(device) ends at seq \(headSeq), but its records end at seq \(audit.headSeq)"))
        }
        let heads = try connection.execute(prepared: "audit_heads", "SELECT seq, hash, signature FROM signed_heads WHERE device = $1 ORDER BY seq", [.text(device)])
        for head in heads {
            let signed = SignedHead(device: device, seq: UInt64(max(0, try head.int64(0))), hash: Digest(bytes: try head.bytes(1)), signature: try head.bytes(2))
            audit.signedHeadCount += 1
            guard let key = audit.registeredKey else { continue }
            if !signed.isValid(for: key) {
                problems.append(.init(seq: signed.seq, kind: .badSignature, message: "the signed head of seq \(signed.seq) does not verify with the key \(device) enrolled with"))
            } else if hashes[signed.seq] != signed.hash {
                problems.append(.init(seq: signed.seq, kind: .badSignature, message: "the log of \(device) at seq \(signed.seq) is not the record its signed head vouches for"))
            } else {
                audit.signedHeadSeq = max(audit.signedHeadSeq ?? 0, signed.seq)
            }
        }
        if audit.registeredKey == nil, audit.signedHeadCount > 0 {
            problems.insert(.init(seq: nil, kind: .badSignature, message: "the log keeps signed heads but \(device) has no key registered at enrolment"), at: 0)
        }
        audit.problems = problems
        return audit
    }
}
