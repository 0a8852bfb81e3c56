import Foundation
import Synchronization
import Testing
@testable import LMDB

@Suite("LMDB concurrency")
struct ConcurrencyTests {
    @Test("readers on several threads see consistent snapshots while a writer commits and grows the map")
    func readersWithWriter() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var options = Environment.Options()
        options.mapSizeBytes = 64 << 10 // small, so the map grows while readers run
        let environment = try Environment.open(path: directory.path, options: options)
        defer { environment.close() }
        let items = try #require(try environment.openDatabase("items", create: true))
        let meta = try #require(try environment.openDatabase("meta", create: true))
        let countKey = Array("count".utf8)

        let commits: UInt64 = 400
        let writerDone = Atomic<Bool>(false)
        let problems = Mutex<[String]>([])
        let snapshots = Atomic<Int>(0)

        // Every transaction adds item i and sets meta.count = i, so every snapshot must hold
        // exactly the items 1...count, each with its own value.
        let writer: @Sendable () -> Void = {
            defer { writerDone.store(true, ordering: .releasing) }
            do {
                for index in 1...commits {
                    try environment.write { transaction throws in
                        try transaction.put(items, key: key(index), value: pattern(index, count: 1500))
                        try transaction.put(meta, key: countKey, value: key(index))
                    }
                }
            } catch {
                problems.withLock { $0.append("writer: \(error)") }
            }
        }
        // Readers give up after a deadline so that a starved writer shows as a failure, not a hang.
        let deadline = ContinuousClock.now + .seconds(30)
        let readersGaveUp = Atomic<Bool>(false)
        let reader: @Sendable () -> Void = {
            var rounds = 0
            while !writerDone.load(ordering: .acquiring) || rounds < 5 {
                if ContinuousClock.now > deadline {
                    readersGaveUp.store(true, ordering: .relaxed)
                    return
                }
                rounds += 1
                do {
                    let problem: String? = try environment.read { transaction throws in
                        let count = try transaction.get(meta, key: countKey).map(number) ?? 0
                        guard try transaction.count(items) == Int(count) else {
                            return "count \(count) but \(try transaction.count(items)) items"
                        }
                        var expected: UInt64 = 1
                        let bad = try transaction.withCursor(items) { cursor -> String? in
                            var entry = try cursor.first()
                            while let current = entry {
                                guard number(current.key) == expected else { return "key \(number(current.key)), expected \(expected)" }
                                guard Array(current.value) == pattern(expected, count: 1500) else { return "value of \(expected) differs" }
                                expected += 1
                                entry = try cursor.next()
                            }
                            return nil
                        }
                        return bad
                    }
                    snapshots.add(1, ordering: .relaxed)
                    if let problem { problems.withLock { $0.append("reader: \(problem)") } }
                } catch {
                    problems.withLock { $0.append("reader: \(error)") }
                    return
                }
            }
        }

        await runOnThreads([writer, reader, reader, reader, reader])

        let starved = readersGaveUp.load(ordering: .relaxed)
        #expect(
            !starved,
            "the writer made no progress for 30 s while readers ran (map growth starved by readers)")
        #expect(problems.withLock { $0 } == [])
        #expect(snapshots.load(ordering: .relaxed) >= 20)
        #expect(environment.mapGrowthCount > 0)
        #expect(try allKeys(environment, items) == Array(1...commits))
    }

    @Test("writers on several threads are serialised: no write is lost")
    func concurrentWriters() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let environment = try Environment.open(path: directory.path)
        defer { environment.close() }
        let counter = try #require(try environment.openDatabase("counter", create: true))
        let problems = Mutex<[String]>([])

        // Read-modify-write inside one transaction: lost updates would show as a short total.
        let increment: @Sendable () -> Void = {
            for _ in 0..<100 {
                do {
                    try environment.write { transaction throws in
                        let current = try transaction.get(counter, key: key(0)).map(number) ?? 0
                        try transaction.put(counter, key: key(0), value: key(current + 1))
                    }
                } catch {
                    problems.withLock { $0.append("\(error)") }
                }
            }
        }
        await runOnThreads(Array(repeating: increment, count: 6))
        #expect(problems.withLock { $0 } == [])
        #expect(try environment.read { try $0.get(counter, key: key(0)) }.map(number) == 600)
    }
}
