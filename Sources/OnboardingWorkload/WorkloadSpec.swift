import OnboardingModel
import OnboardingProjections

/// Which traffic a generated workload holds.
public enum WorkloadScenario: String, CaseIterable, Sendable, Hashable {
    /// Every kind below, in the shares of ``WorkloadMix/mixed``.
    case mixed
    /// Honest users on their own devices: sign-ins with typos, 2FA, resets, sign-outs; and
    /// newcomers creating accounts.
    case honest
    /// One attacker guessing one account's password from one device, as fast as the lockout allows.
    case bruteForce = "brute_force"
    /// One attempt per leaked account, across many accounts and many devices.
    case stuffing
    /// A few common passwords tried slowly across many accounts.
    case spraying
    /// Shared devices with many users signing in by passcode.
    case sharedDevice = "shared_device"

    /// The shares of this scenario's traffic.
    public var mix: WorkloadMix {
        switch self {
        case .mixed: .mixed
        case .honest: WorkloadMix(honest: 1)
        case .bruteForce: WorkloadMix(bruteForce: 1)
        case .stuffing: WorkloadMix(stuffing: 1)
        case .spraying: WorkloadMix(spraying: 1)
        case .sharedDevice: WorkloadMix(sharedDevice: 1)
        }
    }
}

/// Relative shares of a workload's events by kind of traffic (weights, not percentages).
public struct WorkloadMix: Sendable, Hashable {
    public var honest: Int
    public var sharedDevice: Int
    public var bruteForce: Int
    public var stuffing: Int
    public var spraying: Int

    public init(honest: Int = 0, sharedDevice: Int = 0, bruteForce: Int = 0, stuffing: Int = 0, spraying: Int = 0) {
        precondition([honest, sharedDevice, bruteForce, stuffing, spraying].allSatisfy { $0 >= 0 }, "mix weights are never negative")
        self.honest = honest
        self.sharedDevice = sharedDevice
        self.bruteForce = bruteForce
        self.stuffing = stuffing
        self.spraying = spraying
    }

    /// Mostly honest traffic with every attack in it: 55 % honest, 20 % shared devices,
    /// 10 % brute force, 10 % stuffing, 5 % spraying (by planned event rate).
    public static let mixed = WorkloadMix(honest: 55, sharedDevice: 20, bruteForce: 10, stuffing: 10, spraying: 5)

    var total: Int { honest + sharedDevice + bruteForce + stuffing + spraying }
}

/// Everything that determines a generated workload: the same spec always gives the same events,
/// byte for byte in JSONL (`EventJSON.encode(event, seq: nil)`), on every platform.
///
/// ```swift
/// var spec = WorkloadSpec(eventCount: 100_000, seed: 7)
/// spec.scenario = .bruteForce
/// spec.policy = .owasp
/// for event in WorkloadGenerator(spec: spec) { try store.append(event) }
/// ```
public struct WorkloadSpec: Sendable, Hashable {
    /// The generator's event-count limits: below 1 there is nothing to generate; 10^9 events of
    /// ~250 bytes would be a quarter of a terabyte of JSONL, far past any benchmark we run.
    public static let eventCountRange = 1...1_000_000_000
    /// Users and devices: enough for a hospital's staff or a mid-sized app's daily actives,
    /// small enough that the generator's per-user state (a few bytes each) stays in cache.
    public static let userCountRange = 1...10_000_000
    public static let deviceCountRange = 1...1_000_000
    /// 2026-01-05T00:00:00Z, a Monday.
    public static let defaultStart = Timestamp(millisecondsSince1970: 1_767_571_200_000)
    public static let defaultSpanMilliseconds: Int64 = 7 * 86_400_000

    /// How many events the stream holds.
    public var eventCount: Int
    public var seed: UInt64
    public var mix: WorkloadMix
    /// Honest accounts (`user-000042`); attackers also try accounts that do not exist.
    public var userCount: Int
    /// Personal devices the honest users share out (`device-00042`); shared kiosks are a tenth of
    /// this (at least one), and attackers bring their own devices.
    public var deviceCount: Int
    /// The time of the first event.
    public var start: Timestamp
    /// Simulated time the planned event rates spread `eventCount` over. Attackers wait out
    /// locks, so an attack-only stream under a strict policy can run past it.
    public var spanMilliseconds: Int64
    /// The lockout policy the simulated app enforces: every attempt first asks a `LockoutEngine`
    /// fed with the stream so far, and a refused one is recorded as `sign_in_throttled`.
    public var policy: LockoutPolicy
    /// `true`: the app enforces the server's global lockout (keys `(user, factor)` across devices)
    /// instead of the device's own keys.
    public var globalLockout: Bool
    /// `true` (the default): honest flows also record what their forms report (`field_edited`,
    /// `password_reset_started`, `password_reset_failed`, `identifier_kind` on `sign_in_started`)
    /// and newcomers create accounts, from random streams of their own. `false`: the sign-in
    /// traffic alone, the same bytes as the generator wrote before those events existed. Either
    /// way the sign-in traffic is the same event for event (docs/workloads.md § Form events).
    public var formEvents: Bool

    public init(
        eventCount: Int, seed: UInt64 = 1, scenario: WorkloadScenario = .mixed, userCount: Int = 1000,
        deviceCount: Int = 200, start: Timestamp = WorkloadSpec.defaultStart,
        spanMilliseconds: Int64 = WorkloadSpec.defaultSpanMilliseconds,
        policy: LockoutPolicy = .mediawiki, globalLockout: Bool = false, formEvents: Bool = true
    ) {
        precondition(WorkloadSpec.eventCountRange.contains(eventCount), "eventCount must lie in \(WorkloadSpec.eventCountRange)")
        precondition(WorkloadSpec.userCountRange.contains(userCount), "userCount must lie in \(WorkloadSpec.userCountRange)")
        precondition(WorkloadSpec.deviceCountRange.contains(deviceCount), "deviceCount must lie in \(WorkloadSpec.deviceCountRange)")
        precondition(spanMilliseconds > 0, "the span must be positive")
        self.eventCount = eventCount
        self.seed = seed
        self.mix = scenario.mix
        self.userCount = userCount
        self.deviceCount = deviceCount
        self.start = start
        self.spanMilliseconds = spanMilliseconds
        self.policy = policy
        self.globalLockout = globalLockout
        self.formEvents = formEvents
    }

    public var scenario: WorkloadScenario {
        get { WorkloadScenario.allCases.first { $0.mix == mix } ?? .mixed }
        set { mix = newValue.mix }
    }
}
