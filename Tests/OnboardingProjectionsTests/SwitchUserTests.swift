import Foundation
import Testing
import OnboardingModel
@testable import OnboardingProjections

/// The shared-device pattern's screens (docs/projections.md § The shared device): "Switch or Add
/// User" opened and left by events, "Forgot Passcode?" with its own form, and a removed user.
@Suite("Shared device: Switch or Add User, Forgot Passcode, a removed user")
struct SwitchUserTests {
    static let device = "kiosk-7"

    static func addUsers(_ script: inout FlowScript, _ users: [String]) {
        for (index, user) in users.enumerated() {
            script.record(
                .userAdded(displayName: user.capitalized + " Lee", subtitle: nil, imageRef: nil, passcodePolicy: .numeric, passcodeMinLength: 6),
                user: user, at: "15:00:0\(index)")
        }
    }

    @Test("\"Switch or Add User\" opens on an event; a tap moves the checkmark; \"Back\" shows the selected user's sign-in")
    func switchAndBack() {
        var script = FlowScript(policy: .localPasscode, device: Self.device)
        Self.addUsers(&script, ["ann", "bob"])
        script.session = FlowID.make(2)
        script.record(.userSelected, user: "ann", at: "16:00:00")
        script.record(.fieldEdited(field: .passcode, filled: true, valid: false), user: "ann", at: "16:00:01")
        script.record(.userSwitchOpened, user: "ann", at: "16:00:02")
        #expect(script.deviceSession.flow.screen == .switchUser && script.deviceSession.flow.state == .empty)
        #expect(!script.deviceSession.flow.submitEnabled)
        script.record(.userSelected, user: "bob", at: "16:00:05")
        #expect(script.deviceSession.flow == Flow(id: FlowID.make(2), user: "bob", screen: .switchUser, state: .empty))
        #expect(script.users().selected?.profile.id == "bob", "the checkmark is on Bob")
        script.record(.userSwitchClosed, user: nil, at: "16:00:08")
        #expect(script.deviceSession.flow == Flow(id: FlowID.make(2), user: "bob", screen: .signIn, state: .empty))
        // Opened and left without a tap: the user selected before.
        script.record(.userSwitchOpened, user: nil, at: "16:00:10")
        script.record(.userSwitchClosed, user: nil, at: "16:00:12")
        #expect(script.deviceSession.flow == Flow(id: FlowID.make(2), user: "bob", screen: .signIn, state: .empty))
        // Add User from the list, then Back: the selection stays Bob's.
        script.record(.userSwitchOpened, user: nil, at: "16:00:20")
        script.record(
            .userAdded(displayName: "Cy Lee", subtitle: nil, imageRef: nil, passcodePolicy: .numeric, passcodeMinLength: 6),
            user: "cy", at: "16:00:30")
        #expect(script.deviceSession.flow.screen == .switchUser && script.deviceSession.flow.state == .success)
        script.record(.userSwitchClosed, user: nil, at: "16:00:35")
        #expect(script.deviceSession.flow == Flow(id: FlowID.make(2), user: "bob", screen: .signIn, state: .empty))
    }

    @Test("\"Forgot Passcode?\" has its own form: submit disabled until a new passcode is entered and valid")
    func forgotPasscode() {
        var script = FlowScript(policy: .localPasscode, device: Self.device)
        Self.addUsers(&script, ["ann"])
        script.session = FlowID.make(2)
        script.record(.userSelected, user: "ann", at: "16:00:00")
        script.record(.fieldEdited(field: .passcode, filled: true, valid: true), user: "ann", at: "16:00:01")
        #expect(script.deviceSession.flow.submitEnabled)
        script.record(.passcodeResetStarted, user: "ann", at: "16:00:02")
        #expect(script.deviceSession.flow == Flow(id: FlowID.make(2), user: "ann", screen: .forgotPasscode, state: .empty))
        #expect(!script.deviceSession.flow.submitEnabled, "nothing typed yet")
        script.record(.fieldEdited(field: .passcode, filled: true, valid: false), user: "ann", at: "16:00:05")
        #expect(script.deviceSession.flow.screen == .forgotPasscode && script.deviceSession.flow.state == .partiallyFilled)
        #expect(!script.deviceSession.flow.submitEnabled, "too short for Ann's policy")
        script.record(.fieldEdited(field: .passcode, filled: true, valid: true), user: "ann", at: "16:00:07")
        #expect(script.deviceSession.flow.screen == .forgotPasscode && script.deviceSession.flow.submitEnabled)
        script.record(.passcodeResetCompleted, user: "ann", at: "16:00:09")
        #expect(
            script.deviceSession.flow
                == Flow(
                    id: FlowID.make(2), user: "ann", screen: .signIn, state: .success,
                    systemMessage: Message(SessionText.passcodeReset, .success)))
        #expect(!script.deviceSession.flow.submitEnabled)
    }

    @Test("user_removed: the device moves to the user the list selects next, and a removed user is no longer signed in")
    func removedUser() {
        var script = FlowScript(policy: .localPasscode, device: Self.device)
        Self.addUsers(&script, ["ann", "bob"])
        script.session = FlowID.make(2)
        script.record(.userSelected, user: "ann", at: "16:00:00")
        script.record(.signInSucceeded(method: .passcode, secondFactor: false), user: "ann", at: "16:00:05")
        script.session = FlowID.make(3)
        script.record(.userSelected, user: "bob", at: "16:01:00")
        script.record(.signInSucceeded(method: .passcode, secondFactor: false), user: "bob", at: "16:01:05")
        #expect(script.deviceSession.signedIn?.user == "bob")
        // Someone else's removal leaves the screen.
        script.record(.userRemoved(reason: .admin), user: "zed", at: "16:02:00")
        #expect(script.deviceSession.flow.screen == .signedIn && script.deviceSession.signedIn?.user == "bob")
        script.record(.userRemoved(reason: .userRequest), user: "bob", at: "16:03:00")
        // Ann: the previous user, as `onboard users` selects.
        #expect(script.users().selected?.profile.id == "ann")
        #expect(script.deviceSession == DeviceState(device: Self.device, flow: Flow(id: FlowID.make(3), user: "ann", screen: .signIn, state: .empty)))
        // A flow about Ann (not signed in): the last user leaves, nobody is left to show.
        script.record(.userRemoved(reason: .passcodeRetryLimit), user: "ann", at: "16:04:00")
        #expect(script.deviceSession == DeviceState(device: Self.device, flow: Flow(id: FlowID.make(3), user: nil, screen: .signIn, state: .empty)))
    }
}
