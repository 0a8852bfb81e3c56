import Foundation
import LMDB
import OnboardingModel
import OnboardingProjections

/// The store's in-memory projection state and the seq its last snapshot covers.
struct ProjectionCache: Sendable {
    var state: OnboardingState?
    var snapshotSeq: UInt64 = 0
    /// How long the last snapshot took to encode and write: a large state is snapshotted less
    /// often (see `snapshotDue`).
    var snapshotNanoseconds: UInt64 = 0

    /// What replaying one event on open costs (decode, hash check, every projection): about 1 µs
    /// in release builds (rebuild runs at ~1 M events/s, docs/benchmarks.md).
    static let replayNanosecondsPerEvent: UInt64 = 1_000

    /// A snapshot is due after `snapshotEveryEvents`, or, when the last one took longer to write
    /// than replaying that many events would, once the events since it cost as much to replay as
    /// writing it did: snapshots never cost more than the replays they save.
    func snapshotDue(every events: Int) -> Bool {
        guard let state else { return false }
        let breakEven = snapshotNanoseconds / ProjectionCache.replayNanosecondsPerEvent
        return state.seq > snapshotSeq && state.seq - snapshotSeq >= max(UInt64(events), breakEven)
    }
}

/// Records committed but not yet applied to the projections.
struct PendingProjection: Sendable {
    var records: [Record] = []
    /// The projections are loaded; before that commits are not queued (loading replays the log).
    var isActive = false
    /// A drain is queued on the projector.
    var isScheduled = false
}

/// What recording one event led to: its place in the log, and what the app shows now.
public struct RecordOutcome: Sendable {
    public var seq: UInt64
    public var isDuplicate: Bool
    /// The password-factor decision for the event's user on its device, at the event's time.
    public var decision: LockoutDecision
    /// The event's device after the event, at the event's time: who is signed in, and its flow.
    public var state: DeviceState

    /// The screen the app shows now: ``state``'s flow.
    public var flow: Flow { state.flow }

    @available(*, deprecated, renamed: "state")
    public var session: DeviceState { state }
}

extension OnboardingStore {
    // MARK: App-facing API

    /// Appends `event` and returns the decision and screen state that follow from it.
    ///
    /// ```swift
    /// let outcome = try await store.record(Event(id: UUID(), device: store.deviceID, at: .now,
    ///     user: "alice", flow: flow, payload: .signInFailed(method: .password, reason: .invalidPassword)))
    /// outcome.flow.fieldMessages   // [password: "Invalid password" (error)]
    /// outcome.decision.message             // after the 5th: "You have made too many recent login attempts. …"
    /// ```
    public func record(_ event: Event) async throws(StoreError) -> RecordOutcome {
        let result = try await append(event)
        return try withProjections { state in
            RecordOutcome(
                seq: result.seq, isDuplicate: result.isDuplicate,
                decision: state.lockout.decide(
                    state.lockout.key(user: event.user.map(canonicalUser), device: event.device, factor: .password),
                    at: event.at),
                state: state.session.session(device: event.device, at: event.at, lockout: state.lockout))
        }
    }

    /// Records what just happened on this device: `payload` by `user` (when known) in the flow
    /// `flow` (the pass through one sign-in, sign-up or reset form; `nil` when there is none), at
    /// `at` (by default the store's clock, ``Options/clock``: the system clock unless the app set
    /// another), under a new event id — what `onboard record` fills in.
    /// Returns, as recording an `Event` does, once the event is durable and applied.
    ///
    /// ```swift
    /// let flow = UUID()                          // one per pass through the sign-in screen
    /// let outcome = try await store.record(.signInFailed(method: .password, reason: .invalidPassword),
    ///                                      user: "alice", flow: flow)
    /// outcome.flow.fieldMessages         // [password: "Invalid password" (error)]
    /// ```
    @discardableResult
    public func record(
        _ payload: Payload, user: String? = nil, flow: UUID? = nil,
        at: Timestamp? = nil
    ) async throws(StoreError) -> RecordOutcome {
        try await record(Event(id: UUID(), device: deviceID, at: at ?? options.clock(), user: user, flow: flow, payload: payload))
    }

