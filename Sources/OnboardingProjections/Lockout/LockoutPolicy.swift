import OnboardingModel

/// A lockout policy: per factor, a rule made of tiers and options; and which events clear what.
///
/// The presets are documented with worked timelines in `docs/lockout.md`; a custom policy is the
/// same structure read from JSON (``LockoutPolicy/parse(json:)``), so any preset can be printed
/// (``json``), edited and loaded back.
///
/// ```swift
/// let policy = try LockoutPolicy.named("keycloak") ?? LockoutPolicy.parse(json: fileText)
/// var engine = LockoutEngine(policy: policy)
/// ```
public struct LockoutPolicy: Sendable, Hashable, Codable {
    public var name: String
    public var password: FactorRule
    public var secondFactor: FactorRule
    public var clearing: Clearing
    /// Counted password failures keyed by the client address as well (docs/lockout.md § By
    /// address); `nil`: addresses are not looked at.
    public var address: AddressRule?

    public init(name: String, password: FactorRule, secondFactor: FactorRule, clearing: Clearing, address: AddressRule? = nil) {
        self.name = name
        self.password = password
        self.secondFactor = secondFactor
        self.clearing = clearing
        self.address = address
    }

    /// A rule over the counted password failures that carry a client address, keyed by the
    /// address alone (password spraying: one address, many accounts) or by address and user
    /// (MediaWiki's throttle). An attempt that an address key refuses counts toward no key.
    public struct AddressRule: Sendable, Hashable, Codable {
        public enum Scope: String, Sendable, Hashable, Codable, CaseIterable {
            /// One key per address, across users and devices.
            case address
            /// One key per address and user.
            case addressAndUser = "address_and_user"
        }
        public var scope: Scope
        public var rule: FactorRule
        /// Whether a successful sign-in from the address clears its key (MediaWiki clears its
        /// throttle on success; fail2ban never forgets a failure before its window ends).
        public var clearedBySuccess: Bool

        public init(scope: Scope, rule: FactorRule, clearedBySuccess: Bool) {
            self.scope = scope
            self.rule = rule
            self.clearedBySuccess = clearedBySuccess
        }
    }

    public func rule(for factor: LockoutFactor) -> FactorRule {
        factor == .password ? password : secondFactor
    }

    /// How one factor is counted and locked. Every part is optional; a rule with none counts
    /// failures but never locks.
    public struct FactorRule: Sendable, Hashable, Codable {
        /// Only attempts with these methods count (`nil`: all). `local_passcode` counts passcodes
        /// only. Applies to the password factor; second-factor rules take no method filter.
        public var methods: [SignInMethod]?
        /// Fixed windows from the first counted failure: locked while any tier's count reaches
        /// its limit, until that window ends.
        public var tiers: [Tier]
        public var backoff: Backoff?
        /// This many consecutive counted failures lock permanently (until a clearing event).
        public var consecutiveLimit: Int?
        /// After this many temporary lockouts, the next lockout is permanent.
        public var permanentAfterLockouts: Int?

        public init(
            methods: [SignInMethod]? = nil, tiers: [Tier] = [], backoff: Backoff? = nil,
            consecutiveLimit: Int? = nil, permanentAfterLockouts: Int? = nil
        ) {
            self.methods = methods
            self.tiers = tiers
            self.backoff = backoff
            self.consecutiveLimit = consecutiveLimit
            self.permanentAfterLockouts = permanentAfterLockouts
        }
    }

    /// At most `limit` counted failures in `windowSeconds` from the first of them. The lock ends
    /// with the window, or `lockSeconds` after the failure that reached the limit when given
    /// (fail2ban's bantime).
    public struct Tier: Sendable, Hashable, Codable {
        public var limit: Int
        public var windowSeconds: Int
        public var lockSeconds: Int?
        public init(limit: Int, windowSeconds: Int, lockSeconds: Int? = nil) {
            self.limit = limit
            self.windowSeconds = windowSeconds
            self.lockSeconds = lockSeconds
        }
    }

