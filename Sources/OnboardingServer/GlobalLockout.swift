import OnboardingModel
import OnboardingProjections

/// The server's lockout across devices (keys `(user, factor)`), defined as the lockout engine
/// folded over every device's records in `(at, device, seq)` order — whatever order the
/// devices uploaded them in (docs/sync-protocol.md § The global lockout).
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

        static func < (lhs: Position, rhs: Position) -> Bool {
            (lhs.at, lhs.device, lhs.seq) < (rhs.at, rhs.device, rhs.seq)
        }
    }

    private(set) var engine: LockoutEngine
    /// Per user (as the records name them), the records that may change the user's keys
    /// (``LockoutEngine/mayAffectKeys(_:)``), in fold order. Only these are kept: the rest of a
    /// log never changes a lockout key.
    private var timelines: [String?: [Record]] = [:]
    /// How many times a user's keys were folded again because records arrived out of order.
    private(set) var refoldCount = 0

    init(policy: LockoutPolicy) {
        engine = LockoutEngine(policy: policy, acrossDevices: true)
    }

    /// The lockout of all `records` (any order, any devices), folded in fold order.
    init(policy: LockoutPolicy, records: [Record]) {
        self.init(policy: policy)
        let relevant = records.filter { LockoutEngine.mayAffectKeys($0.event.type) }
            .sorted { Position($0) < Position($1) }
        for record in relevant {
            timelines[record.event.user, default: []].append(record)
            engine.apply(record)
        }
    }

    /// Folds newly stored records (one upload, or several).
    mutating func apply(_ records: [Record]) {
        var arrived: [String?: [Record]] = [:]
        for record in records where LockoutEngine.mayAffectKeys(record.event.type) {
            arrived[record.event.user, default: []].append(record)
        }
        for (user, new) in arrived {
            let sorted = new.sorted { Position($0) < Position($1) }
            var timeline = timelines[user] ?? []
            if let last = timeline.last, Position(sorted[0]) < Position(last) {
                // Older than what was folded: merge, and fold this user's keys again.
                timeline = Self.merged(timeline, sorted)
                engine.removeKeys(ofUser: user)
                for record in timeline { engine.apply(record) }
                refoldCount += 1
            } else {
                timeline.append(contentsOf: sorted)
                for record in sorted { engine.apply(record) }
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

    private static func merged(_ left: [Record], _ right: [Record]) -> [Record] {
        var result: [Record] = []
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
