import Foundation
import OnboardingModel

/// Per device: who is signed in and what the sign-in flow shows now (docs/projections.md § Session).
///
/// A pure fold: every screen, state and message follows from the records and the lockout
/// decision they led to, never from a clock. The messages are ``SessionText``'s. Every flow is
/// in one cell of the screen × state matrix of docs/projections.md, and ``Flow/submitEnabled``
/// follows from the fields the app reported.
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
/// - `signed_out` always returns to `sign_in` for the user who left (the shared-device pattern:
///   the sign-in screen shows the previous user by default); `switch_user` is shown after
///   `user_switch_opened`, and in `success` after `user_added` (Add User is on that screen).
/// - An event without a `user` keeps the flow's user while it belongs to the same flow
///   (`session`), so an account-creation or reset flow remembers whom it is about.
/// - The fields the app reported (`field_edited`) belong to the flow: they survive a detour
///   through the CAPTCHA or from sign-in to "Forgot password?", and are dropped when the form
///   they fill is done (signed in, account created, mail sent, password or passcode changed,
///   another user selected or added, signed out) or another flow starts. A screen is
///   `partially_filled` while any of its own fields is filled, `empty` while none is.
/// - An error stays shown until the next submit, except the message under a field the user
///   fills again (`field_edited` with `filled: true`): that message was about what they replaced.
/// - Inline validation messages go under the field the event names and accumulate within one
///   account-creation flow (one per field); the form is in state `error` while any of them is red
///   (yellow "Passwords do not match" is a hint while typing, not an error).
///   `username_in_use` on the `email` field reads "Email already in use" (the mobile brief's "email taken").
/// - After a counted failure the lock screen replaces the form as soon as the engine refuses the
///   key (the failure that reaches the limit shows it); `sign_in_throttled` shows the engine's lock
///   (password factor, then second factor) or, when the engine knows none, the app's `retry_after`.
///   A permanent lock has no `lockedUntil`. The lock screen has no fields: an edit recorded there
///   leaves it as it is.
/// - `captcha_passed` returns to the screen of the last `captcha_presented` purpose on the device,
///   in that form's resting state: the CAPTCHA only let the user go on, nothing is done yet.
/// - After ``captchaAlternativesAfterFailures`` `captcha_failed` in a row in one flow, the CAPTCHA
///   (its error, and each new image after it) also shows ``SessionText/captchaAlternatives``
///   (info), as `captcha_alternatives_viewed` does. A `captcha_passed` or another flow starts the
///   count again; a new image (`captcha_presented`) does not.
/// - A screen in `success` has done its job: its submit button is disabled.
/// - "Switch or Add User": `user_switch_opened` shows `switch_user` (`empty`: the list and an
///   empty search field); `user_selected` there moves the checkmark and stays; `user_switch_closed`
///   ("Back") returns to `sign_in` for the device's selected user (the users projection's), the
///   form empty.
/// - "Forgot passcode?" (`passcode_reset_started`) shows `forgot_passcode`, whose form is the new
///   passcode: the passcode typed on the sign-in form is not carried over.
/// - `user_removed` of the user the device's flow is about, or of the user signed in there, ends
///   that: the device shows the empty `sign_in` of the user the users projection selects next
///   (the previous user; nobody when the list is empty).
/// - `sign_in_options_shown` describes the device's sign-in screen, not a flow: the last one is
///   kept on the device (``DeviceState/signInOptions``) and it changes no screen, like the
///   biometric events.
/// - `sign_in_aborted` is a server cutting a client off before any sign-in (sshd's pre-authentication
///   abuse), not something a screen did: it changes no screen and creates no device (the lockout
///   counts it by address).
/// - `log_imported` notes what an import of a foreign log left out: no screen, no flow.
public struct SessionProjection: Sendable, Hashable {
    /// How long after `temporary_password_sent` a new mail may be requested: a minute keeps a
    /// user from flooding their own inbox (and the mail server) while they wait, and is short
    /// enough that someone whose mail went missing is not stuck (the mobile brief's retry timer).
    public static let defaultResendWaitMilliseconds: Int64 = 60_000
    /// Three wrong answers in a row: one miss is a typo, two an unlucky image, three a user who
    /// cannot read or hear these CAPTCHAs; the Wikipedia login design's user story asks that such
    /// a user learn the other ways to create an account without having to look for them.
    public static let defaultCaptchaAlternativesAfterFailures = 3

    public private(set) var devices: [String: DeviceState] = [:]
    /// The resend timer shown on `reset_sent`.
    public let resendWaitMilliseconds: Int64
    /// How many `captcha_failed` in a row (in one flow) bring up the CAPTCHA alternatives.
    public internal(set) var captchaAlternativesAfterFailures: Int
    /// Per device: the `captcha_failed` in a row of its last flow with one.
    private(set) var captchaFailures: [String: CaptchaFailures] = [:]
    /// While a CAPTCHA is shown on a device: what it is for, so `captcha_passed` returns there.
    private(set) var captchaPurposes: [String: CaptchaPurpose] = [:]
    /// Per device, the users who enabled biometric sign-in there and with which sensor: the badge
    /// on the sign-in button (``Flow/biometric``).
    private(set) var biometrics: [String: [String: BiometricKind]] = [:]

    public init() {
        self.init(resendWaitMilliseconds: SessionProjection.defaultResendWaitMilliseconds)
    }

    public init(
        resendWaitMilliseconds: Int64,
        captchaAlternativesAfterFailures: Int = SessionProjection.defaultCaptchaAlternativesAfterFailures
    ) {
        precondition(resendWaitMilliseconds > 0, "the resend timer must be positive (got \(resendWaitMilliseconds) ms)")
        precondition(
            captchaAlternativesAfterFailures > 0,
            "the CAPTCHA alternatives need at least one failure (got \(captchaAlternativesAfterFailures))")
        self.resendWaitMilliseconds = resendWaitMilliseconds
        self.captchaAlternativesAfterFailures = captchaAlternativesAfterFailures
    }