    /// Waits that grow with consecutive failures (Keycloak's linear waits, OWASP's doubling).
    public struct Backoff: Sendable, Hashable, Codable {
        public enum Growth: String, Sendable, Hashable, Codable {
            /// wait = initial × 2^(failures − threshold)
            case doubling
            /// wait = initial × ⌊failures ÷ threshold⌋ (Keycloak's wait increment)
            case linear
        }
        /// Failures in the current streak before waits start.
        public var threshold: Int
        public var initialWaitSeconds: Int
        public var growth: Growth
        public var maximumWaitSeconds: Int
        /// The streak restarts when this long has passed since the previous failure (Keycloak's
        /// "max delta time"); `nil`: only a clearing event restarts it.
        public var resetAfterSeconds: Int?
        /// Two failures closer than this are a machine, not a person: lock for `quickLoginWaitSeconds`.
        public var quickLoginMilliseconds: Int?
        public var quickLoginWaitSeconds: Int?

        public init(
            threshold: Int, initialWaitSeconds: Int, growth: Growth, maximumWaitSeconds: Int,
            resetAfterSeconds: Int? = nil, quickLoginMilliseconds: Int? = nil, quickLoginWaitSeconds: Int? = nil
        ) {
            self.threshold = threshold
            self.initialWaitSeconds = initialWaitSeconds
            self.growth = growth
            self.maximumWaitSeconds = maximumWaitSeconds
            self.resetAfterSeconds = resetAfterSeconds
            self.quickLoginMilliseconds = quickLoginMilliseconds
            self.quickLoginWaitSeconds = quickLoginWaitSeconds
        }
    }

    /// What an event clears on the keys it touches.
    public enum ClearScope: String, Sendable, Hashable, Codable {
        /// Nothing.
        case none
        /// Failure counts and temporary locks, not a permanent lock.
        case counters
        /// Everything, permanent locks included.
        case all
    }

    /// Which events clear what. `sign_in_succeeded` and `passcode_reset_completed` touch the
    /// user's keys on that device; `password_changed` and `lockout_cleared` touch the user's keys
    /// on every device (a password and an admin's decision are account-wide).
    public struct Clearing: Sendable, Hashable, Codable {
        public var signInSucceeded: ClearScope
        public var passwordChanged: ClearScope
        public var lockoutCleared: ClearScope
        public var passcodeResetCompleted: ClearScope

        public init(
            signInSucceeded: ClearScope, passwordChanged: ClearScope, lockoutCleared: ClearScope,
            passcodeResetCompleted: ClearScope
        ) {
            self.signInSucceeded = signInSucceeded
            self.passwordChanged = passwordChanged
            self.lockoutCleared = lockoutCleared
            self.passcodeResetCompleted = passcodeResetCompleted
        }

        /// The events whose scope is `.all`: what lifts a permanent lock.
        public var permanentClearedBy: [EventType] {
            [
                (EventType.signInSucceeded, signInSucceeded), (.passwordChanged, passwordChanged),
                (.lockoutCleared, lockoutCleared), (.passcodeResetCompleted, passcodeResetCompleted)
            ]
            .filter { $0.1 == .all }.map(\.0)
        }
    }
}

// MARK: Presets

extension LockoutPolicy {
    /// MediaWiki's throttles (docs/lockout.md § mediawiki): passwords 5 per 5 minutes and 150 per
    /// 48 hours; second factors 10 per minute and 20 per 10 minutes. Success, a password change
    /// and an admin clear reset everything. MediaWiki keys its password throttle by address and
    /// user name (`$wgPasswordAttemptThrottle`): with client addresses the same tiers also count
    /// per (address, user), across devices, cleared by a success.
    public static let mediawiki = LockoutPolicy(
        name: "mediawiki",
        password: FactorRule(tiers: mediawikiPasswordTiers),
        secondFactor: FactorRule(tiers: [Tier(limit: 10, windowSeconds: 60), Tier(limit: 20, windowSeconds: 600)]),
        clearing: Clearing(signInSucceeded: .all, passwordChanged: .all, lockoutCleared: .all, passcodeResetCompleted: .all),
        address: AddressRule(scope: .addressAndUser, rule: FactorRule(tiers: mediawikiPasswordTiers), clearedBySuccess: true))

