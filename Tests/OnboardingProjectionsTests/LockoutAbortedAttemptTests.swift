import Foundation
import Testing
import OnboardingModel
@testable import OnboardingProjections

/// `sign_in_aborted` in the lockout (docs/lockout.md § By address, § fail2ban): abuse from an
/// address, counted as one failure by the keys by address only, never by a user's keys.
@Suite("Lockout: sign_in_aborted counts by address only")
struct LockoutAbortedAttemptTests {
    static let attacker = "203.0.113.9"

    /// `count` aborted attempts from `address`, `spacingMilliseconds` apart from 16:00:00.
    static func aborted(
        _ count: Int, into scenario: inout LockoutScenario, user: String?? = .some(nil), address: String? = attacker,
        spacingMilliseconds: Int64 = 1000, reason: SignInAbortReason = .closedBeforeAuthentication
    ) {
        for index in 0..<count {
            scenario.abort(
                at: LockoutClock.origin.adding(milliseconds: Int64(index) * spacingMilliseconds), reason: reason, user: user,
                address: address)
        }
    }

    @Test("fail2ban bans an address after 5 aborted attempts within 10 minutes, for 10 minutes from the 5th; 4 ban nothing")
    func fail2banBansAfterFive() {
        var four = LockoutScenario(.fail2ban)
        Self.aborted(4, into: &four, spacingMilliseconds: 60_000)
        let afterFour = LockoutClock.time("16:03:00")
        #expect(four.engine.decideByAddress(user: nil, address: Self.attacker, at: afterFour) == .allowed(failures: 4))
        #expect(four.engine.entries(at: afterFour).isEmpty, "no user key counts them")

        var five = LockoutScenario(.fail2ban)
        Self.aborted(5, into: &five, spacingMilliseconds: 60_000)
        let fifth = LockoutClock.time("16:04:00")
        guard case .locked(let lock) = five.engine.decideByAddress(user: nil, address: Self.attacker, at: fifth) else {
            Issue.record("5 aborted attempts in 4 minutes did not ban the address")
            return
        }
        #expect(lock.until == LockoutClock.time("16:14:00") && lock.failures == 5)
        // A sign-in from that address by anyone is refused; from another address it is not.
        let alice = five.engine.key(user: "alice", device: "phone-1", factor: .password)
        #expect(!five.engine.decide(alice, address: Self.attacker, at: fifth).isAllowed)
        #expect(five.engine.decide(alice, address: "198.51.100.4", at: fifth) == .allowed(failures: 0))
        #expect(five.engine.decideByAddress(user: nil, address: Self.attacker, at: LockoutClock.time("16:14:00")).isAllowed)
        #expect(
            five.engine.addressEntries(at: fifth) == [
                LockoutEngine.Entry(
                    key: LockoutKey(user: nil, device: Self.attacker, factor: .password), failures: 5, lockedUntil: lock.until,
                    permanent: false)
            ])
        #expect(five.engine.entries(at: fifth).isEmpty)
    }

    @Test("5 aborted attempts spread over more than 10 minutes ban nothing: each window counts its own")
    func fail2banWindowEnds() {
        var scenario = LockoutScenario(.fail2ban)
        // 16:00, 16:02:30, 16:05, 16:07:30 in the first window; 16:10 opens a new one.
        Self.aborted(5, into: &scenario, spacingMilliseconds: 150_000)
        #expect(scenario.engine.decideByAddress(user: nil, address: Self.attacker, at: LockoutClock.time("16:10:00")) == .allowed(failures: 5))
    }

    @Test("an aborted attempt while the address is banned is not counted and does not extend the ban")
    func refusedWhileBanned() {
        var scenario = LockoutScenario(.fail2ban)
        Self.aborted(5, into: &scenario)
        scenario.abort(at: LockoutClock.time("16:09:00"), reason: .tooManyFailures, user: "root", address: Self.attacker)
        guard case .locked(let lock) = scenario.engine.decideByAddress(user: nil, address: Self.attacker, at: LockoutClock.time("16:09:00"))
        else {
            Issue.record("the ban did not hold")
            return
        }
        #expect(lock.until == LockoutClock.time("16:10:04") && lock.failures == 5)
    }

    @Test("aborted and counted failures from one address add up toward fail2ban's 5")
    func mixedWithFailures() {
        var scenario = LockoutScenario(.fail2ban)
        Self.aborted(3, into: &scenario)
        scenario.fail(at: LockoutClock.time("16:01:00"), user: "alice", address: Self.attacker)
        #expect(scenario.engine.decideByAddress(user: nil, address: Self.attacker, at: LockoutClock.time("16:01:00")) == .allowed(failures: 4))
        scenario.abort(at: LockoutClock.time("16:02:00"), reason: .noIdentification, user: .some(nil), address: Self.attacker)
        #expect(!scenario.engine.decideByAddress(user: nil, address: Self.attacker, at: LockoutClock.time("16:02:00")).isAllowed)
    }

    @Test(
        "policies keyed by user alone keep exactly the state of the log without the aborted attempts",
        arguments: LockoutPolicy.presets.filter { $0.address == nil })
    func perUserPoliciesIgnoreThem(policy: LockoutPolicy) {
        var with = LockoutScenario(policy)
        var without = LockoutScenario(policy)
        for second in 0..<40 {
            let at = LockoutClock.seconds(Double(second) * 2)
            if second % 3 == 0 {
                with.fail(at: at, address: Self.attacker)
                without.fail(at: at, address: Self.attacker)
            }
            // Aborted attempts naming the scenario's user, naming nobody, with and without an address.
            with.abort(at: at.adding(milliseconds: 500), reason: .tooManyFailures, address: Self.attacker)
            with.abort(at: at.adding(milliseconds: 700), reason: .timeout, user: .some(nil))
        }
        let end = LockoutClock.seconds(100)
        #expect(with.engine.hasSameKeys(as: without.engine))
        #expect(with.engine.entries(at: end) == without.engine.entries(at: end))
        #expect(with.decide(at: end) == without.decide(at: end))
    }

    @Test("address_and_user (mediawiki) counts an aborted attempt only when it names a user, under that user's key by address")
    func addressAndUserNeedsAUser() {
        var anonymous = LockoutScenario(.mediawiki)
        Self.aborted(20, into: &anonymous, user: .some(nil))
        #expect(anonymous.engine.keyCount == 0, "no user: nobody to key it by")

        var named = LockoutScenario(.mediawiki)
        Self.aborted(5, into: &named, user: "root")
        let at = LockoutClock.time("16:00:04")
        #expect(named.engine.entries(at: at).isEmpty, "root's own key ignores them")
        #expect(
            named.engine.addressEntries(at: at) == [
                LockoutEngine.Entry(
                    key: LockoutKey(user: "root", device: Self.attacker, factor: .password), failures: 5,
                    lockedUntil: LockoutClock.time("16:05:00"), permanent: false)
            ])
        // root's attempts from that address are refused; alice's from it, and root's from elsewhere, are not.
        let root = named.engine.key(user: "root", device: "phone-1", factor: .password)
        let alice = named.engine.key(user: "alice", device: "phone-1", factor: .password)
        #expect(!named.engine.decide(root, address: Self.attacker, at: at).isAllowed)
        #expect(named.engine.decide(alice, address: Self.attacker, at: at) == .allowed(failures: 0))
        #expect(named.engine.decide(root, address: "198.51.100.4", at: at) == .allowed(failures: 0))
    }

    @Test(
        "an aborted attempt without a readable address counts nowhere",
        arguments: [nil, ClientAddress.erased] as [String?])
    func withoutAnAddress(address: String?) {
        for policy in LockoutPolicy.presets {
            var scenario = LockoutScenario(policy)
            Self.aborted(50, into: &scenario, user: "root", address: address)
            #expect(scenario.engine.keyCount == 0, "\(policy.name)")
        }
    }

    @Test("times at the ends of the range: far-past and far-future aborted attempts are keyed like any other")
    func extremeTimes() {
        var scenario = LockoutScenario(.fail2ban)
        for index in 0..<5 { scenario.abort(at: Timestamp.minimum.adding(milliseconds: Int64(index)), address: Self.attacker) }
        #expect(!scenario.engine.decideByAddress(user: nil, address: Self.attacker, at: Timestamp.minimum.adding(milliseconds: 4)).isAllowed)
        var late = LockoutScenario(.fail2ban)
        for index in 0..<5 { late.abort(at: Timestamp.maximum.adding(milliseconds: -Int64(index)), address: "2001:db8::1") }
        #expect(!late.engine.decideByAddress(user: nil, address: "2001:db8::1", at: Timestamp.maximum).isAllowed)
    }

    @Test("sign_in_aborted may change a key, so the server's per-user refold keeps it")
    func mayAffectKeys() {
        #expect(LockoutEngine.mayAffectKeys(.signInAborted))
        let event = Event(
            id: UUID(), device: "bastion-1", at: LockoutClock.origin, user: nil, flow: nil,
            payload: .signInAborted(reason: .bannerError, clientAddress: Self.attacker))
        #expect(
            LockoutInput(event)
                == LockoutInput(kind: .abortedAttempt, method: .password, user: nil, device: "bastion-1", at: LockoutClock.origin, address: Self.attacker))
    }
}
