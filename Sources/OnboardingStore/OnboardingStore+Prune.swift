import Foundation
import LMDB
import OnboardingModel
import OnboardingProjections

extension StoreLayout.MetaKey {
    /// seq (u64 BE) ‖ hash (32 bytes) of the last pruned record; absent while nothing was pruned.
    static let prunedThrough = Array("pruned_through".utf8)
}

extension StoreLayout {
    /// The key in `snapshots` of the projection state at `pruned_through`: every rebuild of a
    /// pruned store starts from it, because the records before it are gone.
    static let prunedBaseSnapshotKey = Array("pruned_base".utf8)
}

/// Where a pruned log begins: the last removed record's seq and hash. The first retained record
/// links to `hash`, so the chain stays verifiable from there.
public struct PrunePoint: Sendable, Hashable {
    public var seq: UInt64
    public var hash: Digest

    public init(seq: UInt64, hash: Digest) {
        self.seq = seq
        self.hash = hash
    }

    /// The first seq the log may still hold, "seq N" (the prune point comes from disk: at
    /// 2^64 − 1 no seq follows, and the text says so instead of computing one).
    public var firstKeptSeqText: String {
        StoreLayout.successor(of: seq).map { "seq \($0)" } ?? "no seq (nothing follows seq \(seq))"
    }
}

/// What ``OnboardingStore/prune(before:batchRecords:progress:)`` removed, or what
/// ``OnboardingStore/planPrune(before:)`` would remove.
///
/// ```swift
/// let result = try store.prune(before: try Timestamp(iso8601: "2026-06-01T00:00:00Z"))
/// print(result.removed.map { "seq \($0.lowerBound)…\($0.upperBound)" } ?? "nothing")
/// ```
public struct PruneResult: Sendable {
    /// Why the prune stops where it does.
    public enum Limit: Sendable, Hashable {
        /// The server has acknowledged no event of this store: nothing may go.
        case nothingAcknowledged
        /// The next record is not acknowledged yet (the server holds the log through this seq).
        case acknowledged(UInt64)
        /// The next record is at or after the date.
        case date
        /// Every record went (all were acknowledged and older than the date).
        case head
    }

    /// The seqs removed (`nil`: none).
    public var removed: ClosedRange<UInt64>?
    public var recordCount: Int
    /// Bytes of keys and values removed from the log and its indexes. LMDB keeps the file's size
    /// and reuses the freed pages for later appends.
    public var freedBytesEstimate: Int
    /// The store's prune point afterwards (`nil`: nothing was ever pruned).
    public var prunedThrough: PrunePoint?
    public var limit: Limit
}

/// How far a running prune is, for a progress line.
public struct PruneProgress: Sendable {
    public var removedRecords: Int
    public var totalRecords: Int
    public var throughSeq: UInt64
}

extension OnboardingStore {
    /// Records removed per write transaction. Each batch also writes the base snapshot, so a
    /// batch must be large enough that encoding the state is a small part of it, and small
    /// enough that its dirty pages (the records, three indexes) stay far below LMDB's
    /// per-transaction limit: 50,000 records of ~200 bytes touch a few thousand pages.
    public static let pruneBatchRecords = 50_000

    /// The prune point: the last removed record's seq and hash (`nil`: never pruned).
    public func prunedThrough() throws(StoreError) -> PrunePoint? {
        try reading { transaction in try readPrunedThrough(transaction) }
    }

    /// What ``prune(before:batchRecords:progress:)`` would remove now, without removing anything.
    public func planPrune(before: Timestamp) throws(StoreError) -> PruneResult {
        try reading { transaction in
            let users = users
            let acknowledged = try readSyncCursor(transaction)
            let point = try readPrunedThrough(transaction)
            var result = PruneResult(removed: nil, recordCount: 0, freedBytesEstimate: 0, prunedThrough: point, limit: .head)
            guard acknowledged > 0 else {
                result.limit = .nothingAcknowledged
                return result
            }
            // A prune point at 2^64 − 1 leaves nothing after it to remove.
            guard let first = StoreLayout.successor(of: point?.seq ?? 0) else { return result }
            var last: UInt64 = 0
            try transaction.withCursor(databases.events) { cursor in
                var entry = try cursor.seek(atLeast: StoreLayout.seqKey(first))
                while let current = entry {
                    let record = try decodeStored(key: current.key, value: current.value, users: users)
                    if record.seq > acknowledged {
                        result.limit = .acknowledged(acknowledged)
                        return
                    }
                    if !(record.event.at < before) {
                        result.limit = .date
                        return
                    }
                    last = record.seq
                    result.recordCount += 1
                    result.freedBytesEstimate += OnboardingStore.entryBytes(of: record.event, valueBytes: current.value.count)
                    entry = try cursor.next()
                }
            }
            if result.recordCount > 0 { result.removed = first...last }
            return result
        }
    }

