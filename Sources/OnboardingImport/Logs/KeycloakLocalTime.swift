import Foundation
import OnboardingModel

/// The end of a Keycloak temporary lockout, as its brute-force detector writes it into the
/// event's `details.not_before`: Java's `LocalDateTime.toString()` in the server's time zone —
/// `2026-12-03T10:29`, `2026-12-03T10:29:30` or `2026-12-03T10:29:30.5` (seconds are left out
/// when zero, the fraction when zero), with no offset. Read in the zone the import is given.
///
/// ```swift
/// KeycloakLocalTime.instant("2026-12-03T10:29", timeZone: TimeZone(identifier: "Europe/Berlin")!)
/// // 2026-12-03T09:29:00.000Z
/// ```
enum KeycloakLocalTime {
    /// The longest text read: a date, a time with seconds and a nine-digit fraction.
    static let maximumBytes = 29

    /// The instant `text` names in `timeZone`, `nil` when it is no such time or falls outside
    /// ``Timestamp/minimum`` … ``Timestamp/maximum``. A time in an hour a DST change repeats takes
    /// its first instant, as Foundation resolves it.
    static func instant(_ text: String, timeZone: TimeZone) -> Timestamp? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 16, bytes.count <= maximumBytes else { return nil }
        func number(_ start: Int, _ length: Int) -> Int? {
            guard start + length <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[start..<(start + length)] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        func isByte(_ index: Int, _ character: Unicode.Scalar) -> Bool { index < bytes.count && bytes[index] == UInt8(ascii: character) }
        guard let year = number(0, 4), isByte(4, "-"), let month = number(5, 2), isByte(7, "-"), let day = number(8, 2),
            isByte(10, "T"), let hour = number(11, 2), isByte(13, ":"), let minute = number(14, 2)
        else { return nil }
        var second = 0
        var millisecond = 0
        var index = 16
        if isByte(16, ":") {
            guard let value = number(17, 2) else { return nil }
            second = value
            index = 19
            if isByte(19, ".") {
                index = 20
                var digits = 0
                while index < bytes.count, let digit = number(index, 1) {
                    if digits < 3 { millisecond = millisecond * 10 + digit }
                    digits += 1
                    index += 1
                }
                guard digits > 0 else { return nil }
                for _ in min(digits, 3)..<3 { millisecond *= 10 }
            }
        }
        guard index == bytes.count, (1...9999).contains(year), (1...12).contains(month), day >= 1,
            day <= daysIn(month: month, year: year), hour < 24, minute < 60, second < 60
        else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let components = DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        guard let date = calendar.date(from: components) else { return nil }
        let seconds = (date.timeIntervalSince1970).rounded()
        guard seconds.isFinite, abs(seconds) < 1e15 else { return nil }
        let at = Timestamp(millisecondsSince1970: Int64(seconds) * 1000 + Int64(millisecond))
        return at >= Timestamp.minimum && at <= Timestamp.maximum ? at : nil
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}
