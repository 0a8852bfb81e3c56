/// The typed payload of an event: one case per event type of the vocabulary.
///
/// No case has a field that could hold a password, passcode, code, token or CAPTCHA answer.
///
/// ```swift
/// let payload = Payload.signInFailed(method: .password, reason: .invalidPassword)
/// payload.type // .signInFailed
/// Payload.userAdded(displayName: "Ann Lee", passcodePolicy: .numeric, passcodeMinLength: 6) // optional fields default to nil
/// ```
public enum Payload: Sendable, Hashable {
    case userAdded(
        displayName: String, subtitle: String? = nil, imageRef: String? = nil,
        passcodePolicy: PasscodePolicy, passcodeMinLength: Int)
    /// Carries the fields that changed; `nil` leaves a field as it was.
    case userProfileUpdated(displayName: String? = nil, subtitle: String? = nil, imageRef: String? = nil)
    case userSelected
    case userRemoved(reason: UserRemovalReason)
    case passcodeSet
    case passcodeChanged
    case passcodeResetStarted
    case passcodeResetCompleted
    case biometricEnabled(kind: BiometricKind)
    case biometricDisabled
    /// `identifierKind`: what the user typed to name the account (schema 2), never its value.
    case signInStarted(method: SignInMethod, identifierKind: IdentifierKind? = nil)
    /// `clientAddress` (schema 2, here and on the other sign-in events): the address the attempt
    /// came from, when the app or an imported log knows it. Personal data: sealed with the user's
    /// key and erased by a forget (docs/events.md § Client address).
    case signInFailed(method: SignInMethod, reason: SignInFailureReason, clientAddress: String? = nil)
    /// An attempt refused because of a lockout: audited, never counted as a failure.
    case signInThrottled(method: SignInMethod, retryAfter: Timestamp, clientAddress: String? = nil)
    case secondFactorRequired(method: SecondFactorMethod)
    case secondFactorFailed(method: SecondFactorMethod, clientAddress: String? = nil)
    case secondFactorSucceeded(method: SecondFactorMethod)
    /// The trigger for sync.
    case signInSucceeded(method: SignInMethod, secondFactor: Bool, clientAddress: String? = nil)
    case signedOut(reason: SignOutReason)
    case captchaPresented(purpose: CaptchaPurpose)
    case captchaFailed
    case captchaPassed
    case captchaAlternativesViewed
    case passwordResetRequested(route: ResetRoute)
    case temporaryPasswordSent
    case passwordChanged(forced: Bool)
    case accountCreationStarted
    case fieldValidated(field: FormField, result: ValidationResult)
    case accountCreationFailed(field: FormField? = nil, reason: AccountCreationFailureReason)
    case accountCreated
    case lockoutCleared(reason: LockoutClearReason)
    /// The user's key was destroyed; the event's `user` is the pseudonym literal.
    case userForgotten
    /// A form field went from empty to filled (typed, pasted or autofilled) or back; `valid` is
    /// the app's own check of its policy (say, a numeric passcode of the minimum length).
    case fieldEdited(field: FormField, filled: Bool, valid: Bool? = nil)
    case accountCreationSubmitted
    case passwordResetStarted
    case passwordResetFailed(reason: PasswordResetFailureReason)
    /// "Switch or Add User" tapped on a shared device's sign-in screen.
    case userSwitchOpened
    /// "Back" tapped on "Switch or Add User".
    case userSwitchClosed
    /// What a sign-in screen offered, top to bottom (1…``SignInOption/maximumShown`` options,
    /// each at most once), and the platform the device says it is, when the app says.
    case signInOptionsShown(options: [SignInOption], platform: DevicePlatform? = nil)
    /// A server cut the client off (or the client gave up) before a sign-in completed; the
    /// event's user is optional (sshd often names none). Never a guess at an account.
    case signInAborted(reason: SignInAbortReason, clientAddress: String? = nil)
    /// An identity provider locked the account itself (`source` says which, by its log): until
    /// `until`, or, when `nil`, until an administrator unlocks it. Not a failure: the lockout
    /// engine counts nothing for it.
    case accountLocked(source: AccountLockSource, until: Timestamp? = nil, clientAddress: String? = nil)
    /// An import of a foreign log appended events: lines that held an event, events appended,
    /// lines skipped and their kinds (`"9 not sshd, 3 pam"`, absent when none was skipped), and
    /// the earliest and latest time of the events read. Never names a user.
    case logImported(
        format: ImportedLogFormat, events: Int, appended: Int, skipped: Int, skippedKinds: String? = nil,
        firstAt: Timestamp, lastAt: Timestamp)

