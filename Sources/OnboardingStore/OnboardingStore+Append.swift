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
    ///   - events: the batch, in the order their seqs are given.
    ///   - expectedHead: the head seq the caller last saw; the batch is refused with
    ///     ``StoreError/Code/headMoved`` if the log has moved on (optimistic concurrency).
    /// - Returns: one result per event: its seq, and whether it was a duplicate of an event
    ///   already stored with the same id and content.
    public func append(_ events: [Event], expectedHead: UInt64? = nil) async throws(StoreError) -> [AppendResult] {
        try await append(events, claimedSeqs: nil, expectedHead: expectedHead)
    }

    /// Appends one event; see ``append(_:expectedHead:)``.
    public func append(_ event: Event, expectedHead: UInt64? = nil) async throws(StoreError) -> AppendResult {
        try await append([event], claimedSeqs: nil, expectedHead: expectedHead)[0]
    }

    /// The blocking form of ``append(_:expectedHead:)->[AppendResult]`` for command-line tools and
    /// other synchronous callers. Never call it from Swift concurrency's cooperative threads.
    public func appendBlocking(_ events: [Event], expectedHead: UInt64? = nil) throws(StoreError) -> [AppendResult] {
        try appendBlocking(events, claimedSeqs: nil, expectedHead: expectedHead)
    }

    /// ``append(_:expectedHead:)`` with the seqs the events must get: an import of an
    /// exported log, or a sync server's replica of a device's log.
    ///
    /// - Parameter claimedSeqs: per event, the seq it must get; `nil` entries let the store assign.
    package func append(
        _ events: [Event], claimedSeqs: [UInt64?]?,
        expectedHead: UInt64? = nil
    ) async throws(StoreError) -> [AppendResult] {
        let request = try makeRequest(events, claimedSeqs: claimedSeqs, expectedHead: expectedHead)
        guard !events.isEmpty else { return [] }
        let result: Result<[AppendResult], StoreError> = await withCheckedContinuation { continuation in
            committer.submit(
                GroupCommitter.Request(
                    events: request.events, claimedSeqs: request.claimedSeqs,
                    expectedHead: request.expectedHead
                ) { result in
                    continuation.resume(returning: result)
                })
        }
        return try result.get()
    }

    /// The blocking form of ``append(_:claimedSeqs:expectedHead:)``.
    ///
    /// - Parameter sealedSections: per event, the sealed personal section its device wrote, for
    ///   an event whose user is forgotten here and whose device sealed it before forgetting
    ///   (a sync server's replica; see ``sealedSections(for:)``). Written unchanged.
    package func appendBlocking(
        _ events: [Event], claimedSeqs: [UInt64?]?,
        expectedHead: UInt64? = nil, sealedSections: [[UInt8]?]? = nil
    ) throws(StoreError) -> [AppendResult] {
        let request = try makeRequest(events, claimedSeqs: claimedSeqs, expectedHead: expectedHead)
        guard !events.isEmpty else { return [] }
        if let sealedSections { precondition(sealedSections.count == events.count, "sealedSections must have one entry per event") }
        let box = ResultBox()
        committer.commitNow(
            GroupCommitter.Request(
                events: request.events, claimedSeqs: request.claimedSeqs,
                expectedHead: request.expectedHead, sealedSections: sealedSections
            ) { box.result = $0 })
        return try box.result!.get()
    }

    private func makeRequest(
        _ events: [Event], claimedSeqs: [UInt64?]?,
        expectedHead: UInt64?
    ) throws(StoreError) -> (events: [Event], claimedSeqs: [UInt64?]?, expectedHead: UInt64?) {
        try ensureOpen()
        guard !options.readOnly else { throw StoreError(.notWritable, "store at \(path) is open read-only") }
        try throwIfFlushFailed()
        if let claimedSeqs {
            precondition(claimedSeqs.count == events.count, "claimedSeqs must have one entry per event")
        }
        for (index, event) in events.enumerated() {
            do { try event.validate() } catch {
                throw StoreError(.invalidEvent, "event \(index + 1) of the batch: \(error)", batchIndex: index)
            }
        }
        if let skew = options.maximumClockSkewMilliseconds {
            let now = options.clock()
            let latest = now.adding(milliseconds: skew)
            if let index = events.firstIndex(where: { latest < $0.at }) {
                throw StoreError(
                    .invalidEvent,
                    "event \(index + 1) of the batch is dated \(events[index].at.iso8601), more than \(skew / 1000) s after this store's clock (\(now.iso8601)): an event cannot have happened yet; fix the clock that dated it",
                    batchIndex: index)
            }
        }
        return (events, claimedSeqs, expectedHead)
    }

    /// One write transaction for a group of requests. A request that breaks a rule fails alone;
    /// a storage failure fails the group (and a group too large for one transaction is retried
    /// one request at a time).
    func commitGroup(_ requests: [GroupCommitter.Request]) -> [Result<[AppendResult], StoreError>] {
        // A `user_forgotten` changes how earlier records read: no snapshot with the state from
        // before it (the readable id in it) may be written after the group deleted the stored one.
        let erases = requests.contains { $0.events.contains { $0.type == .userForgotten } }
        if erases { holdSnapshots() }
        defer { if erases { releaseSnapshots() } }
        do {
            let (results, appended, userChanges) = try environment.write { transaction in
                // The head is read once and the key buffers made once per group, not per request:
                // 64 single-event appenders form groups of 64 requests.
                var scratch = StageScratch(head: try readHead(transaction), users: users)
                scratch.hasPendingKeys = hasPendingKeys.load(ordering: .relaxed)
                scratch.eventCount = requests.reduce(0) { $0 + $1.events.count }
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
                scratch.dropUsersWithoutRecords()
                try appendUserEntries(scratch.newEntries, in: transaction)
                if scratch.head.seq != startHead.seq {
                    try transaction.put(
                        databases.meta, key: StoreLayout.MetaKey.head,
                        value: StoreLayout.headValue(seq: scratch.head.seq, hash: scratch.head.hash))
                }
                if !scratch.forgotten.isEmpty, let snapshots = databases.snapshots {
                    _ = try transaction.delete(snapshots, key: StoreLayout.stateSnapshotKey)
                }
                // The directory changes go in before the commit, so a reader of the new records
                // finds their users. The closure runs again when the map fills (even at the commit,
                // after this point): the rollback action undoes them first, so the next run sees
                // the group's users as new again and writes their entries.
                let userChanges = UserChanges(added: scratch.added, forgotten: scratch.forgotten, tombstones: scratch.tombstones)
                scratch.users = UserDirectory(pseudonymKey: scratch.users.pseudonymKey) // drop the copy before mutating
                if !userChanges.isEmpty {
                    apply(userChanges)
                    transaction.onRollback { self.revert(userChanges) }
                }
                return (results, appended, userChanges)
            }
            if !userChanges.added.isEmpty && hasPendingKeys.load(ordering: .relaxed) {
                pendingKeys.withLock { pending in for seal in userChanges.added.values { pending[seal.ref] = nil } }
            }
            // Before any appender resumes: a caller that awaited `append` reads state with its event.
            if userChanges.forgotten.isEmpty {
                advanceProjections(with: appended)
            } else {
                resetProjectionsAfterErasure()
            }
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
                failure = StoreError(
                    .transactionTooLarge,
                    "a batch of \(requests[0].events.count) events is too large for one transaction; append it in smaller batches (onboard import --commit-every N)"
                )
            } else {
                failure = StoreError(.storage, "append to \(path) failed: \(error)", underlying: error)
            }
            return requests.map { _ in .failure(failure) }
        }
    }

    /// Checks a request against the log inside `transaction`, writes it and appends its new
    /// records to `appended`; throws a `StoreError` before any put or append when the request
    /// breaks a rule, so a failed request leaves nothing behind.
    ///
    /// In order: the head (`checkHead(_:for:)`), then two passes over the events, by index (no
    /// copies of them): `placeEvents(_:after:scratch:in:)` decides each event's fate (new at which
    /// seq, or a duplicate of which) and throws on a broken rule;
    /// `writeNewRecords(_:placed:after:scratch:appendingTo:in:)` encodes the new ones into one
    /// buffer, puts them and their index entries, and appends their records.
    private func stage(
        _ request: GroupCommitter.Request, scratch: inout StageScratch, appendingTo appended: inout [Record],
        in transaction: Transaction
    ) throws -> [AppendResult] {
        let head = scratch.head
        try checkHead(head, for: request)
        let results = try placeEvents(request, after: head, scratch: &scratch, in: transaction)
        if let newHead = try writeNewRecords(
            request, placed: results, after: head, scratch: &scratch, appendingTo: &appended,
            in: transaction)
        {
            // `meta`'s head is written once per group, by `commitGroup`.
            scratch.head = newHead
        }
        return results
    }

    /// The request's expected head, when it names one, must be the log's; and the log must have
    /// room for the request's seqs.
    private func checkHead(_ head: (seq: UInt64, hash: Digest), for request: GroupCommitter.Request) throws {
        if let expectedHead = request.expectedHead, expectedHead != head.seq {
            throw StoreError(
                .headMoved, "the log's head is seq \(head.seq), not the expected \(expectedHead); re-read and retry",
                seq: head.seq)
        }
        // Seqs up to 2^64 − 2 are assigned, so the next seq is always representable. A head this
        // high is a damaged meta (2^64 appends would take millions of years): refuse, never wrap.
        guard head.seq < UInt64.max - UInt64(request.events.count) else {
            throw StoreError(
                .corrupted,
                "the log's head is seq \(head.seq), too close to 2^64 − 1 to append \(request.events.count) more (meta's head was changed); nothing was appended — run onboard verify",
                seq: head.seq)
        }
    }

    /// The first pass: each event's seq and whether it is a duplicate. A new event gets the next
    /// seq, and may claim only that one; a duplicate (`duplicateSeq(of:in:placed:firstWithID:scratch:in:)`)
    /// keeps its seq, and may claim only that one. Throws at the first event that breaks a rule;
    /// nothing is written.
    private func placeEvents(
        _ request: GroupCommitter.Request, after head: (seq: UInt64, hash: Digest),
        scratch: inout StageScratch, in transaction: Transaction
    ) throws -> [AppendResult] {
        let events = request.events
        var results: [AppendResult] = []
        results.reserveCapacity(events.count)
        // Index in `events` of the first event with each new id (finds a repeat within the batch).
        var firstWithID = UUIDPositions(capacity: events.count)
        var nextSeq = head.seq + 1
        for index in events.indices {
            let claimed = request.claimedSeqs?[index]
            if let existingSeq = try duplicateSeq(
                of: index, in: request, placed: results, firstWithID: firstWithID,
                scratch: &scratch, in: transaction)
            {
                if let claimed, claimed != existingSeq {
                    throw StoreError(
                        .seqMismatch, "event \(events[index].id.uuidString.lowercased()) claims seq \(claimed) but is stored at seq \(existingSeq)",
                        batchIndex: index, seq: existingSeq)
                }
                results.append(AppendResult(seq: existingSeq, isDuplicate: true))
            } else {
                if let claimed, claimed != nextSeq {
                    throw StoreError(
                        .seqMismatch,
                        "event claims seq \(claimed) but the store's next seq is \(nextSeq); omit \"seq\" to let the store assign it",
                        batchIndex: index, seq: nextSeq)
                }
                firstWithID.insert(events[index].id, position: index)
                results.append(AppendResult(seq: nextSeq, isDuplicate: false))
                nextSeq += 1
            }
        }
        return results
    }

    /// The seq of the event with event `index`'s id: one earlier in the batch (at the seq it is
    /// about to get) or one in the log; `nil` for an id new to both. The earlier event must be the
    /// identical event, and a stored one must have the same body: another is a conflict.
    @inline(__always)
    private func duplicateSeq(
        of index: Int, in request: GroupCommitter.Request, placed results: [AppendResult],
        firstWithID: UUIDPositions, scratch: inout StageScratch, in transaction: Transaction
    ) throws -> UInt64? {
        let events = request.events
        if let earlier = firstWithID.position(of: events[index].id) {
            guard events[earlier] == events[index] else {
                throw conflict(events[index], at: results[earlier].seq, index: index)
            }
            return results[earlier].seq
        }
        StoreLayout.writeUUID(events[index].id, into: &scratch.idKey)
        guard let seqBytes = try transaction.get(databases.byID, key: scratch.idKey),
            let seq = seqBytes.withUnsafeBytes({ StoreLayout.seq(fromKey: $0) })
        else { return nil }
        let existingBody = try transaction.withValue(databases.events, key: StoreLayout.seqKey(seq)) {
            Array($0[RecordCodec.headerByteCount...])
        }
        let seal = presealed(userSeal(events[index], scratch: &scratch, forRecord: false), request, index)?.seal
        guard let existingBody, existingBody == RecordCodec.body(of: events[index], seq: seq, seal: seal) else {
            throw conflict(events[index], at: seq, index: index)
        }
        return seq
    }

    /// The second pass: each new event, in seq order after the head, is put as a record
    /// (`putRecord`) with its index entries (`putIndexEntries`), appended to `appended` as it
    /// reads back (`readBack`), and a `user_forgotten` leaves its user's tombstone (`tombstone`).
    /// Returns the new head, the last record's seq and hash; `nil` when every event was a duplicate.
    private func writeNewRecords(
        _ request: GroupCommitter.Request, placed results: [AppendResult], after head: (seq: UInt64, hash: Digest),
        scratch: inout StageScratch, appendingTo appended: inout [Record],
        in transaction: Transaction
    ) throws -> (seq: UInt64, hash: Digest)? {
        let events = request.events
        var previousHash = head.hash
        var newHead: (seq: UInt64, hash: Digest)?
        for index in events.indices where !results[index].isDuplicate {
            let seq = results[index].seq
            let user = presealed(userSeal(events[index], scratch: &scratch, forRecord: true), request, index)
            let hash = try putRecord(events[index], seq: seq, previousHash: previousHash, seal: user?.seal, scratch: &scratch, in: transaction)
            try putIndexEntries(of: events[index], seq: seq, user: user, scratch: &scratch, in: transaction)
            appended.append(Self.readBack(events[index], seq: seq, previousHash: previousHash, hash: hash, user: user))
            if events[index].type == .userForgotten, let user {
                try tombstone(user, scratch: &scratch, in: transaction)
            }
            previousHash = hash
            newHead = (seq, hash)
        }
        return newHead
    }

    /// Encodes `event` as record `seq` after `previousHash` into the scratch buffer, puts it under
    /// its seq and its id → seq in `by_id`; returns the record's hash.
    @inline(__always)
    private func putRecord(
        _ event: Event, seq: UInt64, previousHash: Digest, seal: UserSeal?, scratch: inout StageScratch,
        in transaction: Transaction
    ) throws -> Digest {
        scratch.recordBytes.removeAll(keepingCapacity: true)
        _ = RecordCodec.encode(event, seq: seq, previousHash: previousHash, seal: seal, appendingTo: &scratch.recordBytes)
        let hash = scratch.recordBytes.withUnsafeBytes {
            Digest(copying: UnsafeRawBufferPointer(rebasing: $0[RecordCodec.hashOffset..<(RecordCodec.hashOffset + Digest.byteCount)]))
        }
        StoreLayout.writeSeqKey(seq, into: &scratch.seqKey)
        try transaction.put(databases.events, key: scratch.seqKey, value: scratch.recordBytes, flags: .append)
        StoreLayout.writeUUID(event.id, into: &scratch.idKey)
        try transaction.put(databases.byID, key: scratch.idKey, value: scratch.seqKey, flags: .noOverwrite)
        return hash
    }

    /// The record's entries in `by_user` and `by_session`; the user's first record also brings the
    /// user's entry, appended to `user_keys` with the group's others.
    @inline(__always)
    private func putIndexEntries(
        of event: Event, seq: UInt64, user: StagedUser?, scratch: inout StageScratch,
        in transaction: Transaction
    ) throws {
        let empty: [UInt8] = []
        if let user {
            StoreLayout.writeUserKey(user.seal.ref, seq, into: &scratch.indexKey)
            try transaction.put(databases.byUser, key: scratch.indexKey, value: empty)
            if let entry = user.newEntry { scratch.newEntries.append(entry) }
        }
        if let session = event.flow {
            StoreLayout.writeSessionKey(session, seq, into: &scratch.indexKey)
            try transaction.put(databases.bySession, key: scratch.indexKey, value: empty)
        }
    }

    /// What the record reads back as, which is exactly what projections get: a user who does not
    /// read as written (forgotten, or a pseudonym literal) reads as the pseudonym, erased.
    @inline(__always)
    private static func readBack(_ event: Event, seq: UInt64, previousHash: Digest, hash: Digest, user: StagedUser?) -> Record {
        if let user, !user.readsAsWritten {
            return Record(seq: seq, event: event.erasingPersonalData(ref: user.seal.ref), previousHash: previousHash, hash: hash)
        }
        return Record(seq: seq, event: event, previousHash: previousHash, hash: hash)
    }

    /// A `user_forgotten` record's user: its entry becomes a tombstone in the same transaction as
    /// the event that records it, and the group forgets the user.
    private func tombstone(_ user: StagedUser, scratch: inout StageScratch, in transaction: Transaction) throws {
        let ref = user.seal.ref
        // A user this group saw first has its entry among the group's, not written yet: the
        // tombstone takes its place (destroying it in user_keys would miss it, and the live entry
        // appended after the tombstone would bring the user back on the next open).
        if let staged = scratch.newEntries.firstIndex(where: { $0.starts(with: ref.bytes) }) {
            scratch.newEntries[staged] = ref.bytes
        } else {
            try destroyUserEntry(ref, in: transaction)
        }
        // A sync server's replica that forgot the user first: the device has now done it too.
        _ = try transaction.delete(databases.meta, key: StoreLayout.MetaKey.forgetRequestPrefix + ref.bytes)
        scratch.forget(ref)
    }

    private func conflict(_ event: Event, at seq: UInt64, index: Int) -> StoreError {
        StoreError(
            .conflict,
            "event \(event.id.uuidString.lowercased()) is already stored at seq \(seq) with different content; an event id may only be reused for the identical event",
            batchIndex: index, seq: seq)
    }

    func readHead(_ transaction: Transaction) throws -> (seq: UInt64, hash: Digest) {
        guard let value = try transaction.get(databases.meta, key: StoreLayout.MetaKey.head),
            let head = StoreLayout.head(fromValue: value)
        else {
            throw StoreError(.corrupted, "store at \(path) has no valid head in meta; run onboard verify")
        }
        return head
    }
}

