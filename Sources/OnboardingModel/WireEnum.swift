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

/// A field of the account-creation form.
public enum FormField: String, WireEnum {
    case username, password, passwordConfirmation = "password_confirmation", email, captcha
}

/// The outcome of validating one form field inline.
public enum ValidationResult: String, WireEnum {
    case passwordsMatch = "passwords_match", passwordsDoNotMatch = "passwords_do_not_match",
         usernameAvailable = "username_available", usernameInUse = "username_in_use",
         usernameInvalid = "username_invalid", passwordTooWeak = "password_too_weak"
}

/// Why account creation failed.
public enum AccountCreationFailureReason: String, WireEnum {
    case usernameInUse = "username_in_use", usernameInvalid = "username_invalid",
         passwordTooWeak = "password_too_weak", passwordsDoNotMatch = "passwords_do_not_match",
         captchaFailed = "captcha_failed", networkUnavailable = "network_unavailable",
         serverError = "server_error"
}

/// Why a lockout was lifted.
public enum LockoutClearReason: String, WireEnum {
    case admin, passwordReset = "password_reset", passcodeReset = "passcode_reset"
}
