import CLMDB
#if canImport(Glibc)
    import Glibc
#else
    import Darwin
#endif

extension Environment {
    /// Writes a compacted copy of the environment to the file `destination` (which must not
    /// exist): only the pages in use, renumbered (`mdb_env_copy2` with `MDB_CP_COMPACT`). Freed
    /// pages — which may still hold deleted values — are not copied.
    public func copyCompacted(toFile destination: String) throws {
        try transactionLock.withShared {
            try throwIfClosed()
            let fd = openFile(destination, O_WRONLY | O_CREAT | O_EXCL, 0o600)
            guard fd >= 0 else { throw LMDBError(code: errno, operation: "create \(destination)") }
            defer { _ = closeFile(fd) }
            try check(mdb_env_copyfd2(handle, fd, UInt32(MDB_CP_COMPACT)), "mdb_env_copyfd2 to \(destination)")
            guard fsync(fd) == 0 else { throw LMDBError(code: errno, operation: "fsync \(destination)") }
        }
    }
}

extension Transaction {
    /// Deletes every entry of `database` (`mdb_drop` with `del` = 0: the database stays).
    public func removeAll(_ database: Database) throws {
        precondition(!isReadOnly, "removeAll in a read-only transaction")
        try checkWrite(mdb_drop(handle, database.handle, 0), "empty \(database.name)")
    }
}

private func openFile(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 { open(path, flags, mode) }
private func closeFile(_ fd: Int32) -> Int32 { close(fd) }
