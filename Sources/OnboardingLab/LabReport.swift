import OnboardingModel
import OnboardingProjections

/// Everything `onboard lab compare|sweep --report` draws (docs/lab.md § The report): the log's
/// summary, every policy's result, the frontier among them, and the timeline of the most
/// attacked users and addresses under one policy. ``html`` renders it as one self-contained
/// file: inline CSS and SVG, no script, nothing fetched.
///
/// ```swift
/// var trace = LabTrace()
/// let first = LabReplay.run(log, policy: .mediawiki, trace: &trace)
/// let report = LabReport.compare(log: log, source: "traffic.jsonl", results: [first], trace: trace)
/// try Data(report.html.utf8).write(to: url, options: .atomic)
/// ```
public struct LabReport: Sendable {
    public enum Mode: String, Sendable { case compare, sweep }

    /// The header's facts about the log.
    public struct Summary: Sendable, Hashable {
        /// The file or store the log was read from, as given.
        public var source: String
        public var events: Int
        public var attempts: Int
        public var days: Double
        public var truth: LabTruth
        public var acrossDevices: Bool
        public var firstAt: Timestamp?
        public var lastAt: Timestamp?
        /// The imports of foreign logs the log records, and what each left out.
        public var imports: [LabImport] = []
    }

    public var mode: Mode
    public var summary: Summary
    public var results: [LabResult]
    /// Indices into ``results`` of the frontier of (guesses let through, honest minutes).
    public var frontier: [Int]
    /// Sweep: the recommended policy's index, and the weight of an honest minute.
    public var recommended: Int?
    public var honestMinuteWeight: Double?
    /// The index into ``results`` of the policy the timeline shows.
    public var timelinePolicy: Int
    public var timeline: LabTimeline

    public init(
        mode: Mode, summary: Summary, results: [LabResult], frontier: [Int], recommended: Int?, honestMinuteWeight: Double?,
        timelinePolicy: Int, timeline: LabTimeline
    ) {
        self.mode = mode
        self.summary = summary
        self.results = results
        self.frontier = frontier
        self.recommended = recommended
        self.honestMinuteWeight = honestMinuteWeight
        self.timelinePolicy = timelinePolicy
        self.timeline = timeline
    }

    static func summary(_ log: LabLog, source: String, acrossDevices: Bool) -> Summary {
        Summary(
            source: source, events: log.eventCount, attempts: log.inputs.count, days: log.days, truth: log.truth,
            acrossDevices: acrossDevices, firstAt: log.firstAt, lastAt: log.lastAt, imports: log.imports)
    }

    /// `lab compare`: `results` in the order compared; `trace` is the first policy's.
    public static func compare(log: LabLog, source: String, results: [LabResult], trace: LabTrace, acrossDevices: Bool = false) -> LabReport {
        let frontier = LabSweep.paretoFrontier(results.map { (Double($0.guessesLetThrough), $0.honestLockoutMinutes) })
        return LabReport(
            mode: .compare, summary: summary(log, source: source, acrossDevices: acrossDevices), results: results,
            frontier: frontier, recommended: nil, honestMinuteWeight: nil, timelinePolicy: 0,
            timeline: LabTimeline(log: log, trace: trace))
    }

    /// `lab sweep`: `trace` is the recommended policy's.
    public static func sweep(log: LabLog, source: String, sweep: LabSweep, trace: LabTrace, acrossDevices: Bool = false) -> LabReport {
        LabReport(
            mode: .sweep, summary: summary(log, source: source, acrossDevices: acrossDevices), results: sweep.results,
            frontier: sweep.frontier, recommended: sweep.recommended, honestMinuteWeight: sweep.honestMinuteWeight,
            timelinePolicy: sweep.recommended, timeline: LabTimeline(log: log, trace: trace))
    }
}

/// The timeline's lanes: the users and the addresses with the most attempts, each with its
/// attempts (allowed failures, refused attempts, successes) and the locks on its keys, under one
/// traced replay. Bounded whatever the log's size: marks closer than one column of the time axis
/// (``columns`` to the whole axis) are merged into one mark with a count, and so are locks
/// less than a column apart, so a lane holds at most 3 × ``columns`` marks and
/// ``columns`` + 1 lock bars.
public struct LabTimeline: Sendable, Hashable {
    public enum LaneKind: String, Sendable, Hashable { case user, address }
    public enum MarkKind: Int, Sendable, Hashable, CaseIterable { case success, allowedFailure, refused }

    public struct Mark: Sendable, Hashable {
        /// The column of the time axis, 0 ..< ``LabTimeline/columns``.
        public var column: Int
        public var kind: MarkKind
        /// Attempts merged into this mark.
        public var count: Int
    }

    public struct LockBar: Sendable, Hashable {
        public var startMilliseconds: Int64
        public var endMilliseconds: Int64
        /// Locks merged into this bar.
        public var count: Int
        /// One of them is permanent (drawn to the end of the log when nothing lifted it).
        public var permanent: Bool
    }

    public struct Lane: Sendable, Hashable {
        public var kind: LaneKind
        /// The user (`(no user)` for attempts on no named account) or the address.
        public var name: String
        public var attempts: Int
        /// Who made its attempts: `attacker`, `honest`, `mixed` or `unknown`.
        public var party: String
        public var marks: [Mark]
        public var locks: [LockBar]
    }