    /// A state read from a snapshot (SessionSnapshotJSON.swift).
    init(
        devices: [String: DeviceState], resendWaitMilliseconds: Int64, captchaPurposes: [String: CaptchaPurpose],
        biometrics: [String: [String: BiometricKind]], captchaAlternativesAfterFailures: Int,
        captchaFailures: [String: CaptchaFailures]
    ) {
        self.init(resendWaitMilliseconds: resendWaitMilliseconds, captchaAlternativesAfterFailures: captchaAlternativesAfterFailures)
        self.devices = devices
        self.captchaPurposes = captchaPurposes
        self.biometrics = biometrics
        self.captchaFailures = captchaFailures
    }

    /// `lockout` is the lockout state *after* this record was applied to it, and `users` the users
    /// projection after it: `user_switch_closed` and `user_removed` show its selected user.
    ///
    /// In order: an event that changes no screen only keeps the biometric table or the device's
    /// sign-in options (and a removed user's device moves on); any other starts from a clean screen
    /// of its flow (`Flow(startingFrom:for:sameFlow:)`), shows what it did
    /// (`showEffect(of:on:device:before:storedOnLockScreen:sameFlow:lockout:users:)`), keeps the biometric badge
    /// (`keepBiometricBadge(on:before:device:)`), and the device is written back.
    public mutating func apply(_ record: Record, lockout: LockoutEngine, users: MultiUserProjection = MultiUserProjection()) {
        let event = record.event
        if Self.changesNoScreen(event.payload) {
            // Only the biometric badge or the device's sign-in options; decided before touching
            // the device table.
            if case let .signInOptionsShown(options, platform) = event.payload {
                noteSignInOptions(SignInOptions(options: options, platform: platform, shownAt: event.at), device: event.device)
            } else {
                noteBiometric(record)
            }
            // The record, not `event`: handing the event out of line would copy it on every event.
            if case .userRemoved = event.payload { removeUser(record, users: users) }
            return
        }
        // One lookup per event: the position found here is where the device's session is written back.
        let index = devices.index(forKey: event.device)
        var device = index.map { devices.values[$0] } ?? DeviceState(device: event.device)
        // The flow as it showed when the event happened (docs/projections.md § State at a time):
        // a lock that had ended by then is gone, so an edit lands on the form, not the lock screen.
        // One copy of the flow; a lock screen (rare) is read again at the event's time.
        var before = device.flow
        let storedOnLockScreen = before.screen == .lockedOut
        if storedOnLockScreen { before = before.at(event.at, device: event.device, lockout: lockout) }
        let sameFlow = event.flow == before.id
        var flow = Flow(startingFrom: before, for: event, sameFlow: sameFlow)
        guard
            showEffect(
                of: event, on: &flow, device: &device, before: before, storedOnLockScreen: storedOnLockScreen, sameFlow: sameFlow,
                lockout: lockout, users: users)
        else { return }
        keepBiometricBadge(on: &flow, before: before, device: event.device)
        device.flow = flow
        if let index {
            devices.values[index] = device
        } else {
            devices[event.device] = device
        }
    }

    /// The events that change no screen, only the biometric table (`noteBiometric(_:)`) or the
    /// device's sign-in options (`noteSignInOptions(_:device:)`); `sign_in_aborted` changes nothing.
    @inline(__always)
    private static func changesNoScreen(_ payload: Payload) -> Bool {
        switch payload {
        // `account_locked` is an identity provider's own lock, imported from its log: no
        // device's screen showed it.
        case .userProfileUpdated, .userRemoved, .passcodeSet, .passcodeChanged, .biometricEnabled, .biometricDisabled, .userForgotten,
            .signInOptionsShown, .signInAborted, .accountLocked, .logImported:
            true
        default:
            false
        }
    }

