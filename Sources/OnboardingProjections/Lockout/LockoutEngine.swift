import OnboardingModel

/// The lockout projection: failure counters per ``LockoutKey`` under one ``LockoutPolicy``, and
/// the decision for any key at any time. Pure: time always comes from the events or the caller.
///
/// Counted failures are `sign_in_failed` with reason `invalid_password`, `invalid_passcode`,
/// `unknown_user` or `biometric_failed` (factor `password`) and `second_factor_failed` (factor
/// `second_factor`). A failure while the key is locked is not counted (the app records it as
/// `sign_in_throttled`). A lock never ends earlier because a later event carries an earlier time.
///
/// ```swift
/// var engine = LockoutEngine(policy: .mediawiki)
/// for record in log { engine.apply(record) }
/// let decision = engine.decide(LockoutKey(user: "alice", device: "kiosk-7", factor: .password), at: now)
/// ```
public struct LockoutEngine: Projection {
    public static let stateVersion = 2

    public let policy: LockoutPolicy
    /// `false` on a device (keys per device); `true` on the server's global view, where keys are
    /// `(user, factor)` across devices.
    public let acrossDevices: Bool
    public private(set) var seq: UInt64 = 0
    /// One flat table: a decision is one hash of the key. Clearing a user on one device looks up
    /// that device's keys directly; only account-wide clears (`password_changed`,
    /// `lockout_cleared`) scan, and they are rare.
    private(set) var keys: [LockoutKey: KeyState] = [:]

    subscript(key: LockoutKey) -> KeyState? {
        get { keys[key] }
        set { keys[key] = newValue }
    }

    /// The bounded state of one key, kept small because there is one per attacked account and
    /// device (the benchmark's `lockout_bytes_per_key`): the first two tiers' windows inline (every
    /// preset has at most two), 32-bit counters, the lock's reason as a tier index.
    struct KeyState: Sendable, Hashable, Codable {
        struct Window: Sendable, Hashable, Codable {
            var start: Timestamp
            var count: Int32
        }
        private var firstWindow: Window?
        private var secondWindow: Window?
        /// Windows of tiers 3 and up (custom policies only; empty and unallocated otherwise).
        private var moreWindows: [Window?]
        /// Counted failures since the key was last cleared.
        var failures: Int32 = 0
        /// Failures of the current back-off streak.
        var streak: Int32 = 0
        var temporaryLockouts: Int32 = 0
        /// Why the lock in force was imposed: a tier index ≥ 0, or ``backoffLock`` / ``quickLoginLock``.
        var lockTier: Int8 = KeyState.noLock
        var lastFailureAt: Timestamp?
        var lockedUntil: Timestamp?
        var lockDurationMilliseconds: Int64 = 0
        var permanentSince: Timestamp?

        static let noLock: Int8 = -1
        static let backoffLock: Int8 = -2
        static let quickLoginLock: Int8 = -3

        init(tierCount: Int) {
            moreWindows = tierCount > 2 ? Array(repeating: nil, count: tierCount - 2) : []
        }

        subscript(window index: Int) -> Window? {
            get { index == 0 ? firstWindow : index == 1 ? secondWindow : moreWindows[index - 2] }
            set {
                switch index {
                case 0: firstWindow = newValue
                case 1: secondWindow = newValue
                default: moreWindows[index - 2] = newValue
                }
            }
        }

        var tierCount: Int { 2 + moreWindows.count }

        /// The lock's reason in the terms of `rule`.
        func lockReason(_ rule: LockoutPolicy.FactorRule) -> LockReason? {
            switch lockTier {
            case KeyState.backoffLock: return .backoff
            case KeyState.quickLoginLock: return .quickLogin
            case let tier where tier >= 0 && Int(tier) < rule.tiers.count:
                let definition = rule.tiers[Int(tier)]
                return .tier(index: Int(tier), limit: definition.limit, windowSeconds: definition.windowSeconds)
            default: return nil
            }
        }
    }

    public init(policy: LockoutPolicy = .mediawiki, acrossDevices: Bool = false) {
        self.policy = policy
        self.acrossDevices = acrossDevices
    }

