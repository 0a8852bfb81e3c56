import Foundation
import Testing
@testable import LMDB

@Suite("LMDB transactions and cursors")
struct TransactionTests {
    private struct Refusal: Error, Equatable {}

    @Test("put, get, delete and count round-trip through committed transactions")
    func putGetDeleteCount() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let environment = try Environment.open(path: directory.path)
        defer { environment.close() }
        let items = try #require(try environment.openDatabase("items", create: true))

        try environment.write { transaction throws in
            try transaction.put(items, key: key(1), value: [10])
            try transaction.put(items, key: key(2), value: [20, 21])
            try transaction.put(items, key: key(3), value: [])
        }
        try environment.read { transaction throws in
            #expect(try transaction.get(items, key: key(1)) == [10])
            #expect(try transaction.get(items, key: key(2)) == [20, 21])
            #expect(try transaction.get(items, key: key(3)) == [])
            #expect(try transaction.get(items, key: key(4)) == nil)
            #expect(try transaction.count(items) == 3)
        }

        // Overwrite, then delete one present and one absent key.
        let deleted = try environment.write { transaction throws in
            try transaction.put(items, key: key(2), value: [22])
            return (try transaction.delete(items, key: key(1)), try transaction.delete(items, key: key(9)))
        }
        #expect(deleted.0 == true)
        #expect(deleted.1 == false)
        try environment.read { transaction throws in
            #expect(try transaction.get(items, key: key(1)) == nil)
            #expect(try transaction.get(items, key: key(2)) == [22])
            #expect(try transaction.count(items) == 2)
        }
    }

    @Test("noOverwrite refuses an existing key with LMDBError.keyExists and keeps the old value")
    func noOverwrite() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let environment = try Environment.open(path: directory.path)
        defer { environment.close() }
        let items = try #require(try environment.openDatabase("items", create: true))
        try environment.write { try $0.put(items, key: key(1), value: [1]) }

        let error = #expect(throws: LMDBError.self) {
            try environment.write { try $0.put(items, key: key(1), value: [2], flags: .noOverwrite) }
        }
        #expect(error == .keyExists)
        #expect(try environment.read { try $0.get(items, key: key(1)) } == [1])
    }

    @Test("cursor first/next/seek(atLeast:)/last/previous follow big-endian numeric order")
    func cursorOrder() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let environment = try Environment.open(path: directory.path)
        defer { environment.close() }
        let items = try #require(try environment.openDatabase("items", create: true))

        // Numbers whose little-endian bytes would sort differently from their values.
        let numbers: [UInt64] = [65_536, 1, 256, 255, 2, 1 << 40, 257, 0]
        try environment.write { transaction throws in
            for number in numbers { try transaction.put(items, key: key(number), value: key(number &* 3)) }
        }
        let sorted = numbers.sorted()
        #expect(try allKeys(environment, items) == sorted)

        try environment.read { transaction throws in
            try transaction.withCursor(items) { cursor throws in
                let first = try #require(try cursor.first())
                #expect(number(first.key) == 0)
                #expect(number(first.value) == 0)

                let atLeast3 = try #require(try cursor.seek(atLeast: key(3)))
                #expect(number(atLeast3.key) == 255)
                #expect(number(atLeast3.value) == 765)
                #expect(try cursor.next().map { number($0.key) } == 256)
                #expect(try cursor.next().map { number($0.key) } == 257)

                let exact = try #require(try cursor.seek(atLeast: key(65_536)))
                #expect(number(exact.key) == 65_536)
                #expect(try cursor.seek(atLeast: key(65_537)).map { number($0.key) } == 1 << 40)
                #expect(try cursor.seek(atLeast: key((1 << 40) + 1)) == nil)

                let last = try #require(try cursor.last())
                #expect(number(last.key) == 1 << 40)
                #expect(try cursor.next() == nil)
                #expect(try cursor.previous().map { number($0.key) } == 65_536)
            }
        }
    }

    @Test("an empty database has no first, last or seek entry")
    func emptyCursor() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let environment = try Environment.open(path: directory.path)
        defer { environment.close() }
        let items = try #require(try environment.openDatabase("items", create: true))
        try environment.read { transaction throws in
            #expect(try transaction.count(items) == 0)
            try transaction.withCursor(items) { cursor throws in
                #expect(try cursor.first() == nil)
                #expect(try cursor.last() == nil)
                #expect(try cursor.seek(atLeast: key(0)) == nil)
            }
        }
    }

    @Test("a write transaction sees its own puts and deletes before commit")
    func ownWritesVisible() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let environment = try Environment.open(path: directory.path)
        defer { environment.close() }
        let items = try #require(try environment.openDatabase("items", create: true))
        try environment.write { try $0.put(items, key: key(1), value: [1]) }

        try environment.write { transaction throws in
            try transaction.put(items, key: key(2), value: [2])
            #expect(try transaction.get(items, key: key(2)) == [2])
            #expect(try transaction.count(items) == 2)
            let keys = try transaction.withCursor(items) { cursor -> [UInt64] in
                var keys: [UInt64] = []
                var entry = try cursor.first()
                while let current = entry { keys.append(number(current.key)); entry = try cursor.next() }
                return keys
            }
            #expect(keys == [1, 2])
            #expect(try transaction.delete(items, key: key(1)))
            #expect(try transaction.get(items, key: key(1)) == nil)
            #expect(try transaction.count(items) == 1)
        }
        #expect(try allKeys(environment, items) == [2])
    }

    @Test("a write whose closure throws is aborted: none of its puts or deletes remain")
    func abortedWriteLeavesNothing() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let environment = try Environment.open(path: directory.path)
        defer { environment.close() }
        let items = try #require(try environment.openDatabase("items", create: true))
        try environment.write { try $0.put(items, key: key(1), value: [1]) }

        #expect(throws: Refusal()) {
            try environment.write { transaction throws in
                try transaction.put(items, key: key(2), value: [2])
                try transaction.put(items, key: key(3), value: [3])
                try transaction.delete(items, key: key(1))
                throw Refusal()
            }
        }
        #expect(try allKeys(environment, items) == [1])
        #expect(try environment.read { try $0.get(items, key: key(1)) } == [1])

        // The environment is still writable after the abort.
        try environment.write { try $0.put(items, key: key(4), value: [4]) }
        #expect(try allKeys(environment, items) == [1, 4])
    }
}
