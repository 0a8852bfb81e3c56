import OnboardingModel

/// What a lockout counts separately.
public enum LockoutFactor: String, WireEnum, Comparable {
    /// Password, passcode and biometric attempts.
    case password
    /// Second-factor codes (TOTP, SMS, email, recovery codes).
    case secondFactor = "second_factor"

    public static func < (lhs: LockoutFactor, rhs: LockoutFactor) -> Bool { lhs.wireCode < rhs.wireCode }
}

/// One lockout counter: a user (or `nil` for attempts on an account nobody could name) on one
/// device, for one factor. The server also keys `(user, factor)` across devices (`device == nil`).
public struct LockoutKey: Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
    public var user: String?
    public var device: String?
    public var factor: LockoutFactor

    public init(user: String?, device: String?, factor: LockoutFactor) {
        self.user = user
        self.device = device
        self.factor = factor
    }

    public static func < (lhs: LockoutKey, rhs: LockoutKey) -> Bool {
        (lhs.user ?? "", lhs.device ?? "", lhs.factor) < (rhs.user ?? "", rhs.device ?? "", rhs.factor)
    }

    public var description: String {
        "\(user ?? "(unknown user)")@\(device ?? "(all devices)")/\(factor.rawValue)"
    }
}

extension SignInFailureReason {
    /// A guess at a credential: counted toward the lockout (docs/lockout.md § What counts as a failure).
    public var isCountedFailure: Bool {
        switch self {
        case .invalidPassword, .invalidPasscode, .unknownUser, .biometricFailed: true
        case .networkUnavailable, .serverError, .cancelled: false
        }
    }
}
