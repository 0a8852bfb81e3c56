import Foundation

/// The decoder's fast path: one pass over the body straight from the mapped bytes to the typed
/// `Event`, without the per-field `[FieldValue?]` array, `allCases` arrays or the generic
/// UTF-8 validation of the reference decoder (`decodeBody`), which it mirrors field for field.
///
/// It accepts only what the reference decoder accepts, and then decodes the same event: it
/// performs every check the reference decoder and `Event.validate` perform (seq ≥ 1, lengths,
/// presence and flag bytes, choice codes, count ranges, UTF-8, device characters, control
/// characters, time range, the user of `user_forgotten`). On anything unusual it gives up (`nil`) and the caller runs the reference
/// decoder, which names the problem — so error messages stay exactly those of `decodeBody`.
/// `RecordCodecTests` checks the two agree on valid events of every type and on forged bodies.
extension RecordCodec {
    /// `(seq, event)` of a body, or `nil` when the reference decoder must decide.
    static func fastDecodeBody(_ body: UnsafeRawBufferPointer, users: UserDirectory) -> (UInt64, Event)? {
        var reader = FastBodyReader(bytes: body)
        guard let code = reader.uint16(), code >= 1, Int(code) <= WireCases.eventTypes.count else { return nil }
        let type = WireCases.eventTypes[Int(code) - 1]
        // Most records are at schema 1: only a higher one needs the type's newest.
        guard let schema = reader.uint8(), schema == 1 || (schema > 1 && schema <= type.schemaVersion),
              let seq = reader.uint64(), seq >= 1,
              let id = reader.uuid(),
              let at = reader.instant(),
              let deviceLength = reader.uint8(),
              let device = reader.device(byteCount: Int(deviceLength)),
              let hasUser = reader.presence() else { return nil }
        var user: String?
        if hasUser {
            // Events with sealed personal fields (user_added, user_profile_updated, sign-in events
            // with a client address) are rare: the reference decoder opens them.
            guard !type.hasPersonalFields(schema: schema), let ref = reader.userRef() else { return nil }
            user = users.displayName(of: ref)
        }
        // `user_forgotten` names its user by the pseudonym literal (`Event.validate`): with no
        // user, or one this directory still holds by name, the reference decoder refuses it.
        if type == .userForgotten, !(user.map(UserRef.isLiteral) ?? false) { return nil }
        guard let hasSession = reader.presence() else { return nil }
        var session: UUID?
        if hasSession {
            guard let value = reader.uuid() else { return nil }
            session = value
        }
        guard let payload = fastDecodePayload(type, schema: schema, &reader), reader.isAtEnd else { return nil }
        return (seq, Event(id: id, device: device, at: at, user: user, flow: session, payload: payload))
    }