    /// The largest count a `log_imported` field holds (4 bytes in the record).
    public static let maximumImportCount = Int(UInt32.max)

    /// The client address of a sign-in event, `nil` when absent or for other types.
    public var clientAddress: String? {
        switch self {
        case .signInFailed(_, _, let address), .signInThrottled(_, _, let address), .secondFactorFailed(_, let address),
            .signInSucceeded(_, _, let address), .signInAborted(_, let address), .accountLocked(_, _, let address):
            address
        default: nil
        }
    }

    public var type: EventType {
        switch self {
        case .userAdded: .userAdded
        case .userProfileUpdated: .userProfileUpdated
        case .userSelected: .userSelected
        case .userRemoved: .userRemoved
        case .passcodeSet: .passcodeSet
        case .passcodeChanged: .passcodeChanged
        case .passcodeResetStarted: .passcodeResetStarted
        case .passcodeResetCompleted: .passcodeResetCompleted
        case .biometricEnabled: .biometricEnabled
        case .biometricDisabled: .biometricDisabled
        case .signInStarted: .signInStarted
        case .signInFailed: .signInFailed
        case .signInThrottled: .signInThrottled
        case .secondFactorRequired: .secondFactorRequired
        case .secondFactorFailed: .secondFactorFailed
        case .secondFactorSucceeded: .secondFactorSucceeded
        case .signInSucceeded: .signInSucceeded
        case .signedOut: .signedOut
        case .captchaPresented: .captchaPresented
        case .captchaFailed: .captchaFailed
        case .captchaPassed: .captchaPassed
        case .captchaAlternativesViewed: .captchaAlternativesViewed
        case .passwordResetRequested: .passwordResetRequested
        case .temporaryPasswordSent: .temporaryPasswordSent
        case .passwordChanged: .passwordChanged
        case .accountCreationStarted: .accountCreationStarted
        case .fieldValidated: .fieldValidated
        case .accountCreationFailed: .accountCreationFailed
        case .accountCreated: .accountCreated
        case .lockoutCleared: .lockoutCleared
        case .userForgotten: .userForgotten
        case .fieldEdited: .fieldEdited
        case .accountCreationSubmitted: .accountCreationSubmitted
        case .passwordResetStarted: .passwordResetStarted
        case .passwordResetFailed: .passwordResetFailed
        case .userSwitchOpened: .userSwitchOpened
        case .userSwitchClosed: .userSwitchClosed
        case .signInOptionsShown: .signInOptionsShown
        case .signInAborted: .signInAborted
        case .accountLocked: .accountLocked
        case .logImported: .logImported
        }
    }

    /// The payload's field values in the order of `type.fields` (`nil` for an absent optional).
    public var fieldValues: [FieldValue?] {
        switch self {
        case let .userAdded(displayName, subtitle, imageRef, policy, minimumLength):
            [
                .text(displayName), subtitle.map(FieldValue.text), imageRef.map(FieldValue.text),
                .choice(policy.wireCode), .count(minimumLength)
            ]
        case let .userProfileUpdated(displayName, subtitle, imageRef):
            [displayName.map(FieldValue.text), subtitle.map(FieldValue.text), imageRef.map(FieldValue.text)]
        case .userRemoved(let reason): [.choice(reason.wireCode)]
        case .biometricEnabled(let kind): [.choice(kind.wireCode)]
        case let .signInStarted(method, identifierKind): [.choice(method.wireCode), identifierKind.map { .choice($0.wireCode) }]
        case let .signInFailed(method, reason, address): [.choice(method.wireCode), .choice(reason.wireCode), address.map(FieldValue.text)]
        case let .signInThrottled(method, retryAfter, address): [.choice(method.wireCode), .instant(retryAfter), address.map(FieldValue.text)]
        case .secondFactorRequired(let method), .secondFactorSucceeded(let method):
            [.choice(method.wireCode)]
        case let .secondFactorFailed(method, address): [.choice(method.wireCode), address.map(FieldValue.text)]
        case let .signInSucceeded(method, secondFactor, address): [.choice(method.wireCode), .flag(secondFactor), address.map(FieldValue.text)]
        case .signedOut(let reason): [.choice(reason.wireCode)]
        case .captchaPresented(let purpose): [.choice(purpose.wireCode)]
        case .passwordResetRequested(let route): [.choice(route.wireCode)]
        case .passwordChanged(let forced): [.flag(forced)]
        case let .fieldValidated(field, result): [.choice(field.wireCode), .choice(result.wireCode)]
        case let .accountCreationFailed(field, reason): [field.map { .choice($0.wireCode) }, .choice(reason.wireCode)]
        case .lockoutCleared(let reason): [.choice(reason.wireCode)]
        case let .fieldEdited(field, filled, valid): [.choice(field.wireCode), .flag(filled), valid.map(FieldValue.flag)]
        case .passwordResetFailed(let reason): [.choice(reason.wireCode)]
        case let .signInOptionsShown(options, platform): [.choices(options.map(\.wireCode)), platform.map { .choice($0.wireCode) }]
        case let .signInAborted(reason, address): [.choice(reason.wireCode), address.map(FieldValue.text)]
        case let .accountLocked(source, until, address): [.choice(source.wireCode), until.map(FieldValue.instant), address.map(FieldValue.text)]
        case let .logImported(format, events, appended, skipped, skippedKinds, firstAt, lastAt):
            [
                .choice(format.wireCode), .count(events), .count(appended), .count(skipped), skippedKinds.map(FieldValue.text),
                .instant(firstAt), .instant(lastAt)
            ]
        case .userSelected, .passcodeSet, .passcodeChanged, .passcodeResetStarted, .passcodeResetCompleted,
            .biometricDisabled, .captchaFailed, .captchaPassed, .captchaAlternativesViewed,
            .temporaryPasswordSent, .accountCreationStarted, .accountCreated, .userForgotten,
            .accountCreationSubmitted, .passwordResetStarted, .userSwitchOpened, .userSwitchClosed:
            []
        }
    }

