import CLMDB
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One LMDB environment (a directory holding `data.mdb` and `lock.mdb`).
///
/// Opened once per path per process (LMDB forbids two handles on one file in a process, so
/// ``open(path:options:)`` hands back the environment already open there), always with
/// `MDB_NOTLS` so read transactions are not tied to threads. Transactions exist only inside
/// ``read(_:)`` and ``write(_:)`` closures; copy what you need out before returning.
///
/// ```swift
/// let environment = try Environment.open(path: "/tmp/store", options: .init())
/// let events = try environment.openDatabase("events", create: true)
/// try environment.write { try $0.put(events, key: [0, 1], value: [42]) }
/// let value = try environment.read { try $0.get(events, key: [0, 1]) }
/// ```
///
/// A write that fills the map aborts, grows the map geometrically (doubling, bounded by
/// ``Options/maximumMapSizeBytes``) while no transaction is open, and runs the closure again.
/// A write closure may therefore run more than once, and only the last run commits: it must have
/// no effect outside its transaction, or register the effect's undo with
/// ``Transaction/onRollback(_:)`` (or defer the effect with ``Transaction/afterCommit(_:)``).
public final class Environment: Sendable {
    /// How to open an environment.
    public struct Options: Sendable {
        /// Initial map size. Small stores stay small on disk: LMDB files grow with their data,
        /// the map is only address space.
        public var mapSizeBytes: Int = 64 << 20
        /// The map never grows past this. 1 TiB of address space is cheap on 64-bit machines
        /// and far beyond any device log.
        public var maximumMapSizeBytes: Int = 1 << 40
        /// Named sub-databases the environment may hold.
        public var maximumDatabases: UInt32 = 16
        /// Concurrent read transactions across all processes (LMDB's default).
        public var maximumReaders: UInt32 = 126
        /// Open read-only: no write transactions, no file creation.
        public var readOnly = false
        /// `MDB_NOSYNC`: commits do not fsync; call ``sync(force:)`` to make them durable.
        public var noSync = false
        /// Permissions of created files.
        public var fileMode: mode_t = 0o600
        /// Test-only failures at chosen points (see ``FaultPoint``); `nil` in every real use.
        package var faults: FaultInjector?

        public init() {}
    }

    // Invariant: created in `open`, closed exactly once in `close()` (guarded by `state`); LMDB
    // itself serialises access to the environment handle, so sharing it across threads is safe.
    nonisolated(unsafe) let handle: OpaquePointer
    /// The canonical path the environment was opened at.
    public let path: String
    public let options: Options
    /// Transactions hold it shared, map growth exclusively.
    let transactionLock = ReadWriteLock()
    /// Serialises write transactions within this process (LMDB allows one writer at a time).
    let writerLock = ReadWriteLock()
    /// The thread inside a write closure (its `pthread_self` as a number, 0: none): a second
    /// write transaction begun on it would wait for itself forever (LMDB's writer mutex, and
    /// `writerLock`, are not recursive). An atomic, not a mutex: it is set twice per commit.
    private let writerThread = Atomic<UInt>(0)
    private let state = Mutex<State>(State())

    private struct State {
        var isClosed = false
        var databases: [String: Database] = [:]
        var mapGrowthCount = 0
    }

    private struct WeakEnvironment {
        weak var environment: Environment?
    }
    private static let registry = Mutex<[String: WeakEnvironment]>([:])

    private init(handle: OpaquePointer, path: String, options: Options) {
        self.handle = handle
        self.path = path
        self.options = options
    }

    deinit { close() }

    /// Opens the environment in the existing directory `path`, or returns the one this process
    /// already has open there.
    public static func open(path: String, options: Options = Options()) throws -> Environment {
        let canonical = canonicalPath(path)
        return try registry.withLock { registry in
            if let existing = registry[canonical]?.environment, !existing.isClosed {
                if existing.options.readOnly && !options.readOnly {
                    throw LMDBError(code: LMDBError.alreadyOpen.code, operation: "open \(path)")
                }
                return existing
            }
            let environment = try openNew(path: canonical, options: options)
            registry[canonical] = WeakEnvironment(environment: environment)
            return environment
        }
    }

