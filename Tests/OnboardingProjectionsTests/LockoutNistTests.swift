import Testing
import OnboardingModel
@testable import OnboardingProjections

/// The `nist` preset (SP 800-63B): at most 100 consecutive failures, then a reset is required.
@Suite("Lockout: nist preset")
struct LockoutNistTests {
    @Test("parameters: 100 consecutive failures, for both factors; no temporary locks")
    func parameters() {
        let policy = LockoutPolicy.nist
        for rule in [policy.password, policy.secondFactor] {
            #expect(rule.consecutiveLimit == 100)
            #expect(rule.tiers.isEmpty && rule.backoff == nil && rule.methods == nil && rule.permanentAfterLockouts == nil)
        }
        #expect(
            policy.clearing
                == .init(
                    signInSucceeded: .counters, passwordChanged: .all, lockoutCleared: .all,
                    passcodeResetCompleted: .counters))
    }

    @Test("worked timeline: 99 failures are allowed, the 100th locks until the password is reset")
    func timeline() {
        var scenario = LockoutScenario(.nist)
        // One failure a minute, 16:00 … 17:38 (99 failures).
        for minute in 0..<99 {
            let time = LockoutClock.seconds(Double(minute * 60))
            scenario.fail(at: time)
            #expect(scenario.decide(at: time) == .allowed(failures: minute + 1))
        }
        scenario.play([
            .check("17:38:00", "allowed (99 failures)"),
            .fail("17:39:00", "permanently locked (100 failures)"),
            .fail("17:40:00", "permanently locked (100 failures)"),
            .check("2027-11-29T16:00:00Z", "permanently locked (100 failures)"),
            LockoutStep("17:41:00", .succeed(.biometric), "permanently locked (100 failures)"),
            LockoutStep("17:42:00", .clear(.passwordChanged), "allowed (0 failures)")
        ])
        #expect(scenario.decide(at: LockoutClock.time("17:41:00")).message == nil)
    }

    @Test("the permanent lock asks for a password reset")
    func message() {
        var scenario = LockoutScenario(.nist)
        let last = scenario.failRepeatedly(100, from: LockoutClock.origin)
        #expect(
            scenario.decide(at: last).message
                == "Your account is locked after too many failed attempts. Reset your password to unlock it.")
    }

    @Test("consecutive: a success in between restarts the count (99 + success + 99 stays allowed)")
    func successResets() {
        var scenario = LockoutScenario(.nist)
        scenario.failRepeatedly(99, from: LockoutClock.origin)
        scenario.succeed(at: LockoutClock.seconds(100))
        let last = scenario.failRepeatedly(99, from: LockoutClock.seconds(101))
        #expect(scenario.decide(at: last) == .allowed(failures: 99))
        scenario.fail(at: last.adding(milliseconds: 1000))
        if case .permanentlyLocked(let lock) = scenario.decide(at: last) {
            #expect(lock.failures == 100)
        } else {
            Issue.record("not permanent")
        }
    }

    @Test("no time window: 100 failures a day apart lock just the same")
    func noWindow() {
        var scenario = LockoutScenario(.nist)
        let last = scenario.failRepeatedly(100, from: LockoutClock.origin, spacing: 86_400)
        if case .permanentlyLocked = scenario.decide(at: last) {} else { Issue.record("not permanent") }
    }
}