    /// Removes the oldest records — those the sync server has acknowledged and that happened
    /// before `before` — with their index entries, keeping the rest verifiable and the
    /// projections exact.
    ///
    /// Only a prefix goes (seq 1…N, the log stays contiguous): the prune stops at the first
    /// record that is unacknowledged or not older than `before`. Each batch of `batchRecords` is
    /// one write transaction that deletes its records and index entries, moves `pruned_through`
    /// to the batch's last seq and hash, and stores the projection state at that seq as the base
    /// snapshot (`pruned_base`). A crash leaves the store as it was after the last whole batch;
    /// running the prune again continues. A record that fails its hash or link check stops the
    /// prune before anything of its batch is removed: a prune never hides damage.
    public func prune(
        before: Timestamp, batchRecords: Int = OnboardingStore.pruneBatchRecords,
        progress: ((PruneProgress) -> Void)? = nil
    ) throws(StoreError) -> PruneResult {
        precondition(batchRecords > 0, "batchRecords must be above 0")
        try ensureOpen()
        guard !options.readOnly else { throw StoreError(.notWritable, "store at \(path) is open read-only") }
        let plan = try planPrune(before: before)
        guard let range = plan.removed else { return plan }
        var base =
            try reading { transaction in
                try readPrunedThrough(transaction).map { try readBase(transaction, at: $0, policy: nil) }
            } ?? OnboardingState(policy: options.lockoutPolicy, captchaAlternativesAfterFailures: options.captchaAlternativesAfterFailures)
        var result = plan
        result.recordCount = 0
        var next = range.lowerBound
        while true {
            // Seqs near 2^64 − 1 come only from a damaged store, but must not trap either.
            let (last, overflow) = next.addingReportingOverflow(UInt64(batchRecords) - 1)
            let end = overflow ? range.upperBound : min(range.upperBound, last)
            let (state, point) = try pruneBatch(next...end, from: base)
            base = state
            result.prunedThrough = point
            result.recordCount += Int(end - next + 1)
            progress?(PruneProgress(removedRecords: result.recordCount, totalRecords: plan.recordCount, throughSeq: end))
            guard end < range.upperBound else { break }
            next = end + 1
        }
        // The regular snapshot may be older than the prune point; a newer one spares the next
        // open the replay from the base.
        if options.maintainProjections {
            _ = try withProjections { _ in true }
            try writeSnapshotIfBehind(minimumEvents: 1)
        }
        return result
    }