    static let mediawikiPasswordTiers = [Tier(limit: 5, windowSeconds: 300), Tier(limit: 150, windowSeconds: 172_800)]

    /// fail2ban's sshd jail defaults: an address with 5 failures (`maxretry`) within 10 minutes
    /// (`findtime`) is banned for 10 minutes (`bantime`), whichever accounts it tried; a success
    /// forgets nothing. Accounts themselves are never locked. fail2ban's findtime slides; this
    /// window runs from the first failure (docs/lockout.md § fail2ban).
    public static let fail2ban = LockoutPolicy(
        name: "fail2ban",
        password: FactorRule(),
        secondFactor: FactorRule(),
        clearing: Clearing(signInSucceeded: .none, passwordChanged: .none, lockoutCleared: .all, passcodeResetCompleted: .none),
        address: AddressRule(
            scope: .address, rule: FactorRule(tiers: [Tier(limit: 5, windowSeconds: 600, lockSeconds: 600)]),
            clearedBySuccess: false))

    /// Keycloak's brute-force detection defaults: after 30 failures wait 1 minute per 30 failures,
    /// at most 15 minutes; failures closer than 1 s lock for 1 minute; the count restarts 12 hours
    /// after the last failure. Permanent lockout is off (set `permanentAfterLockouts` to enable).
    public static let keycloak = LockoutPolicy(
        name: "keycloak",
        password: FactorRule(backoff: keycloakBackoff),
        secondFactor: FactorRule(backoff: keycloakBackoff),
        clearing: Clearing(signInSucceeded: .counters, passwordChanged: .counters, lockoutCleared: .all, passcodeResetCompleted: .counters))

    static let keycloakBackoff = Backoff(
        threshold: 30, initialWaitSeconds: 60, growth: .linear, maximumWaitSeconds: 900,
        resetAfterSeconds: 43_200, quickLoginMilliseconds: 1000, quickLoginWaitSeconds: 60)

    /// OWASP-style exponential back-off: every failure locks for 1 s, 2 s, 4 s …; the failure after
    /// the third temporary lockout locks permanently, until a password reset or an admin clear.
    public static let owasp = LockoutPolicy(
        name: "owasp",
        password: FactorRule(backoff: owaspBackoff, permanentAfterLockouts: 3),
        secondFactor: FactorRule(backoff: owaspBackoff, permanentAfterLockouts: 3),
        clearing: Clearing(signInSucceeded: .counters, passwordChanged: .all, lockoutCleared: .all, passcodeResetCompleted: .counters))

    static let owaspBackoff = Backoff(threshold: 1, initialWaitSeconds: 1, growth: .doubling, maximumWaitSeconds: 86_400)

    /// NIST SP 800-63B: at most 100 consecutive failed attempts, then locked until a reset.
    public static let nist = LockoutPolicy(
        name: "nist",
        password: FactorRule(consecutiveLimit: 100),
        secondFactor: FactorRule(consecutiveLimit: 100),
        clearing: Clearing(signInSucceeded: .counters, passwordChanged: .all, lockoutCleared: .all, passcodeResetCompleted: .counters))

    /// A shared device's passcode: 10 consecutive wrong passcodes disable that user's passcode
    /// until the forgot-passcode flow completes (`passcode_reset_completed`) or an admin clears it.
    public static let localPasscode = LockoutPolicy(
        name: "local_passcode",
        password: FactorRule(methods: [.passcode], consecutiveLimit: 10),
        secondFactor: FactorRule(),
        clearing: Clearing(signInSucceeded: .counters, passwordChanged: .counters, lockoutCleared: .all, passcodeResetCompleted: .all))

    public static let presets: [LockoutPolicy] = [.mediawiki, .keycloak, .owasp, .nist, .localPasscode, .fail2ban]

    /// The preset called `name`, or `nil`.
    public static func named(_ name: String) -> LockoutPolicy? {
        presets.first { $0.name == name }
    }
}
