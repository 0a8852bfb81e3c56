import Foundation
import Testing
import OnboardingModel
@testable import OnboardingProjections

/// Golden walks through the mobile auth flows: social sign-in with Apple first, no network,
/// biometric failure and retry, forgot password with a resend timer and "check spam",
/// registration errors, and the states every screen must have (empty, error, loading, success;
/// docs/projections.md § The screen × state matrix).
@Suite("Mobile auth flows")
struct MobileAuthFlowTests {
    static let device = "mobile-1"
    static let noConnection = Message("No internet connection. Check your connection and try again.", .error)

    static func session(_ flow: Flow, signedIn: SignedInUser? = nil) -> DeviceState {
        DeviceState(device: device, signedIn: signedIn, flow: flow)
    }

    @Test("Sign in with Apple is offered first whenever another social provider is")
    func socialButtonOrder() {
        #expect(SocialSignIn.buttons(offering: [.google, .password, .biometric]) == [.apple, .google])
        #expect(SocialSignIn.buttons(offering: [.other, .google, .apple, .google]) == [.apple, .other, .google])
        #expect(SocialSignIn.buttons(offering: [.apple]) == [.apple])
        #expect(SocialSignIn.buttons(offering: [.password, .passcode, .biometric]) == [])
        #expect(SocialSignIn.buttons(offering: []) == [])
    }

    @Test("social sign-in: Apple cancelled, Google without network, then Google succeeds")
    func socialSignIn() {
        var script = FlowScript(device: Self.device)
        let login = FlowID.make(1)
        // Before any event the login screen is empty.
        #expect(script.deviceSession == DeviceState(device: Self.device, signedIn: nil, flow: Flow()))
        script.step(
            .signInStarted(method: .apple), user: nil, at: "09:00:00",
            session: Self.session(Flow(id: login, screen: .signIn, state: .loading)))
        // Closing Apple's sheet is no error: back to the empty form, nothing counted.
        script.step(
            .signInFailed(method: .apple, reason: .cancelled), user: nil, at: "09:00:04",
            session: Self.session(Flow(id: login, screen: .signIn, state: .empty)))
        script.step(
            .signInStarted(method: .google), user: nil, at: "09:00:10",
            session: Self.session(Flow(id: login, screen: .signIn, state: .loading)))
        script.step(
            .signInFailed(method: .google, reason: .networkUnavailable), user: nil, at: "09:00:11",
            session: Self.session(Flow(id: login, screen: .signIn, state: .error, systemMessage: Self.noConnection)))
        script.step(
            .signInStarted(method: .google), user: nil, at: "09:00:30",
            session: Self.session(Flow(id: login, screen: .signIn, state: .loading)))
        script.step(
            .signInFailed(method: .google, reason: .serverError), user: nil, at: "09:00:31",
            session: Self.session(
                Flow(
                    id: login, screen: .signIn, state: .error,
                    systemMessage: Message("Something went wrong on our side. Please try again in a few minutes.", .error))))
        script.step(
            .signInStarted(method: .google), user: nil, at: "09:01:00",
            session: Self.session(Flow(id: login, screen: .signIn, state: .loading)))
        let maria = SignedInUser(user: "maria@example.com", since: FlowTime.at("09:01:02"), method: .google, secondFactor: false)
        script.step(
            .signInSucceeded(method: .google, secondFactor: false), user: "maria@example.com", at: "09:01:02",
            session: Self.session(
                Flow(id: login, user: "maria@example.com", screen: .signedIn, state: .success),
                signedIn: maria))
        // Network and server errors and cancellations are never guesses.
        #expect(script.decision(nil) == .allowed(failures: 0))
    }

