/// A closed set of values with a JSON name (`rawValue`) and a one-byte binary code.
///
/// The binary code is the case's position in `allCases`, so **cases are only ever appended**,
/// never reordered or removed; `docs/format.md` lists every code and a test pins them.
public protocol WireEnum: RawRepresentable, CaseIterable, Sendable, Hashable, Codable
where RawValue == String, AllCases == [Self] {}

extension WireEnum {
    /// The case's one-byte code in the binary record.
    public var wireCode: UInt8 {
        // A payload-free enum of 2…256 cases is stored as its case's declaration index, which is
        // its position in `allCases`: read it directly instead of building `allCases` (an array)
        // on every encode. The wire-code tests pin the result against `allCases`.
        if MemoryLayout<Self>.size == 1 { return unsafeBitCast(self, to: UInt8.self) }
        return UInt8(Self.allCases.firstIndex(of: self)!)
    }

    /// The case with binary code `code`, or `nil` for an unknown code.
    public init?(wireCode code: UInt8) {
        let cases = Self.allCases
        guard Int(code) < cases.count else { return nil }
        self = cases[Int(code)]
    }

    /// JSON names of all cases, in code order.
    public static var wireNames: [String] { allCases.map(\.rawValue) }
}

/// How a user's passcode is composed.
public enum PasscodePolicy: String, WireEnum { case numeric, alphanumeric }

/// Why a user was removed from a shared device.
public enum UserRemovalReason: String, WireEnum {
    case userRequest = "user_request", admin, passcodeRetryLimit = "passcode_retry_limit"
}

/// The biometric sensor a user enabled.
public enum BiometricKind: String, WireEnum { case face, touch, fingerprint }

/// How a sign-in was attempted.
public enum SignInMethod: String, WireEnum {
    case password, passcode, biometric, apple, google, other
}

/// Why a sign-in attempt failed. Only guesses count toward a lockout: `networkUnavailable`,
/// `serverError` and `cancelled` are recorded but never counted.
public enum SignInFailureReason: String, WireEnum {
    case invalidPassword = "invalid_password", invalidPasscode = "invalid_passcode",
        unknownUser = "unknown_user", biometricFailed = "biometric_failed",
        networkUnavailable = "network_unavailable", serverError = "server_error", cancelled
}

/// Why a client was cut off (or gave up) before a sign-in completed, as a server logs it
/// (`sign_in_aborted`; docs/events.md lists the sshd lines behind each reason). None is a guess
/// at an account: a lockout counts them only by client address (docs/lockout.md § By address).
///
/// ```swift
/// Payload.signInAborted(reason: .tooManyFailures, clientAddress: "203.0.113.9")
/// SignInAbortReason(rawValue: "no_identification") // .noIdentification
/// ```
public enum SignInAbortReason: String, WireEnum {
    /// sshd: "maximum authentication attempts exceeded", "Disconnecting: Too many authentication failures".
    case tooManyFailures = "too_many_failures"
    /// TCP wrappers: "refused connect from …".
    case refused
    /// "Received disconnect … 3: …: Auth fail": the client reports that it failed.
    case clientGaveUp = "client_gave_up"
    /// "Change of username or service not allowed".
    case userChanged = "user_changed"
    /// "Did not receive identification string", "kex_exchange_identification: …".
    case noIdentification = "no_identification"
    /// "Bad protocol version identification", "invalid protocol identifier".
    case badProtocol = "bad_protocol"
    /// "Connection closed/reset by … [preauth]", "Disconnected from … [preauth]", "Read from socket failed".
    case closedBeforeAuthentication = "closed_before_authentication"
    /// "Unable to negotiate …", "no matching … found".
    case negotiationFailed = "negotiation_failed"
    /// "Received disconnect … 14: No supported authentication methods available".
    case noAuthenticationMethods = "no_authentication_methods"
    /// "banner exchange: … invalid format".
    case bannerError = "banner_error"
    /// "Timeout before authentication".
    case timeout
}

/// The second factor asked for or used.
public enum SecondFactorMethod: String, WireEnum {
    case totp, sms, email, recoveryCode = "recovery_code"
}

/// Why a session ended.
public enum SignOutReason: String, WireEnum {
    case user, sessionExpired = "session_expired", revoked
}

/// Where a CAPTCHA was shown.
public enum CaptchaPurpose: String, WireEnum {
    case signIn = "sign_in", createAccount = "create_account"
}

/// How the user identified the account whose password to reset.
public enum ResetRoute: String, WireEnum { case username, email }

/// A field of an onboarding form: the fields the session projection names.
///
/// The first five are those of vocabulary schema 1 (the account-creation form); `phone`,
/// `passcode` and `second_factor_code` came with schema 2 of `field_validated` and
/// `account_creation_failed` and with `field_edited`.
public enum FormField: String, WireEnum {
    case username, password, passwordConfirmation = "password_confirmation", email, captcha,
        phone, passcode, secondFactorCode = "second_factor_code"
}

/// The outcome of validating one form field inline.
///
/// The first six are those of `field_validated` schema 1; the email and phone results came with
/// schema 2.
public enum ValidationResult: String, WireEnum {
    case passwordsMatch = "passwords_match", passwordsDoNotMatch = "passwords_do_not_match",
        usernameAvailable = "username_available", usernameInUse = "username_in_use",
        usernameInvalid = "username_invalid", passwordTooWeak = "password_too_weak",
        emailAvailable = "email_available", emailInUse = "email_in_use", emailInvalid = "email_invalid",
        phoneInvalid = "phone_invalid"
}

/// Why account creation failed.
///
/// The first seven are those of `account_creation_failed` schema 1; the email and phone reasons
/// came with schema 2.
public enum AccountCreationFailureReason: String, WireEnum {
    case usernameInUse = "username_in_use", usernameInvalid = "username_invalid",
        passwordTooWeak = "password_too_weak", passwordsDoNotMatch = "passwords_do_not_match",
        captchaFailed = "captcha_failed", networkUnavailable = "network_unavailable",
        serverError = "server_error", emailInUse = "email_in_use", emailInvalid = "email_invalid",
        phoneInvalid = "phone_invalid"
}

/// What kind of identifier the user typed to name their account (never the identifier itself).
public enum IdentifierKind: String, WireEnum { case username, email, phone }

/// Why a password reset request failed. Only `unknown_account` is about what the user typed;
/// none of them counts toward a lockout.
public enum PasswordResetFailureReason: String, WireEnum {
    case unknownAccount = "unknown_account", networkUnavailable = "network_unavailable",
        serverError = "server_error", rateLimited = "rate_limited"
}

/// The identity provider whose log recorded an `account_locked`: the lock it enforced itself.
public enum AccountLockSource: String, WireEnum {
    case keycloak, okta, entra, windows
}

/// Why a lockout was lifted.
public enum LockoutClearReason: String, WireEnum {
    case admin, passwordReset = "password_reset", passcodeReset = "passcode_reset"
}