    /// The key an event's attempt counts under.
    public func key(user: String?, device: String, factor: LockoutFactor) -> LockoutKey {
        LockoutKey(user: user, device: acrossDevices ? nil : device, factor: factor)
    }

    public mutating func apply(_ record: Record) {
        let event = record.event
        defer { seq = record.seq }
        switch event.payload {
        case let .signInFailed(method, reason):
            guard reason.isCountedFailure else { return }
            if let methods = policy.password.methods, !methods.contains(method) { return }
            countFailure(key(user: event.user, device: event.device, factor: .password), rule: policy.password, at: event.at)
        case .secondFactorFailed:
            countFailure(key(user: event.user, device: event.device, factor: .secondFactor), rule: policy.secondFactor, at: event.at)
        case .signInSucceeded:
            clear(user: event.user, device: event.device, scope: policy.clearing.signInSucceeded)
        case .passcodeResetCompleted:
            clear(user: event.user, device: event.device, scope: policy.clearing.passcodeResetCompleted)
        case .passwordChanged:
            clear(user: event.user, device: nil, scope: policy.clearing.passwordChanged)
        case .lockoutCleared:
            clear(user: event.user, device: nil, scope: policy.clearing.lockoutCleared)
        default:
            return
        }
    }

    private mutating func countFailure(_ key: LockoutKey, rule: LockoutPolicy.FactorRule, at: Timestamp) {
        var state = self[key] ?? KeyState(tierCount: rule.tiers.count)
        if state.permanentSince != nil { return }
        if let until = state.lockedUntil, at < until { return }
        state.failures += 1

        // Every part of the rule may ask for a lock; one failure imposes at most one lock (the
        // longest), so it counts once toward `permanentAfterLockouts`.
        var lock: (until: Timestamp, reason: LockReason, duration: Int64)?
        func propose(_ until: Timestamp, _ reason: LockReason, _ duration: Int64) {
            if lock.map({ until > $0.until }) ?? true { lock = (until, reason, duration) }
        }

        for (index, tier) in rule.tiers.enumerated() {
            let window = Int64(tier.windowSeconds) * 1000
            if var current = state[window: index], at < current.start.adding(milliseconds: window) {
                // Inside the window, or before its start when the device clock went back: the
                // window keeps its start, so its lock can only last as long as it would have.
                current.count += 1
                state[window: index] = current
            } else {
                state[window: index] = .init(start: at, count: 1)
            }
            if let current = state[window: index], current.count >= tier.limit {
                propose(current.start.adding(milliseconds: window),
                        .tier(index: index, limit: tier.limit, windowSeconds: tier.windowSeconds), window)
            }
        }

        if let backoff = rule.backoff {
            let previous = state.lastFailureAt
            if let reset = backoff.resetAfterSeconds, let previous,
               at.millisecondsSince1970 - previous.millisecondsSince1970 > Int64(reset) * 1000 {
                // The count restarts (Keycloak's max delta time): this failure is the first again.
                state.streak = 0
                state.failures = 1
            }
            state.streak += 1
            var wait: Int64 = 0
            var reason = LockReason.backoff
            if let quick = backoff.quickLoginMilliseconds, let quickWait = backoff.quickLoginWaitSeconds, let previous {
                let gap = at.millisecondsSince1970 - previous.millisecondsSince1970
                if gap >= 0 && gap < Int64(quick) {
                    wait = Int64(quickWait) * 1000
                    reason = .quickLogin
                }
            }
            if Int(state.streak) >= backoff.threshold {
                let maximum = Int64(backoff.maximumWaitSeconds) * 1000
                let initial = Int64(backoff.initialWaitSeconds) * 1000
                let steps = Int(state.streak) - backoff.threshold
                let (grown, overflow): (Int64, Bool) = switch backoff.growth {
                case .doubling: steps >= 62 ? (maximum, true) : initial.multipliedReportingOverflow(by: Int64(1) << Int64(steps))
                case .linear: initial.multipliedReportingOverflow(by: Int64(Int(state.streak) / backoff.threshold))
                }
                let capped = overflow ? maximum : min(max(grown, initial), maximum)
                if capped > wait {
                    wait = capped
                    reason = .backoff
                }
            }
            if wait > 0 { propose(at.adding(milliseconds: wait), reason, wait) }
            state.lastFailureAt = max(previous ?? at, at)
        } else {
            state.lastFailureAt = max(state.lastFailureAt ?? at, at)
        }
        if let lock { impose(&state, until: lock.until, reason: lock.reason, durationMilliseconds: lock.duration, rule: rule, at: at) }

        if let limit = rule.consecutiveLimit, Int(state.failures) >= limit, state.permanentSince == nil {
            state.permanentSince = at
        }
        self[key] = state
    }