    /// What `event` shows on `flow`, which starts as a clean screen of the event's flow, and for a
    /// sign-in or sign-out who is signed in on `device`: one case per event type, the long ones
    /// in steps of their own below. `false` when the event leaves the device as it was.
    @inline(__always)
    private mutating func showEffect(
        of event: Event, on flow: inout Flow, device: inout DeviceState, before: Flow, storedOnLockScreen: Bool, sameFlow: Bool,
        lockout: LockoutEngine, users: MultiUserProjection
    ) -> Bool {
        switch event.payload {
        case let .signInStarted(_, identifierKind):
            flow.show(sameFlow && before.screen == .secondFactor ? .secondFactor : .signIn, .loading)
            if let identifierKind { flow.identifierKind = identifierKind }
        case let .signInFailed(_, reason, _):
            Self.failSignIn(&flow, reason: reason, event: event, lockout: lockout)
        case let .signInThrottled(_, retryAfter, _):
            Self.throttleSignIn(&flow, retryAfter: retryAfter, event: event, lockout: lockout, before: before, sameFlow: sameFlow)
        case .secondFactorRequired:
            flow.show(.secondFactor)
        case .secondFactorFailed:
            Self.failSecondFactor(&flow, decision: Self.decision(.secondFactor, for: event, in: lockout), at: event.at)
        case .secondFactorSucceeded:
            flow.show(.secondFactor, .success)
        case let .signInSucceeded(method, secondFactor, _):
            device.signedIn = event.user.map { SignedInUser(user: $0, since: event.at, method: method, secondFactor: secondFactor) }
            flow.show(.signedIn, .success)
            flow.inputs = FieldInputs()
        case .signedOut(let reason):
            Self.signOut(&flow, device: &device, reason: reason)
        case .captchaPresented(let purpose):
            captchaPurposes[event.device] = purpose
            flow.show(.captcha)
            if offersCaptchaAlternatives(device: event.device, flow: event.flow, failing: false) {
                flow.systemMessage = Message(SessionText.captchaAlternatives, .info)
            }
        case .captchaFailed:
            flow.show(.captcha, .error)
            flow.fieldMessages = [FieldMessage(field: "captcha", SessionText.wrongCaptcha, .error)]
            if offersCaptchaAlternatives(device: event.device, flow: event.flow, failing: true) {
                flow.systemMessage = Message(SessionText.captchaAlternatives, .info)
            }
        case .captchaPassed:
            let purpose = captchaPurposes.removeValue(forKey: event.device) ?? .signIn
            captchaFailures[event.device] = nil
            flow.show(purpose == .createAccount ? .createAccount : .signIn)
        case .captchaAlternativesViewed:
            Self.viewCaptchaAlternatives(&flow, before: before, sameFlow: sameFlow)
        case let .fieldEdited(field, filled, valid):
            Self.edit(&flow, field: field, filled: filled, valid: valid, before: before, sameFlow: sameFlow)
        case .passwordResetStarted:
            flow.show(.forgotPassword)
        case .passcodeResetStarted:
            // The form is the new passcode: what was typed on the sign-in form is not it.
            flow.inputs.remove(.passcode)
            flow.show(.forgotPasscode)
        case .passwordResetRequested(let route):
            flow.show(.forgotPassword, .loading)
            flow.identifierKind = route == .email ? .email : .username
        case .passwordResetFailed(let reason):
            Self.failPasswordReset(&flow, reason: reason)
        case .temporaryPasswordSent:
            showTemporaryPasswordSent(on: &flow, at: event.at)
        case .passwordChanged:
            Self.changePassword(&flow, user: event.user, device: device)
        case .accountCreationStarted:
            flow.show(.createAccount)
        case let .fieldValidated(field, result):
            Self.validate(&flow, field: field, result: result, before: before, sameFlow: sameFlow)
        case .accountCreationSubmitted:
            flow.show(.createAccount, .loading)
        case let .accountCreationFailed(field, reason):
            Self.failAccountCreation(&flow, field: field, reason: reason, before: before, sameFlow: sameFlow)
        case .accountCreated:
            flow.show(.createAccount, .success)
            flow.inputs = FieldInputs()
            flow.systemMessage = Message(SessionText.accountCreated, .success)
        case .userSelected:
            // On the "Switch or Add User" list the checkmark moves and the list stays until "Back";
            // selecting the user just added (the list in `success`) goes to their sign-in, as it
            // always has, so apps that never record `user_switch_opened` read as before.
            flow.screen = before.screen == .switchUser && before.state != .success ? .switchUser : .signIn
            flow.inputs = FieldInputs()
            flow.identifierKind = nil
        case .userAdded:
            flow.show(.switchUser, .success)
            flow.inputs = FieldInputs()
        case .passcodeResetCompleted:
            flow.show(.signIn, .success)
            flow.inputs = FieldInputs()
            flow.systemMessage = Message(SessionText.passcodeReset, .success)
        case .lockoutCleared:
            // Only a lock screen waiting for this user changes; any other screen stays as it is. The
            // screen as stored, not `before`'s: `lockout` has already cleared the lock this event lifts.
            guard storedOnLockScreen, before.user == event.user else { return false }
            flow.show(.signIn)
        case .userSwitchOpened:
            flow.show(.switchUser)
        case .userSwitchClosed:
            // "Back" keeps the selection: the sign-in screen shows the selected user, the form empty.
            flow.user = users.devices[event.device]?.selected
            flow.inputs = FieldInputs()
            flow.identifierKind = nil
        case .userProfileUpdated, .userRemoved, .passcodeSet, .passcodeChanged, .biometricEnabled, .biometricDisabled, .userForgotten,
            .signInOptionsShown, .signInAborted, .accountLocked, .logImported:
            return false // `apply` handed them to noteBiometric or noteSignInOptions already (or, aborted, locked and an import's summary, to nobody)
        }
        return true
    }

    /// The badge follows the flow's user; looked up only when that user changes.
    @inline(__always)
    private func keepBiometricBadge(on flow: inout Flow, before: Flow, device: String) {
        guard !biometrics.isEmpty else { return }
        flow.biometric = flow.user == before.user ? before.biometric : flow.user.flatMap { biometrics[device]?[$0] }
    }

    /// The engine's decision for `factor` of the event's user on its device, at the event's time.
    @inline(__always)
    private static func decision(_ factor: LockoutFactor, for event: Event, in lockout: LockoutEngine) -> LockoutDecision {
        lockout.decide(lockout.key(user: event.user, device: event.device, factor: factor), at: event.at)
    }

    // The sign-in attempts' steps: where most events go, so inlined into `apply` as they were
    // when they were its cases.

    /// A counted failure shows the lock screen as soon as the engine refuses the key; any other
    /// failure, and one still allowed, shows the sign-in form with what went wrong.
    @inline(__always)
    private static func failSignIn(_ flow: inout Flow, reason: SignInFailureReason, event: Event, lockout: LockoutEngine) {
        if reason.isCountedFailure, showLock(decision(.password, for: event, in: lockout), at: event.at, returningTo: .signIn, on: &flow) {
            return
        }
        flow.show(.signIn, .error)
        switch reason {
        case .invalidPassword: flow.fieldMessages = [FieldMessage(field: "password", SessionText.invalidPassword, .error)]
        case .invalidPasscode: flow.fieldMessages = [FieldMessage(field: "passcode", SessionText.invalidPasscode, .error)]
        case .unknownUser:
            flow.showUnknownAccount()
        case .biometricFailed: flow.systemMessage = Message(SessionText.biometricFailed, .error)
        case .networkUnavailable: flow.systemMessage = Message(SessionText.noConnection, .error)
        case .serverError: flow.systemMessage = Message(SessionText.serverError, .error)
        case .cancelled: flow.state = flow.restingState
        }
    }

