import Foundation
import Testing
import OnboardingModel
@testable import OnboardingProjections

/// The golden walk through multi-user onboarding on a shared device (docs/events.md § Multi-user
/// (shared devices)), under the `local_passcode` policy (docs/lockout.md § local_passcode): after
/// every event both the device's session and its whole "Switch or Add User" list are compared
/// with the values written out here.
@Suite("Shared-device multi-user onboarding")
struct SharedDeviceFlowTests {
    static let device = "kiosk-7"
    static let passcodeDisabled = "Your passcode is disabled after too many failed attempts. Use “Forgot Passcode?” to set a new one."

    static func session(_ flow: Flow, signedIn: SignedInUser? = nil) -> DeviceState {
        DeviceState(device: device, signedIn: signedIn, flow: flow)
    }

    static func users(selected: UserRow?, _ sections: [UsersView.Section]) -> UsersView {
        UsersView(device: device, selected: selected, sections: sections)
    }

    @Test("two, then three users: initials, the previous user selected, wrong passcode, search, switch, add, forgot passcode")
    func sharedDevice() {
        var script = FlowScript(policy: .localPasscode, device: Self.device, session: FlowID.make(1))
        var alice = UserProfile(
            id: "alice", displayName: "Alice Martin", subtitle: "Front desk", imageRef: "avatars/alice.png",
            initials: "AM", passcodePolicy: .numeric, passcodeMinimumLength: 6, hasPasscode: false,
            biometric: nil, lastSignIn: nil, addedAt: FlowTime.at("16:00:00"))
        var jose = UserProfile(
            id: "jose", displayName: "José Álvarez", subtitle: "Night shift", imageRef: nil,
            initials: "JÁ", passcodePolicy: .alphanumeric, passcodeMinimumLength: 8, hasPasscode: false,
            biometric: nil, lastSignIn: nil, addedAt: FlowTime.at("16:01:00"))
        let asa = UserProfile(
            id: "asa", displayName: "åsa lind", subtitle: "Pharmacy", imageRef: nil,
            initials: "ÅL", passcodePolicy: .numeric, passcodeMinimumLength: 4, hasPasscode: false,
            biometric: nil, lastSignIn: nil, addedAt: FlowTime.at("17:00:30"))

        // Setting the device up: each new user is listed; with nobody signed in yet the user
        // added last is the default selection.
        let setup = FlowID.make(1)
        script.step(
            .userAdded(
                displayName: "Alice Martin", subtitle: "Front desk", imageRef: "avatars/alice.png",
                passcodePolicy: .numeric, passcodeMinLength: 6), user: "alice", at: "16:00:00",
            session: Self.session(Flow(id: setup, user: "alice", screen: .switchUser, state: .success)),
            users: Self.users(
                selected: .flowRow(alice, selected: true),
                [.flowSelected(.flowRow(alice, selected: true)), .flowAll([.flowRow(alice, selected: true)])]))
        alice.hasPasscode = true
        script.step(
            .passcodeSet, user: "alice", at: "16:00:10",
            session: Self.session(Flow(id: setup, user: "alice", screen: .switchUser, state: .success)),
            users: Self.users(
                selected: .flowRow(alice, selected: true),
                [.flowSelected(.flowRow(alice, selected: true)), .flowAll([.flowRow(alice, selected: true)])]))
        script.step(
            .userAdded(
                displayName: "José Álvarez", subtitle: "Night shift", imageRef: nil,
                passcodePolicy: .alphanumeric, passcodeMinLength: 8), user: "jose", at: "16:01:00",
            session: Self.session(Flow(id: setup, user: "jose", screen: .switchUser, state: .success)),
            users: Self.users(
                selected: .flowRow(jose, selected: true),
                [
                    .flowSelected(.flowRow(jose, selected: true)),
                    .flowAll([.flowRow(alice), .flowRow(jose, selected: true)])
                ]))
        jose.hasPasscode = true
        script.step(
            .passcodeSet, user: "jose", at: "16:01:10",
            session: Self.session(Flow(id: setup, user: "jose", screen: .switchUser, state: .success)),
            users: Self.users(
                selected: .flowRow(jose, selected: true),
                [
                    .flowSelected(.flowRow(jose, selected: true)),
                    .flowAll([.flowRow(alice), .flowRow(jose, selected: true)])
                ]))
        jose.biometric = .face
        script.step(
            .biometricEnabled(kind: .face), user: "jose", at: "16:01:20",
            session: Self.session(Flow(id: setup, user: "jose", screen: .switchUser, state: .success, biometric: .face)),
            users: Self.users(
                selected: .flowRow(jose, selected: true),
                [
                    .flowSelected(.flowRow(jose, selected: true)),
                    .flowAll([.flowRow(alice), .flowRow(jose, selected: true)])
                ]))

        // Alice picks herself and types a passcode: "Sign In" stays disabled until one is entered.
        script.session = FlowID.make(2)
        let aliceLogin = FlowID.make(2)
        let aliceSelected = Self.users(
            selected: .flowRow(alice, selected: true),
            [
                .flowSelected(.flowRow(alice, selected: true)),
                .flowAll([.flowRow(alice, selected: true), .flowRow(jose)])
            ])
        // Picked right after José was added (the list in `success`): her sign-in screen at once,
        // as before "Switch or Add User" had events of its own; a "Back" after it changes nothing.
        script.step(
            .userSelected, user: "alice", at: "16:02:00",
            session: Self.session(Flow(id: aliceLogin, user: "alice", screen: .signIn, state: .empty)),
            users: aliceSelected)
        script.step(
            .userSwitchClosed, user: nil, at: "16:02:01",
            session: Self.session(Flow(id: aliceLogin, user: "alice", screen: .signIn, state: .empty)),
            users: aliceSelected)
        #expect(!alice.canSubmit(passcode: ""))
        #expect(!alice.canSubmit(passcode: "12345"))
        #expect(alice.canSubmit(passcode: "123456"))
        #expect(!alice.canSubmit(passcode: "12345a"))
        script.step(
            .signInStarted(method: .passcode), user: "alice", at: "16:02:05",
            session: Self.session(Flow(id: aliceLogin, user: "alice", screen: .signIn, state: .loading)),
            users: aliceSelected)
        let oneFailure = Self.users(
            selected: .flowRow(alice, selected: true, lockout: .allowed(failures: 1)),
            [
                .flowSelected(.flowRow(alice, selected: true, lockout: .allowed(failures: 1))),
                .flowAll([.flowRow(alice, selected: true, lockout: .allowed(failures: 1)), .flowRow(jose)])
            ])
        let invalidPasscode = [FieldMessage(field: "passcode", "Invalid passcode", .error)]
        script.step(
            .signInFailed(method: .passcode, reason: .invalidPasscode), user: "alice", at: "16:02:06",
            session: Self.session(
                Flow(
                    id: aliceLogin, user: "alice", screen: .signIn, state: .error,
                    fieldMessages: invalidPasscode)),
            users: oneFailure)
        script.step(
            .signInStarted(method: .passcode), user: "alice", at: "16:02:10",
            session: Self.session(Flow(id: aliceLogin, user: "alice", screen: .signIn, state: .loading)),
            users: oneFailure)
        alice.lastSignIn = FlowTime.at("16:02:11")
        let aliceIn = SignedInUser(user: "alice", since: FlowTime.at("16:02:11"), method: .passcode, secondFactor: false)
        script.step(
            .signInSucceeded(method: .passcode, secondFactor: false), user: "alice", at: "16:02:11",
            session: Self.session(Flow(id: aliceLogin, user: "alice", screen: .signedIn, state: .success), signedIn: aliceIn),
            users: Self.users(
                selected: .flowRow(alice, selected: true),
                [
                    .flowSelected(.flowRow(alice, selected: true)),
                    .flowAll([.flowRow(alice, selected: true), .flowRow(jose)])
                ]))
        // After sign-out the sign-in screen shows the previous user.
        script.step(
            .signedOut(reason: .user), user: "alice", at: "17:00:00",
            session: Self.session(Flow(id: aliceLogin, user: "alice", screen: .signIn, state: .empty)),
            users: Self.users(
                selected: .flowRow(alice, selected: true),
                [
                    .flowSelected(.flowRow(alice, selected: true)),
                    .flowAll([.flowRow(alice, selected: true), .flowRow(jose)])
                ]))

        // "Switch or Add User" → Add User: Åsa joins; Alice stays selected.
        script.session = FlowID.make(3)
        let threeUsers = Self.users(
            selected: .flowRow(alice, selected: true),
            [
                .flowSelected(.flowRow(alice, selected: true)),
                .flowAll([.flowRow(alice, selected: true), .flowRow(jose), .flowRow(asa)])
            ])
        script.step(
            .userAdded(
                displayName: "åsa lind", subtitle: "Pharmacy", imageRef: nil, passcodePolicy: .numeric,
                passcodeMinLength: 4), user: "asa", at: "17:00:30",
            session: Self.session(Flow(id: FlowID.make(3), user: "asa", screen: .switchUser, state: .success)),
            users: threeUsers)

        // Search over names and subtitles, ignoring case and accents.
        #expect(script.users(search: "jose") == Self.users(selected: .flowRow(alice, selected: true), [.flowAll([.flowRow(jose)])]))
        #expect(script.users(search: "ÅSA") == Self.users(selected: .flowRow(alice, selected: true), [.flowAll([.flowRow(asa)])]))
        #expect(script.users(search: "NIGHT shift") == Self.users(selected: .flowRow(alice, selected: true), [.flowAll([.flowRow(jose)])]))
        #expect(
            script.users(search: "desk")
                == Self.users(
                    selected: .flowRow(alice, selected: true),
                    [
                        .flowSelected(.flowRow(alice, selected: true)),
                        .flowAll([.flowRow(alice, selected: true)])
                    ]))
        #expect(script.users(search: "zzz") == Self.users(selected: .flowRow(alice, selected: true), [.flowAll([])]))
        #expect(script.users(search: "  ") == threeUsers)

