import Foundation
import Testing
import OnboardingModel
@testable import OnboardingProjections

/// The rules every preset follows (docs/lockout.md § Decisions, "The rules every policy
/// follows"), checked on each of them. The preset-specific
/// numbers and messages are in the Lockout<Preset>Tests files.
@Suite("Lockout: rules every preset follows")
struct LockoutPresetTests {
    static let profiles = LockoutPresetProfile.all

    @Test("the presets are the five of docs/lockout.md and fail2ban, found by name")
    func presetNames() {
        #expect(LockoutPolicy.presets.map(\.name) == ["mediawiki", "keycloak", "owasp", "nist", "local_passcode", "fail2ban"])
        for preset in LockoutPolicy.presets { #expect(LockoutPolicy.named(preset.name) == preset) }
        #expect(LockoutPolicy.named("MediaWiki") == nil)
        #expect(LockoutPolicy.named("") == nil)
        #expect(LockoutEngine().policy == .mediawiki, "mediawiki is the default")
    }

    // MARK: Boundaries

    @Test("limit − 1 counted failures: still allowed", arguments: profiles)
    func limitMinusOne(profile: LockoutPresetProfile) {
        let scenario = profile.scenario(failures: profile.limit - 1)
        let last = profile.time(ofFailure: max(0, profile.limit - 2))
        #expect(scenario.decide(at: last) == .allowed(failures: profile.limit - 1))
        #expect(scenario.decide(at: last.adding(milliseconds: 1)) == .allowed(failures: profile.limit - 1))
    }

    @Test("limit counted failures: locked, until the documented end or permanently", arguments: profiles)
    func atLimit(profile: LockoutPresetProfile) {
        let (scenario, last) = profile.locked()
        let decision = scenario.decide(at: last)
        #expect(profile.isFirstLock(decision), "\(lockoutSummary(decision))")
        #expect(!decision.isAllowed)
        #expect(decision.message?.isEmpty == false)
    }

    @Test("limit + 1: a failure while locked is not counted and does not extend the lock", arguments: profiles)
    func limitPlusOneWhileLocked(profile: LockoutPresetProfile) {
        var (scenario, last) = profile.locked()
        let before = scenario.engine
        let during = last.adding(milliseconds: 1)
        scenario.fail(at: during)
        scenario.throttled(at: during)
        #expect(scenario.engine.keys == before.keys, "nothing changed but the seq")
        #expect(profile.isFirstLock(scenario.decide(at: during)))
        #expect(scenario.engine.entries(at: during).map(\.failures) == [profile.limit])
    }

    @Test("limit + 1 after a temporary lock ended: counted again", arguments: profiles.filter { $0.firstLockEnds != nil })
    func limitPlusOneAfterTheLock(profile: LockoutPresetProfile) throws {
        var (scenario, _) = profile.locked()
        let end = LockoutClock.seconds(try #require(profile.firstLockEnds))
        scenario.fail(at: end)
        #expect(scenario.engine.entries(at: end).map(\.failures) == [profile.limit + 1])
    }

    @Test(
        "a temporary lock is in force while T < end; at T == end the key is free",
        arguments: profiles.filter { $0.firstLockEnds != nil })
    func exactlyAtTheEnd(profile: LockoutPresetProfile) throws {
        let (scenario, last) = profile.locked()
        let end = LockoutClock.seconds(try #require(profile.firstLockEnds))
        #expect(scenario.lockedUntil(at: last) == end)
        #expect(scenario.lockedUntil(at: end.adding(milliseconds: -1)) == end)
        #expect(scenario.decide(at: end) == .allowed(failures: profile.limit))
        #expect(scenario.decide(at: end.adding(milliseconds: 1)) == .allowed(failures: profile.limit))
        #expect(scenario.engine.entries(at: end).first?.lockedUntil == nil)
        #expect(scenario.engine.entries(at: end.adding(milliseconds: -1)).first?.lockedUntil == end)
    }

    @Test("a permanent lock does not end with time", arguments: profiles.filter { $0.firstLockEnds == nil })
    func permanentDoesNotExpire(profile: LockoutPresetProfile) {
        var (scenario, last) = profile.locked()
        let years = last.adding(milliseconds: 5 * 366 * 86_400_000)
        #expect(profile.isFirstLock(scenario.decide(at: years)))
        scenario.fail(at: years)
        #expect(profile.isFirstLock(scenario.decide(at: years)), "failures while permanently locked are not counted")
        #expect(scenario.engine.entries(at: years).map(\.permanent) == [true])
    }

    // MARK: The device clock

    @Test("the device clock moving backwards never shortens a lock", arguments: profiles)
    func clockBackwards(profile: LockoutPresetProfile) {
        var (scenario, last) = profile.locked()
        let lockedAt = scenario.decide(at: last)
        // The clock jumps back an hour, then a day: failures and a throttled attempt at those times.
        for back in [Int64(3_600_000), 86_400_000] {
            let earlier = last.adding(milliseconds: -back)
            scenario.fail(at: earlier)
            scenario.throttled(at: earlier)
            // The same lock (its end, reason and count), though asked at another time.
            #expect(lockoutSummary(scenario.decide(at: earlier)) == lockoutSummary(lockedAt))
        }
        // The lock still ends exactly when it did (or never).
        #expect(scenario.decide(at: last) == lockedAt)
        if let end = profile.firstLockEnds {
            #expect(scenario.lockedUntil(at: LockoutClock.seconds(end).adding(milliseconds: -1)) == LockoutClock.seconds(end))
        }
    }

    @Test("failures with earlier times than the ones before still count towards the limit", arguments: profiles)
    func backwardsFailuresCount(profile: LockoutPresetProfile) {
        // The same number of failures as the limit, the clock going back one second each time.
        var scenario = LockoutScenario(profile.policy)
        let start = LockoutClock.seconds(3600)
        for index in 0..<profile.limit {
            scenario.fail(at: start.adding(milliseconds: Int64(-1000 * index)))
            if index < profile.limit - 1 {
                // Keycloak's quick-login check must not fire on a clock going back.
                #expect(scenario.decide(at: start) == .allowed(failures: index + 1))
            }
        }
        #expect(!scenario.decide(at: start).isAllowed)
    }

    // MARK: What counts

    @Test("attempts on an account nobody could name (user nil, unknown_user) count", arguments: profiles)
    func unknownUsersCount(profile: LockoutPresetProfile) {
        var scenario = LockoutScenario(profile.policy)
        for index in 0..<profile.limit { scenario.fail(at: profile.time(ofFailure: index), reason: .unknownUser, user: .some(nil)) }
        let last = profile.time(ofFailure: profile.limit - 1)
        #expect(profile.isFirstLock(scenario.decide(at: last, user: .some(nil))))
        #expect(scenario.decide(at: last) == .allowed(failures: 0), "alice is a different key")
        #expect(scenario.engine.entries(at: last).map(\.key) == [LockoutKey(user: nil, device: "phone-1", factor: .password)])
    }

    @Test(
        "every counted reason counts: invalid_password, invalid_passcode, unknown_user, biometric_failed",
        arguments: profiles)
    func countedReasons(profile: LockoutPresetProfile) {
        let reasons: [SignInFailureReason] = [.invalidPassword, .invalidPasscode, .unknownUser, .biometricFailed]
        for reason in reasons {
            var scenario = LockoutScenario(profile.policy)
            scenario.fail(at: LockoutClock.origin, reason: reason)
            #expect(scenario.engine.entries(at: LockoutClock.origin).map(\.failures) == [1], "\(reason)")
        }
    }

    @Test(
        "network_unavailable, server_error and cancelled are recorded but never counted",
        arguments: profiles, [SignInFailureReason.networkUnavailable, .serverError, .cancelled])
    func neverCounted(profile: LockoutPresetProfile, reason: SignInFailureReason) {
        var scenario = LockoutScenario(profile.policy)
        for method in SignInMethod.allCases {
            for index in 0..<(profile.limit * 2) {
                scenario.fail(at: profile.time(ofFailure: index), method: method, reason: reason)
            }
        }
        #expect(scenario.records.count == SignInMethod.allCases.count * profile.limit * 2)
        #expect(scenario.decide(at: profile.time(ofFailure: profile.limit * 2)) == .allowed(failures: 0))
        #expect(scenario.engine.keyCount == 0)
        #expect(scenario.engine.entries(at: LockoutClock.origin).isEmpty)
    }

    @Test("events that are not failures or clearing events change nothing", arguments: profiles)
    func otherEventsIgnored(profile: LockoutPresetProfile) {
        var (scenario, last) = profile.locked()
        let before = scenario.engine.keys
        let others: [Payload] = [
            .signInStarted(method: .password), .signInThrottled(method: .password, retryAfter: last),
            .secondFactorRequired(method: .totp), .secondFactorSucceeded(method: .totp), .signedOut(reason: .user),
            .captchaFailed, .passwordResetRequested(route: .email), .temporaryPasswordSent, .passcodeResetStarted,
            .passcodeSet, .passcodeChanged, .userSelected, .userRemoved(reason: .admin), .accountCreated
        ]
        for payload in others { scenario.record(payload, at: last) }
        #expect(scenario.engine.keys == before)
        #expect(scenario.engine.seq == UInt64(scenario.records.count))
    }

    // MARK: Factors

    @Test("second_factor is counted and locked separately from password", arguments: profiles)
    func factorsAreSeparate(profile: LockoutPresetProfile) {
        var (scenario, last) = profile.locked()
        #expect(scenario.decide(at: last, .secondFactor) == .allowed(failures: 0), "a locked password leaves 2FA alone")

        var twoFactor = LockoutScenario(profile.policy)
        let count = profile.secondFactorLimit ?? 50
        for index in 0..<count { twoFactor.failSecondFactor(at: profile.time(ofFailure: index)) }
        let end = profile.time(ofFailure: count - 1)
        #expect(twoFactor.decide(at: end) == .allowed(failures: 0), "2FA failures leave the password factor alone")
        switch (twoFactor.decide(at: end, .secondFactor), profile.secondFactorLockEnds) {
        case (.locked(let lock), let ends?) where profile.secondFactorLimit != nil:
            #expect(lock.until == LockoutClock.seconds(ends))
        case (.permanentlyLocked(let lock), nil) where profile.secondFactorLimit != nil:
            #expect(lock.failures == count)
        case (.allowed(let failures), nil) where profile.secondFactorLimit == nil:
            #expect(failures == count, "local_passcode counts 2FA failures but never locks on them")
        case (let decision, _):
            Issue.record("unexpected second-factor decision \(lockoutSummary(decision))")
        }
        scenario.failSecondFactor(at: last)
        #expect(
            scenario.engine.entries(at: last).map { "\($0.key.factor.rawValue) \($0.failures)" }
                == ["password \(profile.limit)", "second_factor 1"])
    }

    // MARK: Clearing

    @Test("sign_in_succeeded on that device clears the user's keys per the preset's scope", arguments: profiles)
    func successClears(profile: LockoutPresetProfile) {
        // Below the limit: any scope but none resets the count.
        var below = profile.scenario(failures: profile.limit - 1)
        let last = profile.time(ofFailure: max(0, profile.limit - 2))
        below.failSecondFactor(at: last)
        below.succeed(at: last)
        #expect(below.decide(at: last) == .allowed(failures: 0))
        #expect(below.decide(at: last, .secondFactor) == .allowed(failures: 0), "both factors")
        #expect(below.engine.keyCount == 0)
        // Another limit − 1 failures do not lock: the count really restarted.
        for index in 0..<(profile.limit - 1) { below.fail(at: last.adding(milliseconds: Int64(index + 1) * 1000)) }
        #expect(below.decide(at: last.adding(milliseconds: Int64(profile.limit) * 1000)) == .allowed(failures: profile.limit - 1))

        // At the limit: a temporary lock is cleared by `counters` and `all`; a permanent one only by `all`.
        var (locked, at) = profile.locked()
        locked.succeed(at: at)
        let expectCleared = profile.firstLockEnds != nil || profile.policy.clearing.signInSucceeded == .all
        #expect(locked.decide(at: at).isAllowed == expectCleared, "\(lockoutSummary(locked.decide(at: at)))")
    }

    @Test(
        "sign_in_succeeded and passcode_reset_completed touch only that device; password_changed and lockout_cleared every device",
        arguments: profiles, [EventType.signInSucceeded, .passcodeResetCompleted, .passwordChanged, .lockoutCleared])
    func clearingReach(profile: LockoutPresetProfile, event: EventType) {
        var scenario = LockoutScenario(profile.policy)
        // Below the limit, except OWASP's where one failure already locks for a second.
        let count = max(1, profile.limit - 1)
        for index in 0..<count {
            let time = profile.time(ofFailure: index)
            scenario.fail(at: time, device: "phone-1")
            scenario.fail(at: time, device: "tablet-2")
            scenario.fail(at: time, user: "bob", device: "phone-1")
            scenario.fail(at: time, reason: .unknownUser, user: .some(nil), device: "phone-1")
        }
        let time = profile.time(ofFailure: count - 1)
        scenario.clear(event, at: time, device: "phone-1")
        let scope =
            switch event {
            case .signInSucceeded: profile.policy.clearing.signInSucceeded
            case .passcodeResetCompleted: profile.policy.clearing.passcodeResetCompleted
            case .passwordChanged: profile.policy.clearing.passwordChanged
            default: profile.policy.clearing.lockoutCleared
            }
        #expect(scope != .none, "no preset has a clearing event that clears nothing")
        let everyDevice = event == .passwordChanged || event == .lockoutCleared
        let remaining = scenario.engine.entries(at: time).map(\.key.description)
        #expect(
            remaining
                == ["(unknown user)@phone-1/password", "alice@tablet-2/password", "bob@phone-1/password"]
                .filter { !(everyDevice && $0.hasPrefix("alice@")) }, "other users and, for \(event.rawValue), other devices untouched")
    }

    @Test(
        "password_changed clears a temporary lock on every device (scope counters or all)",
        arguments: profiles.filter { $0.firstLockEnds != nil })
    func passwordChangedClearsTemporaryLocks(profile: LockoutPresetProfile) {
        var (scenario, at) = profile.locked()
        for index in 0..<profile.limit { scenario.fail(at: profile.time(ofFailure: index), device: "tablet-2") }
        #expect(!scenario.decide(at: at, device: "tablet-2").isAllowed)
        scenario.clear(.passwordChanged, at: at)
        #expect(scenario.decide(at: at) == .allowed(failures: 0))
        #expect(scenario.decide(at: at, device: "tablet-2") == .allowed(failures: 0))
        #expect(scenario.engine.keyCount == 0)
    }

    @Test("lockout_cleared lifts every lock, permanent ones included, on every device", arguments: profiles)
    func lockoutClearedClearsAll(profile: LockoutPresetProfile) {
        #expect(profile.policy.clearing.lockoutCleared == .all)
        var (scenario, at) = profile.locked()
        for index in 0..<profile.limit { scenario.fail(at: profile.time(ofFailure: index), device: "tablet-2") }
        scenario.clear(.lockoutCleared, at: at, device: "admin-console")
        #expect(scenario.decide(at: at) == .allowed(failures: 0))
        #expect(scenario.decide(at: at, device: "tablet-2") == .allowed(failures: 0))
        #expect(scenario.engine.keyCount == 0)
        // The count restarts from zero: limit − 1 new failures do not lock.
        for index in 0..<(profile.limit - 1) { scenario.fail(at: at.adding(milliseconds: Int64(index + 1) * 1000)) }
        #expect(scenario.decide(at: at.adding(milliseconds: Int64(profile.limit) * 1000)).isAllowed)
    }

    // MARK: Permanent locks

    /// Presets whose first lock is permanent, plus Keycloak with its permanent lockout switched on.
    static let permanentProfiles: [LockoutPresetProfile] =
        profiles.filter { $0.firstLockEnds == nil } + [
            LockoutPresetProfile(policy: .owasp, limit: 4, spacing: 10, firstLockEnds: nil, secondFactorLimit: nil, secondFactorLockEnds: nil),
            {
                var policy = LockoutPolicy.keycloak
                policy.name = "keycloak-permanent"
                policy.password.permanentAfterLockouts = 0
                return LockoutPresetProfile(
                    policy: policy, limit: 30, spacing: 1, firstLockEnds: nil,
                    secondFactorLimit: nil, secondFactorLockEnds: nil)
            }()
        ]

    @Test(
        "a permanent lock is lifted only by the events whose scope is all",
        arguments: permanentProfiles, [EventType.signInSucceeded, .passwordChanged, .lockoutCleared, .passcodeResetCompleted])
    func permanentClearedOnlyByAll(profile: LockoutPresetProfile, event: EventType) {
        var (scenario, at) = profile.locked()
        guard case .permanentlyLocked(let lock) = scenario.decide(at: at) else {
            Issue.record("not permanently locked: \(lockoutSummary(scenario.decide(at: at)))")
            return
        }
        #expect(lock.clearedBy == profile.policy.clearing.permanentClearedBy)
        let lifts = lock.clearedBy.contains(event)
        let later = at.adding(milliseconds: 60_000)
        scenario.clear(event, at: later)
        if lifts {
            #expect(scenario.decide(at: later) == .allowed(failures: 0))
        } else {
            #expect(scenario.decide(at: later) == .permanentlyLocked(lock), "\(event.rawValue) must leave the lock in place")
            #expect(scenario.engine.entries(at: later).map(\.permanent) == [true])
            scenario.fail(at: later)
            #expect(scenario.decide(at: later) == .permanentlyLocked(lock), "and failures are still not counted")
        }
    }

    @Test("which events lift a permanent lock, per preset")
    func permanentClearedBy() {
        #expect(LockoutPolicy.mediawiki.clearing.permanentClearedBy == [.signInSucceeded, .passwordChanged, .lockoutCleared, .passcodeResetCompleted])
        #expect(LockoutPolicy.keycloak.clearing.permanentClearedBy == [.lockoutCleared])
        #expect(LockoutPolicy.owasp.clearing.permanentClearedBy == [.passwordChanged, .lockoutCleared])
        #expect(LockoutPolicy.nist.clearing.permanentClearedBy == [.passwordChanged, .lockoutCleared])
        #expect(LockoutPolicy.localPasscode.clearing.permanentClearedBy == [.lockoutCleared, .passcodeResetCompleted])
    }

    @Test("the three permanent-lock messages follow what lifts the lock")
    func permanentMessages() {
        func message(_ clearedBy: [EventType]) -> String {
            PermanentLock(since: LockoutClock.origin, clearedBy: clearedBy, failures: 1).message
        }
        #expect(
            message([.lockoutCleared, .passcodeResetCompleted])
                == "Your passcode is disabled after too many failed attempts. Use “Forgot Passcode?” to set a new one.")
        #expect(
            message([.passwordChanged, .lockoutCleared])
                == "Your account is locked after too many failed attempts. Reset your password to unlock it.")
        #expect(
            message([.lockoutCleared])
                == "Your account is locked after too many failed attempts. Contact your administrator to unlock it.")
    }

    // MARK: The server's view

    @Test("across devices, keys are (user, factor): failures on several devices add up", arguments: profiles)
    func acrossDevices(profile: LockoutPresetProfile) {
        var scenario = LockoutScenario(profile.policy, acrossDevices: true)
        for index in 0..<profile.limit {
            scenario.fail(at: profile.time(ofFailure: index), device: index.isMultiple(of: 2) ? "phone-1" : "tablet-2")
        }
        let last = profile.time(ofFailure: profile.limit - 1)
        #expect(profile.isFirstLock(scenario.decide(at: last, device: "laptop-3")), "the device does not matter")
        #expect(scenario.engine.entries(at: last).map(\.key) == [LockoutKey(user: "alice", device: nil, factor: .password)])
        // A success on any device clears the user's global key (per the preset's scope) …
        var succeeded = scenario
        succeeded.succeed(at: last, device: "laptop-3")
        #expect(
            succeeded.decide(at: last).isAllowed
                == (profile.firstLockEnds != nil || profile.policy.clearing.signInSucceeded == .all))
        // … and lockout_cleared always does.
        scenario.clear(.lockoutCleared, at: last, device: "admin-console")
        #expect(scenario.decide(at: last) == .allowed(failures: 0))
    }

    // MARK: Projection invariants

    @Test("a snapshot taken at any prefix and caught up equals the fold of the whole log", arguments: profiles)
    func snapshotsAndRebuild(profile: LockoutPresetProfile) throws {
        var scenario = profile.scenario(failures: profile.limit + 3)
        scenario.failSecondFactor(at: LockoutClock.seconds(30))
        scenario.fail(at: LockoutClock.seconds(31), reason: .unknownUser, user: .some(nil))
        scenario.succeed(at: LockoutClock.seconds(32), user: "bob")
        scenario.fail(at: LockoutClock.seconds(400), device: "tablet-2")
        scenario.clear(.passwordChanged, at: LockoutClock.seconds(500), user: "carol")
        let records = scenario.records
        for cut in [0, 1, records.count / 2, records.count - 1, records.count] {
            var first = LockoutEngine(policy: profile.policy)
            for record in records.prefix(cut) { first.apply(record) }
            var resumed = try LockoutEngine(snapshotBytes: first.snapshotBytes)
            #expect(resumed == first)
            for record in records.dropFirst(cut) { resumed.apply(record) }
            #expect(resumed == scenario.engine, "cut at \(cut)")
            #expect(resumed.seq == UInt64(records.count))
        }
    }
}
