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
    // shared device: the "Switch or Add User" screen
    /// The user tapped "Switch or Add User": `switch_user` shows the device's users.
    case userSwitchOpened = "user_switch_opened"
    /// The user tapped "Back" on "Switch or Add User": the selection is kept and `sign_in`
    /// shows the selected user.
    case userSwitchClosed = "user_switch_closed"
    // sign-in screen
    /// What a sign-in screen offered, top to bottom: providers, password, passcode, the
    /// biometric badge; and the platform the device says it is (App Store guideline 4.8).
    case signInOptionsShown = "sign_in_options_shown"
    // server-side abuse
    /// A server cut a client off (or the client gave up) before any sign-in completed:
    /// pre-authentication abuse as sshd logs it. Counted only by client address by a lockout.
    case signInAborted = "sign_in_aborted"
    // imported identity-provider logs
    /// An identity provider locked an account itself, as its own log records it (docs/importers.md):
    /// the real enforcement, set beside the lockout lab's replay. Not a failure; the lockout
    /// engine counts nothing for it.
    case accountLocked = "account_locked"
    // imports
    /// An import of a foreign authentication log appended events: what it read, appended and
    /// left out, by kind (docs/importers.md § The summary in the store). Names no user.
    case logImported = "log_imported"

    /// The type's two-byte code in the binary record.
    public var code: UInt16 { UInt16(wireCode) + 1 }

    /// The type with binary code `code`.
    public init?(code: UInt16) {
        guard code >= 1, code <= UInt16(UInt8.max) else { return nil }
        self.init(wireCode: UInt8(code - 1))
    }

    /// The type's row of the schema table (``EventSchema``).
    @inline(__always)
    public var schema: EventSchema { EventSchema.table[Int(wireCode)] }

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

    /// The table's columns the codecs ask for on every event, each one flat array by type.
    private static let schemaTable: [[[FieldSpec]]] = EventSchema.table.map(\.schemas)
    private static let fieldTable: [[FieldSpec]] = schemaTable.map { $0.last! }
    private static let schemaVersions: [UInt8] = EventSchema.table.map(\.version)
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
        /// An ordered list of 1…`maximumCount` distinct names of a closed set; stored as a count
        /// byte and each name's index. Not personal data (only text is).
        case choices([String], maximumCount: Int)
    }

    public let name: String
    public let kind: Kind
    public let isOptional: Bool

    /// Whether the field is personal data, sealed with the user's key in a record that names a
    /// user: the text fields (`display_name`, `subtitle`, `image_ref`, `client_address`).
    public var isPersonal: Bool {
        if case .text = kind { return true }
        return false
    }
}

/// The value of one payload field, independent of its event type.
public enum FieldValue: Sendable, Hashable {
    case text(String)
    case choice(UInt8)
    case flag(Bool)
    case instant(Timestamp)
    case count(Int)
    /// The codes of a ``FieldSpec/Kind/choices(_:maximumCount:)`` field, in order.
    case choices([UInt8])
}