    /// One prune transaction: checks and folds the records of `seqs` into `start` (the state at
    /// `seqs.lowerBound - 1`), deletes them and their index entries, and moves the prune point.
    private func pruneBatch(_ seqs: ClosedRange<UInt64>, from start: OnboardingState) throws(StoreError) -> (OnboardingState, PrunePoint) {
        guard let snapshots = databases.snapshots else {
            throw StoreError(.notWritable, "store at \(path) has no snapshots database; open it writable once before pruning")
        }
        do {
            return try environment.write { transaction in
                // The closure may run again (map growth): it folds into its own copy.
                var state = start
                let users = users
                let acknowledged = try readSyncCursor(transaction)
                guard seqs.upperBound <= acknowledged else {
                    throw StoreError(
                        .conflict,
                        "the server's acknowledgement moved back to seq \(acknowledged) during the prune; nothing past it was removed — sync, then prune again")
                }
                let point = try readPrunedThrough(transaction)
                guard (point?.seq ?? 0) == seqs.lowerBound - 1, state.seq == seqs.lowerBound - 1 else {
                    throw StoreError(.conflict, "another prune of \(path) ran at the same time; run prune again")
                }
                var previous = point?.hash ?? .zero
                var removed: [Record] = []
                removed.reserveCapacity(Int(seqs.count))
                var removedRefs: [UserRef?] = []
                try transaction.withCursor(databases.events) { cursor in
                    var entry = try cursor.seek(atLeast: StoreLayout.seqKey(seqs.lowerBound))
                    var expected = seqs.lowerBound
                    while true {
                        guard let current = entry, StoreLayout.seq(fromKey: current.key) == expected else {
                            throw StoreError(
                                .corrupted,
                                "seq \(expected) is missing from the log; run onboard verify — nothing of seq \(seqs.lowerBound)…\(seqs.upperBound) was pruned",
                                seq: expected)
                        }
                        let record = try decodeStored(key: current.key, value: current.value, users: users)
                        guard record.previousHash == previous else {
                            throw StoreError(
                                .corrupted,
                                "record at seq \(expected) does not link to the record before it; run onboard verify — a prune never removes records over a broken chain",
                                seq: expected)
                        }
                        previous = record.hash
                        state.apply(record)
                        removed.append(record)
                        removedRefs.append(try RecordCodec.userRef(of: current.value))
                        guard expected < seqs.upperBound else { break }
                        expected += 1
                        entry = try cursor.next()
                    }
                }
                var key: [UInt8] = []
                for (record, ref) in zip(removed, removedRefs) {
                    let seqKey = StoreLayout.seqKey(record.seq)
                    try transaction.delete(databases.events, key: seqKey)
                    StoreLayout.writeUUID(record.event.id, into: &key)
                    // Only the entry that points here: a stray one elsewhere is verify's to report.
                    if try transaction.get(databases.byID, key: key) == seqKey { try transaction.delete(databases.byID, key: key) }
                    if let ref {
                        StoreLayout.writeUserKey(ref, record.seq, into: &key)
                        try transaction.delete(databases.byUser, key: key)
                    }
                    if let session = record.event.flow {
                        StoreLayout.writeSessionKey(session, record.seq, into: &key)
                        try transaction.delete(databases.bySession, key: key)
                    }
                }
                let newPoint = PrunePoint(seq: seqs.upperBound, hash: previous)
                try transaction.put(
                    databases.meta, key: StoreLayout.MetaKey.prunedThrough,
                    value: StoreLayout.headValue(seq: newPoint.seq, hash: newPoint.hash))
                try transaction.put(snapshots, key: StoreLayout.prunedBaseSnapshotKey, value: OnboardingStore.snapshotValue(state))
                return (state, newPoint)
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(.storage, "pruning seq \(seqs.lowerBound)…\(seqs.upperBound) of \(path) failed: \(error); nothing of that batch was removed")
        }
    }

    /// Bytes a record occupies in the log and its indexes (keys and values, without LMDB's page
    /// overhead).
    static func entryBytes(of event: Event, valueBytes: Int) -> Int {
        var bytes = 8 + valueBytes + 16 + 8
        if let user = event.user { bytes += user.utf8.count + 9 }
        if event.flow != nil { bytes += 24 }
        return bytes
    }

    // MARK: Reading the prune point and the base

    func readPrunedThrough(_ transaction: Transaction) throws -> PrunePoint? {
        guard let value = try transaction.get(databases.meta, key: StoreLayout.MetaKey.prunedThrough) else { return nil }
        guard let point = StoreLayout.head(fromValue: value) else {
            throw StoreError(.corrupted, "store at \(path) has a pruned_through of \(value.count) bytes (expected 40); run onboard verify")
        }
        return PrunePoint(seq: point.seq, hash: point.hash)
    }

    func readSyncCursor(_ transaction: Transaction) throws -> UInt64 {
        guard let value = try transaction.get(databases.meta, key: StoreLayout.MetaKey.syncCursor) else { return 0 }
        guard let seq = StoreLayout.uint64(fromValue: value) else {
            throw StoreError(.corrupted, "store at \(path) has a sync_cursor of \(value.count) bytes (expected 8); run onboard verify, then sync again")
        }
        return seq
    }

    /// The projection state at the prune point, under `policy` (any when `nil`). Throws
    /// ``StoreError/Code/pruned`` when it cannot serve: the records it stands for are gone.
    func readBase(_ transaction: Transaction, at point: PrunePoint, policy: LockoutPolicy?) throws -> OnboardingState {
        let lost = "seq 1…\(point.seq) were pruned, so the projections cannot be rebuilt from the log"
        guard let snapshots = databases.snapshots,
            let bytes = try transaction.get(snapshots, key: StoreLayout.prunedBaseSnapshotKey), bytes.count >= 12
        else {
            throw StoreError(.pruned, "\(lost) and the base snapshot (pruned_base) is missing; restore the store from the sync server's copy", seq: point.seq)
        }
        let version = Int(bytes[0..<4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
        let seq = bytes[4..<12].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        // A base of state version 5 (the build before the form fields) or 6 (before the screen a
        // lock returns to, the CAPTCHA failures in a row, the devices' sign-in options, …: docs/
        // format.md § `snapshots`) still serves: what it lacks starts empty.
        guard OnboardingState.readableBaseVersions.contains(version) else {
            throw StoreError(
                .pruned,
                "\(lost) and the base snapshot is of projection state version \(version), not \(OnboardingState.stateVersion); open it with the onboard that pruned it, or restore it from the sync server's copy",
                seq: point.seq)
        }
        guard seq == point.seq, var state = try? OnboardingState(snapshotJSON: Array(bytes[12...])), state.seq == seq else {
            throw StoreError(
                .pruned, "\(lost) and the base snapshot (seq \(seq)) does not stand for seq \(point.seq) or cannot be decoded; run onboard verify",
                seq: point.seq)
        }
        if version == 5 { state.upgradeFromStateVersion5() }
        if let policy, state.lockout.policy != policy {
            throw StoreError(
                .pruned,
                "\(lost) and the base snapshot was folded under lockout policy \(state.lockout.policy.name), not \(policy.name); evaluate other policies on the sync server's full copy",
                seq: point.seq)
        }
        return state
    }

    /// Folds the log after `state.seq` (through `end`) into `state`, in place. On a pruned store
    /// a state older than the prune point cannot catch up record by record: it restarts from the
    /// base snapshot (same policy). A gap in the log throws instead of being skipped.
    func replay(into state: inout OnboardingState, through end: UInt64 = .max) throws(StoreError) {
        try reading { transaction in
            let users = users
            if let point = try readPrunedThrough(transaction), state.seq < point.seq {
                let captchaSetting = state.session.captchaAlternativesAfterFailures
                state = try readBase(transaction, at: point, policy: state.lockout.policy)
                state.useCaptchaAlternativesAfterFailures(captchaSetting)
            }
            guard state.seq < end, let first = StoreLayout.successor(of: state.seq) else { return }
            try transaction.withCursor(databases.events) { cursor in
                var entry = try cursor.seek(atLeast: StoreLayout.seqKey(first))
                while let current = entry {
                    if let seq = StoreLayout.seq(fromKey: current.key), seq > end { return }
                    let record = try decodeStored(key: current.key, value: current.value, users: users)
                    // `state.seq` < `record.seq` here (the cursor started after it): no overflow.
                    guard record.seq == state.seq + 1 else {
                        throw StoreError(
                            .corrupted, "\(Self.seqRange(state.seq + 1, record.seq - 1)) missing from the log; run onboard verify", seq: state.seq + 1)
                    }
                    state.apply(record)
                    entry = try cursor.next()
                }
            }
        }
    }

    /// The stored form of a projection snapshot (`onboarding_state`, `pruned_base`): u32 state
    /// version ‖ u64 seq ‖ ``OnboardingState/snapshotJSON`` (docs/format.md § `snapshots`).
    static func snapshotValue(_ state: OnboardingState) -> [UInt8] {
        StoreLayout.uint32Value(UInt32(OnboardingState.stateVersion)) + StoreLayout.seqKey(state.seq) + state.snapshotJSON
    }
}
