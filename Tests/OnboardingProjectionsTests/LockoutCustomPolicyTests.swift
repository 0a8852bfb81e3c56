import Testing
import OnboardingModel
@testable import OnboardingProjections

/// The engine's building blocks with custom rules: tiers, back-off, consecutive limits,
/// permanent-after-lockouts, method filters and clearing scopes.
@Suite("Lockout: custom policies")
struct LockoutCustomPolicyTests {
    static func policy(
        password: LockoutPolicy.FactorRule, secondFactor: LockoutPolicy.FactorRule = .init(),
        clearing: LockoutPolicy.Clearing = LockoutPolicy.mediawiki.clearing
    ) -> LockoutPolicy {
        LockoutPolicy(name: "custom", password: password, secondFactor: secondFactor, clearing: clearing)
    }

    @Test("a rule with nothing in it counts failures and never locks")
    func emptyRule() {
        var scenario = LockoutScenario(Self.policy(password: .init()))
        let last = scenario.failRepeatedly(10_000, from: LockoutClock.origin, spacing: 0.001)
        #expect(scenario.decide(at: last) == .allowed(failures: 10_000))
        #expect(scenario.engine.keyCount == 1, "the state of a key stays one small record")
    }

    @Test("doubling back-off after a threshold, capped at the maximum")
    func doubling() {
        let backoff = LockoutPolicy.Backoff(threshold: 3, initialWaitSeconds: 10, growth: .doubling, maximumWaitSeconds: 60)
        var scenario = LockoutScenario(Self.policy(password: .init(backoff: backoff)))
        var waits: [Int64] = []
        var time = LockoutClock.origin
        for _ in 0..<7 {
            if let until = scenario.lockedUntil(at: time) { time = until }
            scenario.fail(at: time)
            waits.append(scenario.lockedUntil(at: time).map { $0.millisecondsSince1970 - time.millisecondsSince1970 } ?? 0)
            time = time.adding(milliseconds: 5000)
        }
        #expect(waits == [0, 0, 10_000, 20_000, 40_000, 60_000, 60_000])
    }

    @Test("a consecutive limit locks permanently at the limit, not before")
    func consecutive() {
        var scenario = LockoutScenario(Self.policy(password: .init(consecutiveLimit: 3)))
        scenario.play([
            .fail("16:00:00", "allowed (1 failure)"),
            .fail("16:00:01", "allowed (2 failures)"),
            .fail("16:00:02", "permanently locked (3 failures)")
        ])
    }

