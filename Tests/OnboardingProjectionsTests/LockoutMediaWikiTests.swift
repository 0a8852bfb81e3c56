import Testing
import OnboardingModel
@testable import OnboardingProjections

/// The `mediawiki` preset (the default): passwords 5 per 300 s and 150 per 48 h, second factors
/// 10 per 60 s and 20 per 600 s; the timelines are the ones of docs/lockout.md.
@Suite("Lockout: mediawiki preset")
struct LockoutMediaWikiTests {
    static let fiveMinutes = "You have made too many recent login attempts. Please wait 5 minutes before trying again."

    @Test("parameters are MediaWiki's")
    func parameters() {
        let policy = LockoutPolicy.mediawiki
        #expect(policy.password.tiers == [.init(limit: 5, windowSeconds: 300), .init(limit: 150, windowSeconds: 172_800)])
        #expect(policy.secondFactor.tiers == [.init(limit: 10, windowSeconds: 60), .init(limit: 20, windowSeconds: 600)])
        for rule in [policy.password, policy.secondFactor] {
            #expect(rule.methods == nil && rule.backoff == nil && rule.consecutiveLimit == nil && rule.permanentAfterLockouts == nil)
        }
        #expect(policy.clearing == .init(signInSucceeded: .all, passwordChanged: .all, lockoutCleared: .all, passcodeResetCompleted: .all))
    }

    @Test("worked timeline: five failures lock until the 5-minute window of the first ends")
    func passwordTimeline() {
        var scenario = LockoutScenario(.mediawiki)
        scenario.play([
            .fail("16:00:00", "allowed (1 failure)"),
            .fail("16:00:30", "allowed (2 failures)"),
            .fail("16:01:00", "allowed (3 failures)"),
            .fail("16:01:30", "allowed (4 failures)"),
            .fail("16:02:00", "locked until 16:05:00.000, wait 5 minutes (5 failures)"),
            LockoutStep("16:03:00", .throttled, "locked until 16:05:00.000, wait 5 minutes (5 failures)"),
            .fail("16:03:10", "locked until 16:05:00.000, wait 5 minutes (5 failures)"),
            .check("16:04:59.999", "locked until 16:05:00.000, wait 5 minutes (5 failures)"),
            .check("16:05:00.000", "allowed (5 failures)"),
            .fail("16:05:00.000", "allowed (6 failures)"),
            .fail("16:06:00", "allowed (7 failures)"),
            LockoutStep("16:07:00", .succeed(.password), "allowed (0 failures)")
        ])
    }

    @Test("the lock message is exactly the one of the design documents")
    func message() {
        var scenario = LockoutScenario(.mediawiki)
        for second in 0..<5 { scenario.fail(at: LockoutClock.seconds(Double(second))) }
        let decision = scenario.decide(at: LockoutClock.seconds(4))
        #expect(decision.message == Self.fiveMinutes)
        guard case .locked(let lock) = decision else { Issue.record("not locked"); return }
        #expect(lock.reason == .tier(index: 0, limit: 5, windowSeconds: 300))
        #expect(lock.durationMilliseconds == 300_000)
        #expect(lock.message == Self.fiveMinutes)
    }

    @Test("the window runs from the first counted failure, not the one that reached the limit")
    func windowFromFirstFailure() {
        var scenario = LockoutScenario(.mediawiki)
        scenario.play([
            .fail("16:00:00", "allowed (1 failure)"),
            .fail("16:04:58", "allowed (2 failures)"),
            .fail("16:04:58.500", "allowed (3 failures)"),
            .fail("16:04:59", "allowed (4 failures)"),
            .fail("16:04:59.500", "locked until 16:05:00.000, wait 5 minutes (5 failures)"),
            .check("16:05:00", "allowed (5 failures)")
        ])
        // A failure exactly at the window end opens a new window instead of reaching the limit.
        var edge = LockoutScenario(.mediawiki)
        edge.play([
            .fail("16:00:00", "allowed (1 failure)"),
            .fail("16:00:01", "allowed (2 failures)"),
            .fail("16:00:02", "allowed (3 failures)"),
            .fail("16:04:59.999", "allowed (4 failures)"),
            .fail("16:05:00.000", "allowed (5 failures)"),
            .fail("16:05:01", "allowed (6 failures)"),
            .fail("16:05:02", "allowed (7 failures)"),
            .fail("16:05:03", "allowed (8 failures)"),
            .fail("16:05:04", "locked until 16:10:00.000, wait 5 minutes (9 failures)")
        ])
    }

