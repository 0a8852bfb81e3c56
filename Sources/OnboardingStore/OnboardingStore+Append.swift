import Foundation
import LMDB
import OnboardingModel

/// The outcome for one appended event.
public struct AppendResult: Sendable, Hashable {
    /// The event's seq in the log (the original seq for a duplicate).
    public var seq: UInt64
    /// The event was already in the log with the same content; nothing was written.
    public var isDuplicate: Bool

    public init(seq: UInt64, isDuplicate: Bool) {
        self.seq = seq
        self.isDuplicate = isDuplicate
    }
}

extension OnboardingStore {
    /// Appends `events` atomically (all or none) and returns when they are committed with the
    /// store's durability. Concurrent callers share one transaction and one fsync.
    ///
    /// - Parameters:
    ///   - claimedSeqs: per event, the seq it must get (an import of an exported log); `nil`
    ///     entries let the store assign.
    ///   - expectedHead: the head seq the caller last saw; the batch is refused with
    ///     ``StoreError/Code/headMoved`` if the log has moved on (optimistic concurrency).
    /// - Returns: one result per event: its seq, and whether it was a duplicate of an event
    ///   already stored with the same id and content.
    public func append(_ events: [Event], claimedSeqs: [UInt64?]? = nil,
                       expectedHead: UInt64? = nil) async throws(StoreError) -> [AppendResult] {
        let request = try makeRequest(events, claimedSeqs: claimedSeqs, expectedHead: expectedHead)
        guard !events.isEmpty else { return [] }
        let result: Result<[AppendResult], StoreError> = await withCheckedContinuation { continuation in
            committer.submit(GroupCommitter.Request(events: request.events, claimedSeqs: request.claimedSeqs,
                                                    expectedHead: request.expectedHead) { result in
                continuation.resume(returning: result)
            })
        }
        return try result.get()
    }

    /// Appends one event; see ``append(_:claimedSeqs:expectedHead:)``.
    public func append(_ event: Event, expectedHead: UInt64? = nil) async throws(StoreError) -> AppendResult {
        try await append([event], expectedHead: expectedHead)[0]
    }

    /// The blocking form of ``append(_:claimedSeqs:expectedHead:)`` for command-line tools and
    /// other synchronous callers. Never call it from Swift concurrency's cooperative threads.
    public func appendBlocking(_ events: [Event], claimedSeqs: [UInt64?]? = nil,
                               expectedHead: UInt64? = nil) throws(StoreError) -> [AppendResult] {
        let request = try makeRequest(events, claimedSeqs: claimedSeqs, expectedHead: expectedHead)
        guard !events.isEmpty else { return [] }
        let box = ResultBox()
        committer.commitNow(GroupCommitter.Request(events: request.events, claimedSeqs: request.claimedSeqs,
                                                   expectedHead: request.expectedHead) { box.result = $0 })
        return try box.result!.get()
    }

    private func makeRequest(_ events: [Event], claimedSeqs: [UInt64?]?,
                             expectedHead: UInt64?) throws(StoreError) -> (events: [Event], claimedSeqs: [UInt64?]?, expectedHead: UInt64?) {
        try ensureOpen()
        guard !options.readOnly else { throw StoreError(.notWritable, "store at \(path) is open read-only") }
        if let claimedSeqs {
            precondition(claimedSeqs.count == events.count, "claimedSeqs must have one entry per event")
        }
        for (index, event) in events.enumerated() {
            do { try event.validate() } catch {
                throw StoreError(.invalidEvent, "event \(index + 1) of the batch: \(error)", batchIndex: index)
            }
        }
        return (events, claimedSeqs, expectedHead)
    }