    /// The app refused the attempt because of a lock; show what the engine knows of it (password
    /// factor, then second factor) or the wait the app recorded, whichever ends later; a
    /// `retry_after` already past at the event, with no lock the engine knows, is no lock at all.
    @inline(__always)
    private static func throttleSignIn(
        _ flow: inout Flow, retryAfter: Timestamp, event: Event, lockout: LockoutEngine, before: Flow, sameFlow: Bool
    ) {
        // The screen the refused attempt came from: the code's, or the sign-in form's.
        let returnScreen: Screen =
            !sameFlow
            ? .signIn
            : before.screen == .lockedOut
                ? before.unlockScreen ?? .signIn
                : before.screen == .secondFactor ? .secondFactor : .signIn
        let lock = [decision(.password, for: event, in: lockout), decision(.secondFactor, for: event, in: lockout)].first { !$0.isAllowed }
        switch lock {
        case .permanentlyLocked?:
            _ = showLock(lock!, at: event.at, returningTo: returnScreen, on: &flow)
        case .locked(let engineLock)?:
            flow.showTemporaryLock(until: max(engineLock.until, retryAfter), at: event.at, returningTo: returnScreen)
        case .allowed?, nil:
            if retryAfter > event.at {
                flow.showTemporaryLock(until: retryAfter, at: event.at, returningTo: returnScreen)
            } else {
                flow.show(returnScreen)
            }
        }
    }

    /// The lock screen when the engine refuses the second factor, else the code's form with the failure.
    @inline(__always)
    private static func failSecondFactor(_ flow: inout Flow, decision: LockoutDecision, at: Timestamp) {
        if showLock(decision, at: at, returningTo: .secondFactor, on: &flow) { return }
        flow.show(.secondFactor, .error)
        flow.fieldMessages = [FieldMessage(field: "second_factor_code", SessionText.verificationFailed, .error)]
    }

    /// Nobody is signed in on the device, and the form is empty; a sign-out the user did not ask
    /// for says why.
    @inline(__always)
    private static func signOut(_ flow: inout Flow, device: inout DeviceState, reason: SignOutReason) {
        device.signedIn = nil
        flow.inputs = FieldInputs()
        switch reason {
        case .user: break
        case .sessionExpired: flow.systemMessage = Message(SessionText.sessionExpired, .info)
        case .revoked: flow.systemMessage = Message(SessionText.sessionRevoked, .warning)
        }
    }

    // The other flows' steps: the compiler decides whether to inline them.

    /// Information beside the CAPTCHA: what the user typed and was told stays.
    private static func viewCaptchaAlternatives(_ flow: inout Flow, before: Flow, sameFlow: Bool) {
        flow.show(.captcha, sameFlow && before.screen == .captcha ? before.state : nil)
        flow.fieldMessages = before.fieldMessages(ifSameFlow: sameFlow, screen: flow.screen)
        flow.systemMessage = Message(SessionText.captchaAlternatives, .info)
    }

    private static func failPasswordReset(_ flow: inout Flow, reason: PasswordResetFailureReason) {
        flow.show(.forgotPassword, .error)
        switch reason {
        case .unknownAccount:
            flow.showUnknownAccount()
        case .networkUnavailable: flow.systemMessage = Message(SessionText.noConnection, .error)
        case .serverError: flow.systemMessage = Message(SessionText.serverError, .error)
        case .rateLimited: flow.systemMessage = Message(SessionText.tooManyResetRequests, .error)
        }
    }

    /// The mail is on its way: the form is done, and a new one may be requested after the resend timer.
    private func showTemporaryPasswordSent(on flow: inout Flow, at sent: Timestamp) {
        flow.show(.resetSent, .success)
        flow.inputs = FieldInputs()
        flow.systemMessage = Message(SessionText.temporaryPasswordSent, .success)
        flow.resend = ResendInfo(availableAt: sent.adding(milliseconds: resendWaitMilliseconds), help: SessionText.resendHelp)
    }

    /// A user signed in on the device changed it from their account; anyone else goes back to sign in.
    private static func changePassword(_ flow: inout Flow, user: String?, device: DeviceState) {
        let signedIn = device.signedIn.map { $0.user == user } ?? false
        flow.show(signedIn ? .signedIn : .signIn, .success)
        flow.inputs = FieldInputs()
        flow.systemMessage = Message(SessionText.passwordChanged, .success)
    }

    // The form events' cases, out of line: `apply` stays small where most events go (sign-in
    // attempts), which keeps the rebuild as fast per event as before they existed.

    @inline(never)
    private static func edit(_ flow: inout Flow, field: FormField, filled: Bool, valid: Bool?, before: Flow, sameFlow: Bool) {
        flow.setField(FieldInput(field: field, filled: filled, valid: valid))
        if let kind = field.identifierKind { flow.identifierKind = kind }
        if sameFlow && before.screen == .lockedOut && before.user == flow.user {
            // The lock screen has no fields: it stays as it was.
            flow.screen = .lockedOut
            flow.state = before.state
            flow.systemMessage = before.systemMessage
            flow.lockedUntil = before.lockedUntil
            flow.unlockScreen = before.unlockScreen
            return
        }
        flow.screen = sameFlow && before.screen.formMask & FieldInputs.bit(field) != 0 ? before.screen : field.homeScreen
        flow.fieldMessages = before.fieldMessages(ifSameFlow: sameFlow, screen: flow.screen)
        if flow.screen == before.screen && sameFlow { flow.systemMessage = before.systemMessage }
        if filled { flow.fieldMessages.removeAll { $0.field == field.rawValue } }
        flow.state = flow.showsError ? .error : flow.restingState
    }