extension OnboardingStore {
    /// How an event's user is written: its pseudonym and (for an event with personal fields) key,
    /// whether it reads back as written (`false` for a forgotten user or a pseudonym literal: it
    /// then reads as the pseudonym, erased), and, for the user's first record, the user's entry.
    struct StagedUser {
        var seal: UserSeal
        var readsAsWritten: Bool
        /// pseudonym ‖ key ‖ nonce ‖ sealed readable id, for `user_keys` (the user's first record).
        var newEntry: [UInt8]? = nil
    }

    /// `user` with the request's sealed section for event `index`, when it seals without a key.
    @inline(__always)
    private func presealed(_ user: StagedUser?, _ request: GroupCommitter.Request, _ index: Int) -> StagedUser? {
        guard var user, user.seal.key == nil, let sections = request.sealedSections, let sealed = sections[index] else { return user }
        user.seal.sealed = sealed
        return user
    }

    /// The seal of `event`'s user. A live user costs one dictionary lookup by name; a new one
    /// gets a key (the one its device sent, on a sync server's replica) and an entry, written
    /// with the user's first record (`forRecord`; a lookup for a duplicate check keeps it for
    /// the next record of the user in the group, and the group drops a user it never wrote).
    @inline(__always)
    func userSeal(_ event: Event, scratch: inout StageScratch, forRecord: Bool) -> StagedUser? {
        guard let user = event.user else { return nil }
        let needsKey = event.hasPersonalFields
        // `scratch.users` still lists users this group forgot: those are live no longer. Any other
        // live user keeps its key (treating it as new would give it another key and leave its
        // sealed records unreadable).
        if let ref = scratch.users.liveRef(of: user),
            scratch.forgotten.isEmpty || !scratch.forgotten.contains(where: { $0.ref == ref })
        {
            return StagedUser(seal: UserSeal(ref: ref, key: needsKey ? scratch.users.key(of: ref) : nil), readsAsWritten: true)
        }
        // First sighting in this store, or a user this group already added or forgot. Each
        // dictionary or set probe hashes, so the empty ones are skipped.
        if !scratch.added.isEmpty, let added = scratch.added[user] {
            var staged = StagedUser(seal: UserSeal(ref: added.ref, key: needsKey ? added.key : nil), readsAsWritten: true)
            if forRecord && !scratch.unwrittenEntries.isEmpty { staged.newEntry = scratch.unwrittenEntries.removeValue(forKey: added.ref) }
            return staged
        }
        let literal = UserRef(literal: user)
        let ref = literal ?? scratch.users.newRef(of: user)
        if literal != nil || scratch.users.isForgotten(ref) || scratch.forgotten.contains(where: { $0.ref == ref }) {
            // On a sync server's replica that forgot the user before its device did, the device
            // still seals with the key it sent: the record is sealed the same (its hash must be
            // the device's), the key is not kept, and the record reads as erased.
            let sent = literal == nil && needsKey && scratch.hasPendingKeys ? pendingKeys.withLock { $0[ref] } : nil
            var staged = StagedUser(seal: UserSeal(ref: ref, key: sent), readsAsWritten: false)
            // A pseudonym literal this store has no entry for (an erased record imported or
            // synced) gets a tombstone with its first record: every pseudonym a record names has
            // an entry, so verify can tell a lost entry from one never made.
            if forRecord, literal != nil, scratch.users.entries[ref] == nil, !scratch.users.isForgotten(ref),
                !scratch.tombstones.contains(ref), !scratch.forgotten.contains(where: { $0.ref == ref }),
                !scratch.added.values.contains(where: { $0.ref == ref })
            {
                staged.newEntry = ref.bytes
                scratch.tombstones.append(ref)
            }
            return staged
        }
        let sent = scratch.hasPendingKeys ? pendingKeys.withLock { $0[ref] } : nil
        let key = sent ?? randomPool.withLock { SecretKey(bytes: $0.take(SecretKey.byteCount)) }
        let nonce = randomPool.withLock { $0.take(PersonalData.nonceByteCount) }
        let entry = OnboardingStore.userEntryValue(ref: ref, name: user, key: key, nonce: nonce)
        // Room for a few new users at once; reserving one per event of a 1,000-event group cost ~3 %
        // of the append path (a large table allocated and cleared for every group).
        if scratch.added.isEmpty { scratch.added.reserveCapacity(min(scratch.eventCount, 64)) }
        scratch.added[user] = UserSeal(ref: ref, key: key)
        var staged = StagedUser(seal: UserSeal(ref: ref, key: needsKey ? key : nil), readsAsWritten: true)
        if forRecord { staged.newEntry = entry } else { scratch.unwrittenEntries[ref] = entry }
        return staged
    }

