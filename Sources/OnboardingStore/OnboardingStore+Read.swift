import Foundation
import LMDB
import OnboardingModel

extension OnboardingStore {
    /// The last seq and its hash (seq 0 and zeros for an empty log).
    public func head() throws(StoreError) -> (seq: UInt64, hash: Digest) {
        try reading { transaction in try readHead(transaction) }
    }

    /// The record at `seq`, or `nil` when the log is shorter.
    public func storedRecord(at seq: UInt64) throws(StoreError) -> Record? {
        try reading { transaction in try readRecord(seq, in: transaction) }
    }

    /// The old name of ``storedRecord(at:)``: beside `record(_:)`, which appends, it read as a write.
    @available(*, deprecated, renamed: "storedRecord(at:)")
    public func record(at seq: UInt64) throws(StoreError) -> Record? { try storedRecord(at: seq) }

    /// The seq of the event with `id`, if stored.
    public func seq(of id: UUID) throws(StoreError) -> UInt64? {
        try reading { transaction in
            try transaction.withValue(databases.byID, key: StoreLayout.uuidBytes(id)) { StoreLayout.seq(fromKey: $0) } ?? nil
        }
    }

    /// How many of `ids` are stored, in one read transaction (an import counts what its last
    /// commit will append: up to a commit's worth of ids, where a transaction per id costs more
    /// than the lookups).
    package func storedCount(of ids: some Sequence<UUID>) throws(StoreError) -> Int {
        try reading { transaction in
            var count = 0
            for id in ids where try transaction.withValue(databases.byID, key: StoreLayout.uuidBytes(id), { _ in true }) ?? false {
                count += 1
            }
            return count
        }
    }

    /// Records with seq in `range`, in order.
    public func records(in range: ClosedRange<UInt64>) throws(StoreError) -> [Record] {
        var records: [Record] = []
        try forEachRecord(from: range.lowerBound, through: range.upperBound) { record in
            records.append(record)
            return true
        }
        return records
    }

    /// Calls `body` with every record from seq `start` through `end`, in order, inside one read
    /// transaction (a consistent snapshot); `body` returns `false` to stop. Each record is
    /// checked (hash, position) as it is read: a damaged one throws ``StoreError/Code/corrupted``.
    public func forEachRecord(
        from start: UInt64 = 1, through end: UInt64 = .max,
        _ body: (Record) throws -> Bool
    ) throws(StoreError) {
        var decoded: UInt64 = 0
        // Counted once per read, not per record: the counter costs nothing on the scan.
        defer { decodedRecordCount.add(decoded, ordering: .relaxed) }
        try reading { transaction in
            // Taken inside the read: a user whose first record this read sees is in it.
            let users = users
            try transaction.withCursor(databases.events) { cursor in
                var entry = try cursor.seek(atLeast: StoreLayout.seqKey(max(start, 1)))
                while let current = entry {
                    // Stop on the key, before decoding: a damaged record past the range must not
                    // fail a read that does not include it.
                    if let seq = StoreLayout.seq(fromKey: current.key), seq > end { return }
                    let record = try decodeStored(key: current.key, value: current.value, users: users)
                    decoded += 1
                    guard try body(record) else { return }
                    entry = try cursor.next()
                }
            }
        }
    }

    /// How many records this store has decoded from its log since it was opened, by its read
    /// paths (scans, index lookups, single records). Tests use it to show a query reads only what it
    /// should: `history(_:)` for one user adds that user's record count, not the log's length.
    /// (`verify` reads the raw log itself and is not counted.)
    public var recordsDecoded: UInt64 { decodedRecordCount.load(ordering: .relaxed) }

    /// Every record of `user`, in log order, read through the `by_user` index.
    public func records(user: String, limit: Int = .max) throws(StoreError) -> [Record] {
        let ref = userRef(of: user)
        return try indexedRecords(in: databases.byUser, prefix: StoreLayout.userIndexPrefix(ref), user: ref, limit: limit)
    }

