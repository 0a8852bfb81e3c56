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
    /// A write returned `MDB_MAP_FULL`; the environment grows the map and retries.
    private(set) var sawMapFull = false
    private let faults: FaultInjector?
    private var rollbackActions: [() -> Void] = []
    private var commitActions: [() -> Void] = []

    init(handle: OpaquePointer, isReadOnly: Bool, faults: FaultInjector? = nil) {
        self.handle = handle
        self.isReadOnly = isReadOnly
        self.faults = faults
    }

    func invalidate() { isValid = false }

    private func ensureValid() {
        precondition(isValid, "LMDB transaction used outside its read { } / write { } closure")
    }

    /// Checks the result of an LMDB call that writes: every one of them (put, delete, drop,
    /// creating a database) can fill the map, and each must say so for the retry to happen.
    func checkWrite(_ code: Int32, _ operation: @autoclosure () -> String) throws {
        if code == MDB_MAP_FULL { sawMapFull = true }
        try check(code, operation())
    }

    // MARK: Effects outside the transaction

    /// Registers `undo` to run if this transaction does not commit: the closure threw, the map
    /// filled and the closure is about to run again, or the commit failed. A write closure that
    /// changes something outside the transaction (memory that others read while the commit is
    /// pending) registers the undo right after the change, so every attempt that does not commit
    /// leaves no trace and the next attempt starts from the state the first one saw.
    ///
    /// Actions run in reverse order of registration, after the transaction has ended, with the
    /// environment's writer lock still held; they must not write to the environment.
    ///
    /// ```swift
    /// try environment.write { transaction in
    ///     try transaction.put(users, key: key, value: value)
    ///     directory.add(user)                                  // readers see it before the commit
    ///     transaction.onRollback { directory.remove(user) }    // … and never if it does not commit
    /// }
    /// ```
    public func onRollback(_ undo: @escaping () -> Void) {
        ensureValid()
        precondition(!isReadOnly, "onRollback in a read-only transaction: it never commits")
        rollbackActions.append(undo)
    }

    /// Registers `action` to run once this transaction has committed, never for an attempt that
    /// does not commit (a retried or failed one). Actions run in order of registration, with the
    /// environment's writer lock still held; they must not write to the environment.
    public func afterCommit(_ action: @escaping () -> Void) {
        ensureValid()
        precondition(!isReadOnly, "afterCommit in a read-only transaction: it never commits")
        commitActions.append(action)
    }

    func runRollbackActions() {
        guard !rollbackActions.isEmpty || !commitActions.isEmpty else { return }
        let actions = rollbackActions
        rollbackActions = []
        commitActions = []
        for action in actions.reversed() { action() }
    }

    func runCommitActions() {
        guard !rollbackActions.isEmpty || !commitActions.isEmpty else { return }
        let actions = commitActions
        rollbackActions = []
        commitActions = []
        for action in actions { action() }
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
    public func withValue<R>(
        _ database: Database, key: [UInt8],
        _ body: (UnsafeRawBufferPointer) throws -> R
    ) throws -> R? {
        try key.withUnsafeBytes { keyBytes in try withValue(database, key: keyBytes, body) }
    }

    /// ``withValue(_:key:_:)`` with a key that is already in memory (e.g. part of an index key
    /// a cursor points at), so a lookup per index entry needs no key array.
    public func withValue<R>(
        _ database: Database, key: UnsafeRawBufferPointer,
        _ body: (UnsafeRawBufferPointer) throws -> R
    ) throws -> R? {
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
        if let faults, let injected = faults(.put(database: database.name)) {
            try checkWrite(injected, "put into \(database.name)")
        }
        let rc = key.withUnsafeBytes { keyBytes in
            value.withUnsafeBytes { valueBytes in
                var keyValue = MDB_val(mv_size: keyBytes.count, mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
                var dataValue = MDB_val(mv_size: valueBytes.count, mv_data: UnsafeMutableRawPointer(mutating: valueBytes.baseAddress))
                return mdb_put(handle, database.handle, &keyValue, &dataValue, flags.rawValue)
            }
        }
        try checkWrite(rc, "put into \(database.name)")
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
        try checkWrite(rc, "delete from \(database.name)")
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