    @Test("biometric sign-in: a failed Face ID suggests the passcode or password, the retry succeeds")
    func biometric() {
        var script = FlowScript(device: Self.device)
        let login = FlowID.make(1)
        script.step(
            .signInStarted(method: .biometric), user: "maria", at: "09:00:00",
            session: Self.session(Flow(id: login, user: "maria", screen: .signIn, state: .loading)))
        script.step(
            .signInFailed(method: .biometric, reason: .biometricFailed), user: "maria", at: "09:00:01",
            session: Self.session(
                Flow(
                    id: login, user: "maria", screen: .signIn, state: .error,
                    systemMessage: Message("Biometric sign-in failed. Try again, or use your passcode or password.", .error))))
        #expect(script.decision("maria") == .allowed(failures: 1))
        script.step(
            .signInStarted(method: .biometric), user: "maria", at: "09:00:05",
            session: Self.session(Flow(id: login, user: "maria", screen: .signIn, state: .loading)))
        let maria = SignedInUser(user: "maria", since: FlowTime.at("09:00:06"), method: .biometric, secondFactor: false)
        script.step(
            .signInSucceeded(method: .biometric, secondFactor: false), user: "maria", at: "09:00:06",
            session: Self.session(Flow(id: login, user: "maria", screen: .signedIn, state: .success), signedIn: maria))
        #expect(script.decision("maria") == .allowed(failures: 0))
        script.step(
            .signedOut(reason: .revoked), user: "maria", at: "12:00:00",
            session: Self.session(
                Flow(
                    id: login, user: "maria", screen: .signIn, state: .empty,
                    systemMessage: Message("You were signed out by the server or an administrator. Please sign in again.", .warning))))
    }

    @Test("forgot password: one field, a confirmation with a resend timer and what to do if no mail comes")
    func forgotPassword() {
        var script = FlowScript(device: Self.device)
        let reset = FlowID.make(1)
        let help = "Didn't get the email? Check your spam folder. You can send it again when the timer ends."
        script.step(
            .passwordResetRequested(route: .email), user: "maria", at: "09:00:00",
            session: Self.session(Flow(id: reset, user: "maria", screen: .forgotPassword, state: .loading, identifierKind: .email)))
        script.step(
            .temporaryPasswordSent, user: "maria", at: "09:00:01.500",
            session: Self.session(
                Flow(
                    id: reset, user: "maria", screen: .resetSent, state: .success,
                    systemMessage: Message("Temporary password sent via email", .success),
                    resend: ResendInfo(availableAt: FlowTime.at("09:01:01.500"), help: help), identifierKind: .email)))
        // "Resend" when the timer ends restarts it.
        script.step(
            .passwordResetRequested(route: .email), user: "maria", at: "09:01:02",
            session: Self.session(Flow(id: reset, user: "maria", screen: .forgotPassword, state: .loading, identifierKind: .email)))
        script.step(
            .temporaryPasswordSent, user: "maria", at: "09:01:03",
            session: Self.session(
                Flow(
                    id: reset, user: "maria", screen: .resetSent, state: .success,
                    systemMessage: Message("Temporary password sent via email", .success),
                    resend: ResendInfo(availableAt: FlowTime.at("09:02:03"), help: help), identifierKind: .email)))
        #expect(SessionProjection.defaultResendWaitMilliseconds == 60_000)
    }

    @Test("the resend timer is a setting of the projection")
    func customResendTimer() {
        var projection = SessionProjection(resendWaitMilliseconds: 30_000)
        let engine = LockoutEngine(policy: .mediawiki)
        let event = Event(
            id: FlowID.make(9), device: Self.device, at: FlowTime.at("09:00:00"), user: "maria",
            flow: FlowID.make(1), payload: .temporaryPasswordSent)
        projection.apply(Record(seq: 1, event: event, previousHash: .zero, hash: .zero), lockout: engine)
        #expect(projection.session(device: Self.device).flow.resend?.availableAt == FlowTime.at("09:00:30"))
    }

