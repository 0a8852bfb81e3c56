import OnboardingModel
import Synchronization

/// The simulation's true time, moved only by the simulator. The server reads it as its clock;
/// every device reads it plus its own skew (``DeviceClock``). Nothing in a simulation reads the
/// wall clock, so a seed replays the same times.
///
/// ```swift
/// let clock = SimulationClock(start: Timestamp(millisecondsSince1970: 1_772_323_200_000))
/// clock.advance(milliseconds: 1_500)
/// clock.now   // 1.5 s later
/// ```
final class SimulationClock: Sendable {
    private let milliseconds: Atomic<Int64>

    init(start: Timestamp) { milliseconds = Atomic(start.millisecondsSince1970) }

    var nowMilliseconds: Int64 { milliseconds.load(ordering: .sequentiallyConsistent) }
    var now: Timestamp { Timestamp(millisecondsSince1970: nowMilliseconds) }

    func advance(milliseconds delta: Int64) {
        precondition(delta >= 0, "the simulation's time never runs backwards")
        _ = milliseconds.add(delta, ordering: .sequentiallyConsistent)
    }
}
