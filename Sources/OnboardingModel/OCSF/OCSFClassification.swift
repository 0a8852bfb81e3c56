/// How one event reads as an OCSF Authentication event: its activity, outcome, severity and a
/// one-line message. Pure and total over the vocabulary; `docs/audit.md` has the same table.
///
/// ```swift
/// let classification = OCSFClassification(signInRelated: .signInFailed(method: .password, reason: .invalidPassword))
/// classification?.status        // .failure
/// classification?.statusDetail  // "INVALID_CREDENTIALS"
/// OCSFClassification(signInRelated: .userSelected) // nil: not sign-in related
/// ```
public struct OCSFClassification: Sendable, Equatable {
    public var activity: OCSFSchema.Activity
    /// The activity's caption, or for `.other` what happened in words ("Password Changed").
    public var activityName: String
    public var status: OCSFSchema.Status
    /// The status caption, or for `.other` the stage reached ("Started", "Second Factor Required").
    public var statusName: String
    /// Why, in the schema's upper-case style (`INVALID_CREDENTIALS`, `ACCOUNT_LOCKED_OUT`).
    public var statusDetail: String?
    public var severity: OCSFSchema.Severity
    /// Whether a second factor was involved, when the event says so.
    public var isMFA: Bool?
    /// The first-factor method of a sign-in attempt, for `auth_protocol` and `logon_type`.
    public var signInMethod: SignInMethod?
    /// One readable line, built only from the event's type and choice fields.
    public var message: String
    /// Whether the event is an Account Change (class 3001, activity Lock) rather than an
    /// Authentication event: a lock an identity provider enforced changes the account, it is no
    /// attempt to sign in. ``activity`` is then ``OCSFSchema/Activity/other`` and unused.
    public var isAccountLock = false

    init(
        activity: OCSFSchema.Activity, activityName: String? = nil, status: OCSFSchema.Status, statusName: String? = nil,
        statusDetail: String? = nil, severity: OCSFSchema.Severity = .informational, isMFA: Bool? = nil,
        signInMethod: SignInMethod? = nil, message: String
    ) {
        self.activity = activity
        self.activityName = activityName ?? activity.caption
        self.status = status
        self.statusName = statusName ?? status.caption
        self.statusDetail = statusDetail
        self.severity = severity
        self.isMFA = isMFA
        self.signInMethod = signInMethod
        self.message = message
    }

