import Foundation
import Testing
@testable import LMDB

@Suite("LMDB environment: opening, sharing, read-only")
struct EnvironmentTests {
    @Test("a directory whose data.mdb is garbage throws LMDBError.invalid and keeps no file open")
    func garbageDataFile() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let garbage = Array(repeating: Array("this is not an LMDB file. ".utf8), count: 400).flatMap { $0 }
        #expect(FileManager.default.createFile(atPath: directory.appending("data.mdb"), contents: Data(garbage)))

        let error = #expect(throws: LMDBError.self) { try Environment.open(path: directory.path) }
        #expect(error == .invalid)
        #expect(error?.description.contains(directory.path) == true, "the error names the path: \(String(describing: error))")
        if let open = openFiles(under: directory.path) {
            #expect(open.isEmpty, "a failed open must close every file it opened: \(open)")
        }
        // Not cached as an environment: a second attempt fails the same way.
        #expect(throws: LMDBError.invalid) { try Environment.open(path: directory.path) }
        // The garbage is untouched.
        #expect(FileManager.default.contents(atPath: directory.appending("data.mdb")) == Data(garbage))
    }

    @Test("opening a directory that does not exist throws ENOENT")
    func missingDirectory() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let error = #expect(throws: LMDBError.self) { try Environment.open(path: directory.appending("absent")) }
        #expect(error?.code == ENOENT)
        #expect(!FileManager.default.fileExists(atPath: directory.appending("absent")))
    }

    @Test("the same path opened twice in a process, however spelled, gives the same Environment")
    func oneEnvironmentPerPath() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let first = try Environment.open(path: directory.path)
        defer { first.close() }
        let second = try Environment.open(path: directory.path)
        let third = try Environment.open(path: directory.path + "/./")
        let readOnly = try Environment.open(
            path: directory.path,
            options: {
                var o = Environment.Options(); o.readOnly = true; return o
            }())
        #expect(first === second)
        #expect(first === third)
        #expect(first === readOnly, "a read-only open is served by the writable environment already open")
        #expect(first.options.readOnly == false)

        let items = try #require(try first.openDatabase("items", create: true))
        try second.write { try $0.put(items, key: key(1), value: [7]) }
        #expect(try third.read { try $0.get(items, key: key(1)) } == [7])

        // After close, a new open gives a new environment holding the committed data.
        first.close()
        #expect(second.isClosed)
        let reopened = try Environment.open(path: directory.path)
        defer { reopened.close() }
        #expect(reopened !== first)
        #expect(!reopened.isClosed)
        let reopenedItems = try #require(try reopened.openDatabase("items", create: false))
        #expect(try reopened.read { try $0.get(reopenedItems, key: key(1)) } == [7])
    }

    @Test("a writable open of a path this process holds read-only is refused with .alreadyOpen")
    func writableOverReadOnly() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try Environment.open(path: directory.path).close()
        var readOnlyOptions = Environment.Options()
        readOnlyOptions.readOnly = true
        let readOnly = try Environment.open(path: directory.path, options: readOnlyOptions)
        defer { readOnly.close() }
        #expect(throws: LMDBError.alreadyOpen) { try Environment.open(path: directory.path) }
        #expect(!readOnly.isClosed)
    }

    @Test("close is idempotent")
    func closeTwice() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let environment = try Environment.open(path: directory.path)
        environment.close()
        environment.close()
        #expect(environment.isClosed)
        try environment.sync() // a flush racing with close does nothing rather than failing
    }

    @Test("read-only: a missing database is nil, an existing one reads, nothing is created")
    func readOnlyDatabases() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        do {
            let writable = try Environment.open(path: directory.path)
            defer { writable.close() }
            let present = try #require(try writable.openDatabase("present", create: true))
            try writable.write { try $0.put(present, key: key(5), value: [5, 5]) }
            #expect(try writable.openDatabase("absent", create: false) == nil)
        }

        var options = Environment.Options()
        options.readOnly = true
        let environment = try Environment.open(path: directory.path, options: options)
        defer { environment.close() }
        #expect(try environment.openDatabase("absent", create: false) == nil)
        #expect(try environment.openDatabase("absent", create: false) == nil, "a nil result is not cached as a handle")
        let present = try #require(try environment.openDatabase("present", create: false))
        #expect(try environment.read { try $0.get(present, key: key(5)) } == [5, 5])
        #expect(try environment.mainDatabaseEntryCount() == 1)
    }

    @Test("files are created with the configured mode")
    func fileMode() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let environment = try Environment.open(path: directory.path)
        defer { environment.close() }
        for name in ["data.mdb", "lock.mdb"] {
            let attributes = try FileManager.default.attributesOfItem(atPath: directory.appending(name))
            let mode = try #require(attributes[.posixPermissions] as? Int)
            #expect(mode & 0o077 == 0, "\(name) must not be readable by group or others: \(String(mode, radix: 8))")
        }
    }
}
