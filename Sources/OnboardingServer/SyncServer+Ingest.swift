import Foundation
import OnboardingModel
import OnboardingStore

/// An upload's way into a replica (`POST /v1/devices/{device}/events` once authorised): the checks
/// before the replica is read, then ``ingest(_:device:into:)``.
extension SyncServer {
    /// What the server refuses in an upload before it looks at the replica: a body for another
    /// device, a record naming another device (a device writes only its own log, so every read
    /// may trust `device`), an event dated too far after the server's clock.
    func refusal(of upload: SyncWire.Upload, device: String) -> SyncResponse? {
        guard upload.device == device else {
            return failure(.malformed, "body.device is \(upload.device) but the path names \(device)")
        }
        if let index = upload.records.firstIndex(where: { $0.event.device != device }) {
            let record = upload.records[index]
            return refuse(
                upload,
                because: RecordRefusal(
                    .foreignDevice,
                    "seq \(record.seq) names device \(record.event.device), not \(device): a device uploads only events it recorded itself; events imported from another device's log cannot be synced from this one"
                ), at: index)
        }
        let now = options.clock()
        let latest = now.adding(milliseconds: options.maximumClockSkewMilliseconds)
        if let index = upload.records.firstIndex(where: { latest < $0.event.at }) {
            let record = upload.records[index]
            return refuse(
                upload,
                because: RecordRefusal(
                    .futureEvent,
                    "seq \(record.seq) is dated \(record.event.at.iso8601), more than \(options.maximumClockSkewMilliseconds / 1000) s after the server's clock (\(now.iso8601)); the device's clock was ahead when it was recorded — nothing was stored, and the batch is accepted once the server's clock is within that of it"
                ), at: index)
        }
        return nil
    }

    /// The protocol's checks of one batch against the device's log, then the append of its new
    /// suffix: the same on every storage. In order: the signed head, the keys the replica seals
    /// with, each record against the log, the append, then what the stored batch brings along.
    /// The first check that fails answers; nothing is stored then.
    func ingest(_ upload: SyncWire.Upload, device: String, into log: any DeviceLog) throws -> SyncResponse {
        let head = try log.head()
        // A device enrolled with a public key signs every batch; the heads the server accepted
        // pin the history up to them (docs/sync-protocol.md, "Signed heads").
        let registered = try storage.registeredKey(of: device)
        if let registered, let refusal = try checkSignedHead(of: upload, device: device, registered: registered, in: log) {
            return refusal
        }
        let pinnedSeq = registered == nil ? 0 : (try log.latestSignedHead()?.seq ?? 0)
        if let refusal = try adoptKeys(of: upload, device: device, pinnedSeq: pinnedSeq, into: log) { return refusal }
        let batch: CheckedBatch
        switch try check(upload, device: device, head: head, pinnedSeq: pinnedSeq, in: log) {
        case .failure(let refusal): return refusal.response
        case .success(let checked): batch = checked
        }
        if let refusal = try append(batch.fresh, of: upload, device: device, expectedHead: head.seq, to: log) { return refusal }
        try keepAlongside(upload, signedHeadIsChecked: registered != nil, in: log)
        return json(200, SyncWire.uploadResponseBody(try standing(of: device, in: log), outcomes: batch.outcomes))
    }

    /// The batch's records as the checks left them: the result of each, and the new suffix.
    private struct CheckedBatch {
        var outcomes: [SyncWire.Outcome] = []
        /// The records after the replica's head, in seq order, each checked against the one before.
        var fresh: [Record] = []
    }

    /// Why one record of a batch refuses the whole batch.
    private struct RecordRefusal {
        var code: SyncErrorCode
        var message: String
        var expectedSeq: UInt64?
        init(_ code: SyncErrorCode, _ message: String, expectedSeq: UInt64? = nil) {
            self.code = code
            self.message = message
            self.expectedSeq = expectedSeq
        }
    }

    /// A device enrolled with `registered` signs every batch: 422 when the batch has no signed
    /// head or one that does not verify. The replica learns the key with the first signed batch.
    private func checkSignedHead(
        of upload: SyncWire.Upload, device: String, registered: SigningPublicKey,
        in log: any DeviceLog
    ) throws -> SyncResponse? {
        guard let signed = upload.signedHead else {
            return failure(
                .signatureRequired,
                "device \(device) is enrolled with a signing key; every upload must carry signed_head over its last record — upgrade the client")
        }
        guard signed.isValid(for: registered) else {
            return failure(
                .badSignature,
                "signed_head for seq \(signed.seq) of \(device) does not verify with the key registered at enrolment (\(registered.hex)); nothing was stored")
        }
        if try log.signingPublicKey() == nil { try log.recordSigningPublicKey(registered) }
        return nil
    }

