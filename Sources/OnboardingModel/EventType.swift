/// Every event type of vocabulary v1 (DESIGN.md §4), with its JSON name.
///
/// The binary type code is the position in `allCases` plus one: **append new types at the
/// end**. Every type carries a schema version; a record whose version this build does not know
/// is refused rather than misread.
public enum EventType: String, WireEnum {
    // multi-user
    case userAdded = "user_added"
    case userProfileUpdated = "user_profile_updated"
    case userSelected = "user_selected"
    case userRemoved = "user_removed"
    case passcodeSet = "passcode_set"
    case passcodeChanged = "passcode_changed"
    case passcodeResetStarted = "passcode_reset_started"
    case passcodeResetCompleted = "passcode_reset_completed"
    case biometricEnabled = "biometric_enabled"
    case biometricDisabled = "biometric_disabled"
    // sign-in
    case signInStarted = "sign_in_started"
    case signInFailed = "sign_in_failed"
    case signInThrottled = "sign_in_throttled"
    case secondFactorRequired = "second_factor_required"
    case secondFactorFailed = "second_factor_failed"
    case secondFactorSucceeded = "second_factor_succeeded"
    case signInSucceeded = "sign_in_succeeded"
    case signedOut = "signed_out"
    // captcha
    case captchaPresented = "captcha_presented"
    case captchaFailed = "captcha_failed"
    case captchaPassed = "captcha_passed"
    case captchaAlternativesViewed = "captcha_alternatives_viewed"
    // reset
    case passwordResetRequested = "password_reset_requested"
    case temporaryPasswordSent = "temporary_password_sent"
    case passwordChanged = "password_changed"
    // sign-up
    case accountCreationStarted = "account_creation_started"
    case fieldValidated = "field_validated"
    case accountCreationFailed = "account_creation_failed"
    case accountCreated = "account_created"
    // admin
    case lockoutCleared = "lockout_cleared"
    // erasure
    /// The user's key was destroyed: their personal fields read as erased from here on. The
    /// event names the user by its pseudonym literal only (docs/audit.md § Erasure).
    case userForgotten = "user_forgotten"

    /// The type's two-byte code in the binary record.
    public var code: UInt16 { UInt16(wireCode) + 1 }

    /// The type with binary code `code`.
    public init?(code: UInt16) {
        guard code >= 1, code <= UInt16(UInt8.max) else { return nil }
        self.init(wireCode: UInt8(code - 1))
    }

    /// Version of this type's payload layout. Every v1 type is at schema 1.
    public var schemaVersion: UInt8 { 1 }

    /// The payload fields, in their canonical (JSON and binary) order.
    public var fields: [FieldSpec] { EventType.fieldTable[Int(wireCode)] }

    /// Every type's fields, built once: the codecs ask for them for every event.
    private static let fieldTable: [[FieldSpec]] = EventType.allCases.map(\.fieldDefinitions)

    private var fieldDefinitions: [FieldSpec] {
        switch self {
        case .userAdded:
            [.text("display_name"), .text("subtitle", optional: true), .text("image_ref", optional: true),
             .choice("passcode_policy", PasscodePolicy.self), .count("passcode_min_length", 1...64)]
        case .userProfileUpdated:
            [.text("display_name", optional: true), .text("subtitle", optional: true),
             .text("image_ref", optional: true)]
        case .userRemoved: [.choice("reason", UserRemovalReason.self)]
        case .biometricEnabled: [.choice("kind", BiometricKind.self)]
        case .signInStarted: [.choice("method", SignInMethod.self)]
        case .signInFailed: [.choice("method", SignInMethod.self), .choice("reason", SignInFailureReason.self)]
        case .signInThrottled: [.choice("method", SignInMethod.self), .instant("retry_after")]
        case .secondFactorRequired, .secondFactorFailed, .secondFactorSucceeded:
            [.choice("method", SecondFactorMethod.self)]
        case .signInSucceeded: [.choice("method", SignInMethod.self), .flag("second_factor")]
        case .signedOut: [.choice("reason", SignOutReason.self)]
        case .captchaPresented: [.choice("purpose", CaptchaPurpose.self)]
        case .passwordResetRequested: [.choice("route", ResetRoute.self)]
        case .passwordChanged: [.flag("forced")]
        case .fieldValidated: [.choice("field", FormField.self), .choice("result", ValidationResult.self)]
        case .accountCreationFailed:
            [.choice("field", FormField.self, optional: true), .choice("reason", AccountCreationFailureReason.self)]
        case .lockoutCleared: [.choice("reason", LockoutClearReason.self)]
        case .userSelected, .passcodeSet, .passcodeChanged, .passcodeResetStarted, .passcodeResetCompleted,
             .biometricDisabled, .captchaFailed, .captchaPassed, .captchaAlternativesViewed,
             .temporaryPasswordSent, .accountCreationStarted, .accountCreated, .userForgotten:
            []
        }
    }
}

/// One payload field of an event type.
public struct FieldSpec: Sendable {
    public enum Kind: Sendable {
        /// Free text, 1…``Limits/maximumTextBytes`` bytes of UTF-8 without control characters.
        case text
        /// One of a closed set of names; stored as the name's index.
        case choice([String])
        case flag
        /// An ISO-8601 UTC time.
        case instant
        /// A whole number within a range.
        case count(ClosedRange<Int>)
    }

    public let name: String
    public let kind: Kind
    public let isOptional: Bool

    static func text(_ name: String, optional: Bool = false) -> FieldSpec {
        FieldSpec(name: name, kind: .text, isOptional: optional)
    }
    static func choice<E: WireEnum>(_ name: String, _ type: E.Type, optional: Bool = false) -> FieldSpec {
        FieldSpec(name: name, kind: .choice(E.wireNames), isOptional: optional)
    }
    static func flag(_ name: String) -> FieldSpec { FieldSpec(name: name, kind: .flag, isOptional: false) }
    static func instant(_ name: String) -> FieldSpec { FieldSpec(name: name, kind: .instant, isOptional: false) }
    static func count(_ name: String, _ range: ClosedRange<Int>) -> FieldSpec {
        FieldSpec(name: name, kind: .count(range), isOptional: false)
    }
}

/// The value of one payload field, independent of its event type.
public enum FieldValue: Sendable, Hashable {
    case text(String)
    case choice(UInt8)
    case flag(Bool)
    case instant(Timestamp)
    case count(Int)
}
