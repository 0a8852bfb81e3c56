import Foundation
import Testing
import OnboardingModel
@testable import OnboardingProjections

/// The session projection's rules outside the seed walks: the remaining messages, events it
/// ignores, devices kept apart, and the state surviving a snapshot.
@Suite("Session projection")
struct SessionProjectionTests {
    static let device = "phone-1"

    @Test("a device never seen shows the empty sign-in screen")
    func unseenDevice() {
        #expect(
            SessionProjection().session(device: "nowhere")
                == DeviceState(
                    device: "nowhere", signedIn: nil,
                    flow: Flow(
                        id: nil, user: nil, screen: .signIn, state: .empty, fieldMessages: [],
                        systemMessage: nil, resend: nil, lockedUntil: nil)))
    }

    @Test("an unknown username is explained under the username field and counts as a guess")
    func unknownUser() {
        var script = FlowScript(device: Self.device)
        script.record(.signInFailed(method: .password, reason: .unknownUser), user: "nobody", at: "10:00:00")
        #expect(
            script.deviceSession.flow
                == Flow(
                    id: FlowID.make(1), user: "nobody", screen: .signIn, state: .error,
                    fieldMessages: [FieldMessage(field: "username", "No account with this username. Check the spelling or create an account.", .error)]))
        #expect(script.decision("nobody") == .allowed(failures: 1))
    }

    @Test("events that do not change the sign-in flow leave it as it is (biometrics change only the badge)")
    func ignoredEvents() {
        var script = FlowScript(device: Self.device)
        script.record(
            .userAdded(displayName: "Ann Lee", subtitle: nil, imageRef: nil, passcodePolicy: .numeric, passcodeMinLength: 4),
            user: "ann", at: "10:00:00")
        script.record(.signInFailed(method: .passcode, reason: .invalidPasscode), user: "ann", at: "10:00:05")
        let before = script.deviceSession
        script.session = FlowID.make(7)
        let ignored: [Payload] = [
            .userProfileUpdated(displayName: "Ann B. Lee", subtitle: "Ward 3", imageRef: nil), .passcodeSet, .passcodeChanged,
            .biometricEnabled(kind: .touch), .biometricDisabled
        ]
        // Only the badge on the sign-in button follows biometric sign-in being switched on and off.
        var badged = before
        badged.flow.biometric = .touch
        for (index, payload) in ignored.enumerated() {
            script.record(payload, user: "ann", at: "10:01:0\(index)")
            #expect(script.deviceSession == (payload.type == .biometricEnabled ? badged : before), "\(payload.type.rawValue)")
        }
    }

    @Test("lockout_cleared leaves the lock screen of that user, and only that")
    func lockoutCleared() {
        var script = FlowScript(device: Self.device)
        for second in 0..<5 {
            script.record(.signInFailed(method: .password, reason: .invalidPassword), user: "alice", at: "10:00:0\(second)")
        }
        #expect(script.deviceSession.flow.screen == .lockedOut)
        let locked = script.deviceSession
        script.record(.lockoutCleared(reason: .admin), user: "bob", at: "10:01:00")
        #expect(script.deviceSession == locked)
        script.record(.lockoutCleared(reason: .admin), user: "alice", at: "10:01:10")
        #expect(
            script.deviceSession
                == DeviceState(
                    device: Self.device, signedIn: nil,
                    flow: Flow(id: FlowID.make(1), user: "alice", screen: .signIn, state: .empty)))
        #expect(script.decision("alice") == .allowed(failures: 0))
        // Anywhere else it changes nothing on the screen.
        script.record(.signInStarted(method: .password), user: "alice", at: "10:01:20")
        let loading = script.deviceSession
        script.record(.lockoutCleared(reason: .admin), user: "alice", at: "10:01:30")
        #expect(script.deviceSession == loading)
    }

    @Test("each device has its own session and flow")
    func devicesApart() {
        var script = FlowScript(device: "phone-1")
        script.record(.signInSucceeded(method: .password, secondFactor: false), user: "alice", at: "10:00:00", device: "phone-1")
        script.record(.signInFailed(method: .password, reason: .invalidPassword), user: "alice", at: "10:00:05", device: "tablet-2")
        #expect(
            script.state.session.session(device: "phone-1")
                == DeviceState(
                    device: "phone-1",
                    signedIn: SignedInUser(user: "alice", since: FlowTime.at("10:00:00"), method: .password, secondFactor: false),
                    flow: Flow(id: FlowID.make(1), user: "alice", screen: .signedIn, state: .success)))
        #expect(
            script.state.session.session(device: "tablet-2")
                == DeviceState(
                    device: "tablet-2", signedIn: nil,
                    flow: Flow(
                        id: FlowID.make(1), user: "alice", screen: .signIn, state: .error,
                        fieldMessages: [FieldMessage(field: "password", "Invalid password", .error)])))
    }

    @Test("a new flow forgets the previous flow's user and inline messages")
    func newFlowStartsClean() {
        var script = FlowScript(device: Self.device, session: FlowID.make(1))
        script.record(.accountCreationStarted, user: nil, at: "10:00:00")
        script.record(.fieldValidated(field: .username, result: .usernameInUse), user: nil, at: "10:00:01")
        script.record(.temporaryPasswordSent, user: "alice", at: "10:00:02")
        script.session = FlowID.make(2)
        script.record(.fieldValidated(field: .passwordConfirmation, result: .passwordsMatch), user: nil, at: "10:00:03")
        #expect(
            script.deviceSession.flow
                == Flow(
                    id: FlowID.make(2), user: nil, screen: .createAccount, state: .empty,
                    fieldMessages: [FieldMessage(field: "password_confirmation", "Passwords match", .success)]))
    }

    @Test("submitting the form with an invalid username or mismatching passwords names the field in red")
    func accountCreationFieldFailures() {
        var script = FlowScript(device: Self.device)
        script.record(.accountCreationStarted, user: nil, at: "10:00:00")
        script.record(.accountCreationFailed(field: nil, reason: .usernameInvalid), user: nil, at: "10:00:01")
        script.record(.accountCreationFailed(field: nil, reason: .passwordsDoNotMatch), user: nil, at: "10:00:02")
        script.record(.accountCreationFailed(field: nil, reason: .captchaFailed), user: nil, at: "10:00:03")
        #expect(
            script.deviceSession.flow
                == Flow(
                    id: FlowID.make(1), user: nil, screen: .createAccount, state: .error,
                    fieldMessages: [
                        FieldMessage(field: "captcha", "Wrong code. Please try again.", .error),
                        FieldMessage(field: "password_confirmation", "Passwords do not match", .error),
                        FieldMessage(field: "username", "This username can't be used. Choose another one.", .error)
                    ]))
        script.record(.fieldValidated(field: .username, result: .usernameInvalid), user: nil, at: "10:00:04")
        #expect(script.deviceSession.flow.fieldMessages.last == FieldMessage(field: "username", "This username can't be used. Choose another one.", .error))
    }

    @Test("the fallback lock sentence is the engine's sentence")
    func lockSentence() {
        for milliseconds: Int64 in [1, 999, 1000, 60_000, 90_000, 300_000, 600_000, 172_800_000] {
            let until = FlowTime.at("10:00:00")
            let lock = TemporaryLock(
                until: until, reason: .backoff, durationMilliseconds: 600_000, failures: 1, decidedAt: until.adding(milliseconds: -milliseconds))
            #expect(SessionText.tooManyAttempts(waitMilliseconds: milliseconds) == lock.message)
        }
        #expect(
            SessionText.tooManyAttempts(waitMilliseconds: 300_000) == "You have made too many recent login attempts. Please wait 5 minutes before trying again."
        )
    }

    @Test("a sign-out ends the session; a newer sign-in replaces it")
    func signInReplaced() {
        var script = FlowScript(device: Self.device)
        script.record(.signInSucceeded(method: .password, secondFactor: false), user: "alice", at: "10:00:00")
        script.record(.signInSucceeded(method: .apple, secondFactor: false), user: "bob", at: "10:05:00")
        #expect(script.deviceSession.signedIn == SignedInUser(user: "bob", since: FlowTime.at("10:05:00"), method: .apple, secondFactor: false))
        script.record(.signedOut(reason: .user), user: "bob", at: "10:10:00")
        #expect(script.deviceSession.signedIn == nil)
    }

    @Test("the whole state survives a snapshot and folding again gives the same state")
    func snapshotAndDeterminism() throws {
        var script = FlowScript(policy: .localPasscode, device: Self.device)
        script.record(
            .userAdded(displayName: "Ann Lee", subtitle: "Ward 3", imageRef: nil, passcodePolicy: .numeric, passcodeMinLength: 4),
            user: "ann", at: "10:00:00")
        script.record(.captchaPresented(purpose: .createAccount), user: nil, at: "10:00:01")
        script.record(.signInFailed(method: .passcode, reason: .invalidPasscode), user: "ann", at: "10:00:02")
        script.record(.temporaryPasswordSent, user: "ann", at: "10:00:03")
        let decoded = try OnboardingState(snapshotJSON: script.state.snapshotJSON)
        #expect(decoded == script.state)

        var again = OnboardingState(policy: .localPasscode)
        for record in script.records { again.apply(record) }
        #expect(again == script.state)

        // A CAPTCHA shown before the snapshot still returns to account creation after it.
        var resumed = decoded
        let event = Event(
            id: FlowID.make(99), device: Self.device, at: FlowTime.at("10:00:04"), user: nil,
            flow: FlowID.make(1), payload: .captchaPassed)
        resumed.apply(Record(seq: 5, event: event, previousHash: .zero, hash: .zero))
        #expect(resumed.session.session(device: Self.device).flow.screen == .createAccount)
    }
}
