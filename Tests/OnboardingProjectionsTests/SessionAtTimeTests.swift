import Foundation
import Testing
import OnboardingModel
@testable import OnboardingProjections

/// The session at a time (docs/projections.md § State at a time): a lock that has ended is gone,
/// a lock in force names the time left at the time asked, a resend timer that has ended is
/// available — with no event in between.
@Suite("Session at a time")
struct SessionAtTimeTests {
    static let device = "phone-1"
    static let seedSentence = "You have made too many recent login attempts. Please wait 5 minutes before trying again."

    /// Alice types her email and password and fails five times from 10:00:00: mediawiki locks her
    /// password until 10:05:00 (the 5-minute tier's window runs from the first failure).
    static func fiveFailures() -> FlowScript {
        var script = FlowScript(device: device)
        script.record(.fieldEdited(field: .email, filled: true, valid: nil), user: "alice", at: "09:59:50")
        script.record(.fieldEdited(field: .password, filled: true, valid: nil), user: "alice", at: "09:59:55")
        for second in 0..<5 {
            script.record(.signInStarted(method: .password, identifierKind: .email), user: "alice", at: "10:00:0\(second)")
            script.record(.signInFailed(method: .password, reason: .invalidPassword), user: "alice", at: "10:00:0\(second)")
        }
        return script
    }

    static func shown(_ script: FlowScript, at time: String) -> Flow {
        script.state.session.session(device: device, at: FlowTime.at(time), lockout: script.state.lockout).flow
    }

