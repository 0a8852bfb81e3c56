import Foundation
import OnboardingModel
import Testing
import TestSupport
@testable import OnboardingStore

@Suite("Relaxed durability and map growth", .slow)
struct DurabilityAndGrowthTests {
    @Test("relaxed durability: appends succeed, close flushes, a reopened store sees everything")
    func relaxed() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try OnboardingStore.open(
            at: directory.store,
            options: storeOptions {
                $0.durability = .relaxed
                $0.relaxedSyncIntervalMilliseconds = 10
            })
        let events = (0..<300).map { Events.make($0, user: "user\($0 % 4)") }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for event in events.prefix(200) {
                group.addTask { _ = try await store.append(event) }
            }
            try await group.waitForAll()
        }
        _ = try await store.append(Array(events[200..<250]))
        try await Task.sleep(for: .milliseconds(30)) // let the background flush run at least once
        _ = try store.appendBlocking(Array(events[250...]))
        try store.sync()
        #expect(try store.head().seq == 300)
        store.close()

        let reopened = try OnboardingStore.open(at: directory.store)
        defer { reopened.close() }
        let records = try reopened.allRecords()
        #expect(records.count == 300)
        #expect(Set(records.map(\.event)) == Set(events))
        #expect(Array(records[200...].map(\.event)) == Array(events[200...]))
        #expect(try reopened.verify().isValid)
    }

    @Test("a 32 KiB initial map grows while thousands of long events are appended; all stay readable")
    func mapGrowth() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try OnboardingStore.open(at: directory.store, options: storeOptions { $0.initialMapSizeBytes = 32 << 10 })
        defer { store.close() }
        let events = (0..<3000).map { Events.long($0, bytes: 1500 + $0 % 1000, user: "user\($0 % 10)") }

        // Batches, then concurrent singles, so growth happens both in big and in shared commits.
        for start in stride(from: 0, to: 2500, by: 100) {
            _ = try await store.append(Array(events[start..<start + 100]))
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for event in events[2500...] {
                group.addTask { _ = try await store.append(event) }
            }
            try await group.waitForAll()
        }

        #expect(store.mapGrowthCount > 0)
        let records = try store.allRecords()
        #expect(records.count == 3000)
        #expect(Array(records.prefix(2500).map(\.event)) == Array(events.prefix(2500)))
        #expect(Set(records.map(\.event)) == Set(events))
        #expect(try store.records(user: "user3").count == 300)
        #expect(try store.verify().isValid)
        let stats = try store.stats()
        #expect(stats.mapSizeBytes > 32 << 10)
        #expect(stats.eventCount == 3000)
    }

    @Test("one atomic batch far larger than the initial map is committed whole after growing")
    func mapGrowthInOneBatch() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try OnboardingStore.open(at: directory.store, options: storeOptions { $0.initialMapSizeBytes = 32 << 10 })
        defer { store.close() }
        let events = (0..<2000).map { Events.long($0, bytes: 2000) }
        let results = try await store.append(events)
        #expect(results.map(\.seq) == Array(1...2000))
        #expect(store.mapGrowthCount > 0)
        #expect(store.commitCount == 1, "one batch, one transaction")
        #expect(try store.allRecords().map(\.event) == events)
        #expect(try store.verify().isValid)
    }
}
