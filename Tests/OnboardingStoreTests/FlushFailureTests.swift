import Foundation
import LMDB
import OnboardingModel
import Testing
@testable import OnboardingStore

/// With `relaxed` durability an append returns before its fsync; the background flush that
/// makes it durable must not fail silently (docs/store.md, "Durability").
@Suite("Relaxed durability: a failed flush")
struct FlushFailureTests {
    /// Waits (bounded) until `condition` holds; the background flush runs on its own timer.
    static func wait(upTo seconds: Double = 10, until condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() {
            if Date() > deadline { return false }
            Thread.sleep(forTimeInterval: 0.005)
        }
        return true
    }

    @Test("a failed background flush is thrown by the next append and sync, stays until reopen, and the flush is retried")
    func backgroundFlushFails() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let faults = FaultPlan()
        let store = try OnboardingStore.open(
            at: directory.store,
            options: storeOptions {
                $0.durability = .relaxed
                $0.relaxedSyncIntervalMilliseconds = 5
                $0.storageFaults = faults.injector
            })
        let events = Events.many(3)
        _ = try store.appendBlocking([events[0]])
        faults.arm(.sync, failWith: EIO, times: Int.max)
        _ = try store.appendBlocking([events[1]]) // acknowledged before its flush, which fails
        #expect(Self.wait { faults.injected(at: .sync) >= 1 }, "the background flush ran")
        // No commit since: the flush is tried again all the same.
        #expect(Self.wait { faults.injected(at: .sync) >= 3 }, "the failed flush is retried")

        do {
            _ = try store.appendBlocking([events[2]])
            Issue.record("an append after a failed flush was accepted")
        } catch {
            #expect(error.code == .notDurable)
            #expect(error.message.contains("flushing \(store.path) to disk failed"))
            #expect(error.message.contains("may not be on disk"))
            #expect(error.message.contains("open it again"))
        }
        #expect(throws: StoreError.self) { try store.sync() }

        // A flush that succeeds later does not prove the failed one's pages reached the disk.
        faults.disarm(.sync)
        let calls = faults.calls(at: .sync)
        try? store.sync()
        #expect(faults.calls(at: .sync) > calls)
        do {
            try store.sync()
            Issue.record("sync succeeded after a flush had failed")
        } catch {
            #expect(error.code == .notDurable)
        }
        #expect(try store.head().seq == 2, "nothing was appended after the failure")
        store.close()

        let reopened = try OnboardingStore.open(at: directory.store, options: storeOptions { $0.durability = .relaxed })
        defer { reopened.close() }
        #expect(try reopened.allRecords().map(\.event) == Array(events[0..<2]))
        _ = try reopened.appendBlocking([events[2]])
        try reopened.sync()
    }

    @Test("with full durability a failed sync() is a storage error and appends go on")
    func fullDurabilitySyncFails() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let faults = FaultPlan()
        let store = try OnboardingStore.open(at: directory.store, options: storeOptions { $0.storageFaults = faults.injector })
        defer { store.close() }
        faults.arm(.sync, failWith: EIO)
        do {
            try store.sync()
            Issue.record("the failed sync was not reported")
        } catch {
            #expect(error.code == .storage)
        }
        _ = try store.appendBlocking([Events.make(0)])
        try store.sync()
    }
}
