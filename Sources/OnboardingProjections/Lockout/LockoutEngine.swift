import OnboardingModel

/// The lockout projection: failure counters per ``LockoutKey`` under one ``LockoutPolicy``, and
/// the decision for any key at any time. Pure: time always comes from the events or the caller.
///
/// Counted failures are `sign_in_failed` with reason `invalid_password`, `invalid_passcode`,
/// `unknown_user` or `biometric_failed` (factor `password`) and `second_factor_failed` (factor
/// `second_factor`); a `sign_in_aborted` counts only under the policy's keys by address
/// (``LockoutPolicy/address``). A failure while the key is locked is not counted (the app records it as
/// `sign_in_throttled`). A lock never ends earlier because a later event carries an earlier time.
///
/// ```swift
/// var engine = LockoutEngine(policy: .mediawiki)
/// for record in log { engine.apply(record) }
/// let decision = engine.decide(LockoutKey(user: "alice", device: "kiosk-7", factor: .password), at: now)
/// ```
public struct LockoutEngine: Projection {
    /// 4: keys by client address (``LockoutPolicy/address``) beside the keys by user.
    public static let stateVersion = 4

    public let policy: LockoutPolicy
    /// `false` on a device (keys per device); `true` on the server's global view, where keys are
    /// `(user, factor)` across devices.
    public let acrossDevices: Bool
    public internal(set) var seq: UInt64 = 0
    /// One open-addressing table of compact entries (``LockoutKeyTable``): a decision is one hash
    /// of the key and usually one slot read. Clearing a user on one device looks up that device's keys directly; only
    /// account-wide clears (`password_changed`, `lockout_cleared`) scan, and they are rare.
    var keys = LockoutKeyTable()
    /// The keys of ``LockoutPolicy/address``: the address in the key's `device`, the user (for
    /// `address_and_user`) or `nil` (for `address`) in its `user`, factor `password`.
    var addressKeys = LockoutKeyTable()

    public init(policy: LockoutPolicy = .mediawiki, acrossDevices: Bool = false) {
        self.policy = policy
        self.acrossDevices = acrossDevices
    }

    /// The key an event's attempt counts under.
    public func key(user: String?, device: String, factor: LockoutFactor) -> LockoutKey {
        LockoutKey(user: user, device: acrossDevices ? nil : device, factor: factor)
    }

    public mutating func apply(_ record: Record) {
        defer { seq = record.seq }
        if let input = LockoutInput(record.event) { apply(input) }
    }

    /// Applies what one event means to the lockout (``LockoutInput``): what ``apply(_:)`` does
    /// for the record of that event, without a record (the lab's replay path builds these
    /// straight from stored bytes). Leaves ``seq`` as it is.
    public mutating func apply(_ input: LockoutInput) {
        switch input.kind {
        case .passwordFailure:
            if let methods = policy.password.methods, !methods.contains(input.method) { return }
            let userKey = key(user: input.user, device: input.device, factor: .password)
            let byAddress = addressKey(user: input.user, address: input.address)
            // An attempt any key refuses was refused: it counts toward no key.
            guard !LockoutEngine.refuses(keys[userKey], at: input.at),
                !(byAddress.map { LockoutEngine.refuses(addressKeys[$0], at: input.at) } ?? false)
            else { return }
            LockoutEngine.countFailure(userKey, rule: policy.password, at: input.at, in: &keys)
            if let byAddress, let rule = policy.address?.rule {
                LockoutEngine.countFailure(byAddress, rule: rule, at: input.at, in: &addressKeys)
            }
        case .secondFactorFailure:
            LockoutEngine.countFailure(
                key(user: input.user, device: input.device, factor: .secondFactor), rule: policy.secondFactor,
                at: input.at, in: &keys)
        case .signInSucceeded:
            clear(user: input.user, device: input.device, scope: policy.clearing.signInSucceeded)
            if policy.address?.clearedBySuccess == true, let byAddress = addressKey(user: input.user, address: input.address) {
                addressKeys[byAddress] = nil
            }
        case .passcodeResetCompleted:
            clear(user: input.user, device: input.device, scope: policy.clearing.passcodeResetCompleted)
        case .passwordChanged:
            clear(user: input.user, device: nil, scope: policy.clearing.passwordChanged)
        case .lockoutCleared:
            clear(user: input.user, device: nil, scope: policy.clearing.lockoutCleared)
            clearAddressKeys(ofUser: input.user, scope: policy.clearing.lockoutCleared)
        case .abortedAttempt:
            // Abuse from an address, not a guess at an account: only its key by address counts it,
            // as one failure (a locked one refuses it uncounted, as for any failure). Scope
            // `address_and_user` needs a user to key it by; sshd often names none.
            guard let rule = policy.address?.rule, let byAddress = addressKey(user: input.user, address: input.address),
                policy.address?.scope == .address || input.user != nil
            else { return }
            LockoutEngine.countFailure(byAddress, rule: rule, at: input.at, in: &addressKeys)
        }
    }

