import Foundation
import OnboardingModel

/// Per device: who is signed in and what the sign-in flow shows now (DESIGN.md §5 Session).
///
/// A pure fold: every screen, state and message follows from the records and the lockout
/// decision they led to, never from a clock. The messages are ``SessionText``'s.
///
/// ```swift
/// var state = OnboardingState(policy: .mediawiki)
/// for record in log { state.apply(record) }
/// let flow = state.session.session(device: "phone-1").flow
/// flow.screen           // .lockedOut
/// flow.systemMessage    // "You have made too many recent login attempts. Please wait 5 minutes …"
/// ```
///
/// Decisions where the design documents are silent:
/// - `sign_in_started` shows `sign_in` (loading), except while the same flow is on
///   `second_factor`: then it is the code being submitted and the screen stays.
/// - `signed_out` always returns to `sign_in` for the user who left (seed 002: the sign-in screen
///   shows the previous user by default); `switch_user` is shown after `user_added`, which happens
///   from the "Switch or Add User" screen.
/// - An event without a `user` keeps the flow's user while it belongs to the same flow
///   (`session`), so an account-creation or reset flow remembers whom it is about.
/// - Inline validation messages go under the field the event names and accumulate within one
///   account-creation flow (one per field); the form is in state `error` while any of them is red,
///   `empty` otherwise (yellow "Passwords do not match" is a hint while typing, not an error).
///   `username_in_use` on the `email` field reads "Email already in use" (seed 001's "email taken").
/// - After a counted failure the lock screen replaces the form as soon as the engine refuses the
///   key (the failure that reaches the limit shows it); `sign_in_throttled` shows the engine's lock
///   (password factor, then second factor) or, when the engine knows none, the app's `retry_after`.
///   A permanent lock has no `lockedUntil`.
/// - `captcha_passed` returns to the screen of the last `captcha_presented` purpose on the device.
public struct SessionProjection: Sendable, Hashable, Codable {
    /// How long after `temporary_password_sent` a new mail may be requested: a minute keeps a
    /// user from flooding their own inbox (and the mail server) while they wait, and is short
    /// enough that someone whose mail went missing is not stuck (seed 001's retry timer).
    public static let defaultResendWaitMilliseconds: Int64 = 60_000

    public private(set) var devices: [String: DeviceSession] = [:]
    /// The resend timer shown on `reset_sent`.
    public let resendWaitMilliseconds: Int64
    /// While a CAPTCHA is shown on a device: what it is for, so `captcha_passed` returns there.
    private var captchaPurposes: [String: CaptchaPurpose] = [:]

    public init() {
        self.init(resendWaitMilliseconds: SessionProjection.defaultResendWaitMilliseconds)
    }

    public init(resendWaitMilliseconds: Int64) {
        precondition(resendWaitMilliseconds > 0, "the resend timer must be positive (got \(resendWaitMilliseconds) ms)")
        self.resendWaitMilliseconds = resendWaitMilliseconds
    }

