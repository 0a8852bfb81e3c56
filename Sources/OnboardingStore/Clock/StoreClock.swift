import OnboardingModel

/// Where the store reads the time, and how it waits for a time to come.
///
/// Implementation requirements, for every conformer:
/// - ``now()`` never blocks, and is safe to call from any thread;
/// - ``sleep(until:)`` returns once ``now()`` has reached `deadline` (at once when it already
///   has), and throws `CancellationError` promptly when its task is cancelled, whether the
///   cancellation comes before or during the wait;
/// - the time never runs backwards for the store's purposes: a later ``now()`` is not earlier
///   than a `deadline` a ``sleep(until:)`` already returned for.
///
/// The store uses it for the default time of what it records and decides
/// (``OnboardingStore/Options/clock``) and to wake ``OnboardingStore/deviceStateUpdates(device:)``
/// when a lock ends or a resend becomes available. Two ship: ``SystemStoreClock`` (the default)
/// and ``ManualStoreClock``, which moves only when told (tests).
///
/// ```swift
/// var options = OnboardingStore.Options()
/// let clock = ManualStoreClock(Timestamp(millisecondsSince1970: 1_780_000_000_000))
/// options.timeSource = clock
/// // … record five failures: the screen shows the lock …
/// clock.advance(byMilliseconds: 300_000)   // the lock ends: deviceStateUpdates() emits sign_in
/// ```
public protocol StoreClock: Sendable {
    /// The current time.
    func now() -> Timestamp
    /// Suspends until ``now()`` reaches `deadline`.
    func sleep(until deadline: Timestamp) async throws
}
