import Testing
import OnboardingModel
@testable import OnboardingProjections

/// The `owasp` preset: exponential back-off, permanent after three temporary lockouts.
@Suite("Lockout: owasp preset")
struct LockoutOwaspTests {
    static let resetPassword = "Your account is locked after too many failed attempts. Reset your password to unlock it."

    @Test("parameters: waits from 1 s doubling, permanent after 3 temporary lockouts, for both factors")
    func parameters() {
        let policy = LockoutPolicy.owasp
        for rule in [policy.password, policy.secondFactor] {
            #expect(rule.backoff == .init(threshold: 1, initialWaitSeconds: 1, growth: .doubling, maximumWaitSeconds: 86_400))
            #expect(rule.permanentAfterLockouts == 3)
            #expect(rule.tiers.isEmpty && rule.methods == nil && rule.consecutiveLimit == nil)
        }
        #expect(
            policy.clearing
                == .init(
                    signInSucceeded: .counters, passwordChanged: .all, lockoutCleared: .all,
                    passcodeResetCompleted: .counters))
    }

    @Test("worked timeline: waits of 1 s, 2 s, 4 s, then permanent; only a password change or an admin lifts it")
    func timeline() {
        var scenario = LockoutScenario(.owasp)
        scenario.play([
            .fail("16:00:00.000", "locked until 16:00:01.000, wait 1 second (1 failure)"),
            .fail("16:00:00.500", "locked until 16:00:01.000, wait 1 second (1 failure)"),
            .check("16:00:01.000", "allowed (1 failure)"),
            .fail("16:00:01.000", "locked until 16:00:03.000, wait 2 seconds (2 failures)"),
            .fail("16:00:03.000", "locked until 16:00:07.000, wait 4 seconds (3 failures)"),
            .check("16:00:06.999", "locked until 16:00:07.000, wait 4 seconds (3 failures)"),
            .fail("16:00:07.000", "permanently locked (4 failures)"),
            .fail("16:00:20", "permanently locked (4 failures)"),
            LockoutStep("16:00:30", .succeed(.password), "permanently locked (4 failures)"),
            LockoutStep("16:00:40", .clear(.passcodeResetCompleted), "permanently locked (4 failures)"),
            LockoutStep("16:01:00", .clear(.passwordChanged), "allowed (0 failures)"),
            .fail("16:01:10", "locked until 16:01:11.000, wait 1 second (1 failure)")
        ])
        #expect(
            scenario.decide(at: LockoutClock.time("16:01:10")).message
                == "You have made too many recent login attempts. Please wait 1 second before trying again.")
    }

    @Test("the permanent lock names the way out: reset the password")
    func permanentMessage() {
        var scenario = LockoutScenario(.owasp)
        let last = scenario.failRepeatedly(4, from: LockoutClock.origin)
        #expect(scenario.decide(at: last).message == Self.resetPassword)
        guard case .permanentlyLocked(let lock) = scenario.decide(at: last) else { Issue.record("not permanent"); return }
        #expect(lock.since == last)
        #expect(lock.clearedBy == [.passwordChanged, .lockoutCleared])
    }

    @Test("a successful sign-in between lockouts restarts the back-off and the lockout count")
    func successRestarts() {
        var scenario = LockoutScenario(.owasp)
        scenario.play([
            .fail("16:00:00", "locked until 16:00:01.000, wait 1 second (1 failure)"),
            .fail("16:00:01", "locked until 16:00:03.000, wait 2 seconds (2 failures)"),
            .fail("16:00:03", "locked until 16:00:07.000, wait 4 seconds (3 failures)"),
            LockoutStep("16:00:10", .succeed(.password), "allowed (0 failures)"),
            .fail("16:00:20", "locked until 16:00:21.000, wait 1 second (1 failure)"),
            .fail("16:00:21", "locked until 16:00:23.000, wait 2 seconds (2 failures)"),
            .fail("16:00:23", "locked until 16:00:27.000, wait 4 seconds (3 failures)"),
            .fail("16:00:27", "permanently locked (4 failures)")
        ])
    }

    @Test("the back-off does not restart by itself: a day later the next failure is still permanent")
    func noTimeReset() {
        var scenario = LockoutScenario(.owasp)
        scenario.failRepeatedly(3, from: LockoutClock.origin)
        scenario.play([.fail("2026-11-30T16:00:00Z", "permanently locked (4 failures)")])
    }

    @Test("second factor: the same back-off, apart from the password's")
    func secondFactor() {
        var scenario = LockoutScenario(.owasp)
        let last = scenario.failRepeatedly(3, from: LockoutClock.origin, factor: .secondFactor)
        #expect(scenario.lockedUntil(at: last, .secondFactor) == last.adding(milliseconds: 4000))
        scenario.failSecondFactor(at: last.adding(milliseconds: 4000))
        if case .permanentlyLocked = scenario.decide(at: last, .secondFactor) {} else { Issue.record("not permanent") }
        #expect(scenario.decide(at: last) == .allowed(failures: 0))
    }
}
