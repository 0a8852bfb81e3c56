import OnboardingModel

/// What one event means to a ``LockoutEngine``: the engine's whole view of the log. An event
/// that cannot change a key has none (`nil`), so a replay that only needs the lockout can keep
/// these instead of events (the lockout lab's replay path does).
///
/// ```swift
/// if let input = LockoutInput(event) { engine.apply(input) }
/// ```
public struct LockoutInput: Sendable, Hashable {
    public enum Kind: UInt8, Sendable, Hashable {
        /// A counted `sign_in_failed` (``SignInFailureReason/isCountedFailure``).
        case passwordFailure
        case secondFactorFailure
        case signInSucceeded
        case passcodeResetCompleted
        case passwordChanged
        case lockoutCleared
        /// A `sign_in_aborted`: abuse from an address, not a guess at an account. Only the keys
        /// by address count it (docs/lockout.md § By address); the user's keys never do.
        case abortedAttempt
    }

    public var kind: Kind
    /// The sign-in method of a password failure (what a rule's `methods` filter looks at);
    /// `.password` for the other kinds.
    public var method: SignInMethod
    public var user: String?
    public var device: String
    public var at: Timestamp
    /// The client address of a password failure, an aborted attempt or a success, when the event
    /// has one.
    public var address: String?

    public init(kind: Kind, method: SignInMethod = .password, user: String?, device: String, at: Timestamp, address: String? = nil) {
        self.kind = kind
        self.method = method
        self.user = user
        self.device = device
        self.at = at
        self.address = address
    }

    /// The input of `event`, or `nil` when it cannot change a key: what ``LockoutEngine/apply(_:)-(Record)``
    /// applies for its record.
    public init?(_ event: Event) {
        let kind: Kind
        var method = SignInMethod.password
        var address: String?
        switch event.payload {
        case let .signInFailed(failedMethod, reason, clientAddress):
            guard reason.isCountedFailure else { return nil }
            (kind, method, address) = (.passwordFailure, failedMethod, clientAddress)
        case .secondFactorFailed: kind = .secondFactorFailure
        case .signInSucceeded(_, _, let clientAddress): (kind, address) = (.signInSucceeded, clientAddress)
        case .passcodeResetCompleted: kind = .passcodeResetCompleted
        case .passwordChanged: kind = .passwordChanged
        case .lockoutCleared: kind = .lockoutCleared
        case .signInAborted(_, let clientAddress): (kind, address) = (.abortedAttempt, clientAddress)
        default: return nil
        }
        self.init(kind: kind, method: method, user: event.user, device: event.device, at: event.at, address: address)
    }
}
