import OnboardingModel

/// All projections of a store, applied together in log order: the lockout engine first, then
/// the session (which reads the lockout decision the record led to) and the users.
///
/// State version 6 added the form fields, identifier kind and biometric badge of the session's
/// flows and the `partially_filled` state; a version-5 state still loads as the base of a
/// pruned store (``upgradeFromStateVersion5()``). State version 7 added each device's sign-in
/// options (``DeviceState/signInOptions``); a version-6 base loads as it is (no device has any).
///
/// ```swift
/// var state = OnboardingState(policy: .mediawiki)
/// for record in log { state.apply(record) }
/// state.session.session(device: "kiosk-7").flow.screen   // .lockedOut, …
/// ```
public struct OnboardingState: Projection {
    /// Bumped whenever any part's layout or meaning changes, so old snapshots are rebuilt.
    public static let stateVersion = 7

    public private(set) var seq: UInt64 = 0
    public private(set) var lockout: LockoutEngine
    public private(set) var session = SessionProjection()
    public private(set) var users = MultiUserProjection()

    public init(policy: LockoutPolicy = .mediawiki) {
        lockout = LockoutEngine(policy: policy)
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
        session.apply(record, lockout: lockout)
        users.apply(record)
        seq = record.seq
    }
}
