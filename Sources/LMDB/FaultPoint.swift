/// A place where a test can make LMDB fail on purpose (``Environment/Options/faults``).
///
/// Some failures cannot be provoked on demand on a test machine: an fsync that fails (tmpfs never
/// fails one), a commit that hits `MDB_MAP_FULL` only after the closure ran (when LMDB saves its
/// free list). The injector is asked at each point and returns the LMDB or errno code to fail
/// with, or `nil` to let the real call run. Package-only: nothing outside this package can turn
/// it on.
///
/// ```swift
/// var options = Environment.Options()
/// options.faults = { point in point == .commit ? LMDBError.mapFull.code : nil }
/// ```
package enum FaultPoint: Sendable, Hashable {
    /// `mdb_put` into the named database. An injected code replaces the put (nothing is written).
    case put(database: String)
    /// `mdb_txn_commit` of a write transaction. An injected code aborts the transaction instead
    /// of committing it, and is returned as the commit's result.
    case commit
    /// `mdb_env_sync`. An injected code is returned instead of flushing.
    case sync
}

/// Returns the code to fail a ``FaultPoint`` with, or `nil` to run the real call.
package typealias FaultInjector = @Sendable (FaultPoint) -> Int32?