    /// The log seals with the device's keys, so its records hash as the device's do: it adopts
    /// the keys the batch carries. Another pseudonym key is another store: 409.
    private func adoptKeys(of upload: SyncWire.Upload, device: String, pinnedSeq: UInt64, into log: any DeviceLog) throws -> SyncResponse? {
        guard let keys = upload.keys else { return nil }
        do { try log.adoptKeys(pseudonymKey: keys.pseudonymKey, userKeys: keys.users) } catch let error as StoreError where error.code == .conflict {
            // After a signed head was accepted that is a rewritten history, before it a replaced
            // device store.
            if pinnedSeq > 0 {
                return failure(
                    .historyRewritten,
                    "the records of \(device) are pseudonymised with another key than the history it signed up to seq \(pinnedSeq), which the server accepted; the device log was rewritten after its head was signed"
                )
            }
            // The store's message names the replica's path: the client gets its own.
            return failure(
                .keysChanged,
                "the device's pseudonym key differs from the one the server's replica of \(device) was written with; the device store was replaced — enroll it as a new device"
            )
        }
        return nil
    }

    /// Each record of the batch against the log, in seq order: one the replica holds must be the
    /// same record (a duplicate), one after its head must continue the chain. The first record
    /// that fails refuses the batch (409, with every record's result).
    private func check(
        _ upload: SyncWire.Upload, device: String, head: (seq: UInt64, hash: Digest), pinnedSeq: UInt64,
        in log: any DeviceLog
    ) throws -> Result<CheckedBatch, Refusal> {
        var batch = CheckedBatch()
        for (index, record) in upload.records.enumerated() {
            let refusal: RecordRefusal?
            if record.seq <= head.seq {
                refusal = try checkResent(record, device: device, pinnedSeq: pinnedSeq, in: log)
                if refusal == nil { batch.outcomes.append(.init(seq: record.seq, kind: .duplicate)) }
            } else {
                refusal = checkNew(record, after: batch.fresh.last, of: upload, device: device, head: head, pinnedSeq: pinnedSeq, in: log)
                if refusal == nil {
                    batch.fresh.append(record)
                    batch.outcomes.append(.init(seq: record.seq, kind: .appended))
                }
            }
            if let refusal { return .failure(Refusal(response: refuse(upload, because: refusal, at: index))) }
        }
        return .success(batch)
    }

    /// A record at or below the replica's head must be the one it stores (``isSameRecord(_:resent:in:)``);
    /// a different one contradicts a signed head at or below `pinnedSeq`, and is a fork above.
    private func checkResent(_ record: Record, device: String, pinnedSeq: UInt64, in log: any DeviceLog) throws -> RecordRefusal? {
        let stored = try log.storedRecord(at: record.seq)
        if let stored, stored.hash == record.hash, Self.isSameRecord(stored.event, resent: record.event, in: log) { return nil }
        if record.seq <= pinnedSeq {
            return RecordRefusal(
                .historyRewritten,
                "seq \(record.seq) differs from the history \(device) signed up to seq \(pinnedSeq), which the server accepted; the device log was rewritten after its head was signed"
            )
        }
        return RecordRefusal(.fork, "seq \(record.seq) differs from the record the server holds for \(device); the device log was rewritten")
    }

    /// A record after the replica's head: the first must follow the head (a gap otherwise, or a
    /// rewritten history when the head is signed), and each must hash, sealed as the replica
    /// seals it, to its claimed hash after `previous` (the batch's record before it, or the head).
    private func checkNew(
        _ record: Record, after previous: Record?, of upload: SyncWire.Upload, device: String,
        head: (seq: UInt64, hash: Digest), pinnedSeq: UInt64, in log: any DeviceLog
    ) -> RecordRefusal? {
        let previousHash = previous?.hash ?? head.hash
        if previous == nil && record.seq != head.seq + 1 {
            return RecordRefusal(.gap, "the server holds \(device) up to seq \(head.seq); send from seq \(head.seq + 1)", expectedSeq: head.seq + 1)
        }
        if previous == nil && record.previousHash != previousHash && head.seq > 0 && head.seq <= pinnedSeq {
            return RecordRefusal(
                .historyRewritten,
                "seq \(record.seq) does not follow seq \(head.seq), which \(device) signed and the server accepted; the device log was rewritten after its head was signed"
            )
        }
        guard var seal = log.checkingSeal(for: record.event) else {
            return RecordRefusal(
                .chainBroken,
                "seq \(record.seq) names a user whose key the upload did not carry, so its hash cannot be checked; send the device's keys with its records (body.keys)"
            )
        }
        if seal.seal?.key == nil, let sealed = upload.keys?.sealed[record.seq] {
            // Sealed by the device before it forgot the user: written as the device wrote it.
            seal.seal?.sealed = sealed
        }
        let recomputed = RecordCodec.encode(record.event, seq: record.seq, previousHash: previousHash, seal: seal.seal)
        guard record.previousHash == previousHash, Array(recomputed[1...Digest.byteCount]) == record.hash.bytes else {
            return RecordRefusal(.chainBroken, "seq \(record.seq) does not hash to its claimed hash after the previous record; it was forged or damaged")
        }
        return nil
    }

