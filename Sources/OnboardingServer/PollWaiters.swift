import Foundation
import OnboardingStore
import Synchronization

/// A history request waiting for a newer attempt (`wait=`): how to look again, and what to
/// answer when the wait is over with nothing new.
struct HistoryPoll: Sendable {
    let deadline: ContinuousClock.Instant
    /// ``PollWaiters/generation`` read before the read that found nothing: an upload this node
    /// stored after it makes the poll look again as soon as it is added.
    let seenGeneration: UInt64
    /// The answer when there is one now (a non-empty page, or an error), else `nil`.
    let check: @Sendable () -> SyncResponse?
    /// The answer at the deadline (the page as it is then, maybe empty).
    let timeout: @Sendable () -> SyncResponse
}

/// The history polls one server node holds (`wait=`, docs/sync-protocol.md § History), on one
/// thread of their own: a waiting poll holds no handler thread of the HTTP layer (its connection
/// is suspended, ``HTTPResponder``), so polls never starve uploads. At most `maximumWaiting` at
/// once (``SyncLimits/maximumWaitingPolls``): ``add(_:answer:)`` refuses more, and the router
/// answers 503.
///
/// The thread looks at each poll again when this node stores an upload (``notice()``, at most
/// every ``minimumRecheck``), at its deadline, and — when other processes write to the storage
/// (PostgreSQL: other nodes) — at least every ``recheckInterval``. It is started by the first
/// poll and stopped with the server.
///
/// Uploads are counted (``generation``), and each poll remembers the count its last look saw, so
/// no upload is missed by a poll that was between its first read and ``add(_:answer:)`` when
/// the upload's notice was handled for the others.
///
/// ```swift
/// let polls = PollWaiters(maximumWaiting: 32, changesAreLocal: false)
/// if !polls.add(poll, answer: { response in send(response) }) { send(busy) }
/// polls.notice()   // after an upload: look again now
/// ```
final class PollWaiters: Sendable {
    /// 1 s: what the protocol promises a poll on a shared database — another node's upload is
    /// seen within a second.
    static let recheckInterval = Duration.seconds(1)
    /// 100 ms between looks prompted by uploads: a busy server's uploads do not turn the polls
    /// into a loop of reads (32 polls × 10 looks a second at most).
    static let minimumRecheck = Duration.milliseconds(100)

    private struct Waiter {
        let poll: HistoryPoll
        let answer: @Sendable (SyncResponse) -> Void
        var checkedAt: ContinuousClock.Instant
        /// The ``PollWaiters/generation`` the last look at the poll started from.
        var checkedGeneration: UInt64
    }

    private struct State {
        var waiting: [UInt64: Waiter] = [:]
        var nextID: UInt64 = 0
        /// Uploads this node stored, counted by ``notice()``.
        var generation: UInt64 = 0
        /// When polls last looked again because of an upload (``minimumRecheck`` apart).
        var lastLook = ContinuousClock.now - PollWaiters.minimumRecheck
        var running = false
        var stopped: SyncResponse?
    }

    private let maximumWaiting: Int
    private let changesAreLocal: Bool
    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)

    init(maximumWaiting: Int, changesAreLocal: Bool) {
        self.maximumWaiting = maximumWaiting
        self.changesAreLocal = changesAreLocal
    }

    /// How many polls wait now.
    var count: Int { state.withLock { $0.waiting.count } }

    /// How many uploads this node has stored (``notice()``): read it before the read a poll
    /// starts from (``HistoryPoll/seenGeneration``).
    var generation: UInt64 { state.withLock { $0.generation } }

    /// Holds `poll` until it has an answer, then calls `answer` once (on the poll thread);
    /// `false`, and nothing is held, when `maximumWaiting` polls already wait or the server stops.
    func add(_ poll: HistoryPoll, answer: @escaping @Sendable (SyncResponse) -> Void) -> Bool {
        let start: Bool? = state.withLock { state in
            guard state.stopped == nil, state.waiting.count < maximumWaiting else { return nil }
            state.nextID += 1
            state.waiting[state.nextID] = Waiter(poll: poll, answer: answer, checkedAt: .now, checkedGeneration: poll.seenGeneration)
            defer { state.running = true }
            return !state.running
        }
        guard let start else { return false }
        if start {
            let thread = Thread { [self] in run() }
            thread.name = "onboard-polls"
            thread.start()
        } else {
            wake.signal()
        }
        return true
    }

    /// This node stored an upload: the polls look again (soon).
    func notice() {
        let waiting = state.withLock { state in
            state.generation &+= 1
            return !state.waiting.isEmpty
        }
        if waiting { wake.signal() }
    }

    /// Answers every waiting poll `response` and refuses new ones; the thread ends.
    func stop(answering response: SyncResponse) {
        let waiting = state.withLock { state in
            if state.stopped == nil { state.stopped = response }
            defer { state.waiting.removeAll() }
            return Array(state.waiting.values)
        }
        for waiter in waiting { waiter.answer(response) }
        wake.signal()
    }

    private func run() {
        while true {
            let now = ContinuousClock.now
            let (due, generation, stopped): ([(UInt64, Waiter)], UInt64, Bool) = state.withLock { state in
                if state.stopped != nil { return ([], 0, true) }
                let uploadsLook = now - state.lastLook >= Self.minimumRecheck
                var lookedForUploads = false
                let due = state.waiting.filter { _, waiter in
                    let missedUpload = waiter.checkedGeneration != state.generation
                    if missedUpload && uploadsLook { lookedForUploads = true }
                    return (missedUpload && uploadsLook) || now >= waiter.poll.deadline
                        || (!changesAreLocal && now - waiter.checkedAt >= Self.recheckInterval)
                }
                if lookedForUploads { state.lastLook = now }
                return (due.map { ($0.key, $0.value) }, state.generation, false)
            }
            if stopped { return }
            for (id, waiter) in due {
                // Looked at outside the lock: a read of the storage takes milliseconds. It sees
                // at least every upload counted in `generation` (each counted after its commit).
                let answer = waiter.poll.check() ?? (ContinuousClock.now >= waiter.poll.deadline ? waiter.poll.timeout() : nil)
                let mine: Bool = state.withLock { state in
                    guard state.waiting[id] != nil else { return false } // answered by stop()
                    if answer != nil {
                        state.waiting[id] = nil
                    } else {
                        state.waiting[id]?.checkedAt = .now
                        state.waiting[id]?.checkedGeneration = generation
                    }
                    return true
                }
                if mine, let answer { waiter.answer(answer) }
            }
            _ = wake.wait(timeout: .now() + nextWait())
        }
    }

    /// Until the next deadline or (shared storage) the next recheck, at most a second.
    private func nextWait() -> DispatchTimeInterval {
        let now = ContinuousClock.now
        let next: Duration = state.withLock { state in
            var soonest = Self.recheckInterval
            for waiter in state.waiting.values {
                soonest = min(soonest, waiter.poll.deadline - now)
                if !changesAreLocal { soonest = min(soonest, waiter.checkedAt + Self.recheckInterval - now) }
                if waiter.checkedGeneration != state.generation { soonest = min(soonest, state.lastLook + Self.minimumRecheck - now) }
            }
            return soonest
        }
        let milliseconds = max(1, next.components.seconds * 1000 + next.components.attoseconds / 1_000_000_000_000_000)
        return .milliseconds(Int(milliseconds))
    }
}
