import Foundation
import Testing
@testable import LMDB

@Suite("LMDB map growth")
struct MapGrowthTests {
    private static func options(mapSizeBytes: Int, maximumMapSizeBytes: Int = 1 << 40) -> Environment.Options {
        var options = Environment.Options()
        options.mapSizeBytes = mapSizeBytes
        options.maximumMapSizeBytes = maximumMapSizeBytes
        return options
    }

    @Test("one transaction of several MB into a 64 KiB map grows the map and keeps every value")
    func growInOneTransaction() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let environment = try Environment.open(path: directory.path, options: Self.options(mapSizeBytes: 64 << 10))
        defer { environment.close() }
        let items = try #require(try environment.openDatabase("items", create: true))

        let count: UInt64 = 1500
        let valueBytes = 3000
        var attempts = 0
        try environment.write { transaction throws in
            attempts += 1
            for index in 1...count {
                try transaction.put(items, key: key(index), value: pattern(index, count: valueBytes))
            }
        }
        #expect(attempts > 1, "the write ran again after the map grew")
        #expect(environment.mapGrowthCount > 0)
        #expect(environment.info().mapSizeBytes >= Int(count) * valueBytes)

        try environment.read { transaction throws in
            #expect(try transaction.count(items) == Int(count))
            for index in 1...count {
                #expect(try transaction.get(items, key: key(index)) == pattern(index, count: valueBytes))
            }
        }
        #expect(try allKeys(environment, items) == Array(1...count))
    }

    @Test("many small transactions into a 64 KiB map grow it and keep every value, across reopen")
    func growAcrossTransactions() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let count: UInt64 = 600
        let valueBytes = 6000
        do {
            let environment = try Environment.open(path: directory.path, options: Self.options(mapSizeBytes: 64 << 10))
            defer { environment.close() }
            let items = try #require(try environment.openDatabase("items", create: true))
            for index in 1...count {
                try environment.write { try $0.put(items, key: key(index), value: pattern(index, count: valueBytes)) }
            }
            #expect(environment.mapGrowthCount > 0)
            #expect(try environment.read { try $0.count(items) } == Int(count))
        }

        // Reopened with the tiny initial size, LMDB adopts the file's larger map.
        let environment = try Environment.open(path: directory.path, options: Self.options(mapSizeBytes: 64 << 10))
        defer { environment.close() }
        let items = try #require(try environment.openDatabase("items", create: false))
        try environment.read { transaction throws in
            for index in 1...count {
                #expect(try transaction.get(items, key: key(index)) == pattern(index, count: valueBytes))
            }
        }
    }

    @Test("a write past maximumMapSizeBytes fails with LMDBError.mapAtMaximum, leaves nothing, and the environment stays usable")
    func mapAtMaximumInOneTransaction() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let environment = try Environment.open(
            path: directory.path, options: Self.options(mapSizeBytes: 64 << 10, maximumMapSizeBytes: 256 << 10))
        defer { environment.close() }
        let items = try #require(try environment.openDatabase("items", create: true))

        let error = #expect(throws: LMDBError.self) {
            try environment.write { transaction throws in
                for index in UInt64(1)...400 {
                    try transaction.put(items, key: key(index), value: pattern(index, count: 3000))
                }
            }
        }
        #expect(error == .mapAtMaximum)
        #expect(error?.description.contains("maximum") == true)
        #expect(environment.info().mapSizeBytes <= 256 << 10)
        #expect(try environment.read { try $0.count(items) } == 0)

        try environment.write { try $0.put(items, key: key(1), value: [1]) }
        #expect(try environment.read { try $0.get(items, key: key(1)) } == [1])
    }

    @Test("filling a bounded map one transaction at a time ends in .mapAtMaximum with every earlier write intact")
    func mapAtMaximumAcrossTransactions() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let environment = try Environment.open(
            path: directory.path, options: Self.options(mapSizeBytes: 64 << 10, maximumMapSizeBytes: 512 << 10))
        defer { environment.close() }
        let items = try #require(try environment.openDatabase("items", create: true))

        var written: UInt64 = 0
        var failure: Error?
        while written < 10_000 {
            do {
                try environment.write { try $0.put(items, key: key(written + 1), value: pattern(written + 1, count: 2000)) }
                written += 1
            } catch {
                failure = error
                break
            }
        }
        #expect(failure as? LMDBError == .mapAtMaximum, "got \(String(describing: failure))")
        #expect(written > 50)
        #expect(environment.mapGrowthCount > 0)
        try environment.read { transaction throws in
            #expect(try transaction.count(items) == Int(written))
            for index in 1...written {
                #expect(try transaction.get(items, key: key(index)) == pattern(index, count: 2000))
            }
        }
    }
}
