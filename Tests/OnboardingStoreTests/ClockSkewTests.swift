import Foundation
import OnboardingModel
import OnboardingStore
import Synchronization
import Testing

/// A device store refuses what its own clock says cannot have happened yet, as the sync server
/// does (docs/sync-protocol.md § Event times): no log can hold failures that lock a key from a
/// time still to come.
@Suite struct ClockSkewTests {
    final class ManualClock: Sendable {
        private let milliseconds: Atomic<Int64>
        init(_ time: Timestamp) { milliseconds = Atomic(time.millisecondsSince1970) }
        var now: Timestamp { Timestamp(millisecondsSince1970: milliseconds.load(ordering: .relaxed)) }
    }

    @Test func anEventDatedPastTheSkewIsRefusedAndNothingOfItsBatchIsWritten() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let clock = ManualClock(Events.start)
        let store = try OnboardingStore.open(at: directory.store, options: storeOptions { $0.clock = { clock.now } })
        defer { store.close() }
        let skew = try #require(store.options.maximumClockSkewMilliseconds)
        #expect(skew == 300_000)
        var inside = Events.make(0)
        inside.at = Events.start.adding(milliseconds: skew)
        var outside = Events.make(1)
        outside.at = Events.start.adding(milliseconds: skew + 1)
        #expect(try store.appendBlocking([inside]).first?.seq == 1, "exactly the skew is allowed")
        do {
            _ = try store.appendBlocking([Events.make(2), outside])
            Issue.record("an event dated after now + skew was appended")
        } catch {
            #expect(error.code == .invalidEvent && error.batchIndex == 1)
            #expect(
                error.message
                    == "event 2 of the batch is dated \(outside.at.iso8601), more than 300 s after this store's clock (\(Events.start.iso8601)): an event cannot have happened yet; fix the clock that dated it"
            )
        }
        #expect(try store.head().seq == 1, "nothing of the refused batch")
        var millennia = Events.make(3, payload: .signInFailed(method: .password, reason: .invalidPassword))
        millennia.at = Timestamp.maximum
        #expect(throws: StoreError.self) { try store.appendBlocking(Array(repeating: millennia, count: 1)) }
        // Far past is fine: it locks nothing now.
        var ancient = Events.make(4)
        ancient.at = Timestamp.minimum
        #expect(try store.appendBlocking([ancient]).first?.seq == 2)
    }

    @Test func withoutASkewNothingIsCheckedAsOnAServersReplica() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try OnboardingStore.open(
            at: directory.store,
            options: storeOptions {
                $0.maximumClockSkewMilliseconds = nil
                $0.clock = { Timestamp.minimum }
            })
        defer { store.close() }
        #expect(try store.appendBlocking(Events.many(3)).count == 3)
    }
}
