/// An instant in UTC with millisecond precision: the `at` of every event.
///
/// The model never reads a clock; time always comes in from outside.
///
/// ```swift
/// let at = try Timestamp(iso8601: "2026-11-29T16:00:00.123Z")
/// at.iso8601            // "2026-11-29T16:00:00.123Z"
/// at.millisecondsSince1970 // 1795968000123
/// ```
public struct Timestamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var millisecondsSince1970: Int64

    /// Years 0001…9999, the range ISO-8601 basic form writes with four digits.
    public static let minimum = Timestamp(millisecondsSince1970: -62_135_596_800_000)
    public static let maximum = Timestamp(millisecondsSince1970: 253_402_300_799_999)

    public init(millisecondsSince1970: Int64) {
        self.millisecondsSince1970 = millisecondsSince1970
    }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        lhs.millisecondsSince1970 < rhs.millisecondsSince1970
    }

    /// This instant moved by `milliseconds`.
    public func adding(milliseconds: Int64) -> Timestamp {
        Timestamp(millisecondsSince1970: millisecondsSince1970 + milliseconds)
    }

    public var description: String { iso8601 }

    /// `YYYY-MM-DDTHH:MM:SS.mmmZ`, always with three fraction digits (the canonical form).
    public var iso8601: String {
        let (days, millisecondOfDay) = floorDivide(millisecondsSince1970, 86_400_000)
        let (year, month, day) = Timestamp.civil(fromDays: days)
        let hour = millisecondOfDay / 3_600_000
        let minute = millisecondOfDay / 60_000 % 60
        let second = millisecondOfDay / 1000 % 60
        let millisecond = millisecondOfDay % 1000
        var text = ""
        text.reserveCapacity(24)
        text += pad(year, 4); text += "-"; text += pad(month, 2); text += "-"; text += pad(day, 2)
        text += "T"; text += pad(hour, 2); text += ":"; text += pad(minute, 2); text += ":"
        text += pad(second, 2); text += "."; text += pad(millisecond, 3); text += "Z"
        return text
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.f{1,3}]Z`. More than three fraction digits would lose
    /// precision silently, so they are refused; so are offsets other than `Z`.
    public init(iso8601 text: String) throws(TimestampError) {
        var text = text
        let parsed = text.withUTF8 { Timestamp(iso8601Bytes: UnsafeRawBufferPointer($0)) }
        guard let parsed else { throw TimestampError(text: text) }
        self = parsed
    }

    /// ``init(iso8601:)`` on the UTF-8 bytes of the text, `nil` where it throws: the JSON line
    /// decoder parses times in place, without making a `String` of each.
    public init?(iso8601Bytes bytes: UnsafeRawBufferPointer) {
        let count = bytes.count
        @inline(__always) func digits(_ start: Int, _ length: Int) -> Int64? {
            guard start + length <= count else { return nil }
            var value: Int64 = 0
            for index in start..<start + length {
                let digit = bytes[index] &- 0x30
                guard digit <= 9 else { return nil }
                value = value * 10 + Int64(digit)
            }
            return value
        }
        @inline(__always) func has(_ index: Int, _ character: UInt8) -> Bool {
            index < count && bytes[index] == character
        }
        guard let year = digits(0, 4), has(4, UInt8(ascii: "-")),
            let month = digits(5, 2), has(7, UInt8(ascii: "-")),
            let day = digits(8, 2), has(10, UInt8(ascii: "T")),
            let hour = digits(11, 2), has(13, UInt8(ascii: ":")),
            let minute = digits(14, 2), has(16, UInt8(ascii: ":")),
            let second = digits(17, 2)
        else { return nil }
        var index = 19
        var millisecond: Int64 = 0
        if has(index, UInt8(ascii: ".")) {
            index += 1
            var fractionDigits = 0
            while index < count, bytes[index] >= 0x30, bytes[index] <= 0x39 {
                fractionDigits += 1
                guard fractionDigits <= 3 else { return nil }
                millisecond = millisecond * 10 + Int64(bytes[index] - 0x30)
                index += 1
            }
            guard fractionDigits > 0 else { return nil }
            for _ in fractionDigits..<3 { millisecond *= 10 }
        }
        guard has(index, UInt8(ascii: "Z")), index + 1 == count else { return nil }
        guard year >= 1, (1...12).contains(month), day >= 1,
            day <= Timestamp.daysIn(month: month, year: year),
            hour < 24, minute < 60, second < 60
        else { return nil }
        let days = Timestamp.days(fromCivil: year, month, day)
        millisecondsSince1970 = ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + millisecond
    }

    static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = floorDivide(y, 400).quotient
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468
        let era = floorDivide(shifted, 146_097).quotient
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

/// A timestamp that is not canonical ISO-8601 UTC.
public struct TimestampError: Error, Sendable, CustomStringConvertible {
    public let text: String
    public var description: String {
        "\(ErrorEcho.quoted(text)) is not an ISO-8601 UTC time like 2026-11-29T16:00:00.123Z (at most 3 fraction digits, Z suffix)"
    }
}

private func floorDivide(_ value: Int64, _ divisor: Int64) -> (quotient: Int64, remainder: Int64) {
    var quotient = value / divisor
    var remainder = value % divisor
    if remainder < 0 {
        quotient -= 1
        remainder += divisor
    }
    return (quotient, remainder)
}

private func pad(_ value: Int64, _ width: Int) -> String {
    let digits = String(value)
    return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
}

extension Timestamp: Codable {
    /// The largest distance from 1970 a decoded time may have: 2^53 ms, about 285,000 years, far
    /// past any event (years 0001…9999) plus any lockout duration, and far enough from Int64's
    /// ends that adding a duration to such a time, or subtracting two of them, cannot overflow.
    /// (It is also where JSON numbers stop being exact in most readers.)
    public static let maximumDecodedMagnitudeMilliseconds: Int64 = 1 << 53

    /// Encoded as milliseconds since 1970 (snapshots are compact and exact). A snapshot is read
    /// from a file: a time beyond ``maximumDecodedMagnitudeMilliseconds`` is refused instead of
    /// reaching the projections' time arithmetic, where it would overflow.
    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        let milliseconds = try container.decode(Int64.self)
        let bound = Timestamp.maximumDecodedMagnitudeMilliseconds
        guard milliseconds >= -bound && milliseconds <= bound else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "a time of \(milliseconds) ms since 1970 is beyond ±2^53 ms")
        }
        millisecondsSince1970 = milliseconds
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(millisecondsSince1970)
    }
}