        // José switches to himself and signs in with Face ID after one failure (not a passcode:
        // `local_passcode` does not count it).
        script.session = FlowID.make(4)
        let joseLogin = FlowID.make(4)
        let joseSelected = Self.users(
            selected: .flowRow(jose, selected: true),
            [
                .flowSelected(.flowRow(jose, selected: true)),
                .flowAll([.flowRow(alice), .flowRow(jose, selected: true), .flowRow(asa)])
            ])
        script.step(
            .userSelected, user: "jose", at: "17:01:00",
            session: Self.session(Flow(id: joseLogin, user: "jose", screen: .signIn, state: .empty, biometric: .face)),
            users: joseSelected)
        script.step(
            .userSwitchClosed, user: nil, at: "17:01:01",
            session: Self.session(Flow(id: joseLogin, user: "jose", screen: .signIn, state: .empty, biometric: .face)),
            users: joseSelected)
        script.step(
            .signInStarted(method: .biometric), user: "jose", at: "17:01:05",
            session: Self.session(Flow(id: joseLogin, user: "jose", screen: .signIn, state: .loading, biometric: .face)),
            users: joseSelected)
        script.step(
            .signInFailed(method: .biometric, reason: .biometricFailed), user: "jose", at: "17:01:06",
            session: Self.session(
                Flow(
                    id: joseLogin, user: "jose", screen: .signIn, state: .error,
                    systemMessage: Message("Biometric sign-in failed. Try again, or use your passcode or password.", .error), biometric: .face)),
            users: joseSelected)
        script.step(
            .signInStarted(method: .biometric), user: "jose", at: "17:01:10",
            session: Self.session(Flow(id: joseLogin, user: "jose", screen: .signIn, state: .loading, biometric: .face)),
            users: joseSelected)
        jose.lastSignIn = FlowTime.at("17:01:11")
        let joseIn = SignedInUser(user: "jose", since: FlowTime.at("17:01:11"), method: .biometric, secondFactor: false)
        let joseSignedIn = Self.users(
            selected: .flowRow(jose, selected: true),
            [
                .flowSelected(.flowRow(jose, selected: true)),
                .flowAll([.flowRow(alice), .flowRow(jose, selected: true), .flowRow(asa)])
            ])
        script.step(
            .signInSucceeded(method: .biometric, secondFactor: false), user: "jose", at: "17:01:11",
            session: Self.session(Flow(id: joseLogin, user: "jose", screen: .signedIn, state: .success, biometric: .face), signedIn: joseIn),
            users: joseSignedIn)
        script.step(
            .signedOut(reason: .user), user: "jose", at: "18:00:00",
            session: Self.session(Flow(id: joseLogin, user: "jose", screen: .signIn, state: .empty, biometric: .face)),
            users: joseSignedIn)

