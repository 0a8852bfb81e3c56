import Foundation

/// `Timestamp` for apps: the system clock, `Date` and `Duration`.
///
/// The model and the projections never read a clock (time is always an argument); an app that
/// records what just happened takes `.now`, or converts the `Date` it has.
///
/// ```swift
/// let at = Timestamp.now
/// let later = at + .seconds(300)       // 5 minutes on
/// later - at                           // Duration: 300 seconds
/// Timestamp(Date()).date               // back to Date, to the millisecond
/// ```
///
/// Every conversion keeps milliseconds and rounds toward the past (a time half a millisecond
/// before 1970 is −1 ms, as the millisecond it falls in), and none can trap: results beyond the
/// range of `Int64` milliseconds (about ±292 million years) stop at its ends. A time outside years
/// 0001…9999 is still refused where an event is checked (``Event/validate()``).
extension Timestamp {
    /// The system clock now, to the millisecond.
    public static var now: Timestamp { Timestamp(Date()) }

    /// `date` to the millisecond, rounded toward the past.
    public init(_ date: Date) {
        self.init(millisecondsSince1970: Timestamp.clampedMilliseconds((date.timeIntervalSince1970 * 1000).rounded(.down)))
    }

    /// The same instant as a `Date`.
    public var date: Date { Date(timeIntervalSince1970: Double(millisecondsSince1970) / 1000) }

    /// This instant moved by `duration`, rounded toward the past to the millisecond, stopping at
    /// the ends of the millisecond range rather than overflowing.
    public static func + (lhs: Timestamp, rhs: Duration) -> Timestamp {
        // floor(lhs + d) = lhs + floor(d), lhs being whole milliseconds.
        guard let milliseconds = Timestamp.milliseconds(of: rhs, rounding: .down) else {
            return Timestamp(millisecondsSince1970: rhs < .zero ? .min : .max)
        }
        let (sum, overflow) = lhs.millisecondsSince1970.addingReportingOverflow(milliseconds)
        guard !overflow else { return Timestamp(millisecondsSince1970: milliseconds < 0 ? .min : .max) }
        return Timestamp(millisecondsSince1970: sum)
    }

    /// This instant moved back by `duration`, rounded toward the past, saturating as `+` does.
    public static func - (lhs: Timestamp, rhs: Duration) -> Timestamp {
        // floor(lhs − d) = lhs − ceil(d).
        guard let milliseconds = Timestamp.milliseconds(of: rhs, rounding: .up) else {
            return Timestamp(millisecondsSince1970: rhs < .zero ? .max : .min)
        }
        let (difference, overflow) = lhs.millisecondsSince1970.subtractingReportingOverflow(milliseconds)
        guard !overflow else { return Timestamp(millisecondsSince1970: milliseconds < 0 ? .max : .min) }
        return Timestamp(millisecondsSince1970: difference)
    }

    public static func += (lhs: inout Timestamp, rhs: Duration) { lhs = lhs + rhs }

    public static func -= (lhs: inout Timestamp, rhs: Duration) { lhs = lhs - rhs }

    /// The time from `rhs` to `lhs` (negative when `lhs` is earlier), exact to the millisecond.
    public static func - (lhs: Timestamp, rhs: Timestamp) -> Duration {
        let (difference, overflow) = lhs.millisecondsSince1970.subtractingReportingOverflow(rhs.millisecondsSince1970)
        guard !overflow else {
            // More than Int64 milliseconds apart: whole seconds, still exact enough to compare.
            return .seconds(lhs.millisecondsSince1970 / 1000 - rhs.millisecondsSince1970 / 1000)
        }
        return .milliseconds(difference)
    }

    /// `duration` in whole milliseconds, rounded `.down` (toward the past) or `.up`; `nil` when
    /// it does not fit an `Int64`.
    static func milliseconds(of duration: Duration, rounding: FloatingPointRoundingRule) -> Int64? {
        let (seconds, attoseconds) = duration.components
        // Attoseconds carry the sign of the duration (|attoseconds| < 10^18).
        let perMillisecond: Int64 = 1_000_000_000_000_000
        var fraction = attoseconds / perMillisecond
        let remainder = attoseconds % perMillisecond
        if rounding == .down && remainder < 0 { fraction -= 1 }
        if rounding == .up && remainder > 0 { fraction += 1 }
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        guard !overflow else { return nil }
        let (total, sumOverflow) = whole.addingReportingOverflow(fraction)
        return sumOverflow ? nil : total
    }

    /// A count of milliseconds as a `Double`, clamped into `Int64` (NaN reads as 0).
    static func clampedMilliseconds(_ value: Double) -> Int64 {
        guard !value.isNaN else { return 0 }
        // 2^63 is exactly representable; anything at or above it is past `Int64.max`.
        if value >= 9_223_372_036_854_775_808.0 { return .max }
        if value < -9_223_372_036_854_775_808.0 { return .min }
        return Int64(value)
    }
}