    /// Builds the payload of `type` from values already checked against `type.fields`
    /// (the codecs check kinds, ranges and choice codes before calling this).
    init(type: EventType, fieldValues values: [FieldValue?]) {
        precondition(values.count == type.fields.count, "\(type.rawValue) takes \(type.fields.count) fields")
        var reader = FieldReader(values: values)
        do throws(FieldDeclined) {
            self = try Payload(type: type, reading: &reader)
        } catch {
            preconditionFailure("checked field values never decline")
        }
    }

    /// Builds the payload of `type` from its fields read in the order of ``EventSchema`` (the
    /// inverse of ``fieldValues``): from checked values (``init(type:fieldValues:)``) or straight
    /// from a record body (the fast decoder), which declines what it leaves to the reference decoder.
    init<Source: PayloadFieldSource>(type: EventType, reading source: inout Source) throws(FieldDeclined) {
        switch type {
        case .userAdded:
            self = .userAdded(
                displayName: try source.text(), subtitle: try source.optionalText(),
                imageRef: try source.optionalText(), passcodePolicy: try source.choice(),
                passcodeMinLength: try source.count())
        case .userProfileUpdated:
            self = .userProfileUpdated(
                displayName: try source.optionalText(), subtitle: try source.optionalText(),
                imageRef: try source.optionalText())
        case .userSelected: self = .userSelected
        case .userRemoved: self = .userRemoved(reason: try source.choice())
        case .passcodeSet: self = .passcodeSet
        case .passcodeChanged: self = .passcodeChanged
        case .passcodeResetStarted: self = .passcodeResetStarted
        case .passcodeResetCompleted: self = .passcodeResetCompleted
        case .biometricEnabled: self = .biometricEnabled(kind: try source.choice())
        case .biometricDisabled: self = .biometricDisabled
        case .signInStarted: self = .signInStarted(method: try source.choice(), identifierKind: try source.optionalChoice())
        case .signInFailed:
            self = .signInFailed(method: try source.choice(), reason: try source.choice(), clientAddress: try source.optionalText())
        case .signInThrottled:
            self = .signInThrottled(method: try source.choice(), retryAfter: try source.instant(), clientAddress: try source.optionalText())
        case .secondFactorRequired: self = .secondFactorRequired(method: try source.choice())
        case .secondFactorFailed: self = .secondFactorFailed(method: try source.choice(), clientAddress: try source.optionalText())
        case .secondFactorSucceeded: self = .secondFactorSucceeded(method: try source.choice())
        case .signInSucceeded:
            self = .signInSucceeded(method: try source.choice(), secondFactor: try source.flag(), clientAddress: try source.optionalText())
        case .signedOut: self = .signedOut(reason: try source.choice())
        case .captchaPresented: self = .captchaPresented(purpose: try source.choice())
        case .captchaFailed: self = .captchaFailed
        case .captchaPassed: self = .captchaPassed
        case .captchaAlternativesViewed: self = .captchaAlternativesViewed
        case .passwordResetRequested: self = .passwordResetRequested(route: try source.choice())
        case .temporaryPasswordSent: self = .temporaryPasswordSent
        case .passwordChanged: self = .passwordChanged(forced: try source.flag())
        case .accountCreationStarted: self = .accountCreationStarted
        case .fieldValidated: self = .fieldValidated(field: try source.choice(), result: try source.choice())
        case .accountCreationFailed: self = .accountCreationFailed(field: try source.optionalChoice(), reason: try source.choice())
        case .accountCreated: self = .accountCreated
        case .lockoutCleared: self = .lockoutCleared(reason: try source.choice())
        case .userForgotten: self = .userForgotten
        case .fieldEdited: self = .fieldEdited(field: try source.choice(), filled: try source.flag(), valid: try source.optionalFlag())
        case .accountCreationSubmitted: self = .accountCreationSubmitted
        case .passwordResetStarted: self = .passwordResetStarted
        case .passwordResetFailed: self = .passwordResetFailed(reason: try source.choice())
        case .userSwitchOpened: self = .userSwitchOpened
        case .userSwitchClosed: self = .userSwitchClosed
        case .signInOptionsShown: self = .signInOptionsShown(options: try source.choices(), platform: try source.optionalChoice())
        case .signInAborted: self = .signInAborted(reason: try source.choice(), clientAddress: try source.optionalText())
        case .accountLocked:
            self = .accountLocked(source: try source.choice(), until: try source.optionalInstant(), clientAddress: try source.optionalText())
        case .logImported:
            self = .logImported(
                format: try source.choice(), events: try source.count(), appended: try source.count(), skipped: try source.count(),
                skippedKinds: try source.optionalText(), firstAt: try source.instant(), lastAt: try source.instant())
        }
    }
}