        // Someone tries Alice's passcode ten times: the tenth disables it until "Forgot Passcode?".
        script.session = FlowID.make(5)
        let guess = FlowID.make(5)
        script.step(
            .userSelected, user: "alice", at: "18:05:00",
            session: Self.session(Flow(id: guess, user: "alice", screen: .signIn, state: .empty)),
            users: Self.users(
                selected: .flowRow(alice, selected: true),
                [
                    .flowSelected(.flowRow(alice, selected: true)),
                    .flowAll([.flowRow(alice, selected: true), .flowRow(jose), .flowRow(asa)])
                ]))
        func aliceWith(_ lockout: LockoutDecision) -> UsersView {
            Self.users(
                selected: .flowRow(alice, selected: true, lockout: lockout),
                [
                    .flowSelected(.flowRow(alice, selected: true, lockout: lockout)),
                    .flowAll([.flowRow(alice, selected: true, lockout: lockout), .flowRow(jose), .flowRow(asa)])
                ])
        }
        for attempt in 1...9 {
            let seconds = 10 * attempt
            script.step(
                .signInFailed(method: .passcode, reason: .invalidPasscode), user: "alice",
                at: "18:0\(5 + seconds / 60):\(String(format: "%02d", seconds % 60))",
                session: Self.session(
                    Flow(
                        id: guess, user: "alice", screen: .signIn, state: .error,
                        fieldMessages: invalidPasscode)),
                users: aliceWith(.allowed(failures: attempt)))
        }
        let disabled = PermanentLock(since: FlowTime.at("18:06:40"), clearedBy: [.lockoutCleared, .passcodeResetCompleted], failures: 10)
        let lockedOut = Self.session(
            Flow(
                id: guess, user: "alice", screen: .lockedOut, state: .error,
                systemMessage: Message(Self.passcodeDisabled, .error), lockedUntil: nil))
        script.step(
            .signInFailed(method: .passcode, reason: .invalidPasscode), user: "alice", at: "18:06:40",
            session: lockedOut, users: aliceWith(.permanentlyLocked(disabled)))
        // Time does not lift it; a refused attempt shows the same screen.
        script.step(
            .signInThrottled(method: .passcode, retryAfter: FlowTime.at("18:07:00")), user: "alice", at: "23:00:00",
            session: lockedOut, users: aliceWith(.permanentlyLocked(disabled)))