    /// Applies a group's user changes to the shared directory (in place: nobody else may hold
    /// a copy for it not to be copied, which only a concurrent reader does).
    func apply(_ changes: UserChanges) {
        guard !changes.isEmpty else { return }
        userDirectory.withLock { directory in
            if changes.added.count > 1 { directory.reserveCapacity(adding: changes.added.count) }
            for (name, seal) in changes.added { directory.add(seal.ref, name: name, key: seal.key!) }
            for forgotten in changes.forgotten { directory.forget(forgotten.ref) }
            for ref in changes.tombstones { directory.forget(ref) }
        }
    }

    func revert(_ changes: UserChanges) {
        guard !changes.isEmpty else { return }
        userDirectory.withLock { directory in
            for ref in changes.tombstones { directory.unforget(ref, entry: nil) }
            for forgotten in changes.forgotten.reversed() where !forgotten.wasForgotten {
                directory.unforget(forgotten.ref, entry: forgotten.entry)
            }
            for seal in changes.added.values { directory.remove(seal.ref) }
        }
    }
}

/// Users a group commit added (by readable id) and forgot (with the entry it had, to undo), and
/// pseudonym literals it gave a tombstone.
struct UserChanges {
    var added: [String: UserSeal] = [:]
    var forgotten: [(ref: UserRef, entry: UserDirectory.Entry?, wasForgotten: Bool)] = []
    var tombstones: [UserRef] = []
    var isEmpty: Bool { added.isEmpty && forgotten.isEmpty && tombstones.isEmpty }
}

