import CLMDB

/// A named sub-database of an ``Environment``.
///
/// Handles are opened once with ``Environment/openDatabase(_:create:)`` and stay valid until the
/// environment closes; they carry no transaction, so they are freely shared.
///
/// ```swift
/// let events = try environment.openDatabase("events", create: true)
/// ```
public struct Database: Sendable, Hashable {
    let handle: MDB_dbi
    /// The sub-database's name in the environment's main database.
    public let name: String
}