    @Test("150 failures in 48 hours lock for the rest of the 48 hours, worded “2 days”, even when 5 per 5 minutes never triggers")
    func fortyEightHourTier() {
        var scenario = LockoutScenario(.mediawiki)
        // Four failures in each 5-minute window: 16:00:00, :01, :02, :03, 16:05:00, …
        func time(_ index: Int) -> Timestamp { LockoutClock.seconds(Double(index / 4 * 300 + index % 4)) }
        for index in 0..<149 {
            scenario.fail(at: time(index))
            #expect(scenario.decide(at: time(index)) == .allowed(failures: index + 1), "failure \(index + 1)")
        }
        #expect(LockoutClock.label(time(148)) == "19:05:00.000")
        #expect(LockoutClock.label(time(149)) == "19:05:01.000")
        scenario.play([
            .fail("19:05:01", "locked until 2026-12-01T16:00:00.000Z, wait 2 days (150 failures)"),
            .fail("2026-11-30T12:00:00Z", "locked until 2026-12-01T16:00:00.000Z, wait 2 days (150 failures)"),
            .check("2026-12-01T15:59:59.999Z", "locked until 2026-12-01T16:00:00.000Z, wait 2 days (150 failures)"),
            .check("2026-12-01T16:00:00.000Z", "allowed (150 failures)")
        ])
        let decision = scenario.decide(at: time(149))
        // The message names the time left at the 150th failure, rounded up.
        #expect(decision.message == "You have made too many recent login attempts. Please wait 45 hours before trying again.")
        if case .locked(let lock) = decision {
            #expect(lock.reason == .tier(index: 1, limit: 150, windowSeconds: 172_800))
        } else {
            Issue.record("not locked: \(lockoutSummary(decision))")
        }
    }

    @Test("the 48-hour tier keeps counting across 5-minute locks")
    func tiersCountTogether() {
        var scenario = LockoutScenario(.mediawiki)
        // 30 rounds of 5 failures, each round at the end of the previous 5-minute lock: 150 counted.
        let last = scenario.failRepeatedly(150, from: LockoutClock.origin, spacing: 1)
        #expect(LockoutClock.label(last) == "18:25:04.000", "30 rounds of 5, 5 minutes apart")
        let decision = scenario.decide(at: last)
        guard case .locked(let lock) = decision else { Issue.record("not locked"); return }
        #expect(lock.until == LockoutClock.time("2026-12-01T16:00:00Z"))
        #expect(lock.durationMilliseconds == 172_800_000)
        #expect(lock.failures == 150)
    }

    @Test("second factor: 10 per minute, worded “1 minute”; 20 per 10 minutes, worded “10 minutes”")
    func secondFactorTiers() {
        var perMinute = LockoutScenario(.mediawiki)
        var steps = (0..<9).map { LockoutStep(String(format: "16:00:%02d", $0), .failSecondFactor, "allowed (\($0 + 1) failure\($0 == 0 ? "" : "s"))") }
        steps += [
            LockoutStep("16:00:09", .failSecondFactor, "locked until 16:01:00.000, wait 1 minute (10 failures)"),
            .check("16:00:59.999", "locked until 16:01:00.000, wait 1 minute (10 failures)"),
            .check("16:01:00", "allowed (10 failures)")
        ]
        perMinute.play(steps, factor: .secondFactor)
        #expect(
            perMinute.decide(at: LockoutClock.time("16:00:09"), .secondFactor).message
                == "You have made too many recent login attempts. Please wait 51 seconds before trying again.")
        #expect(perMinute.decide(at: LockoutClock.time("16:00:09")) == .allowed(failures: 0), "the password factor is apart")