    @inline(never)
    private static func validate(_ flow: inout Flow, field: FormField, result: ValidationResult, before: Flow, sameFlow: Bool) {
        flow.screen = .createAccount
        flow.fieldMessages = before.fieldMessages(ifSameFlow: sameFlow, screen: flow.screen)
        switch result.message {
        case nil: flow.fieldMessages.removeAll { $0.field == field.rawValue }
        case let (text, severity)?:
            let text = result == .usernameInUse ? field.inUseText : text
            flow.setFieldMessage(FieldMessage(field: field.rawValue, text, severity))
        }
        flow.state = flow.showsError ? .error : flow.restingState
    }

    @inline(never)
    private static func failAccountCreation(
        _ flow: inout Flow, field: FormField?, reason: AccountCreationFailureReason,
        before: Flow, sameFlow: Bool
    ) {
        flow.screen = .createAccount
        flow.state = .error
        flow.fieldMessages = before.fieldMessages(ifSameFlow: sameFlow, screen: flow.screen)
        switch reason.problem {
        case let .field(naturalField, text):
            let field = field ?? naturalField
            flow.setFieldMessage(FieldMessage(field: field.rawValue, reason == .usernameInUse ? field.inUseText : text, .error))
        case .system(let text):
            flow.systemMessage = Message(text, .error)
        }
    }

    /// Keeps the biometric table, and the badge of a flow showing the record's user, current: a
    /// sensor turned on or off on the record's device, or off everywhere when the user was
    /// forgotten. Out of line: rare, and `apply` stays small.
    @inline(never)
    private mutating func noteBiometric(_ record: Record) {
        let kind: BiometricKind?, device: String?
        switch record.event.payload {
        case .biometricEnabled(let enabled): (kind, device) = (enabled, record.event.device)
        case .biometricDisabled, .userRemoved: (kind, device) = (nil, record.event.device)
        case .userForgotten: (kind, device) = (nil, nil)
        default: return
        }
        guard let user = record.event.user else { return }
        if let device {
            if let kind { biometrics[device, default: [:]][user] = kind } else { biometrics[device]?[user] = nil }
        } else {
            for name in Array(biometrics.keys) { biometrics[name]?[user] = nil }
        }
        for (name, session) in devices where session.flow.user == user {
            let kind = biometrics[name]?[user]
            if session.flow.biometric != kind { devices[name]!.flow.biometric = kind }
        }
    }

    /// Counts a `captcha_failed` (`failing`) of `flow` on `device`, and says whether the CAPTCHA
    /// now offers its alternatives: after ``captchaAlternativesAfterFailures`` failures in a row
    /// in that flow.
    @inline(never)
    private mutating func offersCaptchaAlternatives(device: String, flow: UUID?, failing: Bool) -> Bool {
        var failures = captchaFailures[device].flatMap { $0.flow == flow ? $0 : nil } ?? CaptchaFailures(flow: flow, count: 0)
        if failing {
            failures.count += 1
            captchaFailures[device] = failures
        }
        return failures.count >= captchaAlternativesAfterFailures
    }

    /// After `user_removed`: a device whose flow is about the removed user, or where that user is
    /// signed in, shows the empty sign-in screen of the user the users projection selects now.
    @inline(never)
    private mutating func removeUser(_ record: Record, users: MultiUserProjection) {
        let event = record.event
        guard let user = event.user, let index = devices.index(forKey: event.device) else { return }
        var device = devices.values[index]
        guard device.flow.user == user || device.signedIn?.user == user else { return }
        if device.signedIn?.user == user { device.signedIn = nil }
        let selected = users.devices[event.device]?.selected
        device.flow = Flow(cleanScreenOf: event.flow, user: selected)
        device.flow.biometric = selected.flatMap { biometrics[event.device]?[$0] }
        devices.values[index] = device
    }

    /// The device's sign-in screen as last recorded: it replaces what an earlier event said, and
    /// leaves the flow and who is signed in as they are. Out of line: rare, and `apply` stays small.
    @inline(never)
    private mutating func noteSignInOptions(_ options: SignInOptions, device: String) {
        devices[device, default: DeviceState(device: device)].signInOptions = options
    }

    /// Puts `flow` on the lock screen when `decision` refuses attempts at `at`, to return to
    /// `returnScreen` when a temporary lock ends; `false` when it allows them.
    private static func showLock(_ decision: LockoutDecision, at: Timestamp, returningTo returnScreen: Screen, on flow: inout Flow) -> Bool {
        switch decision {
        case .allowed: return false
        case .locked(let lock):
            flow.showTemporaryLock(until: lock.until, at: at, returningTo: returnScreen)
        case .permanentlyLocked(let lock):
            flow.screen = .lockedOut
            flow.state = .error
            flow.fieldMessages = []
            flow.lockedUntil = nil
            flow.unlockScreen = nil
            flow.systemMessage = Message(lock.message, .error)
        }
        return true
    }

    /// The device's session (the empty sign-in screen for a device never seen).
    public func session(device: String) -> DeviceState {
        devices[device] ?? DeviceState(device: device)
    }

    /// Fills in what a snapshot of projection state version 5 did not hold (the biometric table,
    /// taken from the shared-device user lists; every flow's badge) so a store pruned by an
    /// older build opens.
    mutating func upgradeFromStateVersion5(users: MultiUserProjection) {
        for (device, list) in users.devices {
            for profile in list.users {
                if let kind = profile.biometric { biometrics[device, default: [:]][profile.id] = kind }
            }
        }
        for name in Array(devices.keys) {
            devices[name]!.flow.biometric = devices[name]!.flow.user.flatMap { biometrics[name]?[$0] }
        }
    }
}

