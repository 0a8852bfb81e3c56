import Testing
import OnboardingModel
@testable import OnboardingProjections

/// The `keycloak` preset: Keycloak's brute-force detection defaults.
@Suite("Lockout: keycloak preset")
struct LockoutKeycloakTests {
    @Test("parameters are Keycloak's defaults, for both factors; permanent lockout off")
    func parameters() {
        let policy = LockoutPolicy.keycloak
        for rule in [policy.password, policy.secondFactor] {
            #expect(
                rule.backoff
                    == .init(
                        threshold: 30, initialWaitSeconds: 60, growth: .linear, maximumWaitSeconds: 900,
                        resetAfterSeconds: 43_200, quickLoginMilliseconds: 1000, quickLoginWaitSeconds: 60))
            #expect(rule.tiers.isEmpty && rule.methods == nil && rule.consecutiveLimit == nil && rule.permanentAfterLockouts == nil)
        }
        #expect(
            policy.clearing
                == .init(
                    signInSucceeded: .counters, passwordChanged: .counters, lockoutCleared: .all,
                    passcodeResetCompleted: .counters))
    }

    /// 29 failures one second apart, 16:00:00 … 16:00:28.
    static func twentyNine() -> LockoutScenario {
        var scenario = LockoutScenario(.keycloak)
        for second in 0..<29 { scenario.fail(at: LockoutClock.seconds(Double(second))) }
        return scenario
    }

    @Test("worked timeline: the 30th failure waits 1 minute, so does every one up to the 59th, the 60th waits 2 minutes")
    func timeline() {
        var scenario = Self.twentyNine()
        #expect(scenario.summary(at: LockoutClock.time("16:00:28")) == "allowed (29 failures)")
        scenario.play([
            .fail("16:00:29", "locked until 16:01:29.000, wait 1 minute (30 failures)"),
            LockoutStep("16:01:00", .throttled, "locked until 16:01:29.000, wait 1 minute (30 failures)"),
            .fail("16:01:10", "locked until 16:01:29.000, wait 1 minute (30 failures)"),
            .check("16:01:28.999", "locked until 16:01:29.000, wait 1 minute (30 failures)"),
            .check("16:01:29", "allowed (30 failures)"),
            .fail("16:01:29", "locked until 16:02:29.000, wait 1 minute (31 failures)")
        ])
        // Failures 32 … 59, each as soon as the previous lock ends, wait a minute each.
        for failure in 32...59 {
            let time = LockoutClock.seconds(29 + Double(failure - 30) * 60)
            scenario.fail(at: time)
            #expect(scenario.lockedUntil(at: time) == time.adding(milliseconds: 60_000), "failure \(failure)")
        }
        scenario.play([
            .fail("16:30:29", "locked until 16:32:29.000, wait 2 minutes (60 failures)"),
            .check("16:32:29", "allowed (60 failures)")
        ])
        #expect(
            scenario.decide(at: LockoutClock.time("16:30:29")).message
                == "You have made too many recent login attempts. Please wait 2 minutes before trying again.")
    }

    @Test("waits grow by a minute per 30 failures and stop at 15 minutes")
    func cappedAtFifteenMinutes() {
        var scenario = LockoutScenario(.keycloak)
        var time = LockoutClock.origin
        var waits: [Int: Int64] = [:]
        for failure in 1...1000 {
            if let until = scenario.lockedUntil(at: time) { time = until }
            scenario.fail(at: time)
            waits[failure] = scenario.lockedUntil(at: time).map { $0.millisecondsSince1970 - time.millisecondsSince1970 } ?? 0
            time = time.adding(milliseconds: 1000)
        }
        #expect(waits[29] == 0)
        #expect(waits[30] == 60_000)
        #expect(waits[59] == 60_000)
        #expect(waits[60] == 120_000)
        #expect(waits[89] == 120_000)
        #expect(waits[90] == 180_000)
        #expect(waits[449] == 840_000)
        #expect(waits[450] == 900_000)
        #expect(waits[480] == 900_000, "16 minutes is capped at 15")
        #expect(waits[1000] == 900_000)
        for failure in 30...1000 {
            #expect(waits[failure] == min(60_000 * Int64(failure / 30), 900_000), "failure \(failure)")
        }
        #expect(
            scenario.decide(at: time.adding(milliseconds: -1000)).message
                == "You have made too many recent login attempts. Please wait 15 minutes before trying again.")
    }

    @Test("worked timeline: two failures less than a second apart lock for a minute (quick-login check)")
    func quickLogin() {
        var scenario = LockoutScenario(.keycloak)
        scenario.play([
            .fail("16:00:00.000", "allowed (1 failure)"),
            .fail("16:00:01.000", "allowed (2 failures)"),
            .fail("16:00:01.999", "locked until 16:01:01.999, wait 1 minute (3 failures)"),
            .check("16:01:01.998", "locked until 16:01:01.999, wait 1 minute (3 failures)"),
            .check("16:01:01.999", "allowed (3 failures)"),
            .fail("16:01:02.999", "allowed (4 failures)")
        ])
        if case .locked(let lock) = scenario.decide(at: LockoutClock.time("16:00:01.999")) {
            #expect(lock.reason == .quickLogin)
        } else {
            Issue.record("not locked")
        }
        // Failures at the same millisecond are quick too.
        var same = LockoutScenario(.keycloak)
        same.fail(at: LockoutClock.origin)
        same.fail(at: LockoutClock.origin)
        #expect(same.lockedUntil(at: LockoutClock.origin) == LockoutClock.seconds(60))
    }

    @Test("the failure streak restarts after 12 hours without failures (more than 12 h, as Keycloak's max delta)")
    func resetAfterTwelveHours() {
        // 12 h and 1 ms after the 29th failure: the streak restarted, the 30th failure does not lock.
        var later = Self.twentyNine()
        later.play([.fail("2026-11-30T04:00:28.001Z", "allowed (1 failure)")])
        // It takes 29 more (30 in the new streak) to lock again.
        var time = LockoutClock.time("2026-11-30T04:00:28.001Z")
        for _ in 0..<28 {
            time = time.adding(milliseconds: 1000)
            later.fail(at: time)
            #expect(later.decide(at: time).isAllowed)
        }
        #expect(time == LockoutClock.time("2026-11-30T04:00:56.001Z"))
        later.play([.fail("2026-11-30T04:00:57.001Z", "locked until 2026-11-30T04:01:57.001Z, wait 1 minute (30 failures)")])

        // Exactly 12 h after the 29th failure the streak is still running: the 30th locks.
        var exactly = Self.twentyNine()
        exactly.play([.fail("2026-11-30T04:00:28.000Z", "locked until 2026-11-30T04:01:28.000Z, wait 1 minute (30 failures)")])
    }

    @Test("the reported failure count restarts with the streak after 12 hours (doc comment: “the count restarts”)")
    func reportedCountRestarts() {
        var scenario = Self.twentyNine()
        let time = LockoutClock.time("2026-11-30T04:00:28.001Z")
        scenario.fail(at: time)
        do {
            #expect(scenario.decide(at: time) == .allowed(failures: 1))
            #expect(scenario.engine.entries(at: time).map(\.failures) == [1])
        }
    }

    @Test("a successful sign-in ends the streak: 29 + success + 29 never locks")
    func successClearsStreak() {
        var scenario = Self.twentyNine()
        scenario.succeed(at: LockoutClock.seconds(29))
        for second in 30..<59 { scenario.fail(at: LockoutClock.seconds(Double(second))) }
        #expect(scenario.decide(at: LockoutClock.seconds(58)) == .allowed(failures: 29))
        scenario.fail(at: LockoutClock.seconds(59))
        #expect(scenario.lockedUntil(at: LockoutClock.seconds(59)) == LockoutClock.seconds(119))
    }

    @Test("with permanent lockout on (permanentAfterLockouts), the lock is permanent and only lockout_cleared lifts it")
    func permanentLockout() {
        var policy = LockoutPolicy.keycloak
        policy.password.permanentAfterLockouts = 2
        var scenario = LockoutScenario(policy)
        let last = scenario.failRepeatedly(32, from: LockoutClock.origin, spacing: 1)
        guard case .permanentlyLocked(let lock) = scenario.decide(at: last) else {
            Issue.record("not permanent: \(scenario.summary(at: last))")
            return
        }
        #expect(lock.failures == 32, "two temporary lockouts (30th, 31st), the third is permanent")
        #expect(lock.clearedBy == [.lockoutCleared])
        #expect(lock.message == "Your account is locked after too many failed attempts. Contact your administrator to unlock it.")
        for event in [EventType.signInSucceeded, .passwordChanged, .passcodeResetCompleted] {
            scenario.clear(event, at: last)
            #expect(scenario.decide(at: last) == .permanentlyLocked(lock), "\(event.rawValue)")
        }
        scenario.clear(.lockoutCleared, at: last)
        #expect(scenario.decide(at: last) == .allowed(failures: 0))
    }
}
