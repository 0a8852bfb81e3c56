/// How a lock message names the time left: "Please wait 5 minutes before trying again."
///
/// The count is always rounded up, so a wait is never understated: in seconds only under 90 s
/// ("7 seconds", "89 seconds"), in minutes up to two hours ("2 minutes" at 90 s, "5 minutes"
/// from 4 min 0.001 s to 5 min, "120 minutes"), in hours past that ("48 hours"). So a mediawiki
/// lock shown at the failure that imposed it says the design's own sentence, "Please wait 5
/// minutes", and an app that asks again a minute later reads "4 minutes".
///
/// ```swift
/// WaitWords.words(remainingMilliseconds: 7_000)     // "7 seconds"
/// WaitWords.words(remainingMilliseconds: 651_000)   // "11 minutes"
/// WaitWords.words(remainingMilliseconds: 300_000)   // "5 minutes"
/// WaitWords.changeThreshold(remainingMilliseconds: 300_000)   // 240_000: "4 minutes" from there
/// ```
public enum WaitWords {
    /// Below this the wait is told in seconds: "89 seconds" reads better than "2 minutes" when
    /// the truth is a minute and a half, and a countdown under a minute and a half is short
    /// enough to watch.
    public static let secondsBelowMilliseconds: Int64 = 90_000
    /// Above this the wait is told in hours: "2,880 minutes" is not a number a person reads.
    public static let hoursAboveMilliseconds: Int64 = 7_200_000

    private static let second: Int64 = 1_000
    private static let minute: Int64 = 60_000
    private static let hour: Int64 = 3_600_000

    /// The time left in words, rounded up; a wait of 0 or less (a lock that has ended) reads as
    /// "1 second", so callers check for an ended lock first.
    public static func words(remainingMilliseconds remaining: Int64) -> String {
        let (count, unit) = bucket(remaining)
        return "\(count) \(unit.rawValue)\(count == 1 ? "" : "s")"
    }

    /// The time left at which ``words(remainingMilliseconds:)`` first says something else, as the
    /// wait runs down from `remaining`: the words stay the same while the time left is above it,
    /// and change when it reaches it. 0 means they change only when the lock ends.
    public static func changeThreshold(remainingMilliseconds remaining: Int64) -> Int64 {
        guard remaining > second else { return 0 }
        let (count, unit) = bucket(remaining)
        switch unit {
        case .second: return (count - 1) * second
        case .minute: return max((count - 1) * minute, secondsBelowMilliseconds - 1)
        case .hour: return max((count - 1) * hour, hoursAboveMilliseconds)
        }
    }

    private enum Unit: String { case second, minute, hour }

    /// The count and unit: whole seconds, minutes or hours, rounded up.
    private static func bucket(_ remaining: Int64) -> (Int64, Unit) {
        let remaining = max(remaining, 1)
        if remaining < secondsBelowMilliseconds { return (roundedUp(remaining, second), .second) }
        if remaining <= hoursAboveMilliseconds { return (roundedUp(remaining, minute), .minute) }
        return (roundedUp(remaining, hour), .hour)
    }

    private static func roundedUp(_ value: Int64, _ unit: Int64) -> Int64 {
        let (quotient, remainder) = value.quotientAndRemainder(dividingBy: unit)
        return remainder == 0 ? quotient : quotient + 1
    }
}
