import Foundation
import PostgreSQL
import TestSupport

/// A new, empty database for one test on the tests' PostgreSQL server, dropped afterwards.
func withFreshDatabase<R>(_ body: (DatabaseURL) throws -> R) throws -> R {
    let name = TestDatabase.freshName()
    let admin = try PGConnection(url: DatabaseURL(try TestDatabase.url(database: "postgres")))
    defer { admin.close() }
    try admin.execute("CREATE DATABASE \(name)")
    defer { _ = try? admin.execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)") }
    return try body(DatabaseURL(try TestDatabase.url(database: name)))
}