    /// The key by address an attempt from `address` counts under, `nil` when the policy has no
    /// address rule or the attempt no (readable) address.
    public func addressKey(user: String?, address: String?) -> LockoutKey? {
        guard let rule = policy.address, let address, address != ClientAddress.erased else { return nil }
        return LockoutKey(user: rule.scope == .addressAndUser ? user : nil, device: address, factor: .password)
    }

    /// Whether a key in `state` refuses an attempt at `at`.
    @inline(__always)
    private static func refuses(_ state: KeyState?, at: Timestamp) -> Bool {
        guard let state else { return false }
        return state.permanentSince != nil || state.lockedUntil.map { at < $0 } ?? false
    }

    private static func countFailure(_ key: LockoutKey, rule: LockoutPolicy.FactorRule, at: Timestamp, in keys: inout LockoutKeyTable) {
        var state = keys[key] ?? KeyState()
        if state.permanentSince != nil { return }
        if let until = state.lockedUntil, at < until { return }
        increment(&state.failures)

        // Every part of the rule may ask for a lock; one failure imposes at most one lock (the
        // longest), so it counts once toward `permanentAfterLockouts`.
        var lock: (until: Timestamp, reason: LockReason, duration: Int64)?
        func propose(_ until: Timestamp, _ reason: LockReason, _ duration: Int64) {
            if lock.map({ until > $0.until }) ?? true { lock = (until, reason, duration) }
        }

        let inline = KeyState.inlineWindows
        var extraWindows = rule.tiers.count > inline ? keys.extraWindows(for: key, tierCount: rule.tiers.count) : []
        for (index, tier) in rule.tiers.enumerated() {
            let window = Int64(tier.windowSeconds) * 1000
            var current = KeyState.Window(start: at, count: 1)
            if let open = index < inline ? state[inlineWindow: index] : extraWindows[index - inline],
                at < open.start.adding(milliseconds: window)
            {
                // Inside the window, or before its start when the device clock went back: the
                // window keeps its start, so its lock can only last as long as it would have.
                current = open
                increment(&current.count)
            }
            if index < inline { state[inlineWindow: index] = current } else { extraWindows[index - inline] = current }
            if current.count >= tier.limit {
                let reason = LockReason.tier(index: index, limit: tier.limit, windowSeconds: tier.windowSeconds)
                if let lockSeconds = tier.lockSeconds {
                    propose(at.adding(milliseconds: Int64(lockSeconds) * 1000), reason, Int64(lockSeconds) * 1000)
                } else {
                    propose(current.start.adding(milliseconds: window), reason, window)
                }
            }
        }

        if let backoff = rule.backoff {
            let previous = state.lastFailureAt
            if let reset = backoff.resetAfterSeconds, let previous,
                at.millisecondsSince1970 - previous.millisecondsSince1970 > Int64(reset) * 1000
            {
                // The count restarts (Keycloak's max delta time): this failure is the first again.
                state.streak = 0
                state.failures = 1
            }
            increment(&state.streak)
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
                let (grown, overflow): (Int64, Bool) =
                    switch backoff.growth {
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
        keys[key] = state
        if !extraWindows.isEmpty { keys.setExtraWindows(extraWindows, for: key) }
    }

    /// Locks until `until` — never earlier than a lock already in force — or permanently once
    /// the policy's temporary lockouts are used up.
    private static func impose(
        _ state: inout KeyState, until: Timestamp, reason: LockReason, durationMilliseconds: Int64,
        rule: LockoutPolicy.FactorRule, at: Timestamp
    ) {
        // A quick-login lock is never a temporary lockout toward the permanent one (Keycloak's
        // DefaultBruteForceProtector counts only the failure-factor lockouts).
        if reason != .quickLogin {
            if let allowed = rule.permanentAfterLockouts, Int(state.temporaryLockouts) >= allowed {
                state.permanentSince = state.permanentSince ?? at
                return
            }
            increment(&state.temporaryLockouts)
        }
        if state.lockedUntil.map({ until > $0 }) ?? true {
            state.lockedUntil = until
            state.lockTier =
                switch reason {
                case .tier(let index, _, _): Int8(index)
                case .backoff: KeyState.backoffLock
                case .quickLogin: KeyState.quickLoginLock
                }
            state.lockDurationMilliseconds = durationMilliseconds
        }
    }

    /// Clears the user's keys on `device` (or on every device when `device` is nil).
    private mutating func clear(user: String?, device: String?, scope: LockoutPolicy.ClearScope) {
        guard scope != .none, !keys.isEmpty else { return }
        if device != nil || acrossDevices {
            // The common case (every successful sign-in): one lookup per factor, no arrays.
            let keyDevice = acrossDevices ? nil : device
            for factor in LockoutFactor.allCases {
                clear(LockoutKey(user: user, device: keyDevice, factor: factor), scope: scope)
            }
        } else {
            for key in keys.keys(ofUser: user) { clear(key, scope: scope) }
        }
    }

    /// Clears `user`'s keys by address and user (an admin's clear is of a user, never of an address).
    private mutating func clearAddressKeys(ofUser user: String?, scope: LockoutPolicy.ClearScope) {
        guard scope != .none, user != nil, policy.address?.scope == .addressAndUser, !addressKeys.isEmpty else { return }
        for key in addressKeys.keys(ofUser: user) { addressKeys[key] = nil }
    }

    /// Clears `user`'s keys of `factor` (every factor when `nil`) as a `lockout_cleared` event
    /// does, under the policy's scope for it: what a sync server applies, in its fold, for an
    /// administrator's clear (which, unlike the event, may name one factor).
    public mutating func clear(user: String?, factor: LockoutFactor?) {
        let scope = policy.clearing.lockoutCleared
        guard scope != .none, !keys.isEmpty else { return }
        let candidates = acrossDevices ? LockoutFactor.allCases.map { LockoutKey(user: user, device: nil, factor: $0) } : keys.keys(ofUser: user)
        for key in candidates where factor == nil || key.factor == factor { clear(key, scope: scope) }
        if factor != .secondFactor { clearAddressKeys(ofUser: user, scope: scope) }
    }

    private mutating func clear(_ key: LockoutKey, scope: LockoutPolicy.ClearScope) {
        if scope == .counters, let existing = keys[key], let permanent = existing.permanentSince {
            var kept = KeyState()
            kept.permanentSince = permanent
            kept.failures = existing.failures
            keys[key] = kept
            keys.setExtraWindows([], for: key)
        } else {
            keys[key] = nil
        }
    }

    // MARK: Decisions

    /// May `key` try to sign in at `at`? A lock is in force while `at` is before its end, so at
    /// exactly the end the key is free again. O(1).
    public func decide(_ key: LockoutKey, at: Timestamp) -> LockoutDecision {
        decision(keys[key], rule: policy.rule(for: key.factor), at: at)
    }

    /// The decision for an attempt on `key` from `address`: the stricter of the key's own and
    /// that of the address's key (``LockoutPolicy/address``), a permanent lock over a temporary
    /// one and the later end over the earlier. Without an address, or a rule for addresses, it
    /// is ``decide(_:at:)``.
    public func decide(_ key: LockoutKey, address: String?, at: Timestamp) -> LockoutDecision {
        let own = decide(key, at: at)
        guard key.factor == .password, let rule = policy.address, let byAddress = addressKey(user: key.user, address: address),
            let state = addressKeys[byAddress]
        else { return own }
        return .stricter(own, decision(state, rule: rule.rule, at: at))
    }

    /// The decision of the key by address alone (``addressKey(user:address:)``) at `at`:
    /// `.allowed(failures: 0)` when the policy has no address rule or the attempt no address.
    /// What the lab's trace uses to tell a lock by address from the key's own.
    public func decideByAddress(user: String?, address: String?, at: Timestamp) -> LockoutDecision {
        guard let rule = policy.address, let key = addressKey(user: user, address: address) else { return .allowed(failures: 0) }
        return decision(addressKeys[key], rule: rule.rule, at: at)
    }

    private func decision(_ state: KeyState?, rule: LockoutPolicy.FactorRule, at: Timestamp) -> LockoutDecision {
        guard let state else { return .allowed(failures: 0) }
        if let since = state.permanentSince {
            return .permanentlyLocked(PermanentLock(since: since, clearedBy: policy.clearing.permanentClearedBy, failures: Int(state.failures)))
        }
        if let until = state.lockedUntil, at < until, let reason = state.lockReason(rule) {
            return .locked(
                TemporaryLock(
                    until: until, reason: reason, durationMilliseconds: state.lockDurationMilliseconds,
                    failures: Int(state.failures), decidedAt: at))
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
        keys.keysAndStates.sorted { $0.key < $1.key }.map { key, state in
            let locked = state.lockedUntil.flatMap { at < $0 ? $0 : nil }
            return Entry(
                key: key, failures: Int(state.failures), lockedUntil: state.permanentSince == nil ? locked : nil,
                permanent: state.permanentSince != nil)
        }
    }

    /// Every key by client address (``LockoutPolicy/address``) with its standing at `at`: the
    /// address in the key's `device`. Sorted like ``entries(at:)``.
    public func addressEntries(at: Timestamp) -> [Entry] {
        addressKeys.keysAndStates.sorted { $0.key < $1.key }.map { key, state in
            let locked = state.lockedUntil.flatMap { at < $0 ? $0 : nil }
            return Entry(
                key: key, failures: Int(state.failures), lockedUntil: state.permanentSince == nil ? locked : nil,
                permanent: state.permanentSince != nil)
        }
    }

    /// The entries of `user`'s keys, sorted like ``entries(at:)``: across devices two lookups,
    /// on a device a scan of the keys (not of the log).
    public func entries(ofUser user: String?, at: Timestamp) -> [Entry] {
        let candidates: [LockoutKey] =
            acrossDevices
            ? LockoutFactor.allCases.map { LockoutKey(user: user, device: nil, factor: $0) }
            : keys.keys(ofUser: user)
        return candidates.sorted().compactMap { key in
            guard let state = keys[key] else { return nil }
            let locked = state.lockedUntil.flatMap { at < $0 ? $0 : nil }
            return Entry(
                key: key, failures: Int(state.failures), lockedUntil: state.permanentSince == nil ? locked : nil,
                permanent: state.permanentSince != nil)
        }
    }

    /// Drops every key of `user`, so that user's events can be folded again from the start (the
    /// server does it when a device uploads, late, events older than ones already folded). Keys
    /// of one user depend only on that user's events, so the other keys stay exact.
    public mutating func removeKeys(ofUser user: String?) {
        for key in keys.keys(ofUser: user) {
            keys[key] = nil
            keys.setExtraWindows([], for: key)
        }
        // Keys by address and user depend on that user's events only; keys by address alone
        // depend on every user's, and stay (docs/lockout.md § By address).
        if policy.address?.scope == .addressAndUser {
            for key in addressKeys.keys(ofUser: user) { addressKeys[key] = nil }
        }
    }

    /// Whether ``apply(_:)-(LockoutInput)`` may change a key for an event of `type`: a fold that keeps only
    /// these events of a user reaches the same state as one over all of them.
    public static func mayAffectKeys(_ type: EventType) -> Bool {
        switch type {
        case .signInFailed, .secondFactorFailed, .signInSucceeded, .passcodeResetCompleted, .passwordChanged, .lockoutCleared,
            .signInAborted:
            true
        default: false
        }
    }

    /// Whether both engines hold the same keys in the same states (whatever seq each applied
    /// last): what the server compares when it checks that a fold in arrival order equals one in
    /// time order.
    public func hasSameKeys(as other: LockoutEngine) -> Bool { keys == other.keys && addressKeys == other.addressKeys }

    /// Number of keys with state: the engine's memory grows with this, not with the log.
    public var keyCount: Int { keys.count + addressKeys.count }
}

/// Adds one to a lockout counter, stopping at `Int32.max`: a counter can come from a snapshot
/// file at any value, and a count that high locks the key as surely as one higher would.
@inline(__always)
private func increment(_ counter: inout Int32) {
    if counter < .max { counter += 1 }
}
