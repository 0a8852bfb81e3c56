import OnboardingModel
import OnboardingProjections

/// The security side of benchmarking lockout policies: for each policy, the generated attacks
/// (adapting to that policy's locks) and honest traffic are replayed under the server's global
/// lockout (keys `(user, factor)` across devices, the view that matters against an attacker who
/// owns his device), and what each side got is counted.
///
/// Pure and deterministic: the same parameters give the same rows. With the defaults (2,000
/// users, 2 simulated days: about 51,000 events per policy, 15,000 of them form events, up to
/// 310,000 for `local_passcode`, which never stops a password guesser) all five presets take
/// about 4.5 s in a debug build.
///
/// ```swift
/// let rows = LockoutEffectiveness.report(LockoutEffectiveness.Parameters(seed: 1))
/// for row in rows { print(row.policy, row.bruteForceGuessesPerDay) }
/// ```
public enum LockoutEffectiveness {
    public struct Parameters: Sendable, Hashable {
        public var seed: UInt64
        public var userCount: Int
        public var deviceCount: Int
        /// Simulated days each policy is replayed for.
        public var days: Int
        /// Honest events (personal devices and kiosks) per simulated day.
        public var honestEventsPerDay: Int
        /// The brute-force attacker's pace when nothing stops it: a scripted client, one per second.
        public var bruteForceIntervalMilliseconds: Int64
        /// The stuffing bots' pace, one attempt each across many accounts and devices.
        public var stuffingIntervalMilliseconds: Int64
        /// The sprayer's pace: slow, to stay under per-account limits.
        public var sprayingIntervalMilliseconds: Int64
        /// Whether the honest traffic also records its form events (``WorkloadSpec/formEvents``):
        /// no lockout counts them, so only ``Row/events`` changes.
        public var formEvents: Bool

        public init(
            seed: UInt64 = 1, userCount: Int = 2_000, deviceCount: Int = 500, days: Int = 2,
            honestEventsPerDay: Int = 20_000, bruteForceIntervalMilliseconds: Int64 = 1_000,
            stuffingIntervalMilliseconds: Int64 = 2_000, sprayingIntervalMilliseconds: Int64 = 30_000,
            formEvents: Bool = true
        ) {
            precondition(days > 0 && honestEventsPerDay > 0, "days and honest events per day must be positive")
            precondition(
                bruteForceIntervalMilliseconds > 0 && stuffingIntervalMilliseconds > 0 && sprayingIntervalMilliseconds > 0,
                "attack intervals must be positive")
            self.seed = seed
            self.userCount = userCount
            self.deviceCount = deviceCount
            self.days = days
            self.honestEventsPerDay = honestEventsPerDay
            self.bruteForceIntervalMilliseconds = bruteForceIntervalMilliseconds
            self.stuffingIntervalMilliseconds = stuffingIntervalMilliseconds
            self.sprayingIntervalMilliseconds = sprayingIntervalMilliseconds
            self.formEvents = formEvents
        }
    }

    /// What one policy let through, and whom it stopped.
    public struct Row: Sendable, Hashable {
        public var policy: String
        /// Counted guesses the brute-force attacker made on its one account, per day.
        public var bruteForceGuessesPerDay: Double
        /// Counted guesses per targeted account per day, for stuffing and spraying.
        public var stuffingGuessesPerAccountPerDay: Double
        public var sprayingGuessesPerAccountPerDay: Double
        /// Attempts the attackers made that the lockout refused (`sign_in_throttled`).
        public var attackAttemptsThrottled: Int
        /// Honest users (personal devices and kiosks) seen, and those who met a lock at least once
        /// (the brute-forced account's owner among them: a lockout is also a denial of service).
        public var honestUsers: Int
        public var honestUsersLockedOut: Int
        public var honestLockedOutShare: Double { honestUsers == 0 ? 0 : Double(honestUsersLockedOut) / Double(honestUsers) }
        /// Median time from the first guess of a brute-force run to the lock that stops it, `nil`
        /// when the attacker was never locked.
        public var medianTimeToLockMilliseconds: Int64?
        /// The brute-forced key is permanently locked at the end.
        public var bruteForcePermanentlyLocked: Bool
        /// Every event replayed, form events and sign-ups included.
        public var events: Int
    }

    /// One row per policy, in the order given.
    public static func report(_ parameters: Parameters, policies: [LockoutPolicy] = LockoutPolicy.presets) -> [Row] {
        policies.map { row(parameters, policy: $0) }
    }

