#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A pthread read-write lock.
///
/// Every transaction holds it shared; growing the map holds it exclusively, because
/// `mdb_env_set_mapsize` requires that no transaction of this process is open.
///
/// Writers are preferred: glibc's default lets a steady stream of overlapping readers starve an
/// exclusive waiter forever, which would hang every write that needs the map to grow while
/// readers are busy. The price is that shared holds must not nest (no transaction opened
/// inside another transaction's closure), or a waiting writer deadlocks them.
final class ReadWriteLock: Sendable {
    // Invariant: allocated and initialised in `init`, destroyed only in `deinit`; the pthread
    // functions synchronise all access, so sharing the pointer across threads is safe.
    nonisolated(unsafe) private let lock: UnsafeMutablePointer<pthread_rwlock_t>

    init() {
        lock = .allocate(capacity: 1)
        lock.initialize(to: pthread_rwlock_t())
        #if canImport(Glibc)
            var attributes = pthread_rwlockattr_t()
            pthread_rwlockattr_init(&attributes)
            defer { pthread_rwlockattr_destroy(&attributes) }
            pthread_rwlockattr_setkind_np(&attributes, Int32(PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP))
            let rc = pthread_rwlock_init(lock, &attributes)
        #else
            // Darwin's rwlock already keeps new readers out while a writer waits.
            let rc = pthread_rwlock_init(lock, nil)
        #endif
        precondition(rc == 0, "pthread_rwlock_init failed: \(rc)")
    }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deallocate()
    }

    func withShared<R>(_ body: () throws -> R) rethrows -> R {
        pthread_rwlock_rdlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body()
    }

    func withExclusive<R>(_ body: () throws -> R) rethrows -> R {
        pthread_rwlock_wrlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body()
    }
}