    /// May `user` try to sign in on `device` (default: this store's device) at `at` (default: the
    /// store's clock, ``Options/clock``)? Call it before checking a password or passcode; record
    /// `sign_in_throttled` when it says no.
    ///
    /// ```swift
    /// if case .locked(let lock) = try store.signInDecision(user: "alice") { show(lock.message) }
    /// ```
    public func signInDecision(
        user: String?, device: String? = nil, factor: LockoutFactor = .password,
        at: Timestamp? = nil
    ) throws(StoreError) -> LockoutDecision {
        let at = at ?? options.clock()
        // A forgotten user's lockout state is kept under the pseudonym.
        let user = user.map(canonicalUser)
        return try withProjections { state in
            state.lockout.decide(state.lockout.key(user: user, device: device ?? deviceID, factor: factor), at: at)
        }
    }

    /// Who is signed in on `device` (default: this store's device), and its flow as the screen
    /// shows it at `at` (default: the store's clock, ``Options/clock``): a lock whose end has
    /// passed is gone, a lock in force names the time left then, a resend timer that has ended
    /// is available (docs/projections.md § State at a time).
    ///
    /// ```swift
    /// let state = try store.deviceState()
    /// state.flow.screen                       // .signIn once the lock has ended
    /// state.flow.systemMessage?.text          // "… Please wait 4 minutes …" a minute into a lock
    /// ```
    public func deviceState(device: String? = nil, at: Timestamp? = nil) throws(StoreError) -> DeviceState {
        let at = at ?? options.clock()
        return try withProjections { $0.session.session(device: device ?? deviceID, at: at, lockout: $0.lockout) }
    }

    /// The old name of ``deviceState(device:at:)``: "session" now means only a sign-in's span
    /// (``History/SignInSession``).
    @available(*, deprecated, renamed: "deviceState(device:at:)")
    public func session(device: String? = nil) throws(StoreError) -> DeviceState { try deviceState(device: device) }

    /// The "Switch or Add User" list of `device` at `at` (default: the store's clock; it decides
    /// who shows as locked), optionally filtered by `search` ("jose" finds "José").
    public func users(device: String? = nil, at: Timestamp? = nil, search: String? = nil) throws(StoreError) -> UsersView {
        let at = at ?? options.clock()
        return try withProjections { $0.users.view(device: device ?? deviceID, lockout: $0.lockout, at: at, search: search) }
    }

    /// Every lockout key with counted failures, as it stands at `at`.
    public func lockoutEntries(at: Timestamp) throws(StoreError) -> [LockoutEngine.Entry] {
        try withProjections { $0.lockout.entries(at: at) }
    }

    /// A copy of all projection state, current with the log.
    public func projectionState() throws(StoreError) -> OnboardingState {
        try withProjections { $0 }
    }

    /// `user`'s sign-in history, read through the `by_user` index (no full scan). Every record
    /// it reads is checked as ``forEachRecord(from:through:_:)`` checks it (hash, position): a
    /// damaged one throws ``StoreError/Code/corrupted``.
    public func history(
        user: String, device: String? = nil, since: Timestamp? = nil,
        until: Timestamp? = nil
    ) throws(StoreError) -> History {
        try history(HistoryQuery(user: user, device: device, since: since, until: until))
    }

    /// One page of the history `query` asks for, in log (seq) order; its `nextCursor` continues
    /// after the page's last attempt. With a user it reads only that user's records, through
    /// the `by_user` index, starting after the cursor's seq; without one it scans the log from
    /// the cursor: this store holds one device's log, so `device` is a filter here, and a page
    /// stops reading once it is settled (``History/Builder/isSettled``). Each record is
    /// hash-checked as it is decoded, inside one read transaction, so a page is consistent
    /// whatever is appended meanwhile, and the next page starts after a seq that never moves.
    ///
    /// ```swift
    /// var query = HistoryQuery(user: "alice", outcomes: [.failed], limit: 100)
    /// repeat {
    ///     let page = try store.history(query)
    ///     show(page.attempts)
    ///     query.after = page.nextCursor
    /// } while query.after != nil
    /// ```
    public func history(_ query: HistoryQuery) throws(StoreError) -> History {
        do { try query.validate() } catch { throw StoreError(.invalidQuery, error.message) }
        var builder = History.Builder(query: query)
        // A cursor comes from a caller (a sync server's client): nothing follows seq 2^64 − 1.
        guard let start = query.after.map({ StoreLayout.successor(of: $0.seq) }) ?? 1 else { return builder.history }
        // Folded as the records are decoded, inside the read: no array of records in between.
        if let user = query.user {
            let ref = userRef(of: user)
            try forEachIndexedRecord(in: databases.byUser, prefix: StoreLayout.userIndexPrefix(ref), user: ref, from: start, limit: .max) { record in
                builder.add(record)
                return !builder.isSettled
            }
        } else {
            try forEachRecord(from: start) { record in
                builder.add(record)
                return !builder.isSettled
            }
        }
        return builder.history
    }

