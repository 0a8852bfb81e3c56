import Foundation
import Testing
import OnboardingModel
@testable import OnboardingProjections

/// `sign_in_aborted` is a server cutting a client off before any sign-in, not something a screen
/// did: it changes no screen, creates no device and touches no user list (docs/projections.md).
@Suite("Session: sign_in_aborted changes no screen")
struct SessionAbortedAttemptTests {
    /// A sign-in flow on kiosk-7 with a wrong password, a success and a sign-out; `aborted` puts
    /// sign_in_aborted events between its steps, on the same device, on a server, by the flow's
    /// user and by nobody, in the flow's session and in none.
    static func script(aborted: Bool) -> FlowScript {
        var script = FlowScript(device: "kiosk-7")
        func abort(_ time: String) {
            guard aborted else { return }
            script.record(.signInAborted(reason: .tooManyFailures, clientAddress: "203.0.113.9"), user: "alice", at: time)
            script.record(.signInAborted(reason: .noIdentification), user: nil, at: time, device: "bastion-1")
            let session = script.session
            script.session = nil
            script.record(.signInAborted(reason: .timeout, clientAddress: "2001:db8::1"), user: "bob", at: time)
            script.session = session
        }
        script.record(.userAdded(displayName: "Alice Martin", passcodePolicy: .numeric, passcodeMinLength: 6), user: "alice", at: "16:00:00")
        abort("16:00:01")
        script.record(.signInStarted(method: .password), user: "alice", at: "16:00:10")
        abort("16:00:11")
        script.record(.signInFailed(method: .password, reason: .invalidPassword, clientAddress: "203.0.113.9"), user: "alice", at: "16:00:12")
        abort("16:00:13")
        script.record(.fieldEdited(field: .password, filled: true), user: "alice", at: "16:00:20")
        abort("16:00:21")
        script.record(.signInSucceeded(method: .password, secondFactor: false), user: "alice", at: "16:00:30")
        abort("16:00:31")
        return script
    }

    @Test("the session and the users read exactly as on the log without them")
    func noScreenChanges() {
        let with = Self.script(aborted: true).state
        let without = Self.script(aborted: false).state
        #expect(with.session == without.session)
        #expect(with.users == without.users)
        #expect(with.session.devices["bastion-1"] == nil, "an aborted attempt opens no device")
    }

    @Test("a device showing the lock screen keeps it through an aborted attempt")
    func lockScreenStays() {
        var script = FlowScript(device: "kiosk-7")
        for second in 0..<5 {
            script.record(.signInFailed(method: .password, reason: .invalidPassword), user: "alice", at: "16:00:0\(second)")
        }
        let locked = script.state.session
        #expect(locked.devices["kiosk-7"]?.flow.screen == .lockedOut)
        script.record(.signInAborted(reason: .closedBeforeAuthentication, clientAddress: "203.0.113.9"), user: "alice", at: "16:00:06")
        #expect(script.state.session == locked)
    }
}