        // Nine a minute never reaches 10 per minute; the 20th within 10 minutes locks.
        var perTenMinutes = LockoutScenario(.mediawiki)
        var times: [String] = []
        for minute in 0..<3 { for second in 0..<9 { times.append(String(format: "16:%02d:%02d", minute, second)) } }
        for (index, time) in times.prefix(19).enumerated() {
            perTenMinutes.failSecondFactor(at: LockoutClock.time(time))
            #expect(perTenMinutes.decide(at: LockoutClock.time(time), .secondFactor) == .allowed(failures: index + 1))
        }
        perTenMinutes.play(
            [
                LockoutStep("16:02:01", .failSecondFactor, "locked until 16:10:00.000, wait 10 minutes (20 failures)"),
                .check("16:09:59.999", "locked until 16:10:00.000, wait 10 minutes (20 failures)"),
                .check("16:10:00", "allowed (20 failures)")
            ], factor: .secondFactor)
        #expect(
            perTenMinutes.decide(at: LockoutClock.time("16:02:01"), .secondFactor).message
                == "You have made too many recent login attempts. Please wait 8 minutes before trying again.")
    }

    @Test(
        "sign_in_succeeded on that device clears both factors there; password_changed and lockout_cleared everywhere",
        arguments: [EventType.signInSucceeded, .passwordChanged, .lockoutCleared, .passcodeResetCompleted])
    func clearing(event: EventType) {
        var scenario = LockoutScenario(.mediawiki)
        for second in 0..<10 {
            let time = LockoutClock.seconds(Double(second))
            scenario.fail(at: time)
            scenario.failSecondFactor(at: time)
            scenario.fail(at: time, device: "tablet-2")
        }
        let time = LockoutClock.seconds(10)
        #expect(!scenario.decide(at: time).isAllowed && !scenario.decide(at: time, .secondFactor).isAllowed)
        scenario.clear(event, at: time)
        #expect(scenario.decide(at: time) == .allowed(failures: 0))
        #expect(scenario.decide(at: time, .secondFactor) == .allowed(failures: 0))
        let everywhere = event == .passwordChanged || event == .lockoutCleared
        #expect(scenario.decide(at: time, device: "tablet-2").isAllowed == everywhere)
    }

    @Test("worked timeline: the device clock goes back an hour while locked")
    func clockBackwardsTimeline() {
        var scenario = LockoutScenario(.mediawiki)
        scenario.play([
            .fail("16:00:00", "allowed (1 failure)"),
            .fail("16:00:10", "allowed (2 failures)"),
            .fail("16:00:20", "allowed (3 failures)"),
            .fail("16:00:30", "allowed (4 failures)"),
            .fail("16:00:40", "locked until 16:05:00.000, wait 5 minutes (5 failures)"),
            .fail("15:01:00", "locked until 16:05:00.000, wait 5 minutes (5 failures)"),
            .check("16:04:59.999", "locked until 16:05:00.000, wait 5 minutes (5 failures)"),
            .check("16:05:00", "allowed (5 failures)")
        ])
    }

    @Test("attempts on unknown accounts lock the (nobody, device) key with the same message")
    func unknownUser() {
        var scenario = LockoutScenario(.mediawiki)
        scenario.user = nil
        for second in 0..<5 { scenario.fail(at: LockoutClock.seconds(Double(second)), reason: .unknownUser) }
        #expect(scenario.decide(at: LockoutClock.seconds(4)).message == Self.fiveMinutes)
        #expect(scenario.key().description == "(unknown user)@phone-1/password")
    }
}