    /// Folds the log from scratch (through `seq`, default all) under `policy`: what
    /// `onboard lockout --policy` uses to evaluate another policy on the same log.
    ///
    /// On a pruned store the fold starts from the base snapshot at the prune point (the state the
    /// pruned records left, see ``prune(before:batchRecords:progress:)``): a rebuild under another
    /// policy than the base's, or through a seq before the prune point, throws
    /// ``StoreError/Code/pruned``.
    public func rebuildState(policy: LockoutPolicy, through seq: UInt64 = .max) throws(StoreError) -> OnboardingState {
        if let point = try prunedThrough(), seq < point.seq {
            throw StoreError(
                .pruned, "cannot rebuild the projections through seq \(seq): seq 1…\(point.seq) were pruned; the sync server keeps the full history",
                seq: point.seq)
        }
        var state = OnboardingState(policy: policy, captchaAlternativesAfterFailures: options.captchaAlternativesAfterFailures)
        try replay(into: &state, through: seq)
        return state
    }

    // MARK: Runner

    /// Runs `body` on the projections, loaded and caught up with the log's head first: committed
    /// records the projector has not applied yet are applied now, and records another process
    /// appended are replayed from the log.
    func withProjections<R: Sendable>(_ body: (OnboardingState) -> R) throws(StoreError) -> R {
        try loadProjections()
        let head = try head().seq
        let result: Result<R, StoreError> = projections.withLock { cache in
            guard cache.state != nil else { return .failure(StoreError(.closed, "projections are not loaded")) }
            applyPending(&cache)
            if cache.state!.seq < head {
                // Mutated in place: a copy would make every dictionary in the state copy itself.
                do throws(StoreError) {
                    try replay(into: &cache.state!)
                } catch {
                    return .failure(error)
                }
            }
            return .success(body(cache.state!))
        }
        return try result.get()
    }

    /// Loads the snapshot (if it is of this state version and policy) and replays the log after it.
    func loadProjections() throws(StoreError) {
        if projections.withLock({ $0.state != nil }) { return }
        var (state, snapshotSeq) =
            try readSnapshot()
            ?? (OnboardingState(policy: options.lockoutPolicy, captchaAlternativesAfterFailures: options.captchaAlternativesAfterFailures), 0)
        // On a pruned store a snapshot older than the prune point gives way to the base snapshot.
        try replay(into: &state)
        let loaded = state
        projections.withLock { cache in
            if cache.state == nil || cache.state!.seq < loaded.seq {
                cache.state = loaded
                cache.snapshotSeq = snapshotSeq
            }
        }
        // From now on the writer hands its commits to the projector. Commits between the replay
        // above and this line are not lost: the next apply replays the gap from the log.
        pendingProjection.withLock { $0.isActive = true }
    }

    /// Hands just-committed records (on the writer queue, before their appenders resume) to the
    /// projector, which applies them on `projectorQueue` while the writer goes on committing: the
    /// two run on different cores. A reader never sees a state without its own writes:
    /// `withProjections` applies whatever is still pending first. Past
    /// `maximumPendingRecords` the writer applies them itself, so a slow projector bounds memory
    /// by slowing appends instead.
    func advanceProjections(with records: [Record]) {
        guard !records.isEmpty else { return }
        enum Action { case none, schedule, applyHere }
        let action: Action = pendingProjection.withLock { pending in
            guard pending.isActive else { return .none }
            if pending.records.isEmpty {
                pending.records = records // shares the buffer: no copy of the records
            } else {
                pending.records.append(contentsOf: records)
            }
            if pending.records.count > OnboardingStore.maximumPendingRecords { return .applyHere }
            // A few records cost less to apply than waking the projector's thread does.
            if !pending.isScheduled && pending.records.count <= OnboardingStore.applyHereRecords { return .applyHere }
            defer { pending.isScheduled = true }
            return pending.isScheduled ? .none : .schedule
        }
        switch action {
        case .none: break
        case .applyHere:
            projections.withLock { applyPending(&$0) }
        case .schedule:
            projectorQueue.async { [self] in
                projections.withLock { applyPending(&$0) }
            }
        }
    }

