import Foundation
import OnboardingModel
import Synchronization
import Testing
@testable import OnboardingStore

@Suite("Group commit under concurrency")
struct GroupCommitTests {
    @Test("250 concurrent single appends with full durability: gap-free, each once, fewer commits than events")
    func concurrentSingles() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try OnboardingStore.open(at: directory.store)
        defer { store.close() }
        let events = (0..<250).map { Events.make($0, user: "user\($0 % 7)") }

        let results = try await withThrowingTaskGroup(of: (UUID, AppendResult).self) { group in
            for event in events {
                group.addTask { (event.id, try await store.append(event)) }
            }
            var results: [UUID: AppendResult] = [:]
            for try await (id, result) in group { results[id] = result }
            return results
        }

        #expect(results.count == events.count)
        #expect(results.values.allSatisfy { !$0.isDuplicate })
        #expect(Set(results.values.map(\.seq)) == Set(1...UInt64(events.count)))
        let records = try store.allRecords()
        #expect(records.map(\.seq) == Array(1...UInt64(events.count)))
        let byID = Dictionary(uniqueKeysWithValues: events.map { ($0.id, $0) })
        for record in records {
            #expect(byID[record.event.id] == record.event, "seq \(record.seq) holds an appended event")
            #expect(results[record.event.id]?.seq == record.seq, "append reported the seq the event is stored at")
        }
        #expect(Set(records.map(\.event.id)).count == events.count, "every event exactly once")
        #expect(try store.verify().isValid)
        #expect(store.commitCount < events.count, "appends shared commits: \(store.commitCount) commits")
        #expect(store.commitCount >= 1)
    }

    @Test("concurrent batches of mixed sizes stay contiguous and atomic")
    func concurrentBatches() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try OnboardingStore.open(at: directory.store)
        defer { store.close() }
        var next = 0
        let batches: [[Event]] = (0..<120).map { index in
            let size = index % 6 + 1
            defer { next += size }
            return Events.many(size, from: next, user: "user\(index % 5)")
        }
        let total = batches.map(\.count).reduce(0, +)

        let outcomes = try await withThrowingTaskGroup(of: ([Event], [AppendResult]).self) { group in
            for batch in batches {
                group.addTask { (batch, try await store.append(batch)) }
            }
            var outcomes: [([Event], [AppendResult])] = []
            for try await outcome in group { outcomes.append(outcome) }
            return outcomes
        }

        var allSeqs: [UInt64] = []
        for (batch, results) in outcomes {
            let seqs = results.map(\.seq)
            #expect(seqs == Array(seqs[0]..<seqs[0] + UInt64(batch.count)), "a batch occupies consecutive seqs")
            #expect(try store.records(in: seqs[0]...seqs.last!).map(\.event) == batch)
            allSeqs += seqs
        }
        #expect(allSeqs.sorted() == Array(1...UInt64(total)))
        #expect(try store.verify().isValid)
        #expect(store.commitCount < batches.count)
    }

    @Test("in a shared commit, a request that breaks a rule fails alone and the others commit")
    func failuresFailAlone() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try OnboardingStore.open(at: directory.store)
        defer { store.close() }
        let stored = Events.make(0)
        _ = try await store.append(stored)

        enum Kind: Sendable { case good, conflicting, wrongClaim }
        let requests: [(Kind, [Event])] = (1...180).map { index in
            switch index % 6 {
            case 0: (.conflicting, [Events.make(index), stored.altered()])
            case 3: (.wrongClaim, [Events.make(index)])
            default: (.good, [Events.make(index), Events.make(index + 1000)])
            }
        }
        let outcomes = await withTaskGroup(of: (Kind, [Event], Result<[AppendResult], StoreError>).self) { group in
            for (kind, events) in requests {
                group.addTask {
                    do throws(StoreError) {
                        let claims: [UInt64?]? = kind == .wrongClaim ? [1_000_000] : nil
                        return (kind, events, .success(try await store.append(events, claimedSeqs: claims)))
                    } catch {
                        return (kind, events, .failure(error))
                    }
                }
            }
            var outcomes: [(Kind, [Event], Result<[AppendResult], StoreError>)] = []
            for await outcome in group { outcomes.append(outcome) }
            return outcomes
        }

        var committed = 1
        for (kind, events, result) in outcomes {
            switch (kind, result) {
            case (.good, .success(let results)):
                committed += results.count
                for (event, result) in zip(events, results) {
                    #expect(try store.storedRecord(at: result.seq)?.event == event)
                }
            case (.conflicting, .failure(let error)):
                #expect(error.code == .conflict)
                #expect(error.batchIndex == 1)
                #expect(error.seq == 1)
                #expect(try store.seq(of: events[0].id) == nil, "the failed batch left nothing")
            case (.wrongClaim, .failure(let error)):
                #expect(error.code == .seqMismatch)
                #expect(try store.seq(of: events[0].id) == nil)
            default:
                Issue.record("unexpected outcome for a \(kind) request: \(result)")
            }
        }
        #expect(try store.head().seq == UInt64(committed))
        #expect(try store.verify().isValid)
    }

    @Test("readers running during concurrent appends always see a gap-free prefix of the log")
    func readersDuringAppends() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try OnboardingStore.open(at: directory.store)
        defer { store.close() }
        let done = Flag()

        try await withThrowingTaskGroup(of: Void.self) { group in
            for reader in 0..<3 {
                group.addTask {
                    var rounds = 0
                    while !done.isSet || rounds == 0 {
                        rounds += 1
                        let head = try store.head().seq
                        let records = head == 0 ? [] : try store.records(in: 1...head)
                        #expect(records.map(\.seq) == (0..<head).map { $0 + 1 }, "reader \(reader)")
                        if reader == 0 { #expect(try store.verify().isValid) }
                        await Task.yield()
                    }
                }
            }
            try await withThrowingTaskGroup(of: Void.self) { writers in
                for index in 0..<200 {
                    writers.addTask { _ = try await store.append(Events.make(index)) }
                }
                try await writers.waitForAll()
            }
            done.set()
            try await group.waitForAll()
        }
        #expect(try store.head().seq == 200)
        #expect(try store.verify().isValid)
    }

    @Test("closing while appends are in flight: each append either committed or failed with .closed")
    func closeDuringAppends() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try OnboardingStore.open(at: directory.store)
        let events = (0..<200).map { Events.make($0) }

        let outcomes = await withTaskGroup(of: (UUID, Result<AppendResult, StoreError>).self) { group in
            for (index, event) in events.enumerated() {
                group.addTask {
                    do throws(StoreError) {
                        return (event.id, .success(try await store.append(event)))
                    } catch {
                        return (event.id, .failure(error))
                    }
                }
                if index == 100 {
                    group.addTask {
                        store.close()
                        return (UUID(), .failure(StoreError(.closed, "marker")))
                    }
                }
            }
            var outcomes: [UUID: Result<AppendResult, StoreError>] = [:]
            for await (id, result) in group { outcomes[id] = result }
            return outcomes
        }

        let reopened = try OnboardingStore.open(at: directory.store)
        defer { reopened.close() }
        var succeeded = 0
        for event in events {
            switch outcomes[event.id] {
            case .success(let result)?:
                succeeded += 1
                #expect(try reopened.storedRecord(at: result.seq)?.event == event, "a reported append survived close")
            case .failure(let error)?:
                #expect(error.code == .closed)
                #expect(try reopened.seq(of: event.id) == nil)
            case nil:
                Issue.record("no outcome for \(event.id)")
            }
        }
        #expect(try reopened.head().seq == UInt64(succeeded))
        #expect(try reopened.verify().isValid)
    }
}

/// A flag one task sets and others poll.
private final class Flag: Sendable {
    private let value = Atomic<Bool>(false)
    var isSet: Bool { value.load(ordering: .acquiring) }
    func set() { value.store(true, ordering: .releasing) }
}
