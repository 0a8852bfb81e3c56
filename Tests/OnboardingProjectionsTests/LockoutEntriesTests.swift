import Testing
import OnboardingModel
@testable import OnboardingProjections

/// `LockoutEngine.entries(at:)`, what `onboard lockout --json` prints.
@Suite("Lockout: entries")
struct LockoutEntriesTests {
    @Test("every key with counted failures, sorted by user (nobody first), device, factor")
    func sorted() {
        var scenario = LockoutScenario(.mediawiki)
        let time = LockoutClock.origin
        scenario.failSecondFactor(at: time, user: "bob", device: "phone-1")
        scenario.fail(at: time, user: "bob", device: "phone-1")
        scenario.fail(at: time, user: "alice", device: "tablet-2")
        scenario.fail(at: time, user: "alice", device: "phone-1")
        scenario.fail(at: time, reason: .unknownUser, user: .some(nil), device: "phone-1")
        scenario.fail(at: time, reason: .networkUnavailable, user: "carol", device: "phone-1")
        #expect(
            scenario.engine.entries(at: time).map(\.key.description) == [
                "(unknown user)@phone-1/password", "alice@phone-1/password", "alice@tablet-2/password",
                "bob@phone-1/password", "bob@phone-1/second_factor"
            ])
        #expect(scenario.engine.keyCount == 5)
    }

    @Test("lockedUntil while a temporary lock is in force, nil from its end; failures stay")
    func temporary() {
        var scenario = LockoutScenario(.mediawiki)
        for second in 0..<5 { scenario.fail(at: LockoutClock.seconds(Double(second))) }
        let end = LockoutClock.time("16:05:00")
        let key = LockoutKey(user: "alice", device: "phone-1", factor: .password)
        #expect(
            scenario.engine.entries(at: end.adding(milliseconds: -1))
                == [.init(key: key, failures: 5, lockedUntil: end, permanent: false)])
        #expect(scenario.engine.entries(at: end) == [.init(key: key, failures: 5, lockedUntil: nil, permanent: false)])
        #expect(
            scenario.engine.entries(at: LockoutClock.seconds(-3600)).first?.lockedUntil == end,
            "asked before the lock began, the state built from the whole log is locked")
    }

    @Test("a permanent lock: permanent true, lockedUntil nil, at any time")
    func permanent() {
        var scenario = LockoutScenario(.localPasscode)
        scenario.failRepeatedly(10, from: LockoutClock.origin)
        let key = LockoutKey(user: "alice", device: "phone-1", factor: .password)
        for time in [LockoutClock.origin, LockoutClock.time("2030-01-01T00:00:00Z")] {
            #expect(scenario.engine.entries(at: time) == [.init(key: key, failures: 10, lockedUntil: nil, permanent: true)])
        }
    }

    @Test("an OWASP permanent lock hides the expired back-off lock")
    func permanentAfterBackoff() {
        var scenario = LockoutScenario(.owasp)
        let last = scenario.failRepeatedly(4, from: LockoutClock.origin)
        #expect(
            scenario.engine.entries(at: last).map { "\($0.failures) \($0.lockedUntil.map(\.iso8601) ?? "null") \($0.permanent)" }
                == ["4 null true"])
    }

    @Test("cleared keys disappear; a key kept by a counters scope stays listed")
    func clearedKeys() {
        var scenario = LockoutScenario(.nist)
        scenario.failRepeatedly(100, from: LockoutClock.origin)
        scenario.fail(at: LockoutClock.origin, device: "tablet-2")
        scenario.succeed(at: LockoutClock.seconds(200))
        scenario.succeed(at: LockoutClock.seconds(200), device: "tablet-2")
        #expect(scenario.engine.entries(at: LockoutClock.seconds(200)).map(\.key.description) == ["alice@phone-1/password"])
        scenario.clear(.passwordChanged, at: LockoutClock.seconds(300))
        #expect(scenario.engine.entries(at: LockoutClock.seconds(300)).isEmpty)
        #expect(scenario.engine.keyCount == 0)
    }
}
