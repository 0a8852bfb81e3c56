import CLMDB

/// A position in a database, valid only inside ``Transaction/withCursor(_:_:)``.
///
/// Keys compare as unsigned bytes, so big-endian integer keys iterate in numeric order:
///
/// ```swift
/// try transaction.withCursor(events) { cursor in
///     var entry = try cursor.seek(atLeast: startKey)
///     while let current = entry { …; entry = try cursor.next() }
/// }
/// ```
public final class Cursor {
    /// One key/value pair. The buffers point into the map and are valid until the cursor moves
    /// or the transaction ends; copy them (`Array(entry.key)`) to keep them.
    public struct Entry {
        public let key: UnsafeRawBufferPointer
        public let value: UnsafeRawBufferPointer
    }

    let handle: OpaquePointer
    let database: Database
    private var isValid = true

    init(handle: OpaquePointer, database: Database) {
        self.handle = handle
        self.database = database
    }

    func invalidate() { isValid = false }

    private func move(_ operation: MDB_cursor_op, key: [UInt8]? = nil) throws -> Entry? {
        precondition(isValid, "LMDB cursor used outside its withCursor { } closure")
        var keyValue = MDB_val()
        var dataValue = MDB_val()
        let rc: Int32
        if let key {
            rc = key.withUnsafeBytes { bytes -> Int32 in
                keyValue = MDB_val(mv_size: bytes.count, mv_data: UnsafeMutableRawPointer(mutating: bytes.baseAddress))
                return mdb_cursor_get(handle, &keyValue, &dataValue, operation)
            }
        } else {
            rc = mdb_cursor_get(handle, &keyValue, &dataValue, operation)
        }
        if rc == MDB_NOTFOUND { return nil }
        try check(rc, "cursor on \(database.name)")
        return Entry(
            key: UnsafeRawBufferPointer(start: keyValue.mv_data, count: keyValue.mv_size),
            value: UnsafeRawBufferPointer(start: dataValue.mv_data, count: dataValue.mv_size))
    }

    public func first() throws -> Entry? { try move(MDB_FIRST) }
    public func last() throws -> Entry? { try move(MDB_LAST) }
    public func next() throws -> Entry? { try move(MDB_NEXT) }
    public func previous() throws -> Entry? { try move(MDB_PREV) }
    /// The first entry whose key is ≥ `key`.
    public func seek(atLeast key: [UInt8]) throws -> Entry? { try move(MDB_SET_RANGE, key: key) }
}

@available(*, unavailable)
extension Cursor: Sendable {}