    /// One write transaction for a group of requests. A request that breaks a rule fails alone;
    /// a storage failure fails the group (and a group too large for one transaction is retried
    /// one request at a time).
    func commitGroup(_ requests: [GroupCommitter.Request]) -> [Result<[AppendResult], StoreError>] {
        do {
            let (results, appended) = try environment.write { transaction in
                // The head is read once and the key buffers made once per group, not per request:
                // 64 single-event appenders form groups of 64 requests.
                var scratch = StageScratch(head: try readHead(transaction))
                let startHead = scratch.head
                var appended: [Record] = []
                appended.reserveCapacity(requests.reduce(0) { $0 + $1.events.count })
                let results = try requests.map { request -> Result<[AppendResult], StoreError> in
                    let before = appended.count
                    do {
                        return .success(try stage(request, scratch: &scratch, appendingTo: &appended, in: transaction))
                    } catch let error as StoreError {
                        appended.removeSubrange(before...) // the refused request's records were never written
                        return .failure(error)
                    }
                }
                if scratch.head.seq != startHead.seq {
                    try transaction.put(databases.meta, key: StoreLayout.MetaKey.head,
                                        value: StoreLayout.headValue(seq: scratch.head.seq, hash: scratch.head.hash))
                }
                return (results, appended)
            }
            // Before any appender resumes: a caller that awaited `append` reads state with its event.
            advanceProjections(with: appended)
            notifyObservers(appended)
            return results
        } catch {
            if requests.count > 1 {
                return requests.flatMap { commitGroup([$0]) }
            }
            let failure: StoreError
            if let storeError = error as? StoreError {
                failure = storeError
            } else if let lmdb = error as? LMDBError, lmdb == .closed {
                failure = StoreError(.closed, "the store at \(path) was closed before the append committed")
            } else if let lmdb = error as? LMDBError, lmdb == .transactionFull {
                failure = StoreError(.transactionTooLarge,
                                     "a batch of \(requests[0].events.count) events is too large for one transaction; append it in smaller batches (onboard import --commit-every N)")
            } else {
                failure = StoreError(.storage, "append to \(path) failed: \(error)")
            }
            return requests.map { _ in .failure(failure) }
        }
    }

    /// Checks a request against the log inside `transaction`, writes it and appends its new
    /// records to `appended`; throws a `StoreError` before any put or append when the request
    /// breaks a rule, so a failed request leaves nothing behind.
    ///
    /// Two passes over the events, by index (no copies of them): the first decides each event's
    /// fate (new at which seq, or a duplicate of which) and throws on a broken rule; the second
    /// encodes the new ones into one buffer, puts them and their index entries, and appends
    /// their records.
    private func stage(_ request: GroupCommitter.Request, scratch: inout StageScratch, appendingTo appended: inout [Record],
                       in transaction: Transaction) throws -> [AppendResult] {
        let head = scratch.head
        if let expectedHead = request.expectedHead, expectedHead != head.seq {
            throw StoreError(.headMoved, "the log's head is seq \(head.seq), not the expected \(expectedHead); re-read and retry",
                             seq: head.seq)
        }
        let events = request.events
        var results: [AppendResult] = []
        results.reserveCapacity(events.count)
        // Index in `events` of the first event with each new id (finds a repeat within the batch).
        var firstWithID = UUIDPositions(capacity: events.count)
        var nextSeq = head.seq + 1

        for index in events.indices {
            let claimed = request.claimedSeqs?[index]
            let existingSeq: UInt64
            if let earlier = firstWithID.position(of: events[index].id) {
                // The same id earlier in this batch, at the seq it is about to get.
                existingSeq = results[earlier].seq
                guard RecordCodec.body(of: events[earlier], seq: existingSeq) == RecordCodec.body(of: events[index], seq: existingSeq) else {
                    throw conflict(events[index], at: existingSeq, index: index)
                }
            } else {
                StoreLayout.writeUUID(events[index].id, into: &scratch.idKey)
                if let seqBytes = try transaction.get(databases.byID, key: scratch.idKey),
                   let seq = seqBytes.withUnsafeBytes({ StoreLayout.seq(fromKey: $0) }) {
                    existingSeq = seq
                    let existingBody = try transaction.withValue(databases.events, key: StoreLayout.seqKey(seq)) {
                        Array($0[RecordCodec.headerByteCount...])
                    }
                    guard let existingBody, existingBody == RecordCodec.body(of: events[index], seq: seq) else {
                        throw conflict(events[index], at: seq, index: index)
                    }
                } else {
                    if let claimed, claimed != nextSeq {
                        throw StoreError(.seqMismatch,
                                         "event claims seq \(claimed) but the store's next seq is \(nextSeq); omit \"seq\" to let the store assign it",
                                         batchIndex: index, seq: nextSeq)
                    }
                    firstWithID.insert(events[index].id, position: index)
                    results.append(AppendResult(seq: nextSeq, isDuplicate: false))
                    nextSeq += 1
                    continue
                }
            }
            if let claimed, claimed != existingSeq {
                throw StoreError(.seqMismatch, "event \(events[index].id.uuidString.lowercased()) claims seq \(claimed) but is stored at seq \(existingSeq)",
                                 batchIndex: index, seq: existingSeq)
            }
            results.append(AppendResult(seq: existingSeq, isDuplicate: true))
        }

        let empty: [UInt8] = []
        var previousHash = head.hash
        for index in events.indices where !results[index].isDuplicate {
            let seq = results[index].seq
            scratch.recordBytes.removeAll(keepingCapacity: true)
            _ = RecordCodec.encode(events[index], seq: seq, previousHash: previousHash, appendingTo: &scratch.recordBytes)
            let hash = scratch.recordBytes.withUnsafeBytes {
                Digest(copying: UnsafeRawBufferPointer(rebasing: $0[RecordCodec.hashOffset..<(RecordCodec.hashOffset + Digest.byteCount)]))
            }
            StoreLayout.writeSeqKey(seq, into: &scratch.seqKey)
            try transaction.put(databases.events, key: scratch.seqKey, value: scratch.recordBytes, flags: .append)
            StoreLayout.writeUUID(events[index].id, into: &scratch.idKey)
            try transaction.put(databases.byID, key: scratch.idKey, value: scratch.seqKey, flags: .noOverwrite)
            if let user = events[index].user {
                StoreLayout.writeUserKey(user, seq, into: &scratch.indexKey)
                try transaction.put(databases.byUser, key: scratch.indexKey, value: empty)
            }
            if let session = events[index].session {
                StoreLayout.writeSessionKey(session, seq, into: &scratch.indexKey)
                try transaction.put(databases.bySession, key: scratch.indexKey, value: empty)
            }
            appended.append(Record(seq: seq, event: events[index], previousHash: previousHash, hash: hash))
            previousHash = hash
        }
        if nextSeq > head.seq + 1 {
            // `meta`'s head is written once per group, by `commitGroup`.
            scratch.head = (nextSeq - 1, previousHash)
        }
        return results
    }

