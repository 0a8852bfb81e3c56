import Foundation
@testable import OnboardingServer
import TestSupport

/// Where a test's server keeps its data, for one of ``TestDatabase/storages``: LMDB replicas in a
/// directory of the test's own, or a fresh PostgreSQL database. ``open(_:)`` may be called again
/// after the server closed: a restart on the same data.
///
/// ```swift
/// let storage = try TestServerStorage(storage, in: directory)
/// defer { storage.remove() }
/// let server = try storage.open()
/// ```
struct TestServerStorage: Sendable {
    /// `lmdb` or `postgres`.
    let name: String
    /// The replicas' data directory (`lmdb`).
    let dataDirectory: String?
    /// The database's URL (`postgres`).
    let databaseURL: String?
    private let drop: @Sendable () -> Void

    init(_ name: String, in directory: TemporaryDirectory) throws {
        self.name = name
        switch name {
        case "lmdb":
            dataDirectory = directory.appending("server-data")
            databaseURL = nil
            drop = {}
        case "postgres":
            let database = try TestDatabase.freshDatabase()
            dataDirectory = nil
            databaseURL = database.url
            drop = database.drop
        default:
            throw TestFailure("no server storage \(name); the storages are \(TestDatabase.storages)")
        }
    }

    var isPostgres: Bool { databaseURL != nil }

    /// A server on this data: made on the first open, as it was left on later ones.
    func open(_ options: SyncServer.Options = SyncServer.Options()) throws -> SyncServer {
        if let databaseURL { return try SyncServer(databaseURL: databaseURL, options: options) }
        return try SyncServer(dataDirectory: dataDirectory!, options: options)
    }

    /// Drops the database (`postgres`; the directory is the test's to remove). Close the servers first.
    func remove() { drop() }
}
