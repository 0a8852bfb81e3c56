import CLMDB

/// A transaction, valid only inside the ``Environment/read(_:)`` or ``Environment/write(_:)``
/// closure that received it. Not `Sendable`: a write transaction belongs to one thread.
///
/// ```swift
/// try environment.write { transaction in
///     try transaction.put(database, key: key, value: value, flags: .noOverwrite)
/// }
/// ```
public final class Transaction {
    let handle: OpaquePointer
    public let isReadOnly: Bool
    private(set) var isValid = true
    /// A put returned `MDB_MAP_FULL`; the environment grows the map and retries.
    private(set) var sawMapFull = false

    init(handle: OpaquePointer, isReadOnly: Bool) {
        self.handle = handle
        self.isReadOnly = isReadOnly
    }

    func invalidate() { isValid = false }

    private func ensureValid() {
        precondition(isValid, "LMDB transaction used outside its read { } / write { } closure")
    }

    /// Flags of ``put(_:key:value:flags:)``.
    public struct PutFlags: OptionSet, Sendable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        /// Fail with ``LMDBError/keyExists`` instead of overwriting.
        public static let noOverwrite = PutFlags(rawValue: UInt32(MDB_NOOVERWRITE))
        /// The key sorts after every key in the database (fast bulk append).
        public static let append = PutFlags(rawValue: UInt32(MDB_APPEND))
    }

    /// The value stored under `key`, copied out, or `nil`.
    public func get(_ database: Database, key: [UInt8]) throws -> [UInt8]? {
        try withValue(database, key: key) { Array($0) }
    }

    /// Calls `body` with the value stored under `key` without copying it; the buffer is only
    /// valid inside `body`. Returns `nil` when the key is absent.
    public func withValue<R>(_ database: Database, key: [UInt8],
                             _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        try key.withUnsafeBytes { keyBytes in try withValue(database, key: keyBytes, body) }
    }

    /// ``withValue(_:key:_:)`` with a key that is already in memory (e.g. part of an index key
    /// a cursor points at), so a lookup per index entry needs no key array.
    public func withValue<R>(_ database: Database, key: UnsafeRawBufferPointer,
                             _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        guard let value = try value(database, key: key) else { return nil }
        return try body(value)
    }

    /// The value stored under `key`, in place in the map, or `nil`. Like a ``Cursor/Entry``, the
    /// buffer stays valid until this transaction ends (in a write transaction: until the next
    /// write); copy what must outlive it. Not generic, so a hot loop pays no closure or
    /// unspecialised generic call per lookup.
    public func value(_ database: Database, key: UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer? {
        ensureValid()
        var value = MDB_val()
        var keyValue = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        let rc = mdb_get(handle, database.handle, &keyValue, &value)
        if rc == MDB_NOTFOUND { return nil }
        try check(rc, "get from \(database.name)")
        return UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size)
    }

    /// Stores `value` under `key`.
    public func put(_ database: Database, key: [UInt8], value: [UInt8], flags: PutFlags = []) throws {
        ensureValid()
        precondition(!isReadOnly, "put in a read-only transaction")
        let rc = key.withUnsafeBytes { keyBytes in
            value.withUnsafeBytes { valueBytes in
                var keyValue = MDB_val(mv_size: keyBytes.count, mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
                var dataValue = MDB_val(mv_size: valueBytes.count, mv_data: UnsafeMutableRawPointer(mutating: valueBytes.baseAddress))
                return mdb_put(handle, database.handle, &keyValue, &dataValue, flags.rawValue)
            }
        }
        if rc == MDB_MAP_FULL { sawMapFull = true }
        try check(rc, "put into \(database.name)")
    }

    /// Removes `key`; returns whether it was there.
    @discardableResult
    public func delete(_ database: Database, key: [UInt8]) throws -> Bool {
        ensureValid()
        precondition(!isReadOnly, "delete in a read-only transaction")
        let rc = key.withUnsafeBytes { keyBytes -> Int32 in
            var keyValue = MDB_val(mv_size: keyBytes.count, mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
            return mdb_del(handle, database.handle, &keyValue, nil)
        }
        if rc == MDB_NOTFOUND { return false }
        try check(rc, "delete from \(database.name)")
        return true
    }

    /// Number of entries in the database.
    public func count(_ database: Database) throws -> Int {
        ensureValid()
        var stat = MDB_stat()
        try check(mdb_stat(handle, database.handle, &stat), "stat \(database.name)")
        return stat.ms_entries
    }

    /// Runs `body` with a cursor over `database`, closed when `body` returns.
    public func withCursor<R>(_ database: Database, _ body: (Cursor) throws -> R) throws -> R {
        ensureValid()
        var cursor: OpaquePointer?
        try check(mdb_cursor_open(handle, database.handle, &cursor), "open cursor on \(database.name)")
        let wrapper = Cursor(handle: cursor!, database: database)
        defer {
            wrapper.invalidate()
            mdb_cursor_close(cursor)
        }
        return try body(wrapper)
    }
}

@available(*, unavailable)
extension Transaction: Sendable {}