    /// Committed records waiting for the projector beyond which the writer applies them itself.
    static let maximumPendingRecords = 65_536
    /// Commits this small (single appends, a group of concurrent appenders) are applied by the
    /// writer: about 1 µs a record against the ~20 µs of waking another thread.
    static let applyHereRecords = 16

    /// Applies the pending records to `cache.state` (in place: copying the state out and back
    /// would make every dictionary in it copy itself) and queues a snapshot when one is due.
    /// The snapshot is encoded and written on `snapshotQueue`: encoding a large state takes
    /// milliseconds nobody must wait for. It holds a copy of the state (the next apply copies the
    /// dictionaries once), so it is consistent at its seq whatever happens meanwhile.
    func applyPending(_ cache: inout ProjectionCache) {
        let records: [Record] = pendingProjection.withLock { pending in
            pending.isScheduled = false
            defer { pending.records.removeAll() }
            return pending.records
        }
        guard cache.state != nil, let first = records.first else { return }
        if cache.state!.seq < first.seq - 1 {
            // Another process appended in between: replay its records from the log first.
            try? replay(into: &cache.state!, through: first.seq - 1)
        }
        guard cache.state!.seq >= first.seq - 1 else { return } // could not catch up; the next query will
        for record in records where record.seq > cache.state!.seq { cache.state!.apply(record) }
        guard cache.snapshotDue(every: options.snapshotEveryEvents),
            !snapshotPending.withLock({ pending in
                defer { pending = true }; return pending
            })
        else { return }
        snapshotQueue.async { [self] in
            defer { snapshotPending.withLock { $0 = false } }
            guard !isClosed else { return }
            try? writeSnapshotIfBehind(minimumEvents: 1)
        }
    }

    /// Writes the snapshot when the state is at least `minimumEvents` past the last one.
    func writeSnapshotIfBehind(minimumEvents: UInt64) throws(StoreError) {
        guard let snapshots = databases.snapshots, !options.readOnly else { return }
        guard let (state, previous) = projections.withLock({ cache in cache.state.map { ($0, cache.snapshotSeq) } }),
            state.seq > previous, state.seq - previous >= minimumEvents
        else { return }
        let started = DispatchTime.now().uptimeNanoseconds
        let value = OnboardingStore.snapshotValue(state)
        do {
            try environment.write { try $0.put(snapshots, key: StoreLayout.stateSnapshotKey, value: value) }
        } catch {
            throw StoreError(.storage, "cannot write the projection snapshot to \(path): \(error)")
        }
        projections.withLock { cache in
            cache.snapshotSeq = max(cache.snapshotSeq, state.seq)
            cache.snapshotNanoseconds = DispatchTime.now().uptimeNanoseconds - started
        }
    }

    /// The stored snapshot, when it is usable: same state version, same policy and session
    /// setting, not past the head.
    func readSnapshot() throws(StoreError) -> (OnboardingState, UInt64)? {
        guard let decoded = try decodeSnapshot(), case .success(let state) = decoded.state,
            decoded.version == OnboardingState.stateVersion, state.lockout.policy == options.lockoutPolicy,
            state.session.captchaAlternativesAfterFailures == options.captchaAlternativesAfterFailures,
            state.seq == decoded.seq, decoded.seq <= (try head().seq)
        else { return nil }
        return (state, decoded.seq)
    }

    struct DecodedSnapshot {
        var version: Int
        var seq: UInt64
        var state: Result<OnboardingState, Error>
    }

    /// The raw snapshot: its version, seq and (if it decodes) state.
    func decodeSnapshot() throws(StoreError) -> DecodedSnapshot? {
        guard let snapshots = databases.snapshots else { return nil }
        guard let bytes = try reading({ try $0.get(snapshots, key: StoreLayout.stateSnapshotKey) }), bytes.count >= 12 else { return nil }
        let version = Int(bytes[0..<4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
        let seq = bytes[4..<12].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let state = Result<OnboardingState, any Error> { try OnboardingState(snapshotJSON: Array(bytes[12...])) }
        return DecodedSnapshot(version: version, seq: seq, state: state)
    }
}