extension Flow {
    /// Where the fold starts for an event after `before` on its device: a clean screen of the
    /// event's flow, about the event's user (or, within the flow, the flow's user). The form's
    /// fields and identifier kind carry over within the flow; the event's case says what else does.
    @inline(__always)
    init(startingFrom before: Flow, for event: Event, sameFlow: Bool) {
        self.init(cleanScreenOf: event.flow, user: event.user ?? (sameFlow ? before.user : nil))
        if sameFlow {
            inputs = before.inputs
            identifierKind = before.identifierKind
        }
    }

    /// Shows `screen` in `state`, or without one in the form's resting state on that screen.
    @inline(__always)
    mutating func show(_ screen: Screen, _ state: ScreenState? = nil) {
        self.screen = screen
        self.state = state ?? restingState
    }

    /// Replaces the message under `message.field`, keeping the list sorted by field name.
    mutating func setFieldMessage(_ message: FieldMessage) {
        fieldMessages.removeAll { $0.field == message.field }
        let index = fieldMessages.firstIndex { $0.field > message.field } ?? fieldMessages.endIndex
        fieldMessages.insert(message, at: index)
    }

    /// Replaces the flags of `input.field`.
    mutating func setField(_ input: FieldInput) { inputs.set(input) }

    /// "No account with this …" under the field the flow's form names the account with.
    mutating func showUnknownAccount() {
        let kind = identifierKind ?? .username
        fieldMessages = [FieldMessage(field: kind.rawValue, SessionText.unknownAccount(kind), .error)]
    }

    /// These messages, for an event of the same flow on the same screen (which keeps them); none otherwise.
    func fieldMessages(ifSameFlow sameFlow: Bool, screen: Screen) -> [FieldMessage] {
        sameFlow && self.screen == screen ? fieldMessages : []
    }

    /// Whether a red message is shown (under a field or as the system message).
    var showsError: Bool {
        systemMessage?.severity == .error || fieldMessages.contains { $0.severity == .error }
    }

    /// The state of a form with nothing to report: `partially_filled` while any of the screen's
    /// own fields is filled, else `empty`.
    var restingState: ScreenState {
        inputs.filled & screen.formMask != 0 ? .partiallyFilled : .empty
    }
}

extension FormField {
    /// "Username already in use", or its email form when the form signs up with an email address.
    var inUseText: String { self == .email ? SessionText.emailInUse : SessionText.usernameInUse }

    /// The kind of identifier the field holds; `nil` for the other fields.
    public var identifierKind: IdentifierKind? {
        switch self {
        case .username: .username
        case .email: .email
        case .phone: .phone
        case .password, .passwordConfirmation, .captcha, .passcode, .secondFactorCode: nil
        }
    }

    /// The screen an edit of this field shows when the flow's current screen has no such field.
    public var homeScreen: Screen {
        switch self {
        case .username, .email, .phone, .password, .passcode: .signIn
        case .passwordConfirmation: .createAccount
        case .captcha: .captcha
        case .secondFactorCode: .secondFactor
        }
    }
}

extension ValidationResult {
    /// The message under the field, or `nil` when the result clears it.
    var message: (String, Severity)? {
        switch self {
        case .usernameAvailable, .emailAvailable: nil
        case .usernameInUse: (SessionText.usernameInUse, .error)
        case .usernameInvalid: (SessionText.usernameInvalid, .error)
        case .passwordTooWeak: (SessionText.passwordTooWeak, .error)
        case .passwordsDoNotMatch: (SessionText.passwordsDoNotMatch, .warning)
        case .passwordsMatch: (SessionText.passwordsMatch, .success)
        case .emailInUse: (SessionText.emailInUse, .error)
        case .emailInvalid: (SessionText.emailInvalid, .error)
        case .phoneInvalid: (SessionText.phoneInvalid, .error)
        }
    }
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
        case .emailInUse: .field(.email, SessionText.emailInUse)
        case .emailInvalid: .field(.email, SessionText.emailInvalid)
        case .phoneInvalid: .field(.phone, SessionText.phoneInvalid)
        }
    }
}

/// One device's state: who is signed in (``SignedInUser``), the flow its screen shows, and what
/// its sign-in screen offered when the app last said (``SignInOptions``).
public struct DeviceState: Sendable, Hashable, Codable {
    public var device: String
    public var signedIn: SignedInUser?
    public var flow: Flow
    /// The last `sign_in_options_shown` of the device, `nil` before the first.
    public var signInOptions: SignInOptions?

