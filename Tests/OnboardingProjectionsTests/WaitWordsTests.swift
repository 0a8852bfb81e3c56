import Testing
@testable import OnboardingModel
@testable import OnboardingProjections

/// `WaitWords`: how a lock message names the time left.
@Suite("Wait words")
struct WaitWordsTests {
    @Test(
        "rounded up; seconds only under 90 s, minutes to 2 hours, hours beyond",
        arguments: [
            (Int64(1), "1 second"), (999, "1 second"), (1_000, "1 second"), (1_001, "2 seconds"), (7_000, "7 seconds"),
            (89_000, "89 seconds"), (89_001, "90 seconds"), (89_999, "90 seconds"), (90_000, "2 minutes"), (120_000, "2 minutes"),
            (120_001, "3 minutes"), (240_001, "5 minutes"), (300_000, "5 minutes"), (300_001, "6 minutes"), (651_000, "11 minutes"),
            (7_200_000, "120 minutes"), (7_200_001, "3 hours"), (172_800_000, "48 hours")
        ])
    func words(milliseconds: Int64, expected: String) {
        #expect(WaitWords.words(remainingMilliseconds: milliseconds) == expected)
    }

    @Test("the words stay the same above the change threshold and differ at it, for every wait up to 3 hours in 997 ms steps")
    func threshold() {
        var remaining: Int64 = 1
        while remaining <= 10_800_000 {
            let words = WaitWords.words(remainingMilliseconds: remaining)
            let threshold = WaitWords.changeThreshold(remainingMilliseconds: remaining)
            #expect(threshold < remaining)
            #expect(WaitWords.words(remainingMilliseconds: threshold + 1) == words, "\(remaining) ms")
            if threshold > 0 { #expect(WaitWords.words(remainingMilliseconds: threshold) != words, "\(remaining) ms") }
            remaining += 997
        }
    }
}