    /// The classification of a sign-in related event, `nil` for every other type.
    ///
    /// Sign-in related: the attempt itself (started, failed, throttled, second factor required,
    /// failed or accepted, succeeded, aborted before authentication), signing out, the CAPTCHA on the sign-in screen, the
    /// password and passcode reset and change flows, and a lockout being cleared. Not: managing
    /// the users of a shared device, enrolling a passcode or biometric, account creation.
    public init?(signInRelated payload: Payload) {
        switch payload {
        case let .signInStarted(method, identifierKind):
            let identifier = identifierKind.map { ", identifier: \($0.rawValue)" } ?? ""
            self.init(
                activity: .logon, status: .other, statusName: "Started", signInMethod: method,
                message: "Sign-in attempt started (method: \(method.rawValue)\(identifier))")
        case let .signInFailed(method, reason, _):
            self.init(
                activity: .logon, status: .failure, statusDetail: OCSFClassification.detail(reason),
                severity: reason.isGuess ? .low : .informational, signInMethod: method,
                message: "Sign-in failed: \(reason.rawValue) (method: \(method.rawValue))")
        case let .signInThrottled(method, retryAfter, _):
            self.init(
                activity: .logon, status: .failure, statusDetail: "ACCOUNT_LOCKED_OUT", severity: .medium,
                signInMethod: method,
                message: "Sign-in refused: locked out after too many recent attempts, retry after \(retryAfter.iso8601) (method: \(method.rawValue))")
        case .secondFactorRequired(let method):
            self.init(
                activity: .logon, status: .other, statusName: "Second Factor Required", isMFA: true,
                message: "Second factor required (method: \(method.rawValue))")
        case .secondFactorFailed(let method, _):
            self.init(
                activity: .logon, status: .failure, statusDetail: "INVALID_CREDENTIALS", severity: .low, isMFA: true,
                message: "Second factor failed (method: \(method.rawValue))")
        case .secondFactorSucceeded(let method):
            self.init(
                activity: .logon, status: .success, isMFA: true,
                message: "Second factor accepted (method: \(method.rawValue))")
        case let .signInSucceeded(method, secondFactor, _):
            self.init(
                activity: .logon, status: .success, isMFA: secondFactor, signInMethod: method,
                message: "Signed in (method: \(method.rawValue), second factor: \(secondFactor ? "yes" : "no"))")
        case .signedOut(let reason):
            let detail =
                switch reason {
                case .user: "LOGOFF_USER_INITIATED"
                case .sessionExpired: "SESSION_EXPIRED"
                case .revoked: "SESSION_REVOKED"
                }
            self.init(
                activity: .logoff, status: .success, statusDetail: detail,
                message: "Signed out (reason: \(reason.rawValue))")
        case .captchaPresented(let purpose):
            self.init(
                activity: .other, activityName: "CAPTCHA", status: .other, statusName: "Presented",
                message: "CAPTCHA presented (purpose: \(purpose.rawValue))")
        case .captchaFailed:
            self.init(
                activity: .other, activityName: "CAPTCHA", status: .failure, statusDetail: "CAPTCHA_FAILED",
                severity: .low, message: "CAPTCHA answer wrong")
        case .captchaPassed:
            self.init(activity: .other, activityName: "CAPTCHA", status: .success, message: "CAPTCHA passed")
        case .passwordResetRequested(let route):
            self.init(
                activity: .other, activityName: "Password Reset", status: .other, statusName: "Requested",
                message: "Password reset requested (route: \(route.rawValue))")
        case .passwordResetStarted:
            self.init(
                activity: .other, activityName: "Password Reset", status: .other, statusName: "Started",
                message: "Password reset started")
        case .passwordResetFailed(let reason):
            self.init(
                activity: .other, activityName: "Password Reset", status: .failure,
                statusDetail: reason == .unknownAccount ? "USER_DOES_NOT_EXIST" : reason.rawValue.uppercased(),
                severity: reason == .rateLimited ? .low : .informational,
                message: "Password reset failed: \(reason.rawValue)")
        case .temporaryPasswordSent:
            self.init(
                activity: .other, activityName: "Password Reset", status: .success,
                message: "Temporary password sent")
        case .passwordChanged(let forced):
            self.init(
                activity: .other, activityName: "Password Change", status: .success,
                statusDetail: forced ? "PASSWORD_CHANGE_REQUIRED" : nil,
                message: "Password changed (forced: \(forced ? "yes" : "no"))")
        case .passcodeChanged:
            self.init(activity: .other, activityName: "Passcode Change", status: .success, message: "Passcode changed")
        case .passcodeResetStarted:
            self.init(
                activity: .other, activityName: "Passcode Reset", status: .other, statusName: "Started",
                message: "Passcode reset started")
        case .passcodeResetCompleted:
            self.init(
                activity: .other, activityName: "Passcode Reset", status: .success,
                message: "Passcode reset completed")
        case let .signInAborted(reason, _):
            // A logon that never reached its credentials check: OCSF's Authentication Logon with
            // status Failure; the reason in the schema's upper-case style.
            self.init(
                activity: .logon, status: .failure, statusDetail: reason.rawValue.uppercased(),
                severity: reason == .tooManyFailures ? .medium : .low,
                message: "Sign-in aborted before authentication: \(reason.rawValue)")
        case .lockoutCleared(let reason):
            self.init(
                activity: .other, activityName: "Lockout Cleared", status: .success,
                statusDetail: reason.rawValue.uppercased(), severity: .medium,
                message: "Lockout cleared (reason: \(reason.rawValue))")
        case let .accountLocked(source, until, _):
            let end = until.map { "until \($0.iso8601)" } ?? "until an administrator unlocks it"
            self.init(
                activity: .other, activityName: OCSFSchema.AccountChange.lockCaption, status: .success,
                statusDetail: until == nil ? "PERMANENT" : "TEMPORARY", severity: .medium,
                message: "Account locked by \(source.rawValue), \(end)")
            isAccountLock = true
        case .userAdded, .userProfileUpdated, .userSelected, .userRemoved, .passcodeSet, .biometricEnabled,
            .biometricDisabled, .captchaAlternativesViewed, .accountCreationStarted, .fieldValidated,
            .accountCreationFailed, .accountCreated, .userForgotten, .fieldEdited, .accountCreationSubmitted,
            .userSwitchOpened, .userSwitchClosed,
            .signInOptionsShown,
            // The store's own note on an import: the imported events are the authentications.
            .logImported:
            return nil
        }
    }

    /// The classification of any event: the sign-in related one, else activity Other named
    /// after the type ("User Added"), a failure for `account_creation_failed`, a success for
    /// the rest (each records something that happened).
    public init(anyEvent payload: Payload) {
        if let classification = OCSFClassification(signInRelated: payload) {
            self = classification
            return
        }
        let name = OCSFClassification.words(payload.type.rawValue)
        if case let .accountCreationFailed(_, reason) = payload {
            self.init(
                activity: .other, activityName: name, status: .failure, statusDetail: reason.rawValue.uppercased(),
                message: "\(name): \(reason.rawValue)")
        } else {
            self.init(activity: .other, activityName: name, status: .success, message: name)
        }
    }

    /// `status_detail` of a failed sign-in: the schema's names where one fits, else our reason.
    static func detail(_ reason: SignInFailureReason) -> String {
        switch reason {
        case .invalidPassword, .invalidPasscode, .biometricFailed: "INVALID_CREDENTIALS"
        case .unknownUser: "USER_DOES_NOT_EXIST"
        case .networkUnavailable, .serverError, .cancelled: reason.rawValue.uppercased()
        }
    }

    /// `user_added` → "User Added".
    static func words(_ typeName: String) -> String {
        typeName.split(separator: "_").map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined(separator: " ")
    }
}

extension SignInFailureReason {
    /// Whether the failure is a guess (counted toward a lockout), as docs/lockout.md § What counts
    /// as a failure defines.
    var isGuess: Bool {
        switch self {
        case .invalidPassword, .invalidPasscode, .unknownUser, .biometricFailed: true
        case .networkUnavailable, .serverError, .cancelled: false
        }
    }
}