    /// Locks until `until` — never earlier than a lock already in force — or permanently once
    /// the policy's temporary lockouts are used up.
    private func impose(_ state: inout KeyState, until: Timestamp, reason: LockReason, durationMilliseconds: Int64,
                        rule: LockoutPolicy.FactorRule, at: Timestamp) {
        if let allowed = rule.permanentAfterLockouts, Int(state.temporaryLockouts) >= allowed {
            state.permanentSince = state.permanentSince ?? at
            return
        }
        state.temporaryLockouts += 1
        if state.lockedUntil.map({ until > $0 }) ?? true {
            state.lockedUntil = until
            state.lockTier = switch reason {
            case .tier(let index, _, _): Int8(index)
            case .backoff: KeyState.backoffLock
            case .quickLogin: KeyState.quickLoginLock
            }
            state.lockDurationMilliseconds = durationMilliseconds
        }
    }

    /// Clears the user's keys on `device` (or on every device when `device` is nil).
    private mutating func clear(user: String?, device: String?, scope: LockoutPolicy.ClearScope) {
        guard scope != .none else { return }
        let touched: [LockoutKey]
        if let device, !acrossDevices {
            touched = LockoutFactor.allCases.map { LockoutKey(user: user, device: device, factor: $0) }.filter { keys[$0] != nil }
        } else if acrossDevices {
            touched = LockoutFactor.allCases.map { LockoutKey(user: user, device: nil, factor: $0) }.filter { keys[$0] != nil }
        } else {
            touched = keys.keys.filter { $0.user == user }
        }
        for key in touched {
            if scope == .counters, let existing = self[key], let permanent = existing.permanentSince {
                var kept = KeyState(tierCount: existing.tierCount)
                kept.permanentSince = permanent
                kept.failures = existing.failures
                self[key] = kept
            } else {
                self[key] = nil
            }
        }
    }

    // MARK: Decisions

    /// May `key` try to sign in at `at`? A lock is in force while `at` is before its end, so at
    /// exactly the end the key is free again. O(1).
    public func decide(_ key: LockoutKey, at: Timestamp) -> LockoutDecision {
        guard let state = self[key] else { return .allowed(failures: 0) }
        if let since = state.permanentSince {
            return .permanentlyLocked(PermanentLock(since: since, clearedBy: policy.clearing.permanentClearedBy, failures: Int(state.failures)))
        }
        if let until = state.lockedUntil, at < until, let reason = state.lockReason(policy.rule(for: key.factor)) {
            return .locked(TemporaryLock(until: until, reason: reason, durationMilliseconds: state.lockDurationMilliseconds,
                                         failures: Int(state.failures)))
        }
        return .allowed(failures: Int(state.failures))
    }

    /// One key's standing at a time, for `onboard lockout`.
    public struct Entry: Sendable, Hashable {
        public var key: LockoutKey
        public var failures: Int
        /// The end of a temporary lock in force at the time asked, else `nil`.
        public var lockedUntil: Timestamp?
        public var permanent: Bool
    }

    /// Every key with counted failures (or a permanent lock), sorted by user, device, factor.
    public func entries(at: Timestamp) -> [Entry] {
        keys.sorted { $0.key < $1.key }.map { key, state in
            let locked = state.lockedUntil.flatMap { at < $0 ? $0 : nil }
            return Entry(key: key, failures: Int(state.failures), lockedUntil: state.permanentSince == nil ? locked : nil,
                         permanent: state.permanentSince != nil)
        }
    }

    /// Number of keys with state: the engine's memory grows with this, not with the log.
    public var keyCount: Int { keys.count }
}