    private static func openNew(path: String, options: Options) throws -> Environment {
        precondition(
            options.mapSizeBytes > 0 && options.mapSizeBytes <= options.maximumMapSizeBytes,
            "map size must be positive and not above the maximum")
        var handle: OpaquePointer?
        try check(mdb_env_create(&handle), "mdb_env_create")
        guard let handle else { throw LMDBError(code: ENOMEM, operation: "mdb_env_create") }
        do {
            try check(mdb_env_set_maxdbs(handle, options.maximumDatabases), "mdb_env_set_maxdbs")
            try check(mdb_env_set_maxreaders(handle, options.maximumReaders), "mdb_env_set_maxreaders")
            try check(mdb_env_set_mapsize(handle, options.mapSizeBytes), "mdb_env_set_mapsize")
            var flags = UInt32(MDB_NOTLS)
            if options.readOnly { flags |= UInt32(MDB_RDONLY) }
            if options.noSync { flags |= UInt32(MDB_NOSYNC) }
            try check(mdb_env_open(handle, path, flags, options.fileMode), "open \(path)")
        } catch {
            // A failed mdb_env_open still owns memory and file descriptors.
            mdb_env_close(handle)
            throw error
        }
        return Environment(handle: handle, path: path, options: options)
    }

    private static func canonicalPath(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Whether ``close()`` has run.
    public var isClosed: Bool { state.withLock { $0.isClosed } }

    /// How many times this process grew the map.
    public var mapGrowthCount: Int { state.withLock { $0.mapGrowthCount } }

    /// Closes the environment. Idempotent; no transaction may be open.
    public func close() {
        let shouldClose = state.withLock { state -> Bool in
            if state.isClosed { return false }
            state.isClosed = true
            return true
        }
        guard shouldClose else { return }
        transactionLock.withExclusive {
            mdb_env_close(handle)
        }
        Environment.registry.withLock { registry in
            if registry[path]?.environment === self || registry[path]?.environment == nil {
                registry[path] = nil
            }
        }
    }

    /// Called with the transaction lock held: `close()` cannot finish while it is held, so a
    /// transaction that passed this check runs on an open environment.
    func throwIfClosed() throws {
        if isClosed { throw LMDBError(code: LMDBError.closed.code, operation: "transaction on \(path)") }
    }

    private func ensureOpen() {
        precondition(!isClosed, "LMDB environment at \(path) used after close()")
    }

    // MARK: Databases

    /// Opens (and with `create`, creates) the named sub-database. Returns `nil` when it does not
    /// exist and `create` is false.
    public func openDatabase(_ name: String, create: Bool) throws -> Database? {
        ensureOpen()
        if let known = state.withLock({ $0.databases[name] }) { return known }
        let flags = UInt32(create ? MDB_CREATE : 0)
        let database: Database?
        if options.readOnly || !create {
            if !options.readOnly { refuseNestedWrite("open database \(name)") }
            // A handle opened in a read transaction must be committed to outlive it.
            database = try transactionLock.withShared {
                var txn: OpaquePointer?
                try check(
                    mdb_txn_begin(handle, nil, UInt32(options.readOnly ? MDB_RDONLY : 0), &txn),
                    "mdb_txn_begin")
                var dbi: MDB_dbi = 0
                let rc = mdb_dbi_open(txn, name, flags, &dbi)
                if rc == MDB_NOTFOUND {
                    mdb_txn_abort(txn)
                    return nil
                }
                if rc != MDB_SUCCESS {
                    mdb_txn_abort(txn)
                    throw LMDBError(code: rc, operation: "open database \(name)")
                }
                try check(mdb_txn_commit(txn), "open database \(name)")
                return Database(handle: dbi, name: name)
            }
        } else {
            database = try write { transaction in
                var dbi: MDB_dbi = 0
                try transaction.checkWrite(mdb_dbi_open(transaction.handle, name, flags, &dbi), "open database \(name)")
                return Database(handle: dbi, name: name)
            }
        }
        if let database {
            state.withLock { $0.databases[name] = database }
        }
        return database
    }

    /// Creates the named sub-databases and runs `body` in the same write transaction, so the
    /// databases and whatever `body` writes into them appear together or not at all.
    public func createDatabases(
        _ names: [String],
        _ body: (Transaction, [Database]) throws -> Void
    ) throws -> [Database] {
        let databases = try write { transaction in
            let databases = try names.map { name in
                var dbi: MDB_dbi = 0
                try transaction.checkWrite(mdb_dbi_open(transaction.handle, name, UInt32(MDB_CREATE), &dbi), "create database \(name)")
                return Database(handle: dbi, name: name)
            }
            try body(transaction, databases)
            return databases
        }
        state.withLock { state in
            for database in databases { state.databases[database.name] = database }
        }
        return databases
    }

    /// Number of entries in the unnamed main database (named sub-databases live there, so an
    /// environment whose main database is empty holds no data at all).
    public func mainDatabaseEntryCount() throws -> Int {
        try read { transaction in
            var dbi: MDB_dbi = 0
            try check(mdb_dbi_open(transaction.handle, nil, 0, &dbi), "open main database")
            var stat = MDB_stat()
            try check(mdb_stat(transaction.handle, dbi, &stat), "stat main database")
            return stat.ms_entries
        }
    }

    // MARK: Transactions

    /// Runs `body` in a read-only transaction (a consistent snapshot).
    public func read<R>(_ body: (Transaction) throws -> R) throws -> R {
        while true {
            let outcome: R? = try transactionLock.withShared {
                try throwIfClosed()
                var txn: OpaquePointer?
                let rc = mdb_txn_begin(handle, nil, UInt32(MDB_RDONLY), &txn)
                if rc == MDB_MAP_RESIZED { return nil }
                try check(rc, "mdb_txn_begin (read)")
                let transaction = Transaction(handle: txn!, isReadOnly: true)
                defer {
                    transaction.invalidate()
                    mdb_txn_abort(txn)
                }
                return try body(transaction)
            }
            if let outcome { return outcome }
            try adoptResizedMap()
        }
    }

    /// Runs `body` in a write transaction and commits it; any thrown error aborts it.
    ///
    /// When the map fills (a put, or the commit itself, returns `MDB_MAP_FULL`), the transaction
    /// is aborted, the map doubles and `body` runs again in a new transaction. So `body` may run
    /// several times, and every run but the last is rolled back: an effect outside the
    /// transaction (a change to memory others read, a message sent) must be undone by an action
    /// registered with ``Transaction/onRollback(_:)``, or made by one registered with
    /// ``Transaction/afterCommit(_:)``. The rollback actions of an attempt run before the next
    /// attempt starts and before an error is thrown; the commit actions run once, after the
    /// commit. Both run with this environment's writer lock held (no other write of this process
    /// in between) and outside the transaction: they may read, but must not write to this
    /// environment.
    public func write<R>(_ body: (Transaction) throws -> R) throws -> R {
        precondition(!options.readOnly, "write transaction on read-only environment \(path)")
        refuseNestedWrite("write transaction")
        return try writerLock.withExclusive {
            writerThread.store(Environment.currentThread, ordering: .relaxed)
            defer { writerThread.store(0, ordering: .relaxed) }
            while true {
                let attempt: WriteAttempt<R> = try transactionLock.withShared {
                    try throwIfClosed()
                    var txn: OpaquePointer?
                    let rc = mdb_txn_begin(handle, nil, 0, &txn)
                    if rc == MDB_MAP_RESIZED { return .adoptMap }
                    try check(rc, "mdb_txn_begin (write)")
                    let transaction = Transaction(handle: txn!, isReadOnly: false, faults: options.faults)
                    let result: R
                    do {
                        result = try body(transaction)
                    } catch {
                        transaction.invalidate()
                        mdb_txn_abort(txn)
                        return transaction.sawMapFull ? .growMap(transaction) : .failed(error, transaction)
                    }
                    transaction.invalidate()
                    // A MAP_FULL the body caught and went on from leaves LMDB's transaction
                    // unusable (its commit would fail): grow and run again all the same.
                    if transaction.sawMapFull {
                        mdb_txn_abort(txn)
                        return .growMap(transaction)
                    }
                    // mdb_txn_commit frees the transaction even when it fails: never abort after.
                    let commit: Int32
                    if let faults = options.faults, let injected = faults(.commit) {
                        mdb_txn_abort(txn)
                        commit = injected
                    } else {
                        commit = mdb_txn_commit(txn)
                    }
                    if commit == MDB_MAP_FULL { return .growMap(transaction) }
                    if commit != MDB_SUCCESS {
                        return .failed(LMDBError(code: commit, operation: "mdb_txn_commit"), transaction)
                    }
                    return .done(result, transaction)
                }
                switch attempt {
                case .done(let result, let transaction):
                    transaction.runCommitActions()
                    return result
                case .growMap(let transaction):
                    transaction.runRollbackActions()
                    try growMap()
                case .failed(let error, let transaction):
                    transaction.runRollbackActions()
                    throw error
                case .adoptMap:
                    try adoptResizedMap()
                }
            }
        }
    }

    /// A write transaction (or a database opened writable) inside a write closure, or in one of
    /// its actions, on the same thread deadlocks: it is a programmer error, said here instead.
    private func refuseNestedWrite(_ operation: @autoclosure () -> String) {
        // Only the writing thread itself can read its own id here: relaxed ordering suffices.
        precondition(
            writerThread.load(ordering: .relaxed) != Environment.currentThread,
            "\(operation()) on \(path) inside a write closure on the same thread would wait for itself; open databases before the write")
    }

    /// This thread's `pthread_self`, as a number (never 0 for a running thread).
    private static var currentThread: UInt {
        #if canImport(Glibc)
            UInt(pthread_self())
        #else
            UInt(bitPattern: pthread_self())
        #endif
    }

    /// How one run of a write closure ended. The transaction travels out of the lock so its
    /// actions run outside it.
    private enum WriteAttempt<R> {
        case done(R, Transaction)
        case growMap(Transaction)
        case failed(Error, Transaction)
        case adoptMap
    }

    /// Doubles the map, bounded by the maximum. Runs with no transaction of this process open.
    private func growMap() throws {
        try transactionLock.withExclusive {
            let current = info().mapSizeBytes
            guard current < options.maximumMapSizeBytes else {
                throw LMDBError(
                    code: LMDBError.mapAtMaximum.code,
                    operation: "grow map of \(path) past \(options.maximumMapSizeBytes) bytes")
            }
            let grown = min(current.multipliedReportingOverflow(by: 2).partialValue, options.maximumMapSizeBytes)
            try check(mdb_env_set_mapsize(handle, grown), "mdb_env_set_mapsize")
            state.withLock { $0.mapGrowthCount += 1 }
        }
    }

    /// Another process grew the map: adopt its size.
    private func adoptResizedMap() throws {
        try transactionLock.withExclusive {
            try check(mdb_env_set_mapsize(handle, 0), "mdb_env_set_mapsize (adopt)")
        }
    }

    // MARK: Durability and facts

    /// Flushes data to disk; with `force` even when the environment is `noSync`.
    /// Does nothing once the environment is closed (a background flush may race with close).
    public func sync(force: Bool = true) throws {
        try transactionLock.withShared {
            guard !isClosed else { return }
            if let faults = options.faults, let injected = faults(.sync) { try check(injected, "mdb_env_sync") }
            try check(mdb_env_sync(handle, force ? 1 : 0), "mdb_env_sync")
        }
    }

    /// Facts about the environment's map.
    public struct Info: Sendable {
        public var mapSizeBytes: Int
        public var pageSizeBytes: Int
        /// Bytes of the map in use (last used page + 1, times the page size).
        public var usedBytes: Int
    }

    public func info() -> Info {
        var envInfo = MDB_envinfo()
        mdb_env_info(handle, &envInfo)
        var stat = MDB_stat()
        mdb_env_stat(handle, &stat)
        return Info(
            mapSizeBytes: envInfo.me_mapsize,
            pageSizeBytes: Int(stat.ms_psize),
            usedBytes: (envInfo.me_last_pgno + 1) * Int(stat.ms_psize))
    }
}