    @Test("permanentAfterLockouts N: N temporary lockouts, the next one is permanent", arguments: [0, 1, 2, 5])
    func permanentAfterLockouts(count: Int) {
        let rule = LockoutPolicy.FactorRule(tiers: [.init(limit: 2, windowSeconds: 60)], permanentAfterLockouts: count)
        var scenario = LockoutScenario(Self.policy(password: rule))
        for lockout in 0...count {
            // Two failures in a fresh window: a lockout.
            let start = LockoutClock.seconds(Double(lockout) * 120)
            scenario.fail(at: start)
            scenario.fail(at: start.adding(milliseconds: 1000))
            let decision = scenario.decide(at: start.adding(milliseconds: 1000))
            if lockout < count {
                #expect(
                    scenario.lockedUntil(at: start.adding(milliseconds: 1000)) == start.adding(milliseconds: 60_000),
                    "lockout \(lockout + 1) is temporary")
            } else if case .permanentlyLocked = decision {
            } else {
                Issue.record("lockout \(lockout + 1) should be permanent: \(lockoutSummary(decision))")
            }
        }
    }

    @Test("one failure that reaches two tiers at once is one lockout, not two")
    func oneFailureOneLockout() {
        // Tiers 2 per minute and 2 per 10 minutes: the second failure reaches both.
        let rule = LockoutPolicy.FactorRule(
            tiers: [.init(limit: 2, windowSeconds: 60), .init(limit: 2, windowSeconds: 600)],
            permanentAfterLockouts: 1)
        var scenario = LockoutScenario(Self.policy(password: rule))
        scenario.fail(at: LockoutClock.time("16:00:00"))
        scenario.fail(at: LockoutClock.time("16:00:01"))
        do {
            #expect(scenario.summary(at: LockoutClock.time("16:00:01")) == "locked until 16:10:00.000, wait 10 minutes (2 failures)")
        }
    }

    @Test("a tier and a back-off firing on the same failure are one lockout")
    func tierAndBackoffOneLockout() {
        let rule = LockoutPolicy.FactorRule(
            tiers: [.init(limit: 3, windowSeconds: 60)],
            backoff: .init(threshold: 3, initialWaitSeconds: 10, growth: .doubling, maximumWaitSeconds: 600),
            permanentAfterLockouts: 1)
        var scenario = LockoutScenario(Self.policy(password: rule))
        scenario.failRepeatedly(3, from: LockoutClock.origin)
        do {
            #expect(scenario.lockedUntil(at: LockoutClock.seconds(2)) == LockoutClock.seconds(60))
        }
    }

    @Test("the longest of several locks wins, and its wait is the one worded")
    func longestLockWins() {
        let rule = LockoutPolicy.FactorRule(
            tiers: [.init(limit: 3, windowSeconds: 60)],
            backoff: .init(threshold: 3, initialWaitSeconds: 600, growth: .linear, maximumWaitSeconds: 600))
        var scenario = LockoutScenario(Self.policy(password: rule))
        scenario.play([
            .fail("16:00:00", "allowed (1 failure)"),
            .fail("16:00:01", "allowed (2 failures)"),
            .fail("16:00:02", "locked until 16:10:02.000, wait 10 minutes (3 failures)")
        ])
    }

    @Test("a password rule's methods filter what counts")
    func methodsFilter() {
        let rule = LockoutPolicy.FactorRule(methods: [.password, .biometric], consecutiveLimit: 2)
        var scenario = LockoutScenario(Self.policy(password: rule))
        scenario.play([
            LockoutStep("16:00:00", .fail(.passcode, .invalidPasscode), "allowed (0 failures)"),
            LockoutStep("16:00:01", .fail(.apple, .invalidPassword), "allowed (0 failures)"),
            LockoutStep("16:00:02", .fail(.biometric, .biometricFailed), "allowed (1 failure)"),
            LockoutStep("16:00:03", .fail(.password, .unknownUser), "permanently locked (2 failures)")
        ])
    }

    @Test("a second-factor rule's methods are not silently ignored")
    func secondFactorMethods() {
        // `methods` holds sign-in methods; no second-factor failure (totp, sms, …) has one of them.
        let json = #"{"name": "x", "second_factor": {"methods": ["passcode"], "consecutive_limit": 1}}"#
        #expect(throws: LockoutPolicyError.self) { try LockoutPolicy.parse(json: json) }
        do {
            _ = try LockoutPolicy.parse(json: json)
        } catch {
            #expect(error.description.hasPrefix("policy.second_factor: unknown key \"methods\""))
        }
    }

    @Test("clearing scope none: the event changes nothing", arguments: [EventType.signInSucceeded, .passwordChanged, .lockoutCleared, .passcodeResetCompleted])
    func scopeNone(event: EventType) {
        let none = LockoutPolicy.Clearing(signInSucceeded: .none, passwordChanged: .none, lockoutCleared: .none, passcodeResetCompleted: .none)
        var scenario = LockoutScenario(Self.policy(password: .init(tiers: [.init(limit: 2, windowSeconds: 60)]), clearing: none))
        scenario.fail(at: LockoutClock.seconds(0))
        scenario.fail(at: LockoutClock.seconds(1))
        let before = scenario.engine.keys
        scenario.clear(event, at: LockoutClock.seconds(2))
        #expect(scenario.engine.keys == before)
        #expect(scenario.lockedUntil(at: LockoutClock.seconds(2)) == LockoutClock.seconds(60))
        #expect(none.permanentClearedBy.isEmpty)
    }

    @Test("clearing scope counters on a permanent lock keeps the lock and its failure count")
    func countersKeepPermanent() {
        let counters = LockoutPolicy.Clearing(
            signInSucceeded: .counters, passwordChanged: .counters, lockoutCleared: .counters,
            passcodeResetCompleted: .counters)
        var scenario = LockoutScenario(Self.policy(password: .init(consecutiveLimit: 3), clearing: counters))
        scenario.failRepeatedly(3, from: LockoutClock.origin)
        scenario.clear(.lockoutCleared, at: LockoutClock.seconds(10))
        #expect(scenario.summary(at: LockoutClock.seconds(10)) == "permanently locked (3 failures)")
        #expect(
            scenario.decide(at: LockoutClock.seconds(10)).message
                == "Your account is locked after too many failed attempts. Contact your administrator to unlock it.")
    }
}

extension LockoutCustomPolicyTests {
    @Test("doubling waits never shrink as the streak grows, even past 2^63 milliseconds")
    func doublingNeverShrinks() {
        let backoff = LockoutPolicy.Backoff(threshold: 1, initialWaitSeconds: 86_400, growth: .doubling, maximumWaitSeconds: 31_622_400)
        var scenario = LockoutScenario(Self.policy(password: .init(backoff: backoff)))
        var time = LockoutClock.origin
        var waits: [Int64] = []
        for _ in 0..<45 {
            if let until = scenario.lockedUntil(at: time) { time = until }
            scenario.fail(at: time)
            waits.append(scenario.lockedUntil(at: time).map { $0.millisecondsSince1970 - time.millisecondsSince1970 } ?? 0)
        }
        #expect(Array(waits.prefix(9)) == [1, 2, 4, 8, 16, 32, 64, 128, 256].map { Int64($0) * 86_400_000 })
        do {
            #expect(waits.dropFirst(9).allSatisfy { $0 == 31_622_400_000 }, "\(waits.map { $0 / 86_400_000 })")
        }
    }
}