    /// Columns of the time axis a mark is placed in.
    public static let columns = 600
    /// Lanes of each kind.
    public static let lanesPerKind = 5

    public var startMilliseconds: Int64
    public var endMilliseconds: Int64
    public var lanes: [Lane]
    /// Attempts the lanes hold, and marks drawn for them.
    public var attemptsShown: Int
    public var marksDrawn: Int

    public init(startMilliseconds: Int64, endMilliseconds: Int64, lanes: [Lane]) {
        self.startMilliseconds = startMilliseconds
        self.endMilliseconds = max(endMilliseconds, startMilliseconds + 1)
        self.lanes = lanes
        attemptsShown = lanes.reduce(0) { $0 + $1.attempts }
        marksDrawn = lanes.reduce(0) { $0 + $1.marks.count }
    }

    public static let noUser = "(no user)"

    /// The lanes of `log` under the replay `trace` recorded.
    public init(log: LabLog, trace: LabTrace) {
        let start = log.firstAt?.millisecondsSince1970 ?? 0
        let end = max(log.lastAt?.millisecondsSince1970 ?? start, start + 1)
        let span = Double(end - start)
        func column(_ at: Int64) -> Int {
            min(LabTimeline.columns - 1, max(0, Int(Double(at - start) / span * Double(LabTimeline.columns))))
        }

        // The lanes: the most attempts first, then by name.
        var userAttempts: [String: Int] = [:], addressAttempts: [String: Int] = [:]
        for attempt in trace.attempts {
            let input = log.inputs[attempt.index]
            userAttempts[input.user ?? LabTimeline.noUser, default: 0] += 1
            if let address = input.address, address != ClientAddress.erased { addressAttempts[address, default: 0] += 1 }
        }
        func top(_ counts: [String: Int]) -> [String] {
            counts.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.prefix(LabTimeline.lanesPerKind).map(\.key)
        }
        let users = top(userAttempts), addresses = top(addressAttempts)
        let userLane = Dictionary(uniqueKeysWithValues: users.enumerated().map { ($1, $0) })
        let addressLane = Dictionary(uniqueKeysWithValues: addresses.enumerated().map { ($1, users.count + $0) })
        let laneCount = users.count + addresses.count

        var marks = [[Int: Int]](repeating: [:], count: laneCount) // column × 3 + kind → count
        var parties = [Set<String>](repeating: [], count: laneCount)
        for attempt in trace.attempts {
            let input = log.inputs[attempt.index]
            let kind: MarkKind = attempt.outcome == .refused ? .refused : input.kind == .signInSucceeded ? .success : .allowedFailure
            let slot = column(input.at.millisecondsSince1970) * 3 + kind.rawValue
            let party: String =
                switch log.parties[attempt.index] {
                case .attacker: "attacker"
                case .honest: "honest"
                case .unknown: "unknown"
                }
            var lanes: [Int] = []
            if let lane = userLane[input.user ?? LabTimeline.noUser] { lanes.append(lane) }
            if let address = input.address, let lane = addressLane[address] { lanes.append(lane) }
            for lane in lanes {
                marks[lane][slot, default: 0] += 1
                parties[lane].insert(party)
            }
        }

        var locks = [[LabTrace.Lock]](repeating: [], count: laneCount)
        for lock in trace.locks {
            switch lock.key {
            case .user(let user, _, _): if let lane = userLane[user ?? LabTimeline.noUser] { locks[lane].append(lock) }
            case .address(let address, _): if let lane = addressLane[address] { locks[lane].append(lock) }
            }
        }
        let gap = max(1, Int64(span / Double(LabTimeline.columns)))
        func bars(_ locks: [LabTrace.Lock]) -> [LockBar] {
            var bars: [LockBar] = []
            for lock in locks.sorted(by: { $0.startMilliseconds < $1.startMilliseconds }) {
                let lockEnd = max(lock.endMilliseconds ?? end, lock.startMilliseconds)
                if var last = bars.last, lock.startMilliseconds <= last.endMilliseconds + gap {
                    last.endMilliseconds = max(last.endMilliseconds, lockEnd)
                    last.count += 1
                    last.permanent = last.permanent || lock.permanent
                    bars[bars.count - 1] = last
                } else {
                    bars.append(LockBar(startMilliseconds: lock.startMilliseconds, endMilliseconds: lockEnd, count: 1, permanent: lock.permanent))
                }
            }
            return bars
        }

        var lanes: [Lane] = []
        for (index, name) in (users + addresses).enumerated() {
            let kind: LaneKind = index < users.count ? .user : .address
            let laneMarks = marks[index].map { Mark(column: $0.key / 3, kind: MarkKind(rawValue: $0.key % 3)!, count: $0.value) }
                .sorted { ($0.column, $0.kind.rawValue) < ($1.column, $1.kind.rawValue) }
            let party = parties[index].count == 1 ? parties[index].first! : parties[index].isEmpty ? "unknown" : "mixed"
            lanes.append(
                Lane(
                    kind: kind, name: name, attempts: kind == .user ? userAttempts[name]! : addressAttempts[name]!,
                    party: party, marks: laneMarks, locks: bars(locks[index])))
        }
        self.init(startMilliseconds: start, endMilliseconds: end, lanes: lanes)
    }
}
