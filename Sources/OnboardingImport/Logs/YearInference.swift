import Foundation

/// Finds the year of a BSD-syslog log's first line, which the log does not write
/// (`Dec  1 15:30:30`): the `startYear` of ``SSHDLogParser``.
///
/// A first pass ``note(_:)``s every line; ``startYear(endingBy:timeZone:)`` then works back from
/// the last BSD-syslog line:
/// 1. The year rolls over, as in ``SSHDLogParser``, at every BSD-syslog line (of any program)
///    whose month is two or more months earlier than the previous such line's (Dec → Jan).
/// 2. The last line is placed in `reference`'s year (in `timeZone`), or in the year before when
///    its month and day are after `reference`'s: the last line is never after `reference`,
///    usually the file's modification time. (Only month and day are compared, so a last line a
///    few seconds after an mtime on the same day stays in the year.)
/// 3. The first line's year is that year minus the rollovers.
///
/// A log with no BSD-syslog line gives `reference`'s year (its times carry their own).
///
/// ```swift
/// var inference = YearInference()
/// for line in lines { inference.note(line) }        // Dec 30 … Dec 31 … Jan  2
/// inference.startYear(endingBy: mtime, timeZone: .gmt)  // 2026 when mtime is 2027-01-05
/// ```
public struct YearInference: Sendable, Equatable {
    private var tracker = BSDYearTracker()
    private var lastMonth: Int?
    private var lastDay = 0

    public init() {}

    /// Notes the time of `line`, when it starts with a BSD-syslog time; other lines are ignored.
    public mutating func note(_ line: String) {
        guard let (stamp, _) = SyslogTimestamp.read(Substring(line)), case .local(let local) = stamp else { return }
        _ = tracker.note(month: local.month)
        lastMonth = local.month
        lastDay = local.day
    }

    /// The rollovers counted so far (Dec → Jan changes).
    public var rollovers: Int { tracker.rollovers }

    /// The year of the first noted line such that the last is not after `reference`, read in
    /// `timeZone` (the rule is in the type's documentation).
    public func startYear(endingBy reference: Date, timeZone: TimeZone) -> Int {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let today = calendar.dateComponents([.year, .month, .day], from: reference)
        let year = today.year ?? 1970
        guard let lastMonth else { return year }
        let isAfterReference = (lastMonth, lastDay) > (today.month ?? 12, today.day ?? 31)
        return (isAfterReference ? year - 1 : year) - tracker.rollovers
    }
}

/// Counts the year rollovers of a BSD-syslog log: ``SSHDLogParser`` and ``YearInference``
/// share it, so they agree on every line's year.
struct BSDYearTracker: Sendable, Equatable {
    /// How many months back a line may go and still be in the previous line's year (written out
    /// of order around a month's end).
    static let outOfOrderMonths = 1

    private(set) var rollovers = 0
    private var previousMonth: Int?

    /// Notes a line's month; the rollovers up to and including this line.
    mutating func note(month: Int) -> Int {
        if let previousMonth, previousMonth - month > Self.outOfOrderMonths { rollovers += 1 }
        previousMonth = month
        return rollovers
    }
}