    /// Every record of the onboarding flow `flow` (``Event/flow``), in log order, through the
    /// `by_session` index.
    public func records(flow: UUID, limit: Int = .max) throws(StoreError) -> [Record] {
        try indexedRecords(in: databases.bySession, prefix: StoreLayout.uuidBytes(flow), limit: limit)
    }

    @available(*, deprecated, renamed: "records(flow:limit:)")
    public func records(session: UUID, limit: Int = .max) throws(StoreError) -> [Record] {
        try records(flow: session, limit: limit)
    }

    private func indexedRecords(in index: Database, prefix: [UInt8], user: UserRef? = nil, limit: Int) throws(StoreError) -> [Record] {
        var records: [Record] = []
        try forEachIndexedRecord(in: index, prefix: prefix, user: user, limit: limit) {
            records.append($0); return true
        }
        return records
    }

    /// Calls `body` with each record (at most `limit`) whose `index` key is `prefix` ‖ seq, in
    /// seq order, inside one read transaction; each record is checked as it is decoded. Starts
    /// at seq `start`; `body` returns `false` to stop. With `user` (a `by_user` read), a record
    /// whose pseudonym is another user's that shares the key prefix is skipped.
    func forEachIndexedRecord(
        in index: Database, prefix: [UInt8], user: UserRef? = nil, from start: UInt64 = 1, limit: Int,
        _ body: (Record) -> Bool
    ) throws(StoreError) {
        var count = 0
        defer { decodedRecordCount.add(UInt64(count), ordering: .relaxed) }
        try reading { transaction in
            let users = users
            try transaction.withCursor(index) { cursor in
                var entry = try cursor.seek(atLeast: prefix + StoreLayout.seqKey(max(start, 1)))
                while let current = entry, count < limit {
                    guard current.key.count == prefix.count + 8, current.key.starts(with: prefix) else { break }
                    // The index key ends with the seq key of `events`: look the record up by it in place.
                    let seqKey = UnsafeRawBufferPointer(rebasing: current.key[prefix.count...])
                    guard let value = try transaction.value(databases.events, key: seqKey) else {
                        let seq = StoreLayout.seq(fromKey: seqKey)!
                        throw StoreError(.corrupted, "index \(index.name) points at seq \(seq), which is missing; run onboard verify", seq: seq)
                    }
                    // Another user's record sharing the key prefix is skipped; a damaged one is not
                    // (decoding it below throws .corrupted naming its seq): a read never hides damage.
                    if let user, case .success(let ref) = Result(catching: { try RecordCodec.userRef(of: value) }), ref != user {
                        entry = try cursor.next()
                        continue
                    }
                    let record = try decodeStored(key: seqKey, value: value, users: users)
                    count += 1
                    guard body(record) else { return }
                    entry = try cursor.next()
                }
            }
        }
    }

    func readRecord(_ seq: UInt64, in transaction: Transaction) throws -> Record? {
        let key = StoreLayout.seqKey(seq)
        return try transaction.withValue(databases.events, key: key) { value in
            decodedRecordCount.add(1, ordering: .relaxed)
            return try key.withUnsafeBytes { try decodeStored(key: $0, value: value, users: users) }
        }
    }

    func decodeStored(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, users: UserDirectory) throws(StoreError) -> Record {
        guard let seq = StoreLayout.seq(fromKey: key) else {
            throw StoreError(.corrupted, "events database has a key of \(key.count) bytes (expected 8); run onboard verify")
        }
        do {
            return try RecordCodec.decode(value, expectedSeq: seq, users: users)
        } catch {
            throw StoreError(.corrupted, "record at seq \(seq) is damaged: \(error); run onboard verify", seq: seq)
        }
    }

    /// Runs `body` in a read transaction, turning every failure into a `StoreError`.
    func reading<R>(_ body: (Transaction) throws -> R) throws(StoreError) -> R {
        try ensureOpen()
        do {
            return try environment.read(body)
        } catch let error as StoreError {
            throw error
        } catch let error as LMDBError where error == .closed {
            throw StoreError(.closed, "store at \(path) is closed")
        } catch {
            throw StoreError(.storage, "reading \(path) failed: \(error)", underlying: error)
        }
    }
}
