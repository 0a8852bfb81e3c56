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
            if: ProcessInfo.processInfo.environment["ONBOARD_TEST_FAST"] == nil,
            "slow: skipped in the fast set (ONBOARD_TEST_FAST)")
    }
}