    public init(device: String, signedIn: SignedInUser? = nil, flow: Flow = Flow(), signInOptions: SignInOptions? = nil) {
        self.device = device
        self.signedIn = signedIn
        self.flow = flow
        self.signInOptions = signInOptions
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

/// The old name of ``DeviceState``: "session" now means only a sign-in's span
/// (``History/SignInSession``), and a flow's id is ``Flow/id``.
@available(*, deprecated, renamed: "DeviceState")
public typealias DeviceSession = DeviceState

/// What the current onboarding flow shows.
public struct Flow: Sendable, Hashable {
    /// The flow instance (the events' ``Event/flow``).
    public var id: UUID?
    /// The flow id's old name (see ``Event/flow``).
    @available(*, deprecated, renamed: "id")
    public var session: UUID? {
        get { id }
        set { id = newValue }
    }
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
    /// On `locked_out` with a temporary lock: the screen the flow returns to when the lock ends
    /// (the form the refused attempt came from), in the state its fields give.
    public internal(set) var unlockScreen: Screen?
    /// The flow's form fields the app reported (`field_edited`), sorted by field name: whether
    /// each is filled and, when the app checked, valid. Never their content.
    public var fields: [FieldInput] {
        get { inputs.list }
        set { inputs = FieldInputs(newValue) }
    }
    /// The same as bit sets, one bit per field: what the fold keeps (no allocation per event).
    var inputs = FieldInputs()
    /// What the user types to name the account on this flow's form (username, email or phone),
    /// when an event said; it decides under which field "no account" shows.
    public var identifierKind: IdentifierKind?
    /// The biometric sensor the flow's user enabled on this device: the Face ID / Touch ID badge
    /// on the sign-in button. `nil` when biometric sign-in is off (or the user is not known).
    public var biometric: BiometricKind?

    public init(
        id: UUID? = nil, user: String? = nil, screen: Screen = .signIn, state: ScreenState = .empty,
        fieldMessages: [FieldMessage] = [], systemMessage: Message? = nil, resend: ResendInfo? = nil,
        lockedUntil: Timestamp? = nil, fields: [FieldInput] = [], identifierKind: IdentifierKind? = nil,
        biometric: BiometricKind? = nil, unlockScreen: Screen? = nil
    ) {
        self.id = id
        self.user = user
        self.screen = screen
        self.state = state
        self.fieldMessages = fieldMessages
        self.systemMessage = systemMessage
        self.resend = resend
        self.lockedUntil = lockedUntil
        self.inputs = FieldInputs(fields)
        self.identifierKind = identifierKind
        self.biometric = biometric
        self.unlockScreen = unlockScreen
    }

    /// The fold's start for each event: a clean sign-in screen of flow `id` about `user`
    /// (the public initializer's defaults, without building an empty field list per event).
    @inline(__always)
    init(cleanScreenOf id: UUID?, user: String?) {
        self.id = id
        self.user = user
        screen = .signIn
        state = .empty
        fieldMessages = []
        systemMessage = nil
        resend = nil
        lockedUntil = nil
        unlockScreen = nil
        identifierKind = nil
        biometric = nil
    }

    /// Whether the screen's submit button ("Sign In", "Verify", "Create account", "Send") is
    /// enabled: the screen has a form, is not loading, every field of it the app reported is
    /// filled and none is invalid, and the fields it needs are filled: on `sign_in` a password or
    /// passcode, and an identifier unless the flow's user is known (a selected user on a shared
    /// device); on `second_factor` the code; on `captcha` the answer; on `create_account` an
    /// identifier and a password; on `forgot_password` an identifier unless the user is known; on
    /// `forgot_passcode` the new passcode. A screen in `success` has done its job: disabled.
    public var submitEnabled: Bool {
        let form = screen.formMask
        guard state != .loading, state != .success, form != 0 else { return false }
        let reported = inputs.reported & form
        // Every reported field of the form filled, none reported invalid.
        guard inputs.filled & reported == reported, inputs.invalid & reported == 0 else { return false }
        let filled = inputs.filled & form
        let identifier = filled & FieldInputs.mask([.username, .email, .phone]) != 0
        switch screen {
        case .signIn: return filled & FieldInputs.mask([.password, .passcode]) != 0 && (identifier || user != nil)
        case .secondFactor: return filled & FieldInputs.mask([.secondFactorCode]) != 0
        case .captcha: return filled & FieldInputs.mask([.captcha]) != 0
        case .createAccount: return identifier && filled & FieldInputs.mask([.password]) != 0
        case .forgotPassword: return identifier || user != nil
        case .forgotPasscode: return filled & FieldInputs.mask([.passcode]) != 0
        case .resetSent, .switchUser, .signedIn, .lockedOut: return false
        }
    }
}

// Apps that keep a `DeviceState` (it is `Codable`) get these keys; the store's snapshots have
// their own codec (SessionSnapshotJSON.swift).
extension Flow: Codable {
    private enum CodingKeys: String, CodingKey {
        // `session`: the key snapshots have always used for the flow id.
        case id = "session", user, screen, state, fieldMessages, systemMessage, resend, lockedUntil, fields, identifierKind, biometric,
            unlockScreen
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            id: try container.decodeIfPresent(UUID.self, forKey: .id),
            user: try container.decodeIfPresent(String.self, forKey: .user),
            screen: try container.decode(Screen.self, forKey: .screen),
            state: try container.decode(ScreenState.self, forKey: .state),
            fieldMessages: try container.decode([FieldMessage].self, forKey: .fieldMessages),
            systemMessage: try container.decodeIfPresent(Message.self, forKey: .systemMessage),
            resend: try container.decodeIfPresent(ResendInfo.self, forKey: .resend),
            lockedUntil: try container.decodeIfPresent(Timestamp.self, forKey: .lockedUntil),
            // Absent from snapshots of state version 5.
            fields: try container.decodeIfPresent([FieldInput].self, forKey: .fields) ?? [],
            identifierKind: try container.decodeIfPresent(IdentifierKind.self, forKey: .identifierKind),
            biometric: try container.decodeIfPresent(BiometricKind.self, forKey: .biometric))
        unlockScreen = try container.decodeIfPresent(Screen.self, forKey: .unlockScreen)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(id, forKey: .id)
        try container.encodeIfPresent(user, forKey: .user)
        try container.encode(screen, forKey: .screen)
        try container.encode(state, forKey: .state)
        try container.encode(fieldMessages, forKey: .fieldMessages)
        try container.encodeIfPresent(systemMessage, forKey: .systemMessage)
        try container.encodeIfPresent(resend, forKey: .resend)
        try container.encodeIfPresent(lockedUntil, forKey: .lockedUntil)
        try container.encode(fields, forKey: .fields)
        try container.encodeIfPresent(identifierKind, forKey: .identifierKind)
        try container.encodeIfPresent(biometric, forKey: .biometric)
        try container.encodeIfPresent(unlockScreen, forKey: .unlockScreen)
    }
}

/// The reported form fields of a flow as bit sets indexed by ``FormField`` code: plain bytes, so
/// carrying them from event to event costs no reference counting.
struct FieldInputs: Sendable, Hashable {
    /// Fields the app reported at all.
    private(set) var reported: UInt16 = 0
    /// Reported and filled.
    private(set) var filled: UInt16 = 0
    /// Reported with `valid: false`.
    private(set) var invalid: UInt16 = 0
    /// Reported with `valid: true`.
    private(set) var valid: UInt16 = 0

