import Foundation
import Testing

extension Trait where Self == ConditionTrait {
    /// Marks a suite or test that takes seconds, or needs more than this process: it starts
    /// `onboard` or a server as a child process, talks to PostgreSQL, chromium or a Python tool,
    /// replays a simulation, or loads 10^5 records and more. `tools/test.sh --fast`
    /// (docs/testing.md § The fast set) skips them — everything else runs in under a minute, for
    /// the edit-build-test loop; CI runs them all.
    ///
    /// A condition rather than a tag: Swift 6.3's `swift test` cannot select tests by tag yet.
    public static var slow: Self {
        .enabled(
            if: !FastSet.isRunning,
            "slow: skipped in the fast set (ONBOARD_TEST_FAST)")
    }
}

/// The fast set of docs/testing.md: a run with `ONBOARD_TEST_FAST` set (`tools/test.sh --fast`).
public enum FastSet {
    /// Whether this run is the fast set: `.slow` suites skip, and so does everything that talks to
    /// PostgreSQL (``TestDatabase/isEnabled``).
    public static var isRunning: Bool { ProcessInfo.processInfo.environment["ONBOARD_TEST_FAST"] != nil }
}
