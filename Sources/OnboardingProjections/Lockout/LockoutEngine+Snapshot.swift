import OnboardingModel

extension LockoutEngine {
    /// One key and its state in the engine's JSON snapshot. Absent parts are left out (a key with
    /// one failure is `{"user":"alice","device":"kiosk-7","factor":"password","failures":1,
    /// "windows":[[1795968000000,1],[1795968000000,1]],"lastFailureAt":1795968000000}`); times are
    /// milliseconds since 1970; `windows` holds `[start, count]` or `null` per tier, without
    /// trailing `null`s.
    struct SnapshotKey {
        var user: String?
        var device: String?
        var factor: LockoutFactor
        var failures: Int32?
        var streak: Int32?
        var temporaryLockouts: Int32?
        var windows: [SnapshotWindow?]?
        var lastFailureAt: Timestamp?
        var lockedUntil: Timestamp?
        var lockTier: Int8?
        var lockDurationMilliseconds: Int64?
        var permanentSince: Timestamp?

        struct SnapshotWindow {
            var window: KeyState.Window

            init(_ window: KeyState.Window) { self.window = window }
        }

        var key: LockoutKey { LockoutKey(user: user, device: device, factor: factor) }

        init(key: LockoutKey, state: KeyState, extraWindows: [KeyState.Window?]) {
            user = key.user
            device = key.device
            factor = key.factor
            failures = state.failures == 0 ? nil : state.failures
            streak = state.streak == 0 ? nil : state.streak
            temporaryLockouts = state.temporaryLockouts == 0 ? nil : state.temporaryLockouts
            var all = (0..<KeyState.inlineWindows).map { state[inlineWindow: $0] } + extraWindows
            while let last = all.last, last == nil { all.removeLast() }
            windows = all.isEmpty ? nil : all.map { $0.map(SnapshotWindow.init) }
            lastFailureAt = state.lastFailureAt
            lockedUntil = state.lockedUntil
            lockTier = state.lockTier == KeyState.noLock ? nil : state.lockTier
            lockDurationMilliseconds = state.lockDurationMilliseconds == 0 ? nil : state.lockDurationMilliseconds
            permanentSince = state.permanentSince
        }

        /// The state and the windows of tiers 3 and up, checked against `rule`: no more windows
        /// than tiers, no negative counter, a lock reason the rule can give.
        func state(rule: LockoutPolicy.FactorRule, path: String) throws(SnapshotDecodingError) -> (KeyState, [KeyState.Window?]) {
            func invalid(_ what: String) -> SnapshotDecodingError { SnapshotDecodingError(path, "lockout key \(key): \(what)") }
            let windows = (self.windows ?? []).map { $0?.window }
            guard windows.count <= rule.tiers.count else { throw invalid("\(windows.count) windows for \(rule.tiers.count) tiers") }
            var state = KeyState()
            state.failures = failures ?? 0
            state.streak = streak ?? 0
            state.temporaryLockouts = temporaryLockouts ?? 0
            guard state.failures >= 0, state.streak >= 0, state.temporaryLockouts >= 0 else { throw invalid("a negative counter") }
            for (index, window) in windows.prefix(KeyState.inlineWindows).enumerated() {
                state[inlineWindow: index] = window
            }
            state.lastFailureAt = lastFailureAt
            state.lockedUntil = lockedUntil
            state.lockTier = lockTier ?? KeyState.noLock
            guard state.lockTier >= KeyState.quickLoginLock, Int(state.lockTier) < rule.tiers.count else {
                throw invalid("lock reason \(state.lockTier) is not one of the rule's")
            }
            state.lockDurationMilliseconds = lockDurationMilliseconds ?? 0
            state.permanentSince = permanentSince
            var extra = Array(windows.dropFirst(KeyState.inlineWindows))
            if rule.tiers.count > KeyState.inlineWindows {
                extra += Array(repeating: nil, count: rule.tiers.count - KeyState.inlineWindows - extra.count)
            }
            return (state, extra)
        }

        /// A total order on keys (a missing user or device before any name), so the snapshot's
        /// order never depends on the table's.
        static func precedes(_ lhs: LockoutKey, _ rhs: LockoutKey) -> Bool {
            (lhs.user == nil ? 0 : 1, lhs.user ?? "", lhs.device == nil ? 0 : 1, lhs.device ?? "", lhs.factor)
                < (rhs.user == nil ? 0 : 1, rhs.user ?? "", rhs.device == nil ? 0 : 1, rhs.device ?? "", rhs.factor)
        }
    }
}