    private func conflict(_ event: Event, at seq: UInt64, index: Int) -> StoreError {
        StoreError(.conflict,
                   "event \(event.id.uuidString.lowercased()) is already stored at seq \(seq) with different content; an event id may only be reused for the identical event",
                   batchIndex: index, seq: seq)
    }

    func readHead(_ transaction: Transaction) throws -> (seq: UInt64, hash: Digest) {
        guard let value = try transaction.get(databases.meta, key: StoreLayout.MetaKey.head),
              let head = StoreLayout.head(fromValue: value) else {
            throw StoreError(.corrupted, "store at \(path) has no valid head in meta; run onboard verify")
        }
        return head
    }
}

/// What the requests of one group commit share: the head as the group's staged requests leave
/// it, and one buffer per key kind, reused for every put.
struct StageScratch {
    var head: (seq: UInt64, hash: Digest)
    var idKey: [UInt8] = []
    var seqKey: [UInt8] = []
    var indexKey: [UInt8] = []
    /// The record being written, encoded (one buffer for all of them).
    var recordBytes: [UInt8] = []

    init(head: (seq: UInt64, hash: Digest)) {
        self.head = head
        idKey.reserveCapacity(16)
        seqKey.reserveCapacity(8)
        indexKey.reserveCapacity(Limits.maximumUserBytes + 9)
    }
}

/// Positions of the events staged so far in one request, by id: finds a repeated id within a
/// batch. An open-addressing table over the id's own bits (random or time-ordered UUIDs are
/// already well mixed), so a lookup costs a multiply and a compare, not a SipHash.
struct UUIDPositions {
    private var slots: [(id: UUID, position: Int32)?]
    private let mask: Int

    init(capacity: Int) {
        var size = 1
        while size < capacity * 2 { size <<= 1 }
        // A single event needs no table: nothing can repeat it.
        slots = capacity > 1 ? Array(repeating: nil, count: size) : []
        mask = size - 1
    }

    private func start(_ id: UUID) -> Int {
        let mixed = withUnsafeBytes(of: id.uuid) { raw in
            raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self) ^ raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
        }
        return Int(truncatingIfNeeded: (mixed &* 0x9E37_79B9_7F4A_7C15) >> 32) & mask
    }

    func position(of id: UUID) -> Int? {
        guard !slots.isEmpty else { return nil }
        var index = start(id)
        while let slot = slots[index] {
            if slot.id == id { return Int(slot.position) }
            index = (index + 1) & mask
        }
        return nil
    }

    mutating func insert(_ id: UUID, position: Int) {
        guard !slots.isEmpty else { return }
        var index = start(id)
        while slots[index] != nil { index = (index + 1) & mask }
        slots[index] = (id, Int32(position))
    }
}

/// Carries a result out of a completion that `commitNow` runs before it returns.
private final class ResultBox: @unchecked Sendable {
    // Written once by the completion inside `commitNow`'s `queue.sync`, which returns before
    // `appendBlocking` reads it: the sync call orders the write before the read.
    var result: Result<[AppendResult], StoreError>?
}
