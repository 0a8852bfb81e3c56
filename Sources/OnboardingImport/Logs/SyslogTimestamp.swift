import Foundation
import OnboardingModel

/// A BSD-syslog time (`Dec  1 15:30:30`): a local wall-clock time without a year or a zone.
struct SyslogLocalTime: Equatable, Sendable {
    var month: Int
    var day: Int
    var hour: Int
    var minute: Int
    var second: Int

    /// The instant this local time names in `year`, read in `calendar`'s time zone, or `nil`
    /// when the day does not exist in that year (Feb 29 of a common year) or the year is outside
    /// 0001…9999. A time in the hour a DST change repeats is resolved by Foundation, which takes
    /// the first (summer-time) instant; one in the hour it skips (which a correct clock never
    /// writes) moves forward by the change (02:30 → 03:30 summer time).
    func instant(year: Int, calendar: Calendar) -> Timestamp? {
        guard (1...9999).contains(year), day <= Self.days(inMonth: month, year: year) else { return nil }
        let components = DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        guard let date = calendar.date(from: components) else { return nil }
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
        guard milliseconds.isFinite else { return nil }
        let at = Timestamp(millisecondsSince1970: Int64(milliseconds))
        return at >= Timestamp.minimum && at <= Timestamp.maximum ? at : nil
    }

    static func days(inMonth month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}

/// The time at the start of a syslog line.
enum SyslogTimestamp: Equatable, Sendable {
    /// BSD syslog: the year and the zone come from elsewhere.
    case local(SyslogLocalTime)
    /// RFC 3339 (rsyslog) or journalctl `short-iso`/`short-iso-precise`: an offset is given.
    case instant(Timestamp)

    static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// Reads the time at the start of `line`: the time and the text after the space that ends
    /// it, or `nil` when the line does not start with a readable time followed by a space.
    static func read(_ line: Substring) -> (SyslogTimestamp, rest: Substring)? {
        var scanner = ByteScanner(line)
        let stamp: SyslogTimestamp?
        if let first = scanner.peek, first >= UInt8(ascii: "0"), first <= UInt8(ascii: "9") {
            stamp = readISO(&scanner).map(SyslogTimestamp.instant)
        } else {
            stamp = readBSD(&scanner).map(SyslogTimestamp.local)
        }
        guard let stamp, scanner.take(UInt8(ascii: " ")) else { return nil }
        return (stamp, scanner.rest)
    }

    /// `Mmm dd hh:mm:ss`, the day space-padded (`Dec  1`) or not (`Dec 1`, `Dec 01`).
    static func readBSD(_ scanner: inout ByteScanner) -> SyslogLocalTime? {
        guard let name = scanner.take(count: 3), let index = monthNames.firstIndex(of: name),
            scanner.take(UInt8(ascii: " "))
        else { return nil }
        _ = scanner.take(UInt8(ascii: " "))
        guard let day = scanner.number(digits: 1...2), (1...31).contains(day),
            scanner.take(UInt8(ascii: " ")),
            let (hour, minute, second) = readClock(&scanner)
        else { return nil }
        return SyslogLocalTime(month: index + 1, day: day, hour: hour, minute: minute, second: second)
    }

    /// `YYYY-MM-DDThh:mm:ss[.fraction](Z|±hh:mm|±hhmm)`; the fraction is cut to milliseconds.
    static func readISO(_ scanner: inout ByteScanner) -> Timestamp? {
        guard let year = scanner.number(digits: 4...4), scanner.take(UInt8(ascii: "-")),
            let month = scanner.number(digits: 2...2), scanner.take(UInt8(ascii: "-")),
            let day = scanner.number(digits: 2...2), scanner.take(UInt8(ascii: "T")),
            let (hour, minute, second) = readClock(&scanner),
            let millisecond = readFraction(&scanner),
            let offsetMinutes = readOffset(&scanner)
        else { return nil }
        let canonical =
            pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + "T" + pad(hour, 2) + ":"
            + pad(minute, 2) + ":" + pad(second, 2) + "." + pad(millisecond, 3) + "Z"
        guard let local = try? Timestamp(iso8601: canonical) else { return nil }
        let at = local.adding(milliseconds: -Int64(offsetMinutes) * 60_000)
        return at >= Timestamp.minimum && at <= Timestamp.maximum ? at : nil
    }