    init() {}

    init(_ list: [FieldInput]) {
        for input in list { set(input) }
    }

    /// One bit per field code: room for 16 fields (``FormField`` has 8; a test holds the bound).
    static func bit(_ field: FormField) -> UInt16 { 1 << UInt16(field.wireCode) }

    static func mask(_ fields: [FormField]) -> UInt16 { fields.reduce(0) { $0 | bit($1) } }

    mutating func set(_ input: FieldInput) {
        let bit = FieldInputs.bit(input.field)
        reported |= bit
        filled = input.filled ? filled | bit : filled & ~bit
        invalid = input.valid == false ? invalid | bit : invalid & ~bit
        valid = input.valid == true ? valid | bit : valid & ~bit
    }

    /// Forgets what was reported of `field`.
    mutating func remove(_ field: FormField) {
        let kept = ~FieldInputs.bit(field)
        reported &= kept
        filled &= kept
        invalid &= kept
        valid &= kept
    }

    /// The reported fields, sorted by field name.
    var list: [FieldInput] {
        FieldInputs.byName.compactMap { field in
            let bit = FieldInputs.bit(field)
            guard reported & bit != 0 else { return nil }
            return FieldInput(
                field: field, filled: filled & bit != 0,
                valid: invalid & bit != 0 ? false : valid & bit != 0 ? true : nil)
        }
    }

    private static let byName = FormField.allCases.sorted { $0.rawValue < $1.rawValue }
}

/// What the app reported of one form field: filled or empty, and its own check of the field's
/// policy when it made one.
public struct FieldInput: Sendable, Hashable, Codable {
    public var field: FormField
    public var filled: Bool
    /// `nil` when the app did not check (then only `filled` decides).
    public var valid: Bool?

    public init(field: FormField, filled: Bool, valid: Bool? = nil) {
        self.field = field
        self.filled = filled
        self.valid = valid
    }
}

public enum Screen: String, Sendable, Hashable, Codable, CaseIterable {
    case signIn = "sign_in", secondFactor = "second_factor", captcha, createAccount = "create_account",
        forgotPassword = "forgot_password", resetSent = "reset_sent", switchUser = "switch_user",
        signedIn = "signed_in", lockedOut = "locked_out", forgotPasscode = "forgot_passcode"

    /// The fields of the screen's form; empty for the screens without one (they have no submit
    /// button and are never `empty` or `partially_filled`).
    public var formFields: [FormField] {
        switch self {
        case .signIn: [.username, .email, .phone, .password, .passcode]
        case .secondFactor: [.secondFactorCode]
        case .captcha: [.captcha]
        case .createAccount: [.username, .email, .phone, .password, .passwordConfirmation]
        case .forgotPassword: [.username, .email, .phone]
        case .forgotPasscode: [.passcode]
        case .resetSent, .switchUser, .signedIn, .lockedOut: []
        }
    }

    /// ``formFields`` as a bit set of field codes (built once per screen: the fold asks per event).
    var formMask: UInt16 {
        switch self {
        case .signIn: Screen.signInMask
        case .secondFactor: Screen.secondFactorMask
        case .captcha: Screen.captchaMask
        case .createAccount: Screen.createAccountMask
        case .forgotPassword: Screen.forgotPasswordMask
        case .forgotPasscode: Screen.forgotPasscodeMask
        case .resetSent, .switchUser, .signedIn, .lockedOut: 0
        }
    }

    private static let signInMask = FieldInputs.mask(Screen.signIn.formFields)
    private static let secondFactorMask = FieldInputs.mask(Screen.secondFactor.formFields)
    private static let captchaMask = FieldInputs.mask(Screen.captcha.formFields)
    private static let createAccountMask = FieldInputs.mask(Screen.createAccount.formFields)
    private static let forgotPasswordMask = FieldInputs.mask(Screen.forgotPassword.formFields)
    private static let forgotPasscodeMask = FieldInputs.mask(Screen.forgotPasscode.formFields)
}

/// The five states the mobile auth brief asks of every screen (docs/projections.md has the
/// screen × state matrix: which cells exist and the events that reach them).
public enum ScreenState: String, Sendable, Hashable, Codable, CaseIterable {
    case empty, partiallyFilled = "partially_filled", loading, error, success
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
    /// The field's name: a ``FormField`` name (`username`, `email`, `phone`, `password`,
    /// `password_confirmation`, `passcode`, `second_factor_code`, `captcha`).
    public var field: String
    public var text: String
    public var severity: Severity
    public init(field: String, _ text: String, _ severity: Severity) {
        self.field = field
        self.text = text
        self.severity = severity
    }
}

/// The resend timer of `reset_sent`: when a new mail may be requested, and what to do while
/// waiting for this one.
public struct ResendInfo: Sendable, Hashable {
    /// When the timer ends (60 s after the mail was sent by default).
    public var availableAt: Timestamp
    public var help: String
    /// Whether the timer has ended at the time the state was asked for (``DeviceState/at(_:lockout:)``):
    /// the fold itself, which has no clock, always holds `false`.
    public var isAvailable: Bool

    public init(availableAt: Timestamp, help: String, isAvailable: Bool = false) {
        self.availableAt = availableAt
        self.help = help
        self.isAvailable = isAvailable
    }
}

extension ResendInfo: Codable {
    private enum CodingKeys: String, CodingKey { case availableAt, help, isAvailable }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            availableAt: try container.decode(Timestamp.self, forKey: .availableAt), help: try container.decode(String.self, forKey: .help),
            isAvailable: try container.decodeIfPresent(Bool.self, forKey: .isAvailable) ?? false)
    }
}