    /// The payload fields of `type` in the order of `EventType.fields` (as `Payload.init(type:fieldValues:)`),
    /// at `schema` (1…`type.schemaVersion`). A record at a newer schema than its values need is
    /// left to the reference decoder, which refuses it.
    private static func fastDecodePayload(_ type: EventType, schema: UInt8, _ reader: inout FastBodyReader) -> Payload? {
        switch type {
        case .userAdded:
            guard let displayName = reader.text(),
                  let subtitle = reader.optionalText(), let imageRef = reader.optionalText(),
                  let policy = reader.choice(WireCases.passcodePolicies),
                  let minimumLength = reader.uint32(), WireCases.passcodeMinimumLengths.contains(Int(minimumLength))
            else { return nil }
            return .userAdded(displayName: displayName, subtitle: subtitle.value, imageRef: imageRef.value,
                              passcodePolicy: policy, passcodeMinLength: Int(minimumLength))
        case .userProfileUpdated:
            guard let displayName = reader.optionalText(), let subtitle = reader.optionalText(),
                  let imageRef = reader.optionalText() else { return nil }
            return .userProfileUpdated(displayName: displayName.value, subtitle: subtitle.value, imageRef: imageRef.value)
        case .userSelected: return .userSelected
        case .userRemoved: return reader.choice(WireCases.userRemovalReasons).map { .userRemoved(reason: $0) }
        case .passcodeSet: return .passcodeSet
        case .passcodeChanged: return .passcodeChanged
        case .passcodeResetStarted: return .passcodeResetStarted
        case .passcodeResetCompleted: return .passcodeResetCompleted
        case .biometricEnabled: return reader.choice(WireCases.biometricKinds).map { .biometricEnabled(kind: $0) }
        case .biometricDisabled: return .biometricDisabled
        case .signInStarted:
            guard let method = reader.choice(WireCases.signInMethods) else { return nil }
            guard schema == 2 else { return .signInStarted(method: method) }
            guard let kind = reader.optionalChoice(WireCases.identifierKinds), let kind = kind.value else { return nil }
            return .signInStarted(method: method, identifierKind: kind)
        case .signInFailed:
            // Schema 2 (a client address) goes to the reference decoder, which checks the address.
            guard schema == 1, let method = reader.choice(WireCases.signInMethods),
                  let reason = reader.choice(WireCases.signInFailureReasons) else { return nil }
            return .signInFailed(method: method, reason: reason)
        case .signInThrottled:
            guard schema == 1, let method = reader.choice(WireCases.signInMethods), let retryAfter = reader.instant() else { return nil }
            return .signInThrottled(method: method, retryAfter: retryAfter)
        case .secondFactorRequired:
            return reader.choice(WireCases.secondFactorMethods).map { .secondFactorRequired(method: $0) }
        case .secondFactorFailed:
            guard schema == 1 else { return nil }
            return reader.choice(WireCases.secondFactorMethods).map { .secondFactorFailed(method: $0) }
        case .secondFactorSucceeded:
            return reader.choice(WireCases.secondFactorMethods).map { .secondFactorSucceeded(method: $0) }
        case .signInSucceeded:
            guard schema == 1, let method = reader.choice(WireCases.signInMethods), let secondFactor = reader.flag() else { return nil }
            return .signInSucceeded(method: method, secondFactor: secondFactor)
        case .signedOut: return reader.choice(WireCases.signOutReasons).map { .signedOut(reason: $0) }
        case .captchaPresented: return reader.choice(WireCases.captchaPurposes).map { .captchaPresented(purpose: $0) }
        case .captchaFailed: return .captchaFailed
        case .captchaPassed: return .captchaPassed
        case .captchaAlternativesViewed: return .captchaAlternativesViewed
        case .passwordResetRequested: return reader.choice(WireCases.resetRoutes).map { .passwordResetRequested(route: $0) }
        case .temporaryPasswordSent: return .temporaryPasswordSent
        case .passwordChanged: return reader.flag().map { .passwordChanged(forced: $0) }
        case .accountCreationStarted: return .accountCreationStarted
        case .fieldValidated:
            guard let field = reader.choice(WireCases.formFields),
                  let result = reader.choice(WireCases.validationResults) else { return nil }
            let newer = field.wireCode >= WireCases.schema1FormFields || result.wireCode >= WireCases.schema1ValidationResults
            guard newer == (schema == 2) else { return nil }
            return .fieldValidated(field: field, result: result)
        case .accountCreationFailed:
            guard let field = reader.optionalChoice(WireCases.formFields),
                  let reason = reader.choice(WireCases.accountCreationFailureReasons) else { return nil }
            let newer = (field.value.map { $0.wireCode >= WireCases.schema1FormFields } ?? false)
                || reason.wireCode >= WireCases.schema1AccountCreationFailureReasons
            guard newer == (schema == 2) else { return nil }
            return .accountCreationFailed(field: field.value, reason: reason)
        case .accountCreated: return .accountCreated
        case .lockoutCleared: return reader.choice(WireCases.lockoutClearReasons).map { .lockoutCleared(reason: $0) }
        case .userForgotten: return .userForgotten
        case .fieldEdited:
            guard let field = reader.choice(WireCases.formFields), let filled = reader.flag(),
                  let valid = reader.optionalFlag() else { return nil }
            return .fieldEdited(field: field, filled: filled, valid: valid.value)
        case .accountCreationSubmitted: return .accountCreationSubmitted
        case .passwordResetStarted: return .passwordResetStarted
        case .passwordResetFailed: return reader.choice(WireCases.passwordResetFailureReasons).map { .passwordResetFailed(reason: $0) }
        }
    }
}

/// Every wire enum's cases, built once: `allCases` of a `String`-backed enum builds a new array
/// on each call, which the reference decoder pays per choice field.
private enum WireCases {
    static let eventTypes = EventType.allCases
    static let passcodePolicies = PasscodePolicy.allCases
    static let userRemovalReasons = UserRemovalReason.allCases
    static let biometricKinds = BiometricKind.allCases
    static let signInMethods = SignInMethod.allCases
    static let signInFailureReasons = SignInFailureReason.allCases
    static let secondFactorMethods = SecondFactorMethod.allCases
    static let signOutReasons = SignOutReason.allCases
    static let captchaPurposes = CaptchaPurpose.allCases
    static let resetRoutes = ResetRoute.allCases
    static let formFields = FormField.allCases
    static let validationResults = ValidationResult.allCases
    static let accountCreationFailureReasons = AccountCreationFailureReason.allCases
    static let lockoutClearReasons = LockoutClearReason.allCases
    static let identifierKinds = IdentifierKind.allCases
    static let passwordResetFailureReasons = PasswordResetFailureReason.allCases
    /// How many cases of an enum schema 1 of its types knows: a value past them needs schema 2.
    static let schema1FormFields = schema1Cases(.fieldValidated, field: 0)
    static let schema1ValidationResults = schema1Cases(.fieldValidated, field: 1)
    static let schema1AccountCreationFailureReasons = schema1Cases(.accountCreationFailed, field: 1)