    /// `hh:mm:ss`, in range (a leap second 60 is refused).
    private static func readClock(_ scanner: inout ByteScanner) -> (Int, Int, Int)? {
        guard let hour = scanner.number(digits: 2...2), hour < 24, scanner.take(UInt8(ascii: ":")),
            let minute = scanner.number(digits: 2...2), minute < 60, scanner.take(UInt8(ascii: ":")),
            let second = scanner.number(digits: 2...2), second < 60
        else { return nil }
        return (hour, minute, second)
    }

    /// The milliseconds of an optional `.fraction` (any number of digits, at least one).
    private static func readFraction(_ scanner: inout ByteScanner) -> Int? {
        guard scanner.take(UInt8(ascii: ".")) else { return 0 }
        var millisecond = 0
        var count = 0
        while let digit = scanner.digit() {
            if count < 3 { millisecond = millisecond * 10 + digit }
            count += 1
        }
        guard count > 0 else { return nil }
        for _ in min(count, 3)..<3 { millisecond *= 10 }
        return millisecond
    }

    /// The offset east of UTC in minutes: `Z`, `±hh:mm` or `±hhmm`.
    private static func readOffset(_ scanner: inout ByteScanner) -> Int? {
        if scanner.take(UInt8(ascii: "Z")) { return 0 }
        let sign: Int
        if scanner.take(UInt8(ascii: "+")) { sign = 1 } else if scanner.take(UInt8(ascii: "-")) { sign = -1 } else { return nil }
        guard let hours = scanner.number(digits: 2...2), hours < 24 else { return nil }
        _ = scanner.take(UInt8(ascii: ":"))
        guard let minutes = scanner.number(digits: 2...2), minutes < 60 else { return nil }
        return sign * (hours * 60 + minutes)
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}

/// Reads a `Substring` byte by byte from the front.
struct ByteScanner {
    private let text: Substring
    private var index: Substring.Index

    init(_ text: Substring) {
        self.text = text
        index = text.utf8.startIndex
    }

    var peek: UInt8? { index < text.utf8.endIndex ? text.utf8[index] : nil }
    /// What is left; the scanner only stops after ASCII bytes, so this is on a scalar boundary.
    var rest: Substring { text[index...] }

    /// Takes `byte` when it is next.
    mutating func take(_ byte: UInt8) -> Bool {
        guard peek == byte else { return false }
        index = text.utf8.index(after: index)
        return true
    }

    /// Takes the next `count` bytes when they are ASCII letters, as a string.
    mutating func take(count: Int) -> String? {
        var letters: [UInt8] = []
        var cursor = index
        for _ in 0..<count {
            guard cursor < text.utf8.endIndex else { return nil }
            let byte = text.utf8[cursor]
            guard (UInt8(ascii: "A")...UInt8(ascii: "z")).contains(byte) else { return nil }
            letters.append(byte)
            cursor = text.utf8.index(after: cursor)
        }
        index = cursor
        return String(decoding: letters, as: UTF8.self)
    }

    /// Takes one ASCII digit.
    mutating func digit() -> Int? {
        guard let byte = peek, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
        index = text.utf8.index(after: index)
        return Int(byte - UInt8(ascii: "0"))
    }

    /// Takes as many digits as `digits` allows (greedy), when there are at least its lower bound.
    mutating func number(digits: ClosedRange<Int>) -> Int? {
        let start = index
        var value = 0
        var count = 0
        while count < digits.upperBound, let digit = digit() {
            value = value * 10 + digit
            count += 1
        }
        guard count >= digits.lowerBound else {
            index = start
            return nil
        }
        return value
    }
}
