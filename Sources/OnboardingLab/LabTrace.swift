import OnboardingModel
import OnboardingProjections

/// What one replay did, attempt by attempt (``LabReplay/run(_:policy:acrossDevices:trace:)``):
/// the report's timeline (docs/lab.md § The report) is drawn from it.
public struct LabTrace: Sendable, Hashable {
    public enum Outcome: UInt8, Sendable, Hashable {
        /// Applied as the engine applies it (a failure counted, a success signed in).
        case allowed
        /// Refused at its time: counted nowhere.
        case refused
    }

    /// One sign-in attempt (a counted failure or a success) and what the policy did with it.
    public struct Attempt: Sendable, Hashable {
        /// Its index in the log's ``LabLog/inputs``.
        public var index: Int
        public var outcome: Outcome
    }

    /// Whose key a lock is on.
    public enum LockKey: Sendable, Hashable {
        /// The key of a user (`nil`: the shared "nobody" key of unknown accounts), on a device
        /// (`nil` across devices), for a factor.
        case user(String?, device: String?, factor: LockoutFactor)
        /// The key of a client address (with the user when the policy's scope is
        /// `address_and_user`).
        case address(String, user: String?)
    }

    /// A lock a failure imposed.
    public struct Lock: Sendable, Hashable {
        /// The index in ``LabLog/inputs`` of the failure that imposed it.
        public var index: Int
        public var key: LockKey
        public var startMilliseconds: Int64
        /// When it ended: its own end, or the clearing event that lifted it earlier; `nil` for
        /// a permanent lock nothing in the log lifted.
        public var endMilliseconds: Int64?
        public var permanent: Bool
    }

    /// Every attempt, in log order.
    public var attempts: [Attempt] = []
    /// Every lock imposed, in the order imposed.
    public var locks: [Lock] = []

    public init() {}
}

/// What a replay tells whoever watches it: nothing, for the untraced run (every call is an
/// empty function the compiler removes), or everything, for a ``LabTrace``.
protocol ReplaySink {
    /// An attempt at `index`, before it is applied.
    mutating func attempt(_ index: Int, allowed: Bool)
    /// The allowed failure at `index` left `key` (or its address) locked.
    mutating func locked(_ index: Int, input: LockoutInput, key: LockoutKey, engine: LockoutEngine)
    /// A clearing input (or an allowed success) was applied.
    mutating func cleared(_ input: LockoutInput, engine: LockoutEngine)
}

struct NoTrace: ReplaySink {
    @inline(__always) mutating func attempt(_ index: Int, allowed: Bool) {}
    @inline(__always) mutating func locked(_ index: Int, input: LockoutInput, key: LockoutKey, engine: LockoutEngine) {}
    @inline(__always) mutating func cleared(_ input: LockoutInput, engine: LockoutEngine) {}
}

struct TraceRecorder: ReplaySink {
    var trace: LabTrace
    /// Locks that may still be in force, by the user of their key and by address: a clearing
    /// input of that user (or from that address) may end them early.
    var openByUser: [String?: [Int]] = [:]
    var openByAddress: [String: [Int]] = [:]

    mutating func attempt(_ index: Int, allowed: Bool) {
        trace.attempts.append(LabTrace.Attempt(index: index, outcome: allowed ? .allowed : .refused))
    }

    mutating func locked(_ index: Int, input: LockoutInput, key: LockoutKey, engine: LockoutEngine) {
        let at = input.at
        func add(_ lockKey: LabTrace.LockKey, _ decision: LockoutDecision) {
            let lock: LabTrace.Lock
            switch decision {
            case .allowed: return
            case .locked(let temporary):
                lock = LabTrace.Lock(
                    index: index, key: lockKey, startMilliseconds: at.millisecondsSince1970,
                    endMilliseconds: temporary.until.millisecondsSince1970, permanent: false)
            case .permanentlyLocked:
                lock = LabTrace.Lock(
                    index: index, key: lockKey, startMilliseconds: at.millisecondsSince1970,
                    endMilliseconds: nil, permanent: true)
            }
            trace.locks.append(lock)
            switch lockKey {
            case .user(let user, _, _): openByUser[user, default: []].append(trace.locks.count - 1)
            case .address(let address, _): openByAddress[address, default: []].append(trace.locks.count - 1)
            }
        }
        // An aborted attempt counts under its address only: a lock on the user's key is not its.
        if input.kind != .abortedAttempt { add(.user(key.user, device: key.device, factor: key.factor), engine.decide(key, at: at)) }
        if key.factor == .password, let byAddress = engine.addressKey(user: input.user, address: input.address), let address = byAddress.device {
            add(.address(address, user: byAddress.user), engine.decideByAddress(user: input.user, address: input.address, at: at))
        }
    }

    mutating func cleared(_ input: LockoutInput, engine: LockoutEngine) {
        let at = input.at
        func settle(_ open: [Int]) -> [Int] {
            open.filter { position in
                let lock = trace.locks[position]
                if let end = lock.endMilliseconds, end <= at.millisecondsSince1970 { return false }
                let decision: LockoutDecision
                switch lock.key {
                case .user(let user, let device, let factor):
                    decision = engine.decide(LockoutKey(user: user, device: device, factor: factor), at: at)
                case .address(let address, let user):
                    decision = engine.decideByAddress(user: user, address: address, at: at)
                }
                guard decision.isAllowed else { return true }
                trace.locks[position].endMilliseconds = max(lock.startMilliseconds, at.millisecondsSince1970)
                return false
            }
        }
        if let open = openByUser[input.user] { openByUser[input.user] = settle(open) }
        if let address = input.address, let open = openByAddress[address] { openByAddress[address] = settle(open) }
        // A lock by address and user is filed under its address; a clearing of that user from
        // elsewhere (a password change) may lift it too.
        if input.kind != .signInSucceeded {
            for (address, open) in openByAddress
            where open.contains(where: {
                if case .address(_, let user) = trace.locks[$0].key { return user == input.user && user != nil }
                return false
            }) {
                openByAddress[address] = settle(open)
            }
        }
    }
}
