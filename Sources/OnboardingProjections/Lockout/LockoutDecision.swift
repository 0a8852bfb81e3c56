import OnboardingModel

/// The answer to "may this key try to sign in at time T?".
///
/// ```swift
/// switch engine.decide(key, at: now) {
/// case .allowed: checkPassword()
/// case .locked(let lock): show(lock.message)          // until lock.until
/// case .permanentlyLocked(let lock): show(lock.message) // lock.clearedBy says what lifts it
/// }
/// ```
public enum LockoutDecision: Sendable, Hashable {
    /// Attempts are allowed; `failures` counted failures stand against the key.
    case allowed(failures: Int)
    case locked(TemporaryLock)
    case permanentlyLocked(PermanentLock)

    public var isAllowed: Bool {
        if case .allowed = self { return true }
        return false
    }

    /// The stricter of two decisions: a permanent lock over a temporary one, the later end over
    /// the earlier, any lock over none (`first` when they tie).
    public static func stricter(_ first: LockoutDecision, _ second: LockoutDecision) -> LockoutDecision {
        switch (first, second) {
        case (.permanentlyLocked, _), (_, .allowed): first
        case (_, .permanentlyLocked), (.allowed, _): second
        case let (.locked(a), .locked(b)): a.until >= b.until ? first : second
        }
    }

    /// The message the sign-in screen shows, or `nil` when allowed.
    public var message: String? {
        switch self {
        case .allowed: nil
        case .locked(let lock): lock.message
        case .permanentlyLocked(let lock): lock.message
        }
    }
}

/// Why a temporary lock was imposed.
public enum LockReason: Sendable, Hashable, Codable {
    /// A tier's limit was reached; the lock ends with its window.
    case tier(index: Int, limit: Int, windowSeconds: Int)
    /// Back-off after repeated failures.
    case backoff
    /// Two failures closer than the quick-login interval.
    case quickLogin
}

/// A lock that ends by itself.
public struct TemporaryLock: Sendable, Hashable {
    /// A new attempt is allowed from this instant (the `retry_after` of `sign_in_throttled`).
    public var until: Timestamp
    public var reason: LockReason
    /// The length of the lock as the policy imposed it, e.g. the tier's window.
    public var durationMilliseconds: Int64
    public var failures: Int
    /// The time the decision was asked for: what ``message`` counts the time left from.
    public var decidedAt: Timestamp

    /// The time left at ``decidedAt`` (positive: a lock is in force only before its end).
    public var remainingMilliseconds: Int64 { until.millisecondsSince1970 - decidedAt.millisecondsSince1970 }

    /// "You have made too many recent login attempts. Please wait 5 minutes before trying
    /// again.", naming the time left at ``decidedAt`` as ``WaitWords`` words it.
    public var message: String { SessionText.tooManyAttempts(waitMilliseconds: remainingMilliseconds) }
}

/// A lock that only a clearing event lifts.
public struct PermanentLock: Sendable, Hashable {
    public var since: Timestamp
    /// The events that lift it (their scope is `all` in the policy).
    public var clearedBy: [EventType]
    public var failures: Int

    public var message: String {
        if clearedBy.contains(.passcodeResetCompleted) && !clearedBy.contains(.passwordChanged) {
            return "Your passcode is disabled after too many failed attempts. Use “Forgot Passcode?” to set a new one."
        }
        if clearedBy.contains(.passwordChanged) {
            return "Your account is locked after too many failed attempts. Reset your password to unlock it."
        }
        return "Your account is locked after too many failed attempts. Contact your administrator to unlock it."
    }
}
