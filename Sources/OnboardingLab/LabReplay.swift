import OnboardingModel
import OnboardingProjections

/// What one policy did on one log (docs/lab.md § What compare reports).
public struct LabResult: Sendable, Hashable {
    public struct Attack: Sendable, Hashable {
        public var name: String
        public var attempts: Int
        /// Guesses (counted failures) the policy let through.
        public var guessesLetThrough: Int
        /// From the attack's first attempt to the first attempt the policy refused or the first
        /// failure that locked a key; `nil`: never locked.
        public var timeToFirstLockMilliseconds: Int64?
    }

    public var policy: String
    /// Attackers' guesses (password and second-factor failures) the policy let through.
    public var guessesLetThrough: Int
    /// Attackers' attempts the policy refused.
    public var attackerAttemptsRefused: Int
    /// Honest users with at least one attempt refused, and how long in total they were kept out:
    /// from each refused attempt to the end of its lock (a permanent lock: to the end of the
    /// log), overlapping stretches of one user counted once.
    public var honestUsersLockedOut: Int
    public var honestUsers: Int
    public var honestLockoutMilliseconds: Int64
    /// Locks imposed (a failure that left its key or its address locked).
    public var lockouts: Int
    public var lockoutsPerDay: Double
    /// Per attack, sorted by name.
    public var attacks: [Attack]

    public var honestLockoutMinutes: Double { Double(honestLockoutMilliseconds) / 60_000 }
}

/// Replays a ``LabLog`` under a policy as if that policy had been enforced: an attempt the
/// policy refuses at its time is refused (a failure is not counted, a success does not sign in
/// or clear anything), every other input is applied. The log itself is what happened under the
/// policy that was really enforced, so a replay cannot know what an attacker would have done
/// differently: it measures what the policy would have stopped of this traffic.
public enum LabReplay {
    public static func run(_ log: LabLog, policy: LockoutPolicy, acrossDevices: Bool = false) -> LabResult {
        var sink = NoTrace()
        return replay(log, policy: policy, acrossDevices: acrossDevices, sink: &sink)
    }

    /// ``run(_:policy:acrossDevices:)``, recording in `trace` what happened to each attempt and
    /// every lock imposed (``LabTrace``); `trace` is emptied first. The untraced run records
    /// nothing and allocates nothing per attempt.
    public static func run(_ log: LabLog, policy: LockoutPolicy, acrossDevices: Bool = false, trace: inout LabTrace) -> LabResult {
        var sink = TraceRecorder(trace: LabTrace())
        sink.trace.attempts.reserveCapacity(log.inputs.count)
        let result = replay(log, policy: policy, acrossDevices: acrossDevices, sink: &sink)
        trace = sink.trace
        return result
    }

    static func replay<Sink: ReplaySink>(_ log: LabLog, policy: LockoutPolicy, acrossDevices: Bool, sink: inout Sink) -> LabResult {
        var engine = LockoutEngine(policy: policy, acrossDevices: acrossDevices)
        var guesses = 0, refusedAttacks = 0, lockouts = 0
        var honest = Set<String>(), lockedOut = Set<String>()
        var honestMilliseconds: Int64 = 0
        var deniedUntil: [String: Int64] = [:]
        var attacks: [String: LabResult.Attack] = [:]
        var attackStart: [String: Int64] = [:]
        let end = log.lastAt?.millisecondsSince1970 ?? 0

        for (index, (input, party)) in zip(log.inputs, log.parties).enumerated() {
            let at = input.at.millisecondsSince1970
            if case .honest(let user) = party { honest.insert(user) }
            if case .attacker(let name) = party, attacks[name] == nil {
                attacks[name] = LabResult.Attack(name: name, attempts: 0, guessesLetThrough: 0, timeToFirstLockMilliseconds: nil)
                attackStart[name] = at
            }
            let factor: LockoutFactor
            switch input.kind {
            case .passwordFailure, .signInSucceeded, .abortedAttempt: factor = .password
            case .secondFactorFailure: factor = .secondFactor
            case .passcodeResetCompleted, .passwordChanged, .lockoutCleared:
                engine.apply(input)
                sink.cleared(input, engine: engine)
                continue
            }
            let key = engine.key(user: input.user, device: input.device, factor: factor)
            // An aborted attempt is refused only by its address's key: it never reached an account.
            let isAborted = input.kind == .abortedAttempt
            let before =
                isAborted
                ? engine.decideByAddress(user: input.user, address: input.address, at: input.at)
                : engine.decide(key, address: input.address, at: input.at)
            if case .attacker(let name) = party { attacks[name]!.attempts += 1 }
            sink.attempt(index, allowed: before.isAllowed)
            func markLocked() {
                if case .attacker(let name) = party, attacks[name]!.timeToFirstLockMilliseconds == nil {
                    attacks[name]!.timeToFirstLockMilliseconds = at - attackStart[name]!
                }
            }
            guard before.isAllowed else {
                switch party {
                case .attacker:
                    refusedAttacks += 1
                    markLocked()
                case .honest(let user):
                    lockedOut.insert(user)
                    let until: Int64 =
                        switch before {
                        case .locked(let lock): lock.until.millisecondsSince1970
                        default: max(end, at)
                        }
                    let from = max(at, deniedUntil[user] ?? at)
                    if until > from { honestMilliseconds += until - from }
                    deniedUntil[user] = max(deniedUntil[user] ?? until, until)
                case .unknown: break
                }
                continue
            }
            engine.apply(input)
            guard input.kind != .signInSucceeded else {
                sink.cleared(input, engine: engine)
                continue
            }
            // An aborted attempt is not a guess: it may lock its address, but it tried no password.
            if !isAborted, case .attacker(let name) = party { guesses += 1; attacks[name]!.guessesLetThrough += 1 }
            let after =
                isAborted
                ? engine.decideByAddress(user: input.user, address: input.address, at: input.at)
                : engine.decide(key, address: input.address, at: input.at)
            if !after.isAllowed {
                lockouts += 1
                markLocked()
                sink.locked(index, input: input, key: key, engine: engine)
            }
        }
        return LabResult(
            policy: policy.name, guessesLetThrough: guesses, attackerAttemptsRefused: refusedAttacks,
            honestUsersLockedOut: lockedOut.count, honestUsers: honest.count,
            honestLockoutMilliseconds: honestMilliseconds, lockouts: lockouts,
            lockoutsPerDay: Double(lockouts) / log.days,
            attacks: attacks.values.sorted { $0.name < $1.name })
    }
}