    /// `lockout` is the lockout state *after* this record was applied to it.
    public mutating func apply(_ record: Record, lockout: LockoutEngine) {
        let event = record.event
        switch event.payload {
        case .userProfileUpdated, .userRemoved, .passcodeSet, .passcodeChanged, .biometricEnabled, .biometricDisabled, .userForgotten:
            return // no screen changes; decided before touching the device table
        default:
            break
        }
        // One lookup per event: the position found here is where the device's session is written back.
        let index = devices.index(forKey: event.device)
        var device = index.map { devices.values[$0] } ?? DeviceSession(device: event.device)
        let before = device.flow
        let sameFlow = event.session == before.session
        // Every handled event starts from a clean screen of the event's flow; the cases say what
        // carries over.
        var flow = Flow(session: event.session, user: event.user ?? (sameFlow ? before.user : nil))

        func decision(_ factor: LockoutFactor) -> LockoutDecision {
            lockout.decide(lockout.key(user: event.user, device: event.device, factor: factor), at: event.at)
        }

        switch event.payload {
        case .signInStarted:
            flow.screen = sameFlow && before.screen == .secondFactor ? .secondFactor : .signIn
            flow.state = .loading

        case let .signInFailed(_, reason):
            if reason.isCountedFailure, SessionProjection.showLock(decision(.password), on: &flow) { break }
            flow.screen = .signIn
            flow.state = .error
            switch reason {
            case .invalidPassword: flow.fieldMessages = [FieldMessage(field: "password", SessionText.invalidPassword, .error)]
            case .invalidPasscode: flow.fieldMessages = [FieldMessage(field: "passcode", SessionText.invalidPasscode, .error)]
            case .unknownUser: flow.fieldMessages = [FieldMessage(field: "username", SessionText.unknownUser, .error)]
            case .biometricFailed: flow.systemMessage = Message(SessionText.biometricFailed, .error)
            case .networkUnavailable: flow.systemMessage = Message(SessionText.noConnection, .error)
            case .serverError: flow.systemMessage = Message(SessionText.serverError, .error)
            case .cancelled: flow.state = .empty
            }

        case let .signInThrottled(_, retryAfter):
            // The app refused the attempt because of a lock; say what the engine knows of it, or
            // else the wait the app recorded.
            let lock = [decision(.password), decision(.secondFactor)].first { !$0.isAllowed }
            if let lock, SessionProjection.showLock(lock, on: &flow) {
                if case .locked = lock { flow.lockedUntil = retryAfter }
            } else {
                flow.screen = .lockedOut
                flow.state = .error
                let wait = retryAfter.millisecondsSince1970 - event.at.millisecondsSince1970
                flow.systemMessage = Message(SessionText.tooManyAttempts(waitMilliseconds: wait), .error)
                flow.lockedUntil = retryAfter
            }

        case .secondFactorRequired:
            flow.screen = .secondFactor

        case .secondFactorFailed:
            if SessionProjection.showLock(decision(.secondFactor), on: &flow) { break }
            flow.screen = .secondFactor
            flow.state = .error
            flow.fieldMessages = [FieldMessage(field: "second_factor_code", SessionText.verificationFailed, .error)]

        case .secondFactorSucceeded:
            flow.screen = .secondFactor
            flow.state = .success

        case let .signInSucceeded(method, secondFactor):
            device.signedIn = event.user.map { SignedInUser(user: $0, since: event.at, method: method, secondFactor: secondFactor) }
            flow.screen = .signedIn
            flow.state = .success

        case .signedOut(let reason):
            device.signedIn = nil
            switch reason {
            case .user: break
            case .sessionExpired: flow.systemMessage = Message(SessionText.sessionExpired, .info)
            case .revoked: flow.systemMessage = Message(SessionText.sessionRevoked, .warning)
            }

        case .captchaPresented(let purpose):
            captchaPurposes[event.device] = purpose
            flow.screen = .captcha

        case .captchaFailed:
            flow.screen = .captcha
            flow.state = .error
            flow.fieldMessages = [FieldMessage(field: "captcha", SessionText.wrongCaptcha, .error)]

        case .captchaPassed:
            let purpose = captchaPurposes.removeValue(forKey: event.device) ?? .signIn
            flow.screen = purpose == .createAccount ? .createAccount : .signIn
            flow.state = .success

        case .captchaAlternativesViewed:
            // Information beside the CAPTCHA: what the user typed and was told stays.
            flow.screen = .captcha
            flow.state = sameFlow && before.screen == .captcha ? before.state : .empty
            flow.fieldMessages = sameFlow && before.screen == .captcha ? before.fieldMessages : []
            flow.systemMessage = Message(SessionText.captchaAlternatives, .info)

        case .passwordResetRequested:
            flow.screen = .forgotPassword
            flow.state = .loading

        case .temporaryPasswordSent:
            flow.screen = .resetSent
            flow.state = .success
            flow.systemMessage = Message(SessionText.temporaryPasswordSent, .success)
            flow.resend = ResendInfo(availableAt: event.at.adding(milliseconds: resendWaitMilliseconds),
                                     help: SessionText.resendHelp)

        case .passwordChanged:
            let signedIn = device.signedIn.map { $0.user == event.user } ?? false
            flow.screen = signedIn ? .signedIn : .signIn
            flow.state = .success
            flow.systemMessage = Message(SessionText.passwordChanged, .success)

        case .accountCreationStarted:
            flow.screen = .createAccount

        case let .fieldValidated(field, result):
            flow.screen = .createAccount
            flow.fieldMessages = sameFlow && before.screen == .createAccount ? before.fieldMessages : []
            switch result {
            case .usernameAvailable: flow.fieldMessages.removeAll { $0.field == field.rawValue }
            case .usernameInUse: flow.setFieldMessage(FieldMessage(field: field.rawValue, field.inUseText, .error))
            case .usernameInvalid: flow.setFieldMessage(FieldMessage(field: field.rawValue, SessionText.usernameInvalid, .error))
            case .passwordTooWeak: flow.setFieldMessage(FieldMessage(field: field.rawValue, SessionText.passwordTooWeak, .error))
            case .passwordsDoNotMatch:
                flow.setFieldMessage(FieldMessage(field: field.rawValue, SessionText.passwordsDoNotMatch, .warning))
            case .passwordsMatch: flow.setFieldMessage(FieldMessage(field: field.rawValue, SessionText.passwordsMatch, .success))
            }
            flow.state = flow.fieldMessages.contains { $0.severity == .error } ? .error : .empty

        case let .accountCreationFailed(field, reason):
            flow.screen = .createAccount
            flow.state = .error
            flow.fieldMessages = sameFlow && before.screen == .createAccount ? before.fieldMessages : []
            switch reason.problem {
            case let .field(naturalField, text):
                let field = field ?? naturalField
                flow.setFieldMessage(FieldMessage(field: field.rawValue, reason == .usernameInUse ? field.inUseText : text, .error))
            case .system(let text):
                flow.systemMessage = Message(text, .error)
            }

        case .accountCreated:
            flow.screen = .createAccount
            flow.state = .success
            flow.systemMessage = Message(SessionText.accountCreated, .success)

        case .userSelected:
            flow.screen = .signIn

        case .userAdded:
            flow.screen = .switchUser
            flow.state = .success

        case .passcodeResetStarted:
            flow.screen = .forgotPassword

        case .passcodeResetCompleted:
            flow.screen = .signIn
            flow.state = .success
            flow.systemMessage = Message(SessionText.passcodeReset, .success)

        case .lockoutCleared:
            // Only a lock screen waiting for this user changes; any other screen stays as it is.
            guard before.screen == .lockedOut, before.user == event.user else { return }
            flow.screen = .signIn

        case .userProfileUpdated, .userRemoved, .passcodeSet, .passcodeChanged, .biometricEnabled, .biometricDisabled, .userForgotten:
            return // returned above already
        }

        device.flow = flow
        if let index {
            devices.values[index] = device
        } else {
            devices[event.device] = device
        }
    }

