import Foundation
import Testing
@testable import OnboardingModel
@testable import OnboardingProjections

/// For random logs under every preset and random times, the lock the session shows is the
/// lockout engine's decision at that time, its message names that lock's time left (rounded up,
/// checked here from the sentence's own number), nothing that has passed shows as pending, and
/// the state stays the same until its announced next change. In the fast set.
@Suite("Session property: the screen follows the clock")
struct SessionTimePropertyTests {
    static let device = "phone-1"
    static let users = ["ann", "bob"]

    /// A random log of one device whose app behaves as the store asks: it records
    /// `sign_in_throttled` only while the engine refuses, with the engine's end of the lock.
    struct Log {
        var rng: SplitMix64
        var now = Timestamp(millisecondsSince1970: 1_796_054_400_000)
        var state: OnboardingState
        var seq: UInt64 = 0
        let policy: LockoutPolicy

        init(seed: UInt64, policy: LockoutPolicy) {
            rng = SplitMix64(seed: seed)
            state = OnboardingState(policy: policy)
            self.policy = policy
        }

        mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &rng) }

        mutating func step() -> Record {
            // Mostly seconds apart, sometimes minutes, now and then hours: locks start and end.
            let gaps = [int(0...8_000), int(0...400_000), int(0...10_000_000)]
            let pick = int(0...49)
            now = now.adding(milliseconds: Int64(gaps[pick < 45 ? 0 : pick < 49 ? 1 : 2]))
            let user = SessionTimePropertyTests.users[int(0...1)]
            let lock = SessionProjection.lockInForce(user: user, device: SessionTimePropertyTests.device, at: now, lockout: state.lockout)
            let payload: Payload
            // Failures most, clearing events rarely, so that locks build up and end by themselves.
            let method: SignInMethod = policy.name == "local_passcode" ? .passcode : .password
            switch int(0...39) {
            case 0...14:
                let reason: SignInFailureReason = [.invalidPassword, .invalidPasscode, .unknownUser, .biometricFailed, .networkUnavailable][int(0...4)]
                payload = .signInFailed(method: method, reason: reason)
            case 15...20: payload = .secondFactorFailed(method: .totp)
            case 21...23: payload = .signInStarted(method: method)
            case 24, 25: payload = .secondFactorRequired(method: .totp)
            case 26...29: payload = .fieldEdited(field: [.password, .email, .secondFactorCode][int(0...2)], filled: int(0...1) == 1, valid: nil)
            case 30: payload = int(0...3) == 0 ? .signInSucceeded(method: method, secondFactor: false) : .lockoutCleared(reason: .admin)
            case 31, 32: payload = int(0...1) == 0 ? .temporaryPasswordSent : .passwordResetRequested(route: .email)
            default:
                if case .locked(let engineLock) = lock {
                    payload = .signInThrottled(method: method, retryAfter: engineLock.until)
                } else {
                    payload = .signInStarted(method: method)
                }
            }
            seq += 1
            let event = Event(
                id: UUID(), device: SessionTimePropertyTests.device, at: now, user: user, flow: FlowID.make(int(1...2)), payload: payload)
            let record = Record(seq: seq, event: event, previousHash: .zero, hash: .zero)
            state.apply(record)
            return record
        }
    }

    /// What is wrong with the session shown at `time`, or `nil`.
    static func problem(_ state: OnboardingState, at time: Timestamp) -> String? {
        let stored = state.session.session(device: device)
        let shown = stored.at(time, lockout: state.lockout)
        let flow = shown.flow
        if let until = flow.lockedUntil, until <= time { return "locked_until \(until.iso8601) shown as pending" }
        if let resend = flow.resend, resend.isAvailable != (resend.availableAt <= time) {
            return "resend at \(resend.availableAt.iso8601) available: \(resend.isAvailable)"
        }
        if stored.flow.screen == .lockedOut {
            // The engine's decisions for the flow's user, both factors, read here one by one.
            let decisions = LockoutFactor.allCases.map { state.lockout.decide(state.lockout.key(user: flow.user, device: device, factor: $0), at: time) }
            let permanent = decisions.first { if case .permanentlyLocked = $0 { true } else { false } }
            let temporary = decisions.compactMap { if case .locked(let lock) = $0 { lock } else { nil } }.max { $0.until < $1.until }
            if let permanent {
                guard flow.screen == .lockedOut, flow.lockedUntil == nil, flow.systemMessage?.text == permanent.message else {
                    return "the engine's permanent lock shows as \(flow.screen.rawValue), \(String(describing: flow.systemMessage))"
                }
            } else if let lock = temporary {
                guard flow.screen == .lockedOut, flow.lockedUntil == lock.until else {
                    return "the engine locks until \(lock.until.iso8601); the screen shows \(flow.screen.rawValue) until \(flow.lockedUntil?.iso8601 ?? "-")"
                }
                if let wrong = messageProblem(flow.systemMessage?.text, remaining: lock.until.millisecondsSince1970 - time.millisecondsSince1970) {
                    return wrong
                }
            } else {
                guard flow.screen != .lockedOut, flow.lockedUntil == nil, flow.systemMessage == nil, flow.state != .error else {
                    return "no lock at \(time.iso8601), yet the screen shows \(flow.screen.rawValue) (\(flow.state.rawValue))"
                }
                if flow.submitEnabled != SessionCellPropertyTests.expectedSubmit(flow) { return "submit_enabled \(flow.submitEnabled) after the lock" }
            }
        }
        // Nothing changes before the announced next change, and something does at it.
        if let next = shown.nextChange(after: time) {
            if next <= time { return "next change \(next.iso8601) is not after \(time.iso8601)" }
            if stored.at(next.adding(milliseconds: -1), lockout: state.lockout) != shown { return "changed before the next change \(next.iso8601)" }
            if stored.at(next, lockout: state.lockout) == shown { return "nothing changed at the next change \(next.iso8601)" }
        } else if stored.at(time.adding(milliseconds: 30 * 86_400_000), lockout: state.lockout) != shown {
            return "no next change announced, yet the screen changes within 30 days"
        }
        return nil
    }

    /// The lock sentence with its own number read back: the unit is seconds exactly when under
    /// 90 s left, minutes up to 2 hours, hours beyond, and the count is the time left rounded up.
    static func messageProblem(_ text: String?, remaining: Int64) -> String? {
        let prefix = "You have made too many recent login attempts. Please wait "
        guard let text, text.hasPrefix(prefix), text.hasSuffix(" before trying again.") else { return "not the lock sentence: \(text ?? "nil")" }
        let words = text.dropFirst(prefix.count).dropLast(" before trying again.".count).split(separator: " ")
        guard words.count == 2, let count = Int64(words[0]) else { return "no count in \(text)" }
        let unit: Int64
        switch words[1] {
        case "second", "seconds": unit = 1_000
        case "minute", "minutes": unit = 60_000
        case "hour", "hours": unit = 3_600_000
        default: return "unknown unit in \(text)"
        }
        if (words[1].hasSuffix("s")) != (count != 1) { return "plural does not match the count: \(text)" }
        let expectedUnit: Int64 = remaining < 90_000 ? 1_000 : remaining <= 7_200_000 ? 60_000 : 3_600_000
        guard unit == expectedUnit, count * unit >= remaining, (count - 1) * unit < remaining else {
            return "\(text) for \(remaining) ms left"
        }
        return nil
    }

    @Test("random logs, every preset, random times: the screen's lock is the engine's, its message the time left", arguments: LockoutPolicy.presets)
    func screenFollowsTheClock(policy: LockoutPolicy) {
        let seed =
            ProcessInfo.processInfo.environment["ONBOARDING_TEST_SEED"].flatMap { UInt64($0) } ?? 0x7_1AE_C10C &+ UInt64(policy.name.utf8.count)
        var lockScreens = 0
        var ended = 0
        for round in 0..<30 {
            var log = Log(seed: seed &+ UInt64(round), policy: policy)
            for _ in 0..<80 {
                let record = log.step()
                // At the event, at its lock's boundaries, and at random times up to 3 hours on.
                let stored = log.state.session.session(device: Self.device).flow
                var times = [record.event.at]
                if let until = stored.lockedUntil { times += [until.adding(milliseconds: -1), until, until.adding(milliseconds: 1)] }
                for _ in 0..<3 { times.append(record.event.at.adding(milliseconds: Int64(log.int(0...10_800_000)))) }
                for time in times where time >= record.event.at {
                    if let problem = Self.problem(log.state, at: time) {
                        Issue.record(
                            "seed \(seed &+ UInt64(round)) (\(policy.name)), seq \(record.seq) \(record.event.type.rawValue), at \(time.iso8601): \(problem)")
                        return
                    }
                    if stored.screen == .lockedOut {
                        let shown = log.state.session.session(device: Self.device, at: time, lockout: log.state.lockout).flow
                        if shown.screen == .lockedOut { lockScreens += 1 } else { ended += 1 }
                    }
                }
            }
        }
        // Not vacuous: locks were shown, and seen to end, under every preset whose per-user
        // rules 80 events can reach (nist needs 100 failures in a row; fail2ban counts by address).
        // local_passcode's locks are permanent: they never end by themselves.
        if !["nist", "fail2ban"].contains(policy.name) { #expect(lockScreens > 20, "\(lockScreens) lock screens") }
        if !["nist", "fail2ban", "local_passcode"].contains(policy.name) { #expect(ended > 5, "\(ended) ended locks") }
    }
}