    /// Appends the checked new suffix atomically and durably, unless it is empty. A replica that
    /// moved since the checks is a race (503, retried); one that refuses the records a fork.
    private func append(
        _ fresh: [Record], of upload: SyncWire.Upload, device: String, expectedHead: UInt64,
        to log: any DeviceLog
    ) throws -> SyncResponse? {
        guard !fresh.isEmpty else { return nil }
        do {
            let sealed = upload.keys.map { keys in fresh.map { keys.sealed[$0.seq] } }
            try log.append(fresh.map(\.event), claimedSeqs: fresh.map(\.seq), expectedHead: expectedHead, sealedSections: sealed)
        } catch let error as StoreError where error.code == .headMoved {
            // Another writer moved the replica between the check and the append: a race, not a
            // divergence. The client retries and is then told where the log stands.
            return failure(.unavailable, "the log of \(device) changed during the upload; retry", retryAfter: 1)
        } catch let error as StoreError where error.code == .conflict || error.code == .seqMismatch {
            return refuse(upload, because: RecordRefusal(.fork, "the server cannot append: \(error.message)"), at: 0)
        }
        metrics.ingested(events: fresh.count, bytes: 0)
        return nil
    }

    /// What a stored batch brings along: forget requests for the users it names that the server
    /// forgot, and the device's signed head (checked when `signedHeadIsChecked`).
    private func keepAlongside(_ upload: SyncWire.Upload, signedHeadIsChecked: Bool, in log: any DeviceLog) throws {
        if let keys = upload.keys, !keys.users.isEmpty {
            // The device holds these users; any of them the server forgot before their records
            // got here is asked of the device now.
            try log.requestForgetOfUsersTheDeviceHolds(Array(keys.users.keys), requestedAt: options.clock())
        }
        if signedHeadIsChecked, let signed = upload.signedHead {
            // Checked above and the batch is now stored: the replica keeps the device's signature.
            try log.recordSignedHead(signed)
        }
    }

    /// A refusal of the whole batch with the per-record results: the record at `index` carries
    /// the refusal's code, every other record `batch_refused`; the status is the code's.
    private func refuse(_ upload: SyncWire.Upload, because refusal: RecordRefusal, at index: Int) -> SyncResponse {
        let results = upload.records.enumerated().map { offset, record in
            SyncWire.Outcome(
                seq: record.seq, kind: .refused,
                reason: offset == index ? refusal.code.rawValue : SyncWire.Outcome.batchRefusedReason)
        }
        let body = SyncWire.ErrorBody(code: refusal.code, message: refusal.message, expectedSeq: refusal.expectedSeq)
        return SyncResponse(
            status: refusal.code.status, headers: ["content-type": SyncWire.contentType],
            body: SyncWire.errorBody(body, results: results))
    }

    /// Whether a resent record (same seq, same hash) is the one the replica stores: the same
    /// event, or the same but for how its user reads — by name on one side, by pseudonym with
    /// personal fields erased on the other, when one side forgot the user before the other did
    /// (a resend after a lost answer, a stale copy). The hash covers the sealed bytes either way.
    static func isSameRecord(_ stored: Event, resent: Event, in log: any DeviceLog) -> Bool {
        if stored == resent { return true }
        guard let storedUser = stored.user, let resentUser = resent.user,
            UserRef.isLiteral(storedUser) != UserRef.isLiteral(resentUser)
        else { return false }
        let ref = log.userRef(of: storedUser)
        guard log.userRef(of: resentUser) == ref else { return false }
        return stored.erasingPersonalData(ref: ref) == resent.erasingPersonalData(ref: ref)
    }
}
