import OnboardingModel

/// All projections of a store, applied together in log order: the lockout engine first, then
/// the session (which reads the lockout decision the record led to) and the users.
///
/// ```swift
/// var state = OnboardingState(policy: .mediawiki)
/// for record in log { state.apply(record) }
/// state.session.session(device: "kiosk-7").flow.screen   // .lockedOut, …
/// ```
public struct OnboardingState: Projection {
    /// Bumped whenever any part's layout or meaning changes, so old snapshots are rebuilt.
    public static let stateVersion = 5

    public private(set) var seq: UInt64 = 0
    public private(set) var lockout: LockoutEngine
    public private(set) var session = SessionProjection()
    public private(set) var users = MultiUserProjection()

    public init(policy: LockoutPolicy = .mediawiki) {
        lockout = LockoutEngine(policy: policy)
    }

    public mutating func apply(_ record: Record) {
        precondition(record.seq > seq, "records must be applied in seq order (got \(record.seq) after \(seq))")
        lockout.apply(record)
        session.apply(record, lockout: lockout)
        users.apply(record)
        seq = record.seq
    }
}
