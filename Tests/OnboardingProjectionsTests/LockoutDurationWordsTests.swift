import Testing
@testable import OnboardingProjections

/// `DurationWords`: how the lock message words a wait.
@Suite("Lockout: duration words")
struct LockoutDurationWordsTests {
    @Test(
        "the largest unit that divides the duration exactly",
        arguments: [
            (1, "1 second"), (2, "2 seconds"), (59, "59 seconds"), (60, "1 minute"), (90, "90 seconds"),
            (120, "2 minutes"), (300, "5 minutes"), (600, "10 minutes"), (900, "15 minutes"), (3600, "1 hour"),
            (5400, "90 minutes"), (7200, "2 hours"), (86_400, "1 day"), (90_000, "25 hours"), (172_800, "2 days"),
            (31_622_400, "366 days"), (3661, "3661 seconds")
        ])
    func words(seconds: Int, expected: String) {
        #expect(DurationWords.words(seconds: seconds) == expected)
        #expect(DurationWords.words(milliseconds: Int64(seconds) * 1000) == expected)
    }

    @Test(
        "fractions of a second round up, so a wait is never understated",
        arguments: [
            (Int64(1), "1 second"), (999, "1 second"), (1000, "1 second"), (1001, "2 seconds"), (59_001, "1 minute"),
            (299_999, "5 minutes"), (300_001, "301 seconds")
        ])
    func roundsUp(milliseconds: Int64, expected: String) {
        #expect(DurationWords.words(milliseconds: milliseconds) == expected)
    }

    @Test("zero and negative durations read as 1 second", arguments: [Int64(0), -1, -60_000])
    func nonPositive(milliseconds: Int64) {
        #expect(DurationWords.words(milliseconds: milliseconds) == "1 second")
    }

    @Test("the lock message names the time left at the decision, not the lock's length")
    func message() {
        let lock = TemporaryLock(
            until: LockoutClock.origin.adding(milliseconds: 172_800_000), reason: .backoff, durationMilliseconds: 172_800_000, failures: 1,
            decidedAt: LockoutClock.origin)
        #expect(lock.message == "You have made too many recent login attempts. Please wait 48 hours before trying again.")
        var later = lock
        later.decidedAt = LockoutClock.origin.adding(milliseconds: 172_800_000 - 7_000)
        #expect(later.message == "You have made too many recent login attempts. Please wait 7 seconds before trying again.")
    }
}