    static func row(_ parameters: Parameters, policy: LockoutPolicy) -> Row {
        let spanMilliseconds = Int64(parameters.days) * 86_400_000
        let spec = WorkloadSpec(
            eventCount: parameters.honestEventsPerDay * parameters.days, seed: parameters.seed,
            userCount: parameters.userCount, deviceCount: parameters.deviceCount,
            spanMilliseconds: spanMilliseconds, policy: policy, globalLockout: true,
            formEvents: parameters.formEvents)
        var withAttacks = spec
        // Honest shares as in the mixed workload; attack weights only switch the attackers on,
        // their paces come from the parameters.
        withAttacks.mix = WorkloadMix(
            honest: WorkloadMix.mixed.honest, sharedDevice: WorkloadMix.mixed.sharedDevice,
            bruteForce: 1, stuffing: 1, spraying: 1)
        var generator = WorkloadGenerator(
            spec: withAttacks, stopAfter: spec.start.millisecondsSince1970 + spanMilliseconds,
            attackGaps: (
                parameters.bruteForceIntervalMilliseconds, parameters.stuffingIntervalMilliseconds,
                parameters.sprayingIntervalMilliseconds
            ))
        // The brute-forced key's state after each event: with keys `(user, factor)`, a fold of the
        // target's own events that may change a key reaches the state a fold of all of them does.
        let target = generator.bruteForceTarget
        var bruteEngine = LockoutEngine(policy: policy, acrossDevices: true)
        let bruteKey = bruteEngine.key(user: target, device: WorkloadNames.bruteForceDevice, factor: .password)
        var bruteSeq: UInt64 = 0

        var bruteGuesses = 0, stuffingGuesses = 0, sprayingGuesses = 0, throttled = 0, events = 0
        var stuffingAccounts = Set<String>(), sprayingAccounts = Set<String>()
        var honestUsers = Set<String>(), lockedOut = Set<String>()
        var runStart: Int64?
        var timesToLock: [Int64] = []
        while let (event, actor) = generator.nextTagged() {
            events += 1
            if event.user == target, LockoutEngine.mayAffectKeys(event.type) {
                bruteSeq += 1
                bruteEngine.apply(Record(seq: bruteSeq, event: event, previousHash: .zero, hash: .zero))
            }
            let isGuess = if case .signInFailed = event.payload { true } else { false }
            let isThrottled = event.type == .signInThrottled
            switch actor {
            case .honest, .sharedDevice:
                if let user = event.user {
                    honestUsers.insert(user)
                    if isThrottled { lockedOut.insert(user) }
                }
            case .newcomer:
                // Creating an account makes no attempt a lockout could refuse: not among the
                // honest users who could be locked out.
                break
            case .bruteForce:
                if isGuess {
                    bruteGuesses += 1
                    let at = event.at.millisecondsSince1970
                    if runStart == nil { runStart = at }
                    if !bruteEngine.decide(bruteKey, at: event.at).isAllowed, let start = runStart {
                        timesToLock.append(at - start)
                        runStart = nil
                    }
                }
            case .stuffing:
                if isGuess { stuffingGuesses += 1; stuffingAccounts.insert(event.user ?? "") }
            case .spraying:
                if isGuess { sprayingGuesses += 1; sprayingAccounts.insert(event.user ?? "") }
            }
            if !actor.isHonest && isThrottled { throttled += 1 }
        }
        let days = Double(parameters.days)
        func perAccountPerDay(_ guesses: Int, _ accounts: Int) -> Double { accounts == 0 ? 0 : Double(guesses) / Double(accounts) / days }
        let end = Timestamp(millisecondsSince1970: spec.start.millisecondsSince1970 + spanMilliseconds)
        let permanent = if case .permanentlyLocked = bruteEngine.decide(bruteKey, at: end) { true } else { false }
        return Row(
            policy: policy.name, bruteForceGuessesPerDay: Double(bruteGuesses) / days,
            stuffingGuessesPerAccountPerDay: perAccountPerDay(stuffingGuesses, stuffingAccounts.count),
            sprayingGuessesPerAccountPerDay: perAccountPerDay(sprayingGuesses, sprayingAccounts.count),
            attackAttemptsThrottled: throttled, honestUsers: honestUsers.count, honestUsersLockedOut: lockedOut.count,
            medianTimeToLockMilliseconds: median(timesToLock), bruteForcePermanentlyLocked: permanent, events: events)
    }

    static func median(_ values: [Int64]) -> Int64? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }
}
