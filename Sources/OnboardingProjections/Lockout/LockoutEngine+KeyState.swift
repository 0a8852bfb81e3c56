import OnboardingModel

extension LockoutEngine {
    /// The bounded state of one key, kept small because there is one per attacked account and
    /// device (the benchmark's `lockout_bytes_per_key`): a plain 70-byte value with no references
    /// and no Optionals (an `Optional<Timestamp>` pads to 16 bytes). Times are milliseconds since
    /// 1970 with a presence bit each; a window is absent while its count is 0 (a window always
    /// holds at least the failure that opened it). The first two tiers' windows are inline (every
    /// preset has at most two); the windows of tiers 3 and up live beside the table
    /// (``LockoutKeyTable/extraWindows``). Absent fields are always zero, so `==` is the state's
    /// meaning.
    struct KeyState: Sendable, Hashable {
        struct Window: Sendable, Hashable {
            var start: Timestamp
            var count: Int32
        }

        // The 8-byte fields first, then the 4-byte ones, then the bytes: no padding inside.
        private var firstWindowStart: Int64 = 0
        private var secondWindowStart: Int64 = 0
        private var lastFailureMilliseconds: Int64 = 0
        private var lockedUntilMilliseconds: Int64 = 0
        var lockDurationMilliseconds: Int64 = 0
        private var permanentSinceMilliseconds: Int64 = 0
        private var firstWindowCount: Int32 = 0
        private var secondWindowCount: Int32 = 0
        /// Counted failures since the key was last cleared.
        var failures: Int32 = 0
        /// Failures of the current back-off streak.
        var streak: Int32 = 0
        var temporaryLockouts: Int32 = 0
        /// Why the lock in force was imposed: a tier index ≥ 0, or ``backoffLock`` / ``quickLoginLock``.
        var lockTier: Int8 = KeyState.noLock
        private var present: UInt8 = 0

        static let noLock: Int8 = -1
        static let backoffLock: Int8 = -2
        static let quickLoginLock: Int8 = -3

        /// Tiers whose windows fit inline.
        static let inlineWindows = 2

        private static let hasLastFailure: UInt8 = 1
        private static let hasLockedUntil: UInt8 = 2
        private static let hasPermanentSince: UInt8 = 4

        init() {}

        /// The window of tier 0 or 1.
        subscript(inlineWindow index: Int) -> Window? {
            get {
                precondition(index < KeyState.inlineWindows, "tier \(index) is not kept inline")
                let count = index == 0 ? firstWindowCount : secondWindowCount
                guard count > 0 else { return nil }
                return Window(start: Timestamp(millisecondsSince1970: index == 0 ? firstWindowStart : secondWindowStart), count: count)
            }
            set {
                precondition(index < KeyState.inlineWindows, "tier \(index) is not kept inline")
                precondition(newValue.map { $0.count > 0 } ?? true, "a window holds at least one failure")
                let start = newValue?.start.millisecondsSince1970 ?? 0, count = newValue?.count ?? 0
                if index == 0 {
                    (firstWindowStart, firstWindowCount) = (start, count)
                } else {
                    (secondWindowStart, secondWindowCount) = (start, count)
                }
            }
        }

        var lastFailureAt: Timestamp? {
            get { time(lastFailureMilliseconds, KeyState.hasLastFailure) }
            set { (lastFailureMilliseconds, present) = KeyState.stored(newValue, KeyState.hasLastFailure, present) }
        }

        var lockedUntil: Timestamp? {
            get { time(lockedUntilMilliseconds, KeyState.hasLockedUntil) }
            set { (lockedUntilMilliseconds, present) = KeyState.stored(newValue, KeyState.hasLockedUntil, present) }
        }

        var permanentSince: Timestamp? {
            get { time(permanentSinceMilliseconds, KeyState.hasPermanentSince) }
            set { (permanentSinceMilliseconds, present) = KeyState.stored(newValue, KeyState.hasPermanentSince, present) }
        }

        private func time(_ milliseconds: Int64, _ bit: UInt8) -> Timestamp? {
            present & bit == 0 ? nil : Timestamp(millisecondsSince1970: milliseconds)
        }

        /// The milliseconds and presence bits that store `value`.
        private static func stored(_ value: Timestamp?, _ bit: UInt8, _ present: UInt8) -> (Int64, UInt8) {
            (value?.millisecondsSince1970 ?? 0, value == nil ? present & ~bit : present | bit)
        }

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
}
