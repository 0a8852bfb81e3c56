import Foundation
import Testing
import OnboardingModel
@testable import OnboardingProjections

/// Golden walks through the Wikipedia app's login redesign: log in, throttling, 2FA, password
/// reset, account creation with inline validation, CAPTCHA and its alternatives. After every
/// event the device's whole session is compared with the one written out here; the messages are
/// the design's, word for word (which ones: docs/projections.md § The screen × state matrix).
@Suite("Wikipedia login flows")
struct WikipediaLoginFlowTests {
    static let device = "wiki-phone"
    static let throttleMessage = "You have made too many recent login attempts. Please wait 5 minutes before trying again."
    static let invalidPassword = [FieldMessage(field: "password", "Invalid password", .error)]

    static func session(_ flow: Flow, signedIn: SignedInUser? = nil) -> DeviceState {
        DeviceState(device: device, signedIn: signedIn, flow: flow)
    }

    @Test("five wrong passwords in five minutes lock with MediaWiki's message until the window ends")
    func wrongPasswordFiveTimes() {
        var script = FlowScript(policy: .mediawiki, device: Self.device)
        let login = FlowID.make(1)
        // The message names the time left at each event: 4 min 2 s at 16:01:00 reads "5 minutes".
        func locked(_ left: String) -> Flow {
            Flow(
                id: login, user: "alice", screen: .lockedOut, state: .error,
                systemMessage: Message("You have made too many recent login attempts. Please wait \(left) before trying again.", .error),
                lockedUntil: FlowTime.at("16:05:02"), unlockScreen: .signIn)
        }
        #expect(locked("5 minutes").systemMessage?.text == Self.throttleMessage)

        script.step(
            .signInStarted(method: .password), user: "alice", at: "16:00:00",
            session: Self.session(Flow(id: login, user: "alice", screen: .signIn, state: .loading)))
        script.step(
            .signInFailed(method: .password, reason: .invalidPassword), user: "alice", at: "16:00:02",
            session: Self.session(
                Flow(
                    id: login, user: "alice", screen: .signIn, state: .error,
                    fieldMessages: Self.invalidPassword)))
        script.step(
            .signInStarted(method: .password), user: "alice", at: "16:00:10",
            session: Self.session(Flow(id: login, user: "alice", screen: .signIn, state: .loading)))
        for time in ["16:00:12", "16:00:20", "16:00:30"] {
            script.step(
                .signInFailed(method: .password, reason: .invalidPassword), user: "alice", at: time,
                session: Self.session(
                    Flow(
                        id: login, user: "alice", screen: .signIn, state: .error,
                        fieldMessages: Self.invalidPassword)))
        }
        // The fifth counted failure within 300 s of the first (16:00:02) locks until 16:05:02.
        script.step(
            .signInFailed(method: .password, reason: .invalidPassword), user: "alice", at: "16:01:00",
            session: Self.session(locked("5 minutes")))
        // A refused attempt and a failure the app let through while locked: still the lock screen,
        // and the lock does not grow.
        script.step(
            .signInThrottled(method: .password, retryAfter: FlowTime.at("16:05:02")), user: "alice", at: "16:01:30",
            session: Self.session(locked("4 minutes")))
        script.step(
            .signInFailed(method: .password, reason: .invalidPassword), user: "alice", at: "16:03:00",
            session: Self.session(locked("3 minutes")))
        // At exactly the end of the window the key is free again.
        #expect(
            script.state.lockout.decide(
                LockoutKey(user: "alice", device: Self.device, factor: .password),
                at: FlowTime.at("16:05:02")) == .allowed(failures: 5))
        script.step(
            .signInStarted(method: .password), user: "alice", at: "16:05:02",
            session: Self.session(Flow(id: login, user: "alice", screen: .signIn, state: .loading)))
        let alice = SignedInUser(user: "alice", since: FlowTime.at("16:05:03"), method: .password, secondFactor: false)
        script.step(
            .signInSucceeded(method: .password, secondFactor: false), user: "alice", at: "16:05:03",
            session: Self.session(Flow(id: login, user: "alice", screen: .signedIn, state: .success), signedIn: alice))
        script.step(
            .signedOut(reason: .user), user: "alice", at: "16:30:00",
            session: Self.session(Flow(id: login, user: "alice", screen: .signIn, state: .empty)))
    }

    @Test("a throttle the device's engine does not know words the wait the app recorded")
    func throttleFromElsewhere() {
        var script = FlowScript(policy: .mediawiki, device: Self.device)
        script.step(
            .signInThrottled(method: .password, retryAfter: FlowTime.at("16:02:00")), user: "alice", at: "16:00:00",
            session: Self.session(
                Flow(
                    id: FlowID.make(1), user: "alice", screen: .lockedOut, state: .error,
                    systemMessage: Message("You have made too many recent login attempts. Please wait 2 minutes before trying again.", .error),
                    lockedUntil: FlowTime.at("16:02:00"), unlockScreen: .signIn)))
    }

    @Test("two-factor sign-in: \"Verification failed\" under the code field, then success")
    func twoFactor() {
        var script = FlowScript(policy: .mediawiki, device: Self.device, session: FlowID.make(2))
        let login = FlowID.make(2)
        script.step(
            .signInStarted(method: .password), user: "bob", at: "16:00:00",
            session: Self.session(Flow(id: login, user: "bob", screen: .signIn, state: .loading)))
        script.step(
            .secondFactorRequired(method: .totp), user: "bob", at: "16:00:01",
            session: Self.session(Flow(id: login, user: "bob", screen: .secondFactor, state: .empty)))
        script.step(
            .secondFactorFailed(method: .totp), user: "bob", at: "16:00:20",
            session: Self.session(
                Flow(
                    id: login, user: "bob", screen: .secondFactor, state: .error,
                    fieldMessages: [FieldMessage(field: "second_factor_code", "Verification failed", .error)])))
        // Submitting the next code in the same flow stays on the code screen.
        script.step(
            .signInStarted(method: .password), user: "bob", at: "16:00:30",
            session: Self.session(Flow(id: login, user: "bob", screen: .secondFactor, state: .loading)))
        script.step(
            .secondFactorSucceeded(method: .totp), user: "bob", at: "16:00:31",
            session: Self.session(Flow(id: login, user: "bob", screen: .secondFactor, state: .success)))
        let bob = SignedInUser(user: "bob", since: FlowTime.at("16:00:32"), method: .password, secondFactor: true)
        script.step(
            .signInSucceeded(method: .password, secondFactor: true), user: "bob", at: "16:00:32",
            session: Self.session(Flow(id: login, user: "bob", screen: .signedIn, state: .success), signedIn: bob))
        script.step(
            .signedOut(reason: .sessionExpired), user: "bob", at: "20:00:32",
            session: Self.session(
                Flow(
                    id: login, user: "bob", screen: .signIn, state: .empty,
                    systemMessage: Message("Your session has expired. Please sign in again.", .info))))
    }

    @Test("too many 2FA codes lock with the same sentence, worded with the time left")
    func twoFactorThrottle() {
        var script = FlowScript(policy: .mediawiki, device: Self.device)
        let login = FlowID.make(1)
        let verificationFailed = Flow(
            id: login, user: "bob", screen: .secondFactor, state: .error,
            fieldMessages: [FieldMessage(field: "second_factor_code", "Verification failed", .error)])
        script.record(.signInStarted(method: .password), user: "bob", at: "16:00:00")
        script.step(
            .secondFactorRequired(method: .totp), user: "bob", at: "16:00:01",
            session: Self.session(Flow(id: login, user: "bob", screen: .secondFactor, state: .empty)))
        // Tier 1 of MediaWiki's 2FA throttle: 10 per 60 s, from the first failure at 16:00:10.
        for second in stride(from: 10, through: 26, by: 2) {
            script.step(.secondFactorFailed(method: .totp), user: "bob", at: "16:00:\(second)", session: Self.session(verificationFailed))
        }
        func oneMinute(_ left: String) -> Flow {
            Flow(
                id: login, user: "bob", screen: .lockedOut, state: .error,
                systemMessage: Message("You have made too many recent login attempts. Please wait \(left) before trying again.", .error),
                lockedUntil: FlowTime.at("16:01:10"), unlockScreen: .secondFactor)
        }
        script.step(.secondFactorFailed(method: .totp), user: "bob", at: "16:00:28", session: Self.session(oneMinute("42 seconds")))
        script.step(
            .signInThrottled(method: .password, retryAfter: FlowTime.at("16:01:10")), user: "bob", at: "16:00:40",
            session: Self.session(oneMinute("30 seconds")))
        // Tier 2: 20 per 600 s from 16:00:10. Ten more after the first lock ends reach it.
        for second in stride(from: 10, through: 26, by: 2) {
            script.step(.secondFactorFailed(method: .totp), user: "bob", at: "16:01:\(second)", session: Self.session(verificationFailed))
        }
        script.step(
            .secondFactorFailed(method: .totp), user: "bob", at: "16:01:28",
            session: Self.session(
                Flow(
                    id: login, user: "bob", screen: .lockedOut, state: .error,
                    systemMessage: Message("You have made too many recent login attempts. Please wait 9 minutes before trying again.", .error),
                    lockedUntil: FlowTime.at("16:10:10"), unlockScreen: .secondFactor)))
        // The password factor was never touched.
        #expect(script.decision("bob") == .allowed(failures: 0))
    }

    @Test("password reset: \"Temporary password sent via email\", a resend timer, then a forced change")
    func passwordReset() {
        var script = FlowScript(policy: .mediawiki, device: Self.device, session: FlowID.make(3))
        let reset = FlowID.make(3)
        let help = "Didn't get the email? Check your spam folder. You can send it again when the timer ends."
        // The account is not known until the server finds it.
        script.step(
            .passwordResetRequested(route: .email), user: nil, at: "16:00:00",
            session: Self.session(Flow(id: reset, user: nil, screen: .forgotPassword, state: .loading, identifierKind: .email)))
        script.step(
            .temporaryPasswordSent, user: "alice", at: "16:00:02",
            session: Self.session(
                Flow(
                    id: reset, user: "alice", screen: .resetSent, state: .success,
                    systemMessage: Message("Temporary password sent via email", .success),
                    resend: ResendInfo(availableAt: FlowTime.at("16:01:02"), help: help), identifierKind: .email)))
        // The mail did not come: once the timer ends, ask again (the flow still knows whose reset it is).
        script.step(
            .passwordResetRequested(route: .email), user: nil, at: "16:01:02",
            session: Self.session(Flow(id: reset, user: "alice", screen: .forgotPassword, state: .loading, identifierKind: .email)))
        script.step(
            .temporaryPasswordSent, user: "alice", at: "16:01:04",
            session: Self.session(
                Flow(
                    id: reset, user: "alice", screen: .resetSent, state: .success,
                    systemMessage: Message("Temporary password sent via email", .success),
                    resend: ResendInfo(availableAt: FlowTime.at("16:02:04"), help: help), identifierKind: .email)))
        script.session = FlowID.make(4)
        let login = FlowID.make(4)
        script.step(
            .signInStarted(method: .password), user: "alice", at: "16:05:00",
            session: Self.session(Flow(id: login, user: "alice", screen: .signIn, state: .loading)))
        let alice = SignedInUser(user: "alice", since: FlowTime.at("16:05:01"), method: .password, secondFactor: false)
        script.step(
            .signInSucceeded(method: .password, secondFactor: false), user: "alice", at: "16:05:01",
            session: Self.session(Flow(id: login, user: "alice", screen: .signedIn, state: .success), signedIn: alice))
        script.step(
            .passwordChanged(forced: true), user: "alice", at: "16:05:30",
            session: Self.session(
                Flow(
                    id: login, user: "alice", screen: .signedIn, state: .success,
                    systemMessage: Message("Your password has been changed.", .success)),
                signedIn: alice))
    }

    @Test("a password reset lifts the throttle")
    func resetAfterLockout() {
        var script = FlowScript(policy: .mediawiki, device: Self.device)
        let login = FlowID.make(1)
        for second in 0..<4 {
            script.step(
                .signInFailed(method: .password, reason: .invalidPassword), user: "alice", at: "16:00:0\(second)",
                session: Self.session(
                    Flow(
                        id: login, user: "alice", screen: .signIn, state: .error,
                        fieldMessages: Self.invalidPassword)))
        }
        script.step(
            .signInFailed(method: .password, reason: .invalidPassword), user: "alice", at: "16:00:04",
            session: Self.session(
                Flow(
                    id: login, user: "alice", screen: .lockedOut, state: .error,
                    systemMessage: Message(Self.throttleMessage, .error),
                    lockedUntil: FlowTime.at("16:05:00"), unlockScreen: .signIn)))
        script.session = FlowID.make(2)
        let reset = FlowID.make(2)
        script.step(
            .passwordResetRequested(route: .username), user: "alice", at: "16:00:30",
            session: Self.session(Flow(id: reset, user: "alice", screen: .forgotPassword, state: .loading, identifierKind: .username)))
        script.step(
            .temporaryPasswordSent, user: "alice", at: "16:00:32",
            session: Self.session(
                Flow(
                    id: reset, user: "alice", screen: .resetSent, state: .success,
                    systemMessage: Message("Temporary password sent via email", .success),
                    resend: ResendInfo(
                        availableAt: FlowTime.at("16:01:32"),
                        help: "Didn't get the email? Check your spam folder. You can send it again when the timer ends."),
                    identifierKind: .username)))
        script.step(
            .passwordChanged(forced: false), user: "alice", at: "16:02:00",
            session: Self.session(
                Flow(
                    id: reset, user: "alice", screen: .signIn, state: .success,
                    systemMessage: Message("Your password has been changed.", .success),
                    identifierKind: .username)))
        #expect(script.decision("alice") == .allowed(failures: 0))
        script.step(
            .signInStarted(method: .password), user: "alice", at: "16:02:10",
            session: Self.session(Flow(id: reset, user: "alice", screen: .signIn, state: .loading, identifierKind: .username)))
    }

    @Test("account creation: inline validation in the design's colours, CAPTCHA and its alternatives")
    func accountCreation() {
        var script = FlowScript(policy: .mediawiki, device: Self.device, session: FlowID.make(5))
        let signUp = FlowID.make(5)
        let inUse = FieldMessage(field: "username", "Username already in use", .error)
        let doNotMatch = FieldMessage(field: "password_confirmation", "Passwords do not match", .warning)
        let match = FieldMessage(field: "password_confirmation", "Passwords match", .success)
        func form(_ state: ScreenState, _ messages: [FieldMessage], system: Message? = nil, user: String? = nil) -> DeviceState {
            Self.session(Flow(id: signUp, user: user, screen: .createAccount, state: state, fieldMessages: messages, systemMessage: system))
        }

        script.step(.accountCreationStarted, user: nil, at: "16:00:00", session: form(.empty, []))
        script.step(.fieldValidated(field: .username, result: .usernameInUse), user: nil, at: "16:00:05", session: form(.error, [inUse]))
        script.step(.fieldValidated(field: .username, result: .usernameAvailable), user: nil, at: "16:00:09", session: form(.empty, []))
        // Yellow while the confirmation does not match yet: a hint, not an error.
        script.step(
            .fieldValidated(field: .passwordConfirmation, result: .passwordsDoNotMatch), user: nil, at: "16:00:15",
            session: form(.empty, [doNotMatch]))
        script.step(
            .fieldValidated(field: .passwordConfirmation, result: .passwordsMatch), user: nil, at: "16:00:17",
            session: form(.empty, [match]))
        // Messages accumulate, one per field, sorted by field name.
        script.step(.fieldValidated(field: .username, result: .usernameInUse), user: nil, at: "16:00:20", session: form(.error, [match, inUse]))
        script.step(.fieldValidated(field: .username, result: .usernameAvailable), user: nil, at: "16:00:25", session: form(.empty, [match]))
        // Someone took the name between the check and the submit.
        script.step(
            .accountCreationFailed(field: .username, reason: .usernameInUse), user: nil, at: "16:00:30",
            session: form(.error, [match, inUse]))
        script.step(.fieldValidated(field: .username, result: .usernameAvailable), user: nil, at: "16:00:40", session: form(.empty, [match]))

        script.step(
            .captchaPresented(purpose: .createAccount), user: nil, at: "16:00:45",
            session: Self.session(Flow(id: signUp, screen: .captcha, state: .empty)))
        let wrongCode = [FieldMessage(field: "captcha", "Wrong code. Please try again.", .error)]
        script.step(
            .captchaFailed, user: nil, at: "16:00:55",
            session: Self.session(Flow(id: signUp, screen: .captcha, state: .error, fieldMessages: wrongCode)))
        script.step(
            .captchaAlternativesViewed, user: nil, at: "16:01:05",
            session: Self.session(
                Flow(
                    id: signUp, screen: .captcha, state: .error, fieldMessages: wrongCode,
                    systemMessage: Message(
                        "Can't complete the CAPTCHA? You can also create an account on the website, or ask an administrator to create one for you.", .info))))
        script.step(
            .captchaFailed, user: nil, at: "16:01:20",
            session: Self.session(Flow(id: signUp, screen: .captcha, state: .error, fieldMessages: wrongCode)))
        // Passed: the form again, as it rests; only `account_created` is its success.
        script.step(.captchaPassed, user: nil, at: "16:01:30", session: form(.empty, []))
        script.step(
            .accountCreated, user: "bob", at: "16:01:32",
            session: form(.success, [], system: Message("Your account has been created.", .success), user: "bob"))
        let bob = SignedInUser(user: "bob", since: FlowTime.at("16:01:33"), method: .password, secondFactor: false)
        script.step(
            .signInSucceeded(method: .password, secondFactor: false), user: "bob", at: "16:01:33",
            session: Self.session(Flow(id: signUp, user: "bob", screen: .signedIn, state: .success), signedIn: bob))
    }

    @Test("a CAPTCHA on the login form returns to it when passed")
    func captchaOnLogin() {
        var script = FlowScript(policy: .mediawiki, device: Self.device)
        let login = FlowID.make(1)
        script.step(
            .signInFailed(method: .password, reason: .invalidPassword), user: "alice", at: "16:00:00",
            session: Self.session(Flow(id: login, user: "alice", screen: .signIn, state: .error, fieldMessages: Self.invalidPassword)))
        script.step(
            .captchaPresented(purpose: .signIn), user: "alice", at: "16:00:01",
            session: Self.session(Flow(id: login, user: "alice", screen: .captcha, state: .empty)))
        script.step(
            .captchaPassed, user: "alice", at: "16:00:09",
            session: Self.session(Flow(id: login, user: "alice", screen: .signIn, state: .empty)))
        script.step(
            .signInStarted(method: .password), user: "alice", at: "16:00:12",
            session: Self.session(Flow(id: login, user: "alice", screen: .signIn, state: .loading)))
    }
}