/// A field source declined: the fast decoder leaves the record to the reference decoder.
struct FieldDeclined: Error {}

/// Where ``Payload/init(type:reading:)`` takes a type's field values from, one call per field
/// in the order of ``EventSchema`` (the call's kind is the field's).
protocol PayloadFieldSource {
    mutating func text() throws(FieldDeclined) -> String
    mutating func optionalText() throws(FieldDeclined) -> String?
    mutating func choice<E: WireEnum>() throws(FieldDeclined) -> E
    mutating func optionalChoice<E: WireEnum>() throws(FieldDeclined) -> E?
    mutating func flag() throws(FieldDeclined) -> Bool
    mutating func optionalFlag() throws(FieldDeclined) -> Bool?
    mutating func instant() throws(FieldDeclined) -> Timestamp
    mutating func optionalInstant() throws(FieldDeclined) -> Timestamp?
    mutating func count() throws(FieldDeclined) -> Int
    mutating func choices<E: WireEnum>() throws(FieldDeclined) -> [E]
}

/// Hands out checked field values in order; a mismatch is a codec bug, hence preconditions.
private struct FieldReader: PayloadFieldSource {
    let values: [FieldValue?]
    var index = 0

    mutating func nextValue() -> FieldValue? {
        defer { index += 1 }
        return values[index]
    }

    mutating func text() -> String {
        guard case .text(let text)? = nextValue() else { preconditionFailure("field \(index - 1) is not text") }
        return text
    }

    mutating func optionalText() -> String? {
        switch nextValue() {
        case nil: return nil
        case .text(let text)?: return text
        default: preconditionFailure("field \(index - 1) is not text")
        }
    }

    mutating func choice<E: WireEnum>() -> E {
        guard case .choice(let code)? = nextValue(), let value = E(wireCode: code) else {
            preconditionFailure("field \(index - 1) is not a \(E.self) code")
        }
        return value
    }

    mutating func optionalChoice<E: WireEnum>() -> E? {
        if values[index] == nil {
            index += 1
            return nil
        }
        return choice()
    }

    mutating func flag() -> Bool {
        guard case .flag(let flag)? = nextValue() else { preconditionFailure("field \(index - 1) is not a flag") }
        return flag
    }

    mutating func optionalFlag() -> Bool? {
        if values[index] == nil {
            index += 1
            return nil
        }
        return flag()
    }

    mutating func instant() -> Timestamp {
        guard case .instant(let instant)? = nextValue() else { preconditionFailure("field \(index - 1) is not a time") }
        return instant
    }

    mutating func optionalInstant() -> Timestamp? {
        if values[index] == nil {
            index += 1
            return nil
        }
        return instant()
    }

    mutating func count() -> Int {
        guard case .count(let count)? = nextValue() else { preconditionFailure("field \(index - 1) is not a count") }
        return count
    }

    mutating func choices<E: WireEnum>() -> [E] {
        guard case .choices(let codes)? = nextValue() else { preconditionFailure("field \(index - 1) is not a list of choices") }
        return codes.map { code in
            guard let value = E(wireCode: code) else { preconditionFailure("field \(index - 1) holds a code that is not a \(E.self)") }
            return value
        }
    }
}
