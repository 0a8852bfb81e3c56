import Synchronization

/// A ``FaultInjector`` that tests arm and disarm while the environment runs: the next `times`
/// calls at a ``FaultPoint`` fail with a chosen code. It counts every call at every point, so a
/// test can wait for a background flush to have been tried.
///
/// ```swift
/// let faults = FaultPlan()
/// options.faults = faults.injector
/// faults.arm(.commit, failWith: LMDBError.mapFull.code)     // the next commit fills the map
/// ```
package final class FaultPlan: Sendable {
    private struct Armed {
        var code: Int32
        var remaining: Int
    }

    private struct State {
        var armed: [FaultPoint: Armed] = [:]
        var calls: [FaultPoint: Int] = [:]
        var injected: [FaultPoint: Int] = [:]
    }

    private let state = Mutex(State())

    package init() {}

    /// Makes the next `times` calls at `point` fail with `code` (`Int.max`: until disarmed).
    package func arm(_ point: FaultPoint, failWith code: Int32, times: Int = 1) {
        precondition(times > 0, "arm a fault for at least one call")
        state.withLock { $0.armed[point] = Armed(code: code, remaining: times) }
    }

    /// Lets the calls at `point` run for real again.
    package func disarm(_ point: FaultPoint) {
        state.withLock { $0.armed[point] = nil }
    }

    /// How many calls reached `point`, failed or not.
    package func calls(at point: FaultPoint) -> Int {
        state.withLock { $0.calls[point, default: 0] }
    }

    /// How many calls at `point` were made to fail.
    package func injected(at point: FaultPoint) -> Int {
        state.withLock { $0.injected[point, default: 0] }
    }

    package var injector: FaultInjector {
        { [self] point in
            state.withLock { state in
                state.calls[point, default: 0] += 1
                guard var armed = state.armed[point] else { return nil }
                if armed.remaining != .max { armed.remaining -= 1 }
                state.armed[point] = armed.remaining > 0 ? armed : nil
                state.injected[point, default: 0] += 1
                return armed.code
            }
        }
    }
}
