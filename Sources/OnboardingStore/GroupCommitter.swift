import Dispatch
import Foundation
import OnboardingModel
import Synchronization

/// Batches concurrent appends into one LMDB write transaction and one fsync.
///
/// Appenders enqueue a request; one drain loop on a dedicated serial queue (fsync blocks, so it
/// stays off Swift's cooperative pool) takes everything pending, commits it in a single
/// transaction, and completes every request. While that commit is on disk, new requests pile up
/// and form the next group.
final class GroupCommitter: Sendable {
    struct Request: Sendable {
        let events: [Event]
        let claimedSeqs: [UInt64?]?
        let expectedHead: UInt64?
        /// Per event, a sealed personal section to write as it is (a sync server's replica
        /// storing a device's record whose user the device had forgotten); usually `nil`.
        var sealedSections: [[UInt8]?]? = nil
        let completion: @Sendable (Result<[AppendResult], StoreError>) -> Void

        init(
            events: [Event], claimedSeqs: [UInt64?]?, expectedHead: UInt64?, sealedSections: [[UInt8]?]? = nil,
            completion: @escaping @Sendable (Result<[AppendResult], StoreError>) -> Void
        ) {
            self.events = events
            self.claimedSeqs = claimedSeqs
            self.expectedHead = expectedHead
            self.sealedSections = sealedSections
            self.completion = completion
        }
    }

    /// The most events one group commit takes: bounds a transaction's dirty pages and the
    /// latency of the appenders at the back of the group.
    static let maximumGroupEvents = 16_384

    /// The longest a group waits for appenders of the previous group to come back (full
    /// durability only; see `gather`). Well under one fsync (~250 µs here), so a lone appender
    /// never waits long and a crowd shares one fsync instead of splitting into two.
    static let maximumGatherNanoseconds: UInt64 = 100_000

    private struct State {
        var pending: [Request] = []
        var isDraining = false
        var isStopped = false
        weak var store: OnboardingStore?
        var commitCount = 0
        var hasUnsyncedCommits = false
        /// Commits wait for fsync, so gathering a larger group is worth a short wait.
        var gathers = false
        /// Requests in the last group the drain loop committed.
        var lastGroupRequests = 0
    }

    private let state = Mutex<State>(State())
    private let queue = DispatchQueue(label: "OnboardingStore.group-commit")
    private static let queueKey = DispatchSpecificKey<Bool>()

    init() {
        queue.setSpecific(key: GroupCommitter.queueKey, value: true)
    }

    func attach(_ store: OnboardingStore) {
        state.withLock {
            $0.store = store
            $0.gathers = store.options.durability == .full
        }
    }

    var commitCount: Int { state.withLock { $0.commitCount } }

    /// Returns whether commits happened since the last call, and clears the mark.
    func takeUnsyncedCommits() -> Bool {
        state.withLock { state in
            defer { state.hasUnsyncedCommits = false }
            return state.hasUnsyncedCommits
        }
    }

    /// Marks commits as not flushed again (the flush that took the mark failed: retry it).
    func markUnsynced() {
        state.withLock { $0.hasUnsyncedCommits = true }
    }

    func submit(_ request: Request) {
        enum Action { case drain, refuse, none }
        let action: Action = state.withLock { state in
            if state.isStopped { return .refuse }
            state.pending.append(request)
            if state.isDraining { return .none }
            state.isDraining = true
            return .drain
        }
        switch action {
        case .drain: queue.async { self.drain() }
        case .refuse: request.completion(.failure(StoreError(.closed, "the store is closed; open it again to append")))
        case .none: break
        }
    }

    /// Commits one request on the writer queue and returns when it is done. Running on the
    /// queue (not the caller's thread) means `drainAndStop` waits for it like any other commit.
    func commitNow(_ request: Request) {
        queue.sync {
            guard let store = state.withLock({ $0.isStopped ? nil : $0.store }) else {
                request.completion(.failure(StoreError(.closed, "the store is closed; open it again to append")))
                return
            }
            let results = store.commitGroup([request])
            recordCommit()
            request.completion(results[0])
        }
    }

    /// Runs `body` on the writer queue, between group commits (a change that must not interleave
    /// with a group's staging, like erasing a user's key).
    func runExclusive<T>(_ body: () -> T) -> T {
        if DispatchQueue.getSpecific(key: GroupCommitter.queueKey) != nil { return body() }
        return queue.sync(execute: body)
    }

    private func drain() {
        while true {
            gather()
            let (group, store): ([Request], OnboardingStore?) = state.withLock { state in
                guard !state.pending.isEmpty else {
                    state.isDraining = false
                    return ([], nil)
                }
                var events = 0
                var taken = 0
                for request in state.pending {
                    if taken > 0 && events + request.events.count > GroupCommitter.maximumGroupEvents { break }
                    events += request.events.count
                    taken += 1
                }
                let group = Array(state.pending.prefix(taken))
                state.pending.removeFirst(taken)
                state.lastGroupRequests = taken
                return (group, state.store)
            }
            if group.isEmpty { return }
            guard let store else {
                for request in group {
                    request.completion(.failure(StoreError(.closed, "the store was closed before the append committed")))
                }
                continue
            }
            let results = store.commitGroup(group)
            recordCommit()
            for (request, result) in zip(group, results) { request.completion(result) }
        }
    }

    /// When the last group had more requests than are pending now, its appenders are still on
    /// their way back with their next request (each resumed when its commit completed): waits
    /// for them, yielding the CPU, at most `maximumGatherNanoseconds`. Without it a crowd of
    /// appenders splits into a group of the first few to return and one of the rest, and pays
    /// two fsyncs. PostgreSQL's `commit_delay` and MySQL's `binlog_group_commit_sync_delay` do the
    /// same; here the wait is adaptive, so a lone appender never waits.
    private func gather() {
        let (gathers, expected) = state.withLock { ($0.gathers && !$0.isStopped, $0.lastGroupRequests) }
        guard gathers, expected > 1 else { return }
        let deadline = DispatchTime.now().uptimeNanoseconds + GroupCommitter.maximumGatherNanoseconds
        while state.withLock({ $0.pending.count }) < expected, DispatchTime.now().uptimeNanoseconds < deadline {
            sched_yield()
        }
    }

    private func recordCommit() {
        state.withLock {
            $0.commitCount += 1
            $0.hasUnsyncedCommits = true
        }
    }

    /// Refuses new requests and waits until the pending ones are committed.
    func drainAndStop() {
        state.withLock { $0.isStopped = true }
        if DispatchQueue.getSpecific(key: GroupCommitter.queueKey) == nil {
            queue.sync {}
        }
    }
}
