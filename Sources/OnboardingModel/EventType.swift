/// Every event type of the vocabulary (docs/events.md), with its JSON name.
///
/// The binary type code is the position in `allCases` plus one: **append new types at the
/// end**. Every type carries a schema version; a record whose version this build does not know
/// is refused rather than misread. A new schema of a type only appends optional fields or
/// choice values, so a record is written at the lowest schema that holds its values: a log that
/// uses none of a schema's additions is byte for byte what the builds before it wrote.
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
    // form input (schema 2 of the vocabulary)
    /// A form field went from empty to filled, or back; never its content.
    case fieldEdited = "field_edited"
    /// The account-creation form was sent: `create_account` shows loading.
    case accountCreationSubmitted = "account_creation_submitted"
    /// The user opened "Forgot password?": `forgot_password` shows its empty form.
    case passwordResetStarted = "password_reset_started"
    /// A password reset request was refused or could not be sent.
    case passwordResetFailed = "password_reset_failed"

    /// The type's two-byte code in the binary record.
    public var code: UInt16 { UInt16(wireCode) + 1 }

    /// The type with binary code `code`.
    public init?(code: UInt16) {
        guard code >= 1, code <= UInt16(UInt8.max) else { return nil }
        self.init(wireCode: UInt8(code - 1))
    }

    /// The newest version of this type's payload layout (1 for most types; see docs/format.md).
    public var schemaVersion: UInt8 { EventType.schemaVersions[Int(wireCode)] }

    /// The payload fields of the newest schema, in their canonical (JSON and binary) order.
    public var fields: [FieldSpec] { EventType.fieldTable[Int(wireCode)] }

    /// The payload fields of schema `version` (1…``schemaVersion``), `nil` for a version this
    /// build does not know. Each schema is the one before with optional fields or choice values
    /// appended.
    public func fields(schema version: UInt8) -> [FieldSpec]? {
        let schemas = EventType.schemaTable[Int(wireCode)]
        guard version >= 1, Int(version) <= schemas.count else { return nil }
        return schemas[Int(version) - 1]
    }

    /// The lowest schema whose fields hold `values` (given in the order of ``fields``): an
    /// added field must be absent and every choice code within the schema's list.
    public func schemaVersion(holding values: [FieldValue?]) -> UInt8 {
        // Most types have one schema: answered from a byte table, without touching the field lists.
        guard schemaVersion > 1 else { return 1 }
        let schemas = EventType.schemaTable[Int(wireCode)]
        for (index, specs) in schemas.enumerated() where EventType.holds(specs, values) { return UInt8(index + 1) }
        return UInt8(schemas.count)
    }

    private static func holds(_ specs: [FieldSpec], _ values: [FieldValue?]) -> Bool {
        if values.count > specs.count, values[specs.count...].contains(where: { $0 != nil }) { return false }
        for (spec, value) in zip(specs, values) {
            if case .choice(let names) = spec.kind, case .choice(let code)? = value, Int(code) >= names.count { return false }
        }
        return true
    }

    /// Every type's schemas, built once: the codecs ask for them for every event.
    private static let schemaTable: [[[FieldSpec]]] = EventType.allCases.map(\.schemaDefinitions)
    private static let fieldTable: [[FieldSpec]] = schemaTable.map { $0.last! }
    private static let schemaVersions: [UInt8] = schemaTable.map { UInt8($0.count) }

    /// Every schema of the type, oldest first.
    private var schemaDefinitions: [[FieldSpec]] {
        switch self {
        case .signInStarted:
            [[.choice("method", SignInMethod.self)],
             [.choice("method", SignInMethod.self), .choice("identifier_kind", IdentifierKind.self, optional: true)]]
        case .fieldValidated:
            [[.choice("field", FormField.self, firstCases: 5), .choice("result", ValidationResult.self, firstCases: 6)],
             [.choice("field", FormField.self), .choice("result", ValidationResult.self)]]
        case .accountCreationFailed:
            [[.choice("field", FormField.self, optional: true, firstCases: 5),
              .choice("reason", AccountCreationFailureReason.self, firstCases: 7)],
             [.choice("field", FormField.self, optional: true), .choice("reason", AccountCreationFailureReason.self)]]
        case .signInFailed, .signInThrottled, .secondFactorFailed, .signInSucceeded:
            // Schema 2 adds the client's network address (docs/events.md § Client address):
            // personal data, sealed with the user's key like the profile's text fields.
            [signInFields, signInFields + [.clientAddress]]
        default:
            [fieldDefinitions]
        }
    }

    /// The fields of a type with a single schema.
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
        case .secondFactorRequired, .secondFactorSucceeded:
            [.choice("method", SecondFactorMethod.self)]
        case .signedOut: [.choice("reason", SignOutReason.self)]
        case .captchaPresented: [.choice("purpose", CaptchaPurpose.self)]
        case .passwordResetRequested: [.choice("route", ResetRoute.self)]
        case .passwordChanged: [.flag("forced")]
        case .lockoutCleared: [.choice("reason", LockoutClearReason.self)]
        case .fieldEdited: [.choice("field", FormField.self), .flag("filled"), .flag("valid", optional: true)]
        case .passwordResetFailed: [.choice("reason", PasswordResetFailureReason.self)]
        case .userSelected, .passcodeSet, .passcodeChanged, .passcodeResetStarted, .passcodeResetCompleted,
             .biometricDisabled, .captchaFailed, .captchaPassed, .captchaAlternativesViewed,
             .temporaryPasswordSent, .accountCreationStarted, .accountCreated, .userForgotten,
             .accountCreationSubmitted, .passwordResetStarted:
            []
        case .signInStarted, .fieldValidated, .accountCreationFailed,
             .signInFailed, .signInThrottled, .secondFactorFailed, .signInSucceeded:
            preconditionFailure("\(rawValue) has several schemas: see schemaDefinitions")
        }
    }

    /// The schema-1 fields of the sign-in types whose schema 2 appends `client_address`.
    private var signInFields: [FieldSpec] {
        switch self {
        case .signInFailed: [.choice("method", SignInMethod.self), .choice("reason", SignInFailureReason.self)]
        case .signInThrottled: [.choice("method", SignInMethod.self), .instant("retry_after")]
        case .secondFactorFailed: [.choice("method", SecondFactorMethod.self)]
        case .signInSucceeded: [.choice("method", SignInMethod.self), .flag("second_factor")]
        default: preconditionFailure("\(rawValue) has no client address")
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
    /// `firstCases`: an older schema knows only the enum's first cases.
    static func choice<E: WireEnum>(_ name: String, _ type: E.Type, optional: Bool = false, firstCases: Int? = nil) -> FieldSpec {
        FieldSpec(name: name, kind: .choice(Array(E.wireNames.prefix(firstCases ?? Int.max))), isOptional: optional)
    }
    /// The client's network address on a sign-in event: optional text that must be an IPv4 or
    /// IPv6 address in its canonical form (``ClientAddress``).
    static let clientAddress = FieldSpec(name: ClientAddress.fieldName, kind: .text, isOptional: true)
    static func flag(_ name: String, optional: Bool = false) -> FieldSpec { FieldSpec(name: name, kind: .flag, isOptional: optional) }
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
