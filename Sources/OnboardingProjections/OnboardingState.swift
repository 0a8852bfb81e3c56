import OnboardingModel

/// All projections of a store, applied together in log order: the lockout engine first, then
/// the users, then the session (which reads the lockout decision the record led to, and the
/// users' selection for `user_switch_closed` and `user_removed`).
///
/// State version 7 added the screen a temporary lock returns to; version 6 added the form fields, identifier kind and biometric badge of the session's
/// flows and the `partially_filled` state; a version-5 state still loads as the base of a
/// pruned store (``upgradeFromStateVersion5()``). State version 7 added `forgot_passcode`, the
/// "Switch or Add User" events, the CAPTCHA failures in a row (with their setting), the screen a
/// temporary lock returns to and each device's sign-in options (``DeviceState/signInOptions``); a
/// version-6 base loads with none of them.
///
/// ```swift
/// var state = OnboardingState(policy: .mediawiki)
/// for record in log { state.apply(record) }
/// state.session.session(device: "kiosk-7").flow.screen   // .lockedOut, …
/// ```
public struct OnboardingState: Projection {
    /// Bumped whenever any part's layout or meaning changes, so old snapshots are rebuilt.
    public static let stateVersion = 7
    /// The state versions a pruned store's base snapshot may have and still serve: version 7
    /// only added optional members (a lock's return screen, …), so a version-6 base reads as
    /// is, and a version-5 one through ``upgradeFromStateVersion5()``.
    public static let readableBaseVersions: Set<Int> = [5, 6, stateVersion]

    public private(set) var seq: UInt64 = 0
    public private(set) var lockout: LockoutEngine
    public private(set) var session = SessionProjection()
    public private(set) var users = MultiUserProjection()

    public init(policy: LockoutPolicy = .mediawiki) {
        lockout = LockoutEngine(policy: policy)
    }

    /// `captchaAlternativesAfterFailures`: the session's setting (``SessionProjection/captchaAlternativesAfterFailures``).
    public init(policy: LockoutPolicy = .mediawiki, captchaAlternativesAfterFailures: Int) {
        lockout = LockoutEngine(policy: policy)
        session = SessionProjection(
            resendWaitMilliseconds: SessionProjection.defaultResendWaitMilliseconds,
            captchaAlternativesAfterFailures: captchaAlternativesAfterFailures)
    }

    /// The session's CAPTCHA setting from now on (a pruned store's base folded under another).
    package mutating func useCaptchaAlternativesAfterFailures(_ failures: Int) {
        precondition(failures > 0, "the CAPTCHA alternatives need at least one failure (got \(failures))")
        session.captchaAlternativesAfterFailures = failures
    }

    /// A state read from a snapshot (``init(snapshotJSON:)``).
    init(seq: UInt64, lockout: LockoutEngine, session: SessionProjection, users: MultiUserProjection) {
        self.seq = seq
        self.lockout = lockout
        self.session = session
        self.users = users
    }

    /// Fills in what a version-5 state did not hold (the session's biometric badges, from the
    /// user lists); its flows have no reported fields until the app reports them again.
    public mutating func upgradeFromStateVersion5() {
        session.upgradeFromStateVersion5(users: users)
    }

    public mutating func apply(_ record: Record) {
        precondition(record.seq > seq, "records must be applied in seq order (got \(record.seq) after \(seq))")
        lockout.apply(record)
        users.apply(record)
        session.apply(record, lockout: lockout, users: users)
        seq = record.seq
    }
}