/// What the requests of one group commit share: the head as the group's staged requests leave
/// it, and one buffer per key kind, reused for every put.
struct StageScratch {
    var head: (seq: UInt64, hash: Digest)
    /// The store's users when the group started (plus `added`, minus `forgotten`).
    var users: UserDirectory
    /// Events in the group (room reserved for as many new users on the first one).
    var eventCount = 0
    /// Whether a sync server's replica holds keys its device sent (rarely: skips the lookup).
    var hasPendingKeys = false
    /// Entries of new users first seen by a duplicate check, not yet written with a record.
    var unwrittenEntries: [UserRef: [UInt8]] = [:]
    /// `user_keys` values of the group's new users, in the order of their first records.
    var newEntries: [[UInt8]] = []
    /// Users new in this group, by readable id, with their key.
    var added: [String: UserSeal] = [:]
    /// Users this group forgot, with the entry they had (also of a user added in this group).
    var forgotten: [(ref: UserRef, entry: UserDirectory.Entry?, wasForgotten: Bool)] = []
    /// Pseudonym literals first seen in this group, with no entry in the store: each gets a
    /// tombstone.
    var tombstones: [UserRef] = []

    /// A user first seen by a duplicate check whose request then failed has no record and no
    /// entry: it is not added.
    mutating func dropUsersWithoutRecords() {
        guard !unwrittenEntries.isEmpty else { return }
        added = added.filter { unwrittenEntries[$0.value.ref] == nil }
        unwrittenEntries.removeAll()
    }

    mutating func forget(_ ref: UserRef) {
        if let name = added.first(where: { $0.value.ref == ref })?.key {
            added[name] = nil
            forgotten.append((ref, nil, false)) // never in the shared directory: nothing to restore
        } else {
            // Forgotten before the group (a server's forget that the device's own user_forgotten
            // now follows): an undo must leave it forgotten.
            forgotten.append((ref, users.entries[ref], users.isForgotten(ref)))
        }
    }
    var idKey: [UInt8] = []
    var seqKey: [UInt8] = []
    var indexKey: [UInt8] = []
    /// The record being written, encoded (one buffer for all of them).
    var recordBytes: [UInt8] = []

    init(head: (seq: UInt64, hash: Digest), users: UserDirectory) {
        self.head = head
        self.users = users
        idKey.reserveCapacity(16)
        seqKey.reserveCapacity(8)
        indexKey.reserveCapacity(UserRef.byteCount + 8)
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
