#if DEBUG
    import LMDB
    import Synchronization

    /// Storage faults a debug build of `onboard` injects when `ONBOARD_TEST_FAULTS` asks, so the
    /// crash tests can drive the real binary into a failure the machine cannot produce on demand.
    /// Compiled into debug builds only: a release `onboard` has no such variable.
    ///
    /// `ONBOARD_TEST_FAULTS=map-full-after-put`: the first commit of the process that follows a put
    /// returns `MDB_MAP_FULL` once — what a store reopened with a map exactly its file's size meets
    /// when LMDB saves its free list at the commit of the first chunk it writes (the store grows
    /// the map and runs the chunk again).
    enum TestFaults {
        static let variable = "ONBOARD_TEST_FAULTS"

        static func injector(_ environment: [String: String]) -> FaultInjector? {
            guard environment[variable] == "map-full-after-put" else { return nil }
            let state = Mutex((sawPut: false, injected: false))
            return { point in
                state.withLock { state in
                    switch point {
                    case .put:
                        state.sawPut = true
                        return nil
                    case .commit where state.sawPut && !state.injected:
                        state.injected = true
                        return LMDBError.mapFull.code
                    default:
                        return nil
                    }
                }
            }
        }
    }
#endif
