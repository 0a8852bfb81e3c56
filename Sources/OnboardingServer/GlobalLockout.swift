import OnboardingModel
import OnboardingProjections

/// The server's lockout across devices (keys `(user, factor)`), defined as the lockout engine
/// folded over every device's records in `(at, device, seq)` order — whatever order the
/// devices uploaded them in (docs/sync-protocol.md § The global lockout) — with the
/// administrators' clears (``ServerAction``) at `(at, "", seq)`.
///
/// Most uploads bring, for each user, records later than every record of that user already
/// folded: they are folded as they come. A device that uploads late brings older ones; then
/// only that user's keys are folded again, from the user's lockout records kept here (a key
/// depends only on its user's events, ``LockoutEngine/removeKeys(ofUser:)``). So after any
/// sequence of uploads the state equals ``init(policy:records:)`` over all of them.
///
/// ```swift
/// var lockout = GlobalLockout(policy: .mediawiki)
/// lockout.apply(uploadedRecords)
/// lockout.entries(user: "alice", at: now)
/// ```
struct GlobalLockout: Sendable {
    /// Where a record sits in the fold.
    struct Position: Comparable, Sendable {
        var at: Timestamp
        var device: String
        var seq: UInt64

        init(_ record: Record) {
            at = record.event.at
            device = record.event.device
            seq = record.seq
        }

        init(_ step: Step) {
            switch step {
            case .record(let record): (at, device, seq) = (record.event.at, record.event.device, record.seq)
            case .clear(let action): (at, device, seq) = (action.at, "", action.seq)
            }
        }

        static func < (lhs: Position, rhs: Position) -> Bool {
            (lhs.at, lhs.device, lhs.seq) < (rhs.at, rhs.device, rhs.seq)
        }
    }

    /// One step of a user's fold: a device's record, or an administrator's clear.
    enum Step: Sendable {
        case record(Record)
        case clear(ServerAction)

        var user: String? {
            switch self {
            case .record(let record): record.event.user
            case .clear(let action): action.user
            }
        }
    }

    private(set) var engine: LockoutEngine
    /// Per user (as the records name them), the records that may change the user's keys
    /// (``LockoutEngine/mayAffectKeys(_:)``) and the clears, in fold order. Only these are kept:
    /// the rest of a log never changes a lockout key.
    private var timelines: [String?: [Step]] = [:]
    /// How many times a user's keys were folded again because records arrived out of order.
    private(set) var refoldCount = 0

    init(policy: LockoutPolicy) {
        engine = LockoutEngine(policy: policy, acrossDevices: true)
    }

    /// The lockout of all `records` (any order, any devices) and the clears among `actions`,
    /// folded in fold order.
    init(policy: LockoutPolicy, records: [Record], actions: [ServerAction] = []) {
        self.init(policy: policy)
        let relevant =
            (records.filter { LockoutEngine.mayAffectKeys($0.event.type) }.map(Step.record)
            + actions.filter { $0.kind == .lockoutCleared }.map(Step.clear))
            .sorted { Position($0) < Position($1) }
        for step in relevant {
            timelines[step.user, default: []].append(step)
            apply(step)
        }
    }

    private mutating func apply(_ step: Step) {
        switch step {
        case .record(let record): engine.apply(record)
        case .clear(let action): engine.clear(user: action.user, factor: action.factor)
        }
    }

    /// Folds newly stored records (one upload, or several).
    mutating func apply(_ records: [Record]) {
        apply(steps: records.filter { LockoutEngine.mayAffectKeys($0.event.type) }.map(Step.record))
    }

    /// Folds a newly stored clear.
    mutating func apply(_ action: ServerAction) {
        guard action.kind == .lockoutCleared else { return }
        apply(steps: [.clear(action)])
    }

    private mutating func apply(steps: [Step]) {
        var arrived: [String?: [Step]] = [:]
        for step in steps { arrived[step.user, default: []].append(step) }
        for (user, new) in arrived {
            let sorted = new.sorted { Position($0) < Position($1) }
            var timeline = timelines[user] ?? []
            if let last = timeline.last, Position(sorted[0]) < Position(last) {
                // Older than what was folded: merge, and fold this user's keys again.
                timeline = Self.merged(timeline, sorted)
                engine.removeKeys(ofUser: user)
                for step in timeline { apply(step) }
                refoldCount += 1
            } else {
                timeline.append(contentsOf: sorted)
                for step in sorted { apply(step) }
            }
            timelines[user] = timeline
        }
    }

    /// `user`'s keys at `at`.
    func entries(user: String, at: Timestamp) -> [LockoutEngine.Entry] {
        engine.entries(ofUser: user, at: at)
    }

    /// Whether both hold the same keys in the same states.
    func hasSameKeys(as other: GlobalLockout) -> Bool { engine.hasSameKeys(as: other.engine) }

    private static func merged(_ left: [Step], _ right: [Step]) -> [Step] {
        var result: [Step] = []
        result.reserveCapacity(left.count + right.count)
        var leftIndex = 0
        var rightIndex = 0
        while leftIndex < left.count && rightIndex < right.count {
            if Position(right[rightIndex]) < Position(left[leftIndex]) {
                result.append(right[rightIndex])
                rightIndex += 1
            } else {
                result.append(left[leftIndex])
                leftIndex += 1
            }
        }
        result.append(contentsOf: left[leftIndex...])
        result.append(contentsOf: right[rightIndex...])
        return result
    }
}
