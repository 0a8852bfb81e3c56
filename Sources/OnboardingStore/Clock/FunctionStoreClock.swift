import OnboardingModel

/// A ``StoreClock`` made of a function that reads the time (what
/// ``OnboardingStore/Options/clock`` is set to): it sleeps on the wall clock, re-reading the
/// function at least once a minute.
struct FunctionStoreClock: StoreClock {
    let read: @Sendable () -> Timestamp

    func now() -> Timestamp { read() }

    func sleep(until deadline: Timestamp) async throws {
        try await WallClockSleep.sleep(until: deadline, now: read)
    }
}
