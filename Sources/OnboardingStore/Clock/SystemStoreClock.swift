import OnboardingModel

/// The system's wall clock: ``StoreClock`` as an app on a device has it.
///
/// ```swift
/// let clock = SystemStoreClock()
/// try await clock.sleep(until: clock.now().adding(milliseconds: 1_000))   // about a second
/// ```
public struct SystemStoreClock: StoreClock {
    public init() {}

    public func now() -> Timestamp { .now }

    public func sleep(until deadline: Timestamp) async throws {
        try await WallClockSleep.sleep(until: deadline, now: now)
    }
}

/// Sleeping until a time of a clock that runs on its own: in steps of at most
/// ``longestStepMilliseconds``, reading the clock after each, so a clock that is set forward or
/// back (the user changed the device's time) is followed within a minute.
enum WallClockSleep {
    /// A minute: long enough to cost nothing, short enough that a changed clock is noticed soon.
    static let longestStepMilliseconds: Int64 = 60_000

    static func sleep(until deadline: Timestamp, now: () -> Timestamp) async throws {
        while true {
            try Task.checkCancellation()
            let left = deadline.millisecondsSince1970 - now().millisecondsSince1970
            guard left > 0 else { return }
            try await Task.sleep(for: .milliseconds(min(left, longestStepMilliseconds)))
        }
    }
}
