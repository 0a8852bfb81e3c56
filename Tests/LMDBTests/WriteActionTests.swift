import Foundation
import Synchronization
import Testing
@testable import LMDB

/// A write closure may run several times (the map filled, even at the commit) and only the last
/// run commits: effects outside the transaction are undone by `onRollback` actions and deferred
/// by `afterCommit` actions (docs/store.md, "Write closures").
@Suite("LMDB write actions")
struct WriteActionTests {
    /// Memory outside the transaction that a closure changes, as the store's user directory is.
    final class Outside {
        var names: [String] = []
        var commits = 0
        var rollbacks = 0
    }

    @Test("a commit that fills the map rolls back the first run's outside change before the closure runs again; the commit action runs once")
    func commitMapFull() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let faults = FaultPlan()
        var options = Environment.Options()
        options.faults = faults.injector
        let environment = try Environment.open(path: directory.path, options: options)
        defer { environment.close() }
        let items = try #require(try environment.openDatabase("items", create: true))

        let outside = Outside()
        var attempts = 0
        var namesSeenByRuns: [[String]] = []
        faults.arm(.commit, failWith: LMDBError.mapFull.code)
        try environment.write { transaction in
            attempts += 1
            namesSeenByRuns.append(outside.names)
            try transaction.put(items, key: key(1), value: [1])
            outside.names.append("alice")
            transaction.onRollback {
                outside.names.removeAll { $0 == "alice" }
                outside.rollbacks += 1
            }
            transaction.afterCommit { outside.commits += 1 }
        }
        #expect(attempts == 2)
        #expect(faults.injected(at: .commit) == 1)
        #expect(environment.mapGrowthCount == 1, "the map grew once, as for a real MAP_FULL")
        #expect(namesSeenByRuns == [[], []], "the second run started from what the first one saw")
        #expect(outside.names == ["alice"])
        #expect(outside.rollbacks == 1)
        #expect(outside.commits == 1)
        #expect(try environment.read { try $0.get(items, key: key(1)) } == [1])
    }

    @Test("a put that fills a real 64 KiB map rolls back what the run changed before it, and the grown run commits")
    func putMapFull() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var options = Environment.Options()
        options.mapSizeBytes = 64 << 10
        let environment = try Environment.open(path: directory.path, options: options)
        defer { environment.close() }
        let items = try #require(try environment.openDatabase("items", create: true))

        let outside = Outside()
        var attempts = 0
        try environment.write { transaction in
            attempts += 1
            #expect(outside.names.isEmpty, "run \(attempts) sees no trace of an earlier run")
            outside.names.append("run \(attempts)")
            transaction.onRollback { outside.names.removeLast() }
            transaction.afterCommit { outside.commits += 1 }
            for index in 1...200 as ClosedRange<UInt64> {
                try transaction.put(items, key: key(index), value: pattern(index, count: 2000))
            }
        }
        #expect(attempts > 1)
        #expect(outside.names == ["run \(attempts)"])
        #expect(outside.commits == 1)
        #expect(try environment.read { try $0.count(items) } == 200)
    }

    @Test("a closure that throws, and a commit that fails, run the rollback actions and never the commit actions")
    func failures() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let faults = FaultPlan()
        var options = Environment.Options()
        options.faults = faults.injector
        let environment = try Environment.open(path: directory.path, options: options)
        defer { environment.close() }
        let items = try #require(try environment.openDatabase("items", create: true))
        struct Refused: Error {}

        let outside = Outside()
        #expect(throws: Refused.self) {
            try environment.write { transaction in
                outside.names.append("thrown")
                transaction.onRollback { outside.names.removeLast() }
                transaction.afterCommit { outside.commits += 1 }
                throw Refused()
            }
        }
        #expect(outside.names.isEmpty)

        faults.arm(.commit, failWith: EIO)
        var attempts = 0
        do {
            try environment.write { transaction in
                attempts += 1
                try transaction.put(items, key: key(7), value: [7])
                outside.names.append("failed commit")
                transaction.onRollback { outside.names.removeLast() }
                transaction.afterCommit { outside.commits += 1 }
            }
            Issue.record("the failed commit was not reported")
        } catch let error as LMDBError {
            #expect(error.code == EIO)
            #expect(error.operation == "mdb_txn_commit")
        }
        #expect(attempts == 1, "only a full map is retried")
        #expect(outside.names.isEmpty)
        #expect(outside.commits == 0)
        #expect(try environment.read { try $0.get(items, key: key(7)) } == nil)
    }

    @Test("rollback actions run in reverse order of registration")
    func rollbackOrder() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let environment = try Environment.open(path: directory.path)
        defer { environment.close() }
        let order = Outside()
        struct Refused: Error {}
        _ = try? environment.write { transaction in
            transaction.onRollback { order.names.append("first") }
            transaction.onRollback { order.names.append("second") }
            throw Refused()
        }
        #expect(order.names == ["second", "first"])
    }

    @Test("a delete that fills the map is retried after growth like a put (a reopened map has no room left)")
    func deleteMapFull() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let count: UInt64 = 3000
        do {
            var options = Environment.Options()
            options.mapSizeBytes = 4 << 20
            let environment = try Environment.open(path: directory.path, options: options)
            defer { environment.close() }
            let items = try #require(try environment.openDatabase("items", create: true))
            try environment.write { transaction in
                for index in 1...count { try transaction.put(items, key: key(index), value: pattern(index, count: 300)) }
            }
        }
        // Reopened with a map smaller than the file, LMDB maps exactly the pages in use: the
        // deletes below must copy hundreds of leaves and find no page left.
        var options = Environment.Options()
        options.mapSizeBytes = 64 << 10
        let environment = try Environment.open(path: directory.path, options: options)
        defer { environment.close() }
        let items = try #require(try environment.openDatabase("items", create: false))
        try environment.write { transaction in
            for index in stride(from: 1, through: count, by: 2) { try transaction.delete(items, key: key(index)) }
        }
        #expect(environment.mapGrowthCount > 0)
        #expect(try allKeys(environment, items) == Array(stride(from: 2, through: count, by: 2)))
    }

    @Test("an injected fsync failure is thrown by sync, and sync works again once disarmed")
    func syncFault() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let faults = FaultPlan()
        var options = Environment.Options()
        options.faults = faults.injector
        options.noSync = true
        let environment = try Environment.open(path: directory.path, options: options)
        defer { environment.close() }
        faults.arm(.sync, failWith: EIO)
        #expect(throws: LMDBError(code: EIO)) { try environment.sync() }
        try environment.sync()
        #expect(faults.calls(at: .sync) == 2)
    }
}

@Suite("LMDB nested writes")
struct NestedWriteTests {
    @Test("a write, or a database opened writable, inside a write closure stops the process with a reason instead of hanging")
    func nestedWriteIsRefused() async {
        await #expect(processExitsWith: .failure) {
            let directory = try TemporaryDirectory()
            let environment = try Environment.open(path: directory.path)
            // Not opened yet in this process: opening it begins a transaction of its own.
            try environment.write { _ in _ = try environment.openDatabase("items", create: false) }
        }
        await #expect(processExitsWith: .failure) {
            let directory = try TemporaryDirectory()
            let environment = try Environment.open(path: directory.path)
            try environment.write { _ in try environment.write { _ in } }
        }
    }
}
