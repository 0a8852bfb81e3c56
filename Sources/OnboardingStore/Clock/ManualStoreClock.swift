import Foundation
import OnboardingModel
import Synchronization

/// A ``StoreClock`` that moves only when told: the deterministic test double of
/// ``SystemStoreClock`` (as swift-nio ships `NIOEmbedded` beside `NIOPosix`). Sleepers wake,
/// in deadline order, when ``advance(byMilliseconds:)`` or ``set(to:)`` reaches their deadline.
///
/// ```swift
/// let clock = ManualStoreClock(try Timestamp(iso8601: "2026-11-29T16:00:00.000Z"))
/// Task { try await clock.sleep(until: clock.now().adding(milliseconds: 5_000)); print("woke") }
/// clock.advance(byMilliseconds: 5_000)   // prints "woke"
/// ```
public final class ManualStoreClock: StoreClock {
    private struct Sleeper {
        var deadline: Timestamp
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now: Timestamp
        var sleepers: [UUID: Sleeper] = [:]
        /// Sleeps cancelled before they were registered: refused when they arrive.
        var cancelled: Set<UUID> = []
    }

    private let state: Mutex<State>

    public init(_ start: Timestamp) {
        state = Mutex(State(now: start))
    }

    public func now() -> Timestamp { state.withLock { $0.now } }

    /// How many sleeps are waiting: a test waits for this to grow before it advances the clock,
    /// so it knows the sleeper it wants to wake has armed its timer.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// The earliest deadline anyone sleeps until, or `nil`.
    public var nextDeadline: Timestamp? { state.withLock { $0.sleepers.values.map(\.deadline).min() } }

    public func sleep(until deadline: Timestamp) async throws {
        let id = UUID()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome: Result<Void, any Error>? = state.withLock { state in
                    if state.cancelled.remove(id) != nil { return .failure(CancellationError()) }
                    if state.now >= deadline { return .success(()) }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let sleeper = state.withLock { state in
                guard let sleeper = state.sleepers.removeValue(forKey: id) else {
                    state.cancelled.insert(id)
                    return Sleeper?.none
                }
                return sleeper
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves the clock forward by `milliseconds` (at least 0) and wakes every sleeper whose
    /// deadline it reaches.
    public func advance(byMilliseconds milliseconds: Int64) {
        precondition(milliseconds >= 0, "a manual clock only moves forward (got \(milliseconds) ms)")
        set(to: now().adding(milliseconds: milliseconds))
    }

    /// Sets the clock to `time`, which may not be earlier than now, and wakes every sleeper
    /// whose deadline it reaches, earliest first.
    public func set(to time: Timestamp) {
        let due = state.withLock { state -> [Sleeper] in
            precondition(time >= state.now, "a manual clock only moves forward (from \(state.now.iso8601) to \(time.iso8601))")
            state.now = time
            let due = state.sleepers.filter { $0.value.deadline <= time }
            for id in due.keys { state.sleepers[id] = nil }
            return due.values.sorted { $0.deadline < $1.deadline }
        }
        for sleeper in due { sleeper.continuation.resume() }
    }
}