    @Test("registration: email taken, weak password, no network, then success")
    func registration() {
        var script = FlowScript(device: Self.device)
        let signUp = FlowID.make(1)
        let taken = FieldMessage(field: "email", "Email already in use", .error)
        let weak = FieldMessage(field: "password", "This password is too easy to guess. Choose a longer one.", .error)
        let match = FieldMessage(field: "password_confirmation", "Passwords match", .success)
        func form(_ state: ScreenState, _ messages: [FieldMessage], system: Message? = nil, user: String? = nil) -> DeviceState {
            Self.session(Flow(id: signUp, user: user, screen: .createAccount, state: state, fieldMessages: messages, systemMessage: system))
        }
        script.step(.accountCreationStarted, user: nil, at: "09:00:00", session: form(.empty, []))
        script.step(.fieldValidated(field: .email, result: .usernameInUse), user: nil, at: "09:00:08", session: form(.error, [taken]))
        script.step(.fieldValidated(field: .email, result: .usernameAvailable), user: nil, at: "09:00:15", session: form(.empty, []))
        script.step(.fieldValidated(field: .password, result: .passwordTooWeak), user: nil, at: "09:00:20", session: form(.error, [weak]))
        script.step(
            .fieldValidated(field: .passwordConfirmation, result: .passwordsMatch), user: nil, at: "09:00:25",
            session: form(.error, [weak, match]))
        script.step(
            .accountCreationFailed(field: nil, reason: .networkUnavailable), user: nil, at: "09:00:30",
            session: form(.error, [weak, match], system: Self.noConnection))
        script.step(
            .accountCreationFailed(field: nil, reason: .serverError), user: nil, at: "09:00:40",
            session: form(
                .error, [weak, match],
                system: Message("Something went wrong on our side. Please try again in a few minutes.", .error)))
        script.step(
            .accountCreationFailed(field: .email, reason: .usernameInUse), user: nil, at: "09:00:50",
            session: form(.error, [taken, weak, match]))
        script.step(
            .accountCreated, user: "maria", at: "09:01:00",
            session: form(.success, [], system: Message("Your account has been created.", .success), user: "maria"))
    }

    @Test("every screen of the brief shows its states: empty, loading, error, success")
    func screenStates() {
        var script = FlowScript(device: Self.device)
        var seen: Set<String> = ["\(script.deviceSession.flow.screen.rawValue) \(script.deviceSession.flow.state.rawValue)"]
        func record(_ payload: Payload, _ time: String) {
            script.record(payload, user: "maria", at: time)
            seen.insert("\(script.deviceSession.flow.screen.rawValue) \(script.deviceSession.flow.state.rawValue)")
        }
        // Login.
        record(.signInStarted(method: .password), "09:00:00")
        record(.signInFailed(method: .password, reason: .networkUnavailable), "09:00:01")
        record(.captchaPresented(purpose: .signIn), "09:00:02")
        record(.captchaPassed, "09:00:03")
        // Forgot password.
        record(.passwordResetStarted, "09:01:00")
        record(.passwordResetRequested(route: .email), "09:01:05")
        record(.temporaryPasswordSent, "09:01:06")
        // Register.
        record(.accountCreationStarted, "09:02:00")
        record(.fieldValidated(field: .email, result: .usernameInUse), "09:02:05")
        record(.accountCreated, "09:02:10")
        // Second factor, and the signed-in screen.
        record(.secondFactorRequired(method: .sms), "09:03:00")
        record(.secondFactorFailed(method: .sms), "09:03:05")
        record(.signInStarted(method: .password), "09:03:10")
        record(.secondFactorSucceeded(method: .sms), "09:03:11")
        record(.signInSucceeded(method: .password, secondFactor: true), "09:03:12")

        let expected: Set<String> = [
            "sign_in empty", "sign_in loading", "sign_in error",
            "forgot_password empty", "forgot_password loading", "reset_sent success",
            "create_account empty", "create_account error", "create_account success",
            "second_factor empty", "second_factor loading", "second_factor error", "second_factor success",
            "captcha empty", "signed_in success"
        ]
        #expect(seen == expected)
    }
}