        // "Forgot Passcode?": the old passcode is kept until the new one is set.
        script.session = FlowID.make(6)
        let forgot = FlowID.make(6)
        script.step(
            .passcodeResetStarted, user: "alice", at: "23:01:00",
            session: Self.session(Flow(id: forgot, user: "alice", screen: .forgotPasscode, state: .empty)),
            users: aliceWith(.permanentlyLocked(disabled)))
        script.step(
            .passcodeResetCompleted, user: "alice", at: "23:03:00",
            session: Self.session(
                Flow(
                    id: forgot, user: "alice", screen: .signIn, state: .success,
                    systemMessage: Message("Your passcode has been reset. Sign in with your new passcode.", .success))),
            users: aliceWith(.allowed(failures: 0)))
        script.step(
            .signInStarted(method: .passcode), user: "alice", at: "23:03:10",
            session: Self.session(Flow(id: forgot, user: "alice", screen: .signIn, state: .loading)),
            users: aliceWith(.allowed(failures: 0)))
        alice.lastSignIn = FlowTime.at("23:03:11")
        let aliceAgain = SignedInUser(user: "alice", since: FlowTime.at("23:03:11"), method: .passcode, secondFactor: false)
        script.step(
            .signInSucceeded(method: .passcode, secondFactor: false), user: "alice", at: "23:03:11",
            session: Self.session(Flow(id: forgot, user: "alice", screen: .signedIn, state: .success), signedIn: aliceAgain),
            users: aliceWith(.allowed(failures: 0)))

        // An administrator removes José: the list changes, the screen does not.
        script.step(
            .userRemoved(reason: .admin), user: "jose", at: "23:30:00",
            session: Self.session(Flow(id: forgot, user: "alice", screen: .signedIn, state: .success), signedIn: aliceAgain),
            users: Self.users(
                selected: .flowRow(alice, selected: true),
                [
                    .flowSelected(.flowRow(alice, selected: true)),
                    .flowAll([.flowRow(alice, selected: true), .flowRow(asa)])
                ]))
    }
}