    /// Read from the schema table (the one source).
    private static func schema1Cases(_ type: EventType, field: Int) -> UInt8 {
        guard case .choice(let names) = type.fields(schema: 1)![field].kind else { preconditionFailure("not a choice") }
        return UInt8(names.count)
    }
    /// The range of `user_added.passcode_min_length`, read from the field table (the one source).
    static let passcodeMinimumLengths: ClosedRange<Int> = {
        for spec in EventType.userAdded.fields {
            if case .count(let range) = spec.kind { return range }
        }
        preconditionFailure("user_added has no count field")
    }()
}

/// An optional field that was read: `value` is `nil` when the field is absent. (An `Optional`
/// of an `Optional` would read ambiguously in the `guard let`s above.)
private struct PresentOrAbsent<Value> {
    var value: Value?
}

/// Reads a record body; every read returns `nil` on anything the reference decoder would refuse.
private struct FastBodyReader {
    let bytes: UnsafeRawBufferPointer
    var offset = 0

    init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    var isAtEnd: Bool { offset == bytes.count }

    private mutating func take(_ count: Int) -> UnsafeRawBufferPointer? {
        guard count <= bytes.count - offset else { return nil }
        defer { offset += count }
        return UnsafeRawBufferPointer(start: bytes.baseAddress! + offset, count: count)
    }

    mutating func userRef() -> UserRef? { take(UserRef.byteCount).map { UserRef(bytes: $0) } }

    mutating func uint8() -> UInt8? {
        guard offset < bytes.count else { return nil }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func uint16() -> UInt16? {
        take(2).map { UInt16(bigEndian: $0.loadUnaligned(as: UInt16.self)) }
    }

    mutating func uint32() -> UInt32? {
        take(4).map { UInt32(bigEndian: $0.loadUnaligned(as: UInt32.self)) }
    }

    mutating func uint64() -> UInt64? {
        take(8).map { UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)) }
    }

    mutating func uuid() -> UUID? {
        take(16).map { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
    }

    /// A time within the years 0001…9999 (`Event.validate`'s rule for `at` and instants).
    mutating func instant() -> Timestamp? {
        guard let raw = uint64() else { return nil }
        let instant = Timestamp(millisecondsSince1970: Int64(bitPattern: raw))
        guard instant >= Timestamp.minimum, instant <= Timestamp.maximum else { return nil }
        return instant
    }

    mutating func presence() -> Bool? {
        guard let flag = uint8(), flag <= 1 else { return nil }
        return flag == 1
    }

    mutating func flag() -> Bool? { presence() }

    mutating func choice<E>(_ cases: [E]) -> E? {
        guard let code = uint8(), Int(code) < cases.count else { return nil }
        return cases[Int(code)]
    }

    /// A device id: 1…64 bytes of `Event.validateDevice`'s characters (all ASCII).
    mutating func device(byteCount: Int) -> String? {
        guard byteCount >= 1, byteCount <= Limits.maximumDeviceBytes, let slice = take(byteCount) else { return nil }
        guard slice.allSatisfy(Event.isDeviceByte) else { return nil }
        return Self.string(ascii: slice)
    }

    /// A u16-length-prefixed text of 1…`maximumBytes` bytes of valid UTF-8 without control
    /// characters (the rule for `user` and for every text field).
    mutating func shortText(maximumBytes: Int) -> String? {
        guard let length = uint16(), length >= 1, Int(length) <= maximumBytes, let slice = take(Int(length)) else { return nil }
        var isASCII = true
        for byte in slice {
            if byte < 0x20 || byte == 0x7F { return nil }
            if byte >= 0x80 { isASCII = false }
        }
        if isASCII { return Self.string(ascii: slice) }
        guard let text = String(validating: slice, as: UTF8.self), !Event.containsControlCharacter(text) else { return nil }
        return text
    }

    mutating func text() -> String? { shortText(maximumBytes: Limits.maximumTextBytes) }

    mutating func optionalChoice<E>(_ cases: [E]) -> PresentOrAbsent<E>? {
        guard let present = presence() else { return nil }
        guard present else { return PresentOrAbsent(value: nil) }
        return choice(cases).map { PresentOrAbsent(value: $0) }
    }

    mutating func optionalFlag() -> PresentOrAbsent<Bool>? {
        guard let present = presence() else { return nil }
        guard present else { return PresentOrAbsent(value: nil) }
        return flag().map { PresentOrAbsent(value: $0) }
    }

    mutating func optionalText() -> PresentOrAbsent<String>? {
        guard let present = presence() else { return nil }
        guard present else { return PresentOrAbsent(value: nil) }
        return text().map { PresentOrAbsent(value: $0) }
    }

    /// ASCII bytes are valid UTF-8 as they are: no validation pass needed.
    private static func string(ascii slice: UnsafeRawBufferPointer) -> String {
        slice.withMemoryRebound(to: UInt8.self) { String(decoding: $0, as: UTF8.self) }
    }
}
