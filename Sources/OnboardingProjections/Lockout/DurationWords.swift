/// Renders a duration the way the sign-in screen words it: "5 minutes", "2 days", "1 second".
///
/// Uses the largest unit that divides the duration exactly (so 300 s is "5 minutes" and 90 s is
/// "90 seconds"); durations are rounded up to whole seconds first, so a wait is never understated.
public enum DurationWords {
    public static func words(milliseconds: Int64) -> String {
        let seconds = max(1, (milliseconds + 999) / 1000)
        let units: [(Int64, String)] = [(86_400, "day"), (3600, "hour"), (60, "minute"), (1, "second")]
        for (size, name) in units where seconds % size == 0 {
            let count = seconds / size
            return "\(count) \(name)\(count == 1 ? "" : "s")"
        }
        return "\(seconds) seconds"
    }

    public static func words(seconds: Int) -> String { words(milliseconds: Int64(seconds) * 1000) }
}