    @Test("an hour after five failed passwords the sign-in form is back, filled as it was, submit enabled")
    func lockEnded() {
        let script = Self.fiveFailures()
        let typed = [FieldInput(field: .email, filled: true), FieldInput(field: .password, filled: true)]
        #expect(
            Self.shown(script, at: "10:04:59.999")
                == Flow(
                    id: FlowID.make(1), user: "alice", screen: .lockedOut, state: .error,
                    systemMessage: Message("You have made too many recent login attempts. Please wait 1 second before trying again.", .error),
                    lockedUntil: FlowTime.at("10:05:00"), fields: typed, identifierKind: .email
                ).withUnlockScreen(.signIn))
        let back = Flow(id: FlowID.make(1), user: "alice", screen: .signIn, state: .partiallyFilled, fields: typed, identifierKind: .email)
        for time in ["10:05:00", "11:04:00"] {
            let flow = Self.shown(script, at: time)
            #expect(flow == back, "at \(time)")
            #expect(flow.submitEnabled, "at \(time)")
        }
        #expect(
            script.state.lockout.decide(script.state.lockout.key(user: "alice", device: Self.device, factor: .password), at: FlowTime.at("10:05:00")).isAllowed)
    }

    @Test(
        "the lock message names the time left: minutes rounded up, seconds only under 90 s, the seed's sentence at 5 minutes",
        arguments: [
            ("10:00:04.500", "5 minutes"), ("10:00:10", "5 minutes"), ("10:01:00", "4 minutes"), ("10:01:00.001", "4 minutes"),
            ("10:03:30", "2 minutes"), ("10:03:30.001", "90 seconds"), ("10:03:31", "89 seconds"), ("10:04:53", "7 seconds"),
            ("10:04:59", "1 second")
        ])
    func messageNamesTimeLeft(time: String, words: String) {
        let flow = Self.shown(Self.fiveFailures(), at: time)
        #expect(flow.screen == .lockedOut)
        #expect(flow.systemMessage == Message("You have made too many recent login attempts. Please wait \(words) before trying again.", .error))
        if words == "5 minutes" { #expect(flow.systemMessage?.text == Self.seedSentence) }
    }

    @Test("a sign_in_throttled whose retry time is 651 s ahead says 11 minutes, and the lock ends at that time")
    func reportedThrottle() {
        var script = FlowScript(device: Self.device)
        script.record(.fieldEdited(field: .passcode, filled: true, valid: true), user: "ann", at: "10:00:00")
        script.record(
            .signInThrottled(method: .passcode, retryAfter: FlowTime.at("10:10:51"), clientAddress: nil), user: "ann", at: "10:00:00")
        #expect(
            script.deviceSession.at(FlowTime.at("10:00:00"), lockout: script.state.lockout).flow.systemMessage?.text
                == "You have made too many recent login attempts. Please wait 11 minutes before trying again.")
        #expect(
            Self.shown(script, at: "10:09:21.001").systemMessage?.text
                == "You have made too many recent login attempts. Please wait 90 seconds before trying again.")
        let after = Self.shown(script, at: "10:10:51")
        #expect(
            after
                == Flow(
                    id: FlowID.make(1), user: "ann", screen: .signIn, state: .partiallyFilled, fields: [FieldInput(field: .passcode, filled: true, valid: true)]
                ))
        #expect(after.submitEnabled)
    }

    @Test("a sign_in_throttled whose retry time has already passed shows no lock")
    func throttlePast() {
        var script = FlowScript(device: Self.device)
        script.record(.signInThrottled(method: .password, retryAfter: FlowTime.at("09:59:00"), clientAddress: nil), user: "ann", at: "10:00:00")
        #expect(script.deviceSession.flow.screen == .signIn)
        #expect(script.deviceSession.flow.lockedUntil == nil)
    }

    @Test("a second-factor lock names its time left and returns to the code's form")
    func secondFactorLock() {
        var script = FlowScript(device: Self.device)
        script.record(.secondFactorRequired(method: .totp), user: "alice", at: "10:00:00")
        for second in 0..<10 {
            script.record(.secondFactorFailed(method: .totp, clientAddress: nil), user: "alice", at: "10:00:1\(second)")
        }
        // mediawiki's 2FA tier: 10 per 60 s, from the first failure at 10:00:10.
        let locked = Self.shown(script, at: "10:00:20")
        #expect(locked.screen == .lockedOut)
        #expect(locked.lockedUntil == FlowTime.at("10:01:10"))
        #expect(locked.systemMessage?.text == "You have made too many recent login attempts. Please wait 50 seconds before trying again.")
        #expect(Self.shown(script, at: "10:01:10") == Flow(id: FlowID.make(1), user: "alice", screen: .secondFactor, state: .empty))
    }

    @Test("the resend timer is pending until it ends and available from then on")
    func resendTimer() {
        var script = FlowScript(device: Self.device)
        script.record(.passwordResetRequested(route: .email), user: "alice", at: "10:00:00")
        script.record(.temporaryPasswordSent, user: "alice", at: "10:00:00.500")
        let end = FlowTime.at("10:01:00.500")
        #expect(Self.shown(script, at: "10:01:00.499").resend == ResendInfo(availableAt: end, help: SessionText.resendHelp, isAvailable: false))
        #expect(Self.shown(script, at: "10:01:00.500").resend == ResendInfo(availableAt: end, help: SessionText.resendAvailableHelp, isAvailable: true))
        #expect(script.deviceSession.nextChange(after: FlowTime.at("10:00:30")) == end)
        #expect(script.deviceSession.at(end, lockout: script.state.lockout).nextChange(after: end) == nil)
    }

    @Test("an edit recorded after the lock ended lands on the sign-in form, not on the lock screen")
    func editAfterLock() {
        var script = Self.fiveFailures()
        script.record(.fieldEdited(field: .password, filled: false, valid: nil), user: "alice", at: "10:06:00")
        let flow = script.deviceSession.flow
        #expect(flow.screen == .signIn)
        #expect(flow.state == .partiallyFilled)
        #expect(flow.lockedUntil == nil)
        #expect(!flow.submitEnabled)
        // While the lock holds, an edit leaves the lock screen as it is.
        var early = Self.fiveFailures()
        early.record(.fieldEdited(field: .password, filled: false, valid: nil), user: "alice", at: "10:02:00")
        #expect(early.deviceSession.flow.screen == .lockedOut)
    }

    @Test("the next change is when the words or the lock change, and nothing changes before it")
    func nextChange() {
        let script = Self.fiveFailures()
        let lockout = script.state.lockout
        var time = FlowTime.at("10:00:05")
        var messages: [String] = []
        while let next = script.deviceSession.at(time, lockout: lockout).nextChange(after: time) {
            let shown = script.deviceSession.at(time, lockout: lockout)
            #expect(script.deviceSession.at(next.adding(milliseconds: -1), lockout: lockout) == shown)
            #expect(script.deviceSession.at(next, lockout: lockout) != shown)
            messages.append(shown.flow.systemMessage?.text ?? "none")
            time = next
        }
        // 5, 4, 3, 2 minutes, then 90 … 1 seconds, then the form: 4 + 90 states, and no more.
        #expect(messages.count == 94)
        #expect(script.deviceSession.at(time, lockout: lockout).flow.screen == .signIn)
    }
}

extension Flow {
    func withUnlockScreen(_ screen: Screen?) -> Flow {
        var flow = self
        flow.unlockScreen = screen
        return flow
    }
}