    /// Puts `flow` on the lock screen when `decision` refuses attempts; `false` when it allows them.
    private static func showLock(_ decision: LockoutDecision, on flow: inout Flow) -> Bool {
        switch decision {
        case .allowed: return false
        case .locked(let lock):
            flow.lockedUntil = lock.until
            flow.systemMessage = Message(lock.message, .error)
        case .permanentlyLocked(let lock):
            flow.lockedUntil = nil
            flow.systemMessage = Message(lock.message, .error)
        }
        flow.screen = .lockedOut
        flow.state = .error
        flow.fieldMessages = []
        return true
    }

    /// The device's session (the empty sign-in screen for a device never seen).
    public func session(device: String) -> DeviceSession {
        devices[device] ?? DeviceSession(device: device)
    }
}

extension Flow {
    /// Replaces the message under `message.field`, keeping the list sorted by field name.
    mutating func setFieldMessage(_ message: FieldMessage) {
        fieldMessages.removeAll { $0.field == message.field }
        let index = fieldMessages.firstIndex { $0.field > message.field } ?? fieldMessages.endIndex
        fieldMessages.insert(message, at: index)
    }
}

extension FormField {
    /// "Username already in use", or its email form when the form signs up with an email address.
    var inUseText: String { self == .email ? SessionText.emailInUse : SessionText.usernameInUse }
}

