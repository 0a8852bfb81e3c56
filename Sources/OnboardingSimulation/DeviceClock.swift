import OnboardingModel
import Synchronization

/// A device's clock: the simulation's time plus a skew that the simulator may change (a clock
/// that runs ahead, lags, or is corrected by a time sync and jumps).
final class DeviceClock: Sendable {
    let base: SimulationClock
    private let skew: Atomic<Int64>

    init(base: SimulationClock, skewMilliseconds: Int64) {
        self.base = base
        skew = Atomic(skewMilliseconds)
    }

    var skewMilliseconds: Int64 { skew.load(ordering: .sequentiallyConsistent) }
    func setSkew(milliseconds: Int64) { skew.store(milliseconds, ordering: .sequentiallyConsistent) }

    var now: Timestamp { Timestamp(millisecondsSince1970: base.nowMilliseconds + skewMilliseconds) }
}