extension AccountCreationFailureReason {
    enum Problem {
        /// Shown under a field (the event's `field` when it names one, else this one).
        case field(FormField, String)
        case system(String)
    }

    var problem: Problem {
        switch self {
        case .usernameInUse: .field(.username, SessionText.usernameInUse)
        case .usernameInvalid: .field(.username, SessionText.usernameInvalid)
        case .passwordTooWeak: .field(.password, SessionText.passwordTooWeak)
        case .passwordsDoNotMatch: .field(.passwordConfirmation, SessionText.passwordsDoNotMatch)
        case .captchaFailed: .field(.captcha, SessionText.wrongCaptcha)
        case .networkUnavailable: .system(SessionText.noConnection)
        case .serverError: .system(SessionText.serverError)
        }
    }
}

/// One device's session state.
public struct DeviceSession: Sendable, Hashable, Codable {
    public var device: String
    public var signedIn: SignedInUser?
    public var flow: Flow

    public init(device: String, signedIn: SignedInUser? = nil, flow: Flow = Flow()) {
        self.device = device
        self.signedIn = signedIn
        self.flow = flow
    }
}

public struct SignedInUser: Sendable, Hashable, Codable {
    public var user: String
    public var since: Timestamp
    public var method: SignInMethod
    public var secondFactor: Bool

    public init(user: String, since: Timestamp, method: SignInMethod, secondFactor: Bool) {
        self.user = user
        self.since = since
        self.method = method
        self.secondFactor = secondFactor
    }
}

/// What the current onboarding flow shows.
public struct Flow: Sendable, Hashable, Codable {
    /// The flow instance (the events' `session`).
    public var session: UUID?
    /// The user the flow is about, when known.
    public var user: String?
    public var screen: Screen
    public var state: ScreenState
    /// Inline messages under fields, sorted by field name.
    public var fieldMessages: [FieldMessage]
    public var systemMessage: Message?
    /// On `reset_sent`: when a resend is allowed and what to do if no mail arrives.
    public var resend: ResendInfo?
    /// On `locked_out` with a temporary lock: when a new attempt is allowed.
    public var lockedUntil: Timestamp?

    public init(session: UUID? = nil, user: String? = nil, screen: Screen = .signIn, state: ScreenState = .empty,
                fieldMessages: [FieldMessage] = [], systemMessage: Message? = nil, resend: ResendInfo? = nil,
                lockedUntil: Timestamp? = nil) {
        self.session = session
        self.user = user
        self.screen = screen
        self.state = state
        self.fieldMessages = fieldMessages
        self.systemMessage = systemMessage
        self.resend = resend
        self.lockedUntil = lockedUntil
    }
}

public enum Screen: String, Sendable, Hashable, Codable, CaseIterable {
    case signIn = "sign_in", secondFactor = "second_factor", captcha, createAccount = "create_account",
         forgotPassword = "forgot_password", resetSent = "reset_sent", switchUser = "switch_user",
         signedIn = "signed_in", lockedOut = "locked_out"
}

public enum ScreenState: String, Sendable, Hashable, Codable, CaseIterable {
    case empty, loading, error, success
}

public enum Severity: String, Sendable, Hashable, Codable, CaseIterable {
    /// Red.
    case error
    /// Yellow.
    case warning
    /// Green.
    case success
    /// Neutral.
    case info
}

public struct Message: Sendable, Hashable, Codable {
    public var text: String
    public var severity: Severity
    public init(_ text: String, _ severity: Severity) {
        self.text = text
        self.severity = severity
    }
}

public struct FieldMessage: Sendable, Hashable, Codable {
    /// The field's name: `username`, `password`, `passcode`, `password_confirmation`,
    /// `second_factor_code`, `captcha`, `email`.
    public var field: String
    public var text: String
    public var severity: Severity
    public init(field: String, _ text: String, _ severity: Severity) {
        self.field = field
        self.text = text
        self.severity = severity
    }
}

public struct ResendInfo: Sendable, Hashable, Codable {
    public var availableAt: Timestamp
    public var help: String
    public init(availableAt: Timestamp, help: String) {
        self.availableAt = availableAt
        self.help = help
    }
}
