import Foundation
import LMDB
import OnboardingModel
import OnboardingProjections
import Synchronization

/// The device's event log: an append-only, hash-chained, indexed LMDB store.
///
/// ```swift
/// let store = try OnboardingStore.open(at: "/path/onboarding.lmdb")
/// let outcome = try await store.record(.signInStarted(method: .passcode), user: "alice", flow: flow)
/// let history = try store.history(user: "alice")
/// store.close()
/// ```
///
/// One store per path per process: open it once and share the instance (it is `Sendable`).
public final class OnboardingStore: Sendable {
    /// How to open a store.
    public struct Options: Sendable {
        /// Create the store when the path does not exist.
        public var createIfMissing = true
        /// Open without write access (reading commands).
        public var readOnly = false
        public var durability = Durability.full
        /// Device id written in a new store's `meta` (a random one when `nil`).
        public var deviceID: String?
        /// Initial LMDB map size; it grows by doubling when full.
        public var initialMapSizeBytes = 64 << 20
        /// Keep the projections (lockout, session, users) current. A sync server's per-device
        /// replicas turn it off: the server folds all devices together instead.
        package var maintainProjections = true
        /// The lockout policy the store's projections use.
        public var lockoutPolicy = LockoutPolicy.mediawiki
        /// After this many wrong CAPTCHA answers in a row the CAPTCHA also says how else to get an
        /// account (``SessionProjection/defaultCaptchaAlternativesAfterFailures``, 3, says why).
        /// A snapshot folded under another setting is rebuilt on open, as for the lockout policy.
        public var captchaAlternativesAfterFailures = SessionProjection.defaultCaptchaAlternativesAfterFailures
        /// Write a projection snapshot after this many events (and on close): reopening then
        /// replays at most this many events. 10,000 events replay in a few milliseconds.
        public var snapshotEveryEvents = 10_000
        /// In `relaxed` durability, the longest time a commit waits for its fsync. 100 ms bounds
        /// the loss on power failure to a blink while batching many commits per fsync.
        public var relaxedSyncIntervalMilliseconds = 100
        /// Keep a signing key (`signing.key` in the store directory, made on the first writable
        /// open) and sign the head on close and for every sync batch. A sync server's replicas
        /// turn it off: they keep the heads their device signed instead.
        package var signsHeads = true
        /// Called during a migration to the current format with (records done, records in all),
        /// about a hundred times over the log (`onboard` prints it for large stores).
        public var migrationProgress: (@Sendable (UInt64, UInt64) -> Void)?
        /// 5 minutes, as the sync server allows (docs/sync-protocol.md § Event times): an append
        /// holding an event dated more than this after ``clock`` is refused
        /// (``StoreError/Code/invalidEvent``), so no log holds a failure that would lock its key
        /// from a time that has not come. `nil`: no such check (a sync server's replica: the
        /// server checks uploads against its own clock).
        public var maximumClockSkewMilliseconds: Int64? = 5 * 60 * 1000
        /// Where the store reads the time and waits for it: the default time of what it records
        /// and decides, the clock appends are checked against, and what wakes
        /// ``OnboardingStore/deviceStateUpdates(device:)`` when a lock ends or a resend becomes
        /// available. ``SystemStoreClock`` by default; a test passes a ``ManualStoreClock``
        /// to move the time itself.
        public var timeSource: any StoreClock = SystemStoreClock()
        /// ``timeSource``'s time as a function. Setting it replaces the time source with one
        /// that reads this function and sleeps on the wall clock in steps of a minute at most.
        public var clock: @Sendable () -> Timestamp {
            get { { [timeSource] in timeSource.now() } }
            set { timeSource = FunctionStoreClock(read: newValue) }
        }
        /// Test-only LMDB failures (a commit that fills the map, an fsync that fails); `nil` in
        /// every real use. Package-only, like ``FaultPoint``.
        package var storageFaults: FaultInjector?
        public init() {}
    }

    /// The system clock, as a ``Timestamp``.
    public static let systemClock: @Sendable () -> Timestamp = { Timestamp.now }

    /// The store's directory.
    public let path: String
    /// The device this store belongs to (from `meta`).
    public let deviceID: String
    public let options: Options
    let environment: Environment
    let databases: Databases
    let committer: GroupCommitter
    // The locks, queues and atomics below: what each guards, the order they are taken in, and
    // who owns each piece of background work are in docs/concurrency.md.
    /// The projections, once loaded (eagerly for a writable store, on first use otherwise).
    let projections = Mutex<ProjectionCache>(ProjectionCache())
    let observers = Mutex<[UUID: @Sendable ([Record]) -> Void]>([:])
    /// Called once when the store closes: the update sequences end (``deviceStateUpdates(device:)``).
    let closeObservers = Mutex<[UUID: @Sendable () -> Void]>([:])
    /// Encodes and writes due snapshots off the writer queue, one at a time, so appenders never
    /// wait for a snapshot (see `advanceProjections`).
    let snapshotQueue = DispatchQueue(label: "OnboardingStore.snapshots", qos: .utility)
    /// Applies committed records to the projections beside the writer (see `advanceProjections`).
    let projectorQueue = DispatchQueue(label: "OnboardingStore.projector")
    /// Committed records the projector has not applied yet.
    let pendingProjection = Mutex<PendingProjection>(PendingProjection())
    /// A snapshot is queued or being written; a due snapshot is not queued twice.
    let snapshotPending = Mutex<Bool>(false)
    /// Records decoded from the log since open, by every read path (see ``recordsDecoded``).
    let decodedRecordCount = Atomic<UInt64>(0)
    /// The device's signing key, loaded on a writable open (see `prepareSigningKey`).
    let signingKey = Mutex<SigningKeyPair?>(nil)
    /// Pseudonym ↔ readable id and key of every live user (OnboardingStore+Users.swift): read
    /// paths take it once per read, appends once per group.
    let userDirectory: Mutex<UserDirectory>
    /// User keys a device sent for users this replica has not stored yet (see `adoptKeys`).
    let pendingKeys = Mutex<[UserRef: SecretKey]>([:])
    /// Whether `pendingKeys` was ever filled (only on a sync server's replica).
    let hasPendingKeys = Atomic<Bool>(false)
    /// Keys and nonces for new users, drawn from the CSPRNG 4 KiB at a time across groups
    /// (used on the writer queue).
    let randomPool = Mutex(RandomPool())
    private let background = Mutex<BackgroundState>(BackgroundState())
    /// Set once a flush failed (see ``sync()``): every append checks it, without the lock.
    private let hasFlushFailure = Atomic<Bool>(false)

    struct Databases: Sendable {
        let events: Database
        let byID: Database
        let byUser: Database
        let bySession: Database
        let meta: Database
        /// `nil` only for a read-only store made before snapshots existed.
        let snapshots: Database?
        /// `nil` only for a read-only store of format 1 (which is refused before it is used).
        let userKeys: Database?
    }

    private struct BackgroundState {
        var isClosed = false
        /// The first flush that failed in `relaxed` durability (see ``sync()``).
        var flushFailure: StoreError?
        /// When a flush last succeeded (`nil`: none since the store was opened).
        var lastFlush: Timestamp?
    }

    private init(
        path: String, deviceID: String, options: Options, environment: Environment, databases: Databases,
        users: UserDirectory
    ) {
        self.userDirectory = Mutex(users)
        self.path = path
        self.deviceID = deviceID
        self.options = options
        self.environment = environment
        self.databases = databases
        self.committer = GroupCommitter()
    }

    deinit { close() }

    /// Opens the store at `path` (a directory), creating it when allowed.
    public static func open(at path: String, options: Options = Options()) throws(StoreError) -> OnboardingStore {
        if try prepareDirectory(path, options: options) {
            try create(at: path, options: options)
        }
        var environmentOptions = Environment.Options()
        environmentOptions.readOnly = options.readOnly
        environmentOptions.noSync = options.durability == .relaxed
        environmentOptions.mapSizeBytes = options.initialMapSizeBytes
        environmentOptions.faults = options.storageFaults
        let environment: Environment
        do {
            environment = try Environment.open(path: path, options: environmentOptions)
        } catch {
            throw translateOpenError(error, path: path)
        }
        do {
            let (databases, deviceID) = try openLayout(environment, path: path, options: options)
            let version = try formatVersion(environment, databases: databases)
            var users = try loadUserDirectory(
                environment, databases: databases, path: path, readOnly: options.readOnly,
                formatVersion: version)
            let migrated = version < StoreLayout.formatVersion
            if migrated {
                users = try migrate(environment, databases: databases, users: users, path: path, options: options)
            }
            let store = OnboardingStore(
                path: path, deviceID: deviceID, options: options,
                environment: environment, databases: databases, users: users)
            store.committer.attach(store)
            do {
                if !options.readOnly && options.signsHeads {
                    try store.prepareSigningKey()
                    // The migration rewrote the chain: heads signed before it are superseded.
                    if migrated { _ = try store.signHeadWhileOpen() }
                }
                if !options.readOnly && options.maintainProjections { try store.loadProjections() }
            } catch {
                // The store never opened: its deinit must not flush, snapshot or sign through
                // the environment closed below.
                store.background.withLock { $0.isClosed = true }
                throw error
            }
            if options.durability == .relaxed && !options.readOnly { store.startRelaxedSync() }
            return store
        } catch let error as StoreError {
            environment.close()
            throw error
        } catch {
            environment.close()
            throw StoreError(.storage, "cannot open store at \(path): \(error)", underlying: error)
        }
    }

    /// Returns whether a new store must be created at `path` (it does not exist, or is an empty
    /// directory).
    private static func prepareDirectory(_ path: String, options: Options) throws(StoreError) -> Bool {
        var isDirectory: ObjCBool = false
        let manager = FileManager.default
        if manager.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                throw StoreError(.notAStore, "\(path) is a file, not an OnboardingStore directory; pass --store with a directory path")
            }
            let dataFile = (path as NSString).appendingPathComponent("data.mdb")
            if manager.fileExists(atPath: dataFile) { return false }
            let contents = (try? manager.contentsOfDirectory(atPath: path)) ?? []
            guard contents.isEmpty else {
                throw StoreError(
                    .notAStore, "\(path) is a directory without an OnboardingStore in it (no data.mdb); pass --store with a store path or an empty directory")
            }
            guard options.createIfMissing && !options.readOnly else {
                throw StoreError(.storeMissing, "no store at \(path) (the directory is empty); record or import events first")
            }
            return true
        }
        guard options.createIfMissing && !options.readOnly else {
            throw StoreError(.storeMissing, "no store at \(path); record or import events to create one, or pass --store with an existing store")
        }
        return true
    }

    /// Builds a complete, empty store in a staging directory beside `path` and renames it into
    /// place, so `path` is never a half-made store: a crash during creation leaves at most a
    /// stray `.creating-…` directory, and `path` either does not exist or opens.
    private static func create(at path: String, options: Options) throws(StoreError) {
        let staging = path + ".creating-" + UUID().uuidString.prefix(8).lowercased()
        if mkdir(staging, 0o700) != 0 {
            let reason = String(cString: strerror(errno))
            throw StoreError(.notWritable, "cannot create store at \(path): \(reason); choose a writable location with --store")
        }
        var environmentOptions = Environment.Options()
        environmentOptions.mapSizeBytes = options.initialMapSizeBytes
        do {
            let environment = try Environment.open(path: staging, options: environmentOptions)
            defer { environment.close() }
            _ = try openLayout(environment, path: path, options: options)
            try environment.sync(force: true)
        } catch {
            try? FileManager.default.removeItem(atPath: staging)
            if let error = error as? StoreError { throw error }
            let created = StoreError(.notWritable, "cannot create store at \(path): \(error)", underlying: error)
            // Out of descriptors or space is not a permission problem: say which.
            if created.isResourceShortage { throw StoreError(.storage, created.message, underlying: error) }
            throw created
        }
        // rename(2) replaces an empty directory atomically; a non-empty one means another process
        // created the store first, which is fine: use theirs.
        if rename(staging, path) != 0 {
            let code = errno
            try? FileManager.default.removeItem(atPath: staging)
            let exists = FileManager.default.fileExists(atPath: (path as NSString).appendingPathComponent("data.mdb"))
            guard exists && (code == ENOTEMPTY || code == EEXIST) else {
                throw StoreError(.notWritable, "cannot create store at \(path): \(String(cString: strerror(code))); choose a writable location with --store")
            }
        }
    }

    private static func translateOpenError(_ error: Error, path: String) -> StoreError {
        guard let lmdb = error as? LMDBError else {
            return StoreError(.storage, "cannot open store at \(path): \(error)", underlying: error)
        }
        switch lmdb.code {
        case LMDBError.invalid.code, LMDBError.versionMismatch.code, LMDBError.corrupted.code:
            return StoreError(.notAStore, "\(path) is not an OnboardingStore (LMDB: \(lmdb.reason)); pass --store with a store path")
        case EACCES, EROFS, EPERM:
            return StoreError(.notWritable, "cannot open store at \(path) for writing: \(lmdb.reason); check its permissions or use a writable copy")
        case ENOENT:
            return StoreError(.storeMissing, "no store at \(path)")
        default:
            return StoreError(.storage, "cannot open store at \(path): \(lmdb.reason)", systemCode: lmdb.code)
        }
    }

    private static func openLayout(_ environment: Environment, path: String, options: Options) throws -> (Databases, String) {
        let existingMeta = try environment.openDatabase(StoreLayout.meta, create: false)
        var newDeviceID: String?
        if existingMeta == nil {
            let isEmpty = try environment.mainDatabaseEntryCount() == 0
            guard isEmpty else {
                throw StoreError(.notAStore, "\(path) is an LMDB environment but not an OnboardingStore (no meta database)")
            }
            guard !options.readOnly else {
                // Left by a creation that was interrupted before stores were built aside and renamed.
                throw StoreError(.storeMissing, "\(path) holds an empty, never initialised store; record or import events to initialise it")
            }
            // Checked before any database is created: a refused id must not leave an empty meta
            // database behind, which would make every later open see "not an OnboardingStore".
            let deviceID = options.deviceID ?? "device-" + UUID().uuidString.lowercased().prefix(13).replacingOccurrences(of: "-", with: "")
            do { try Event.validate(deviceID: deviceID) } catch {
                throw StoreError(.invalidEvent, "device id \"\(deviceID)\" \(error.message)")
            }
            newDeviceID = deviceID
        }
        let databases: Databases
        if let deviceID = newDeviceID {
            // The sub-databases and meta are created in one transaction, so a crash during
            // creation leaves either nothing (the next open creates the store) or a whole store.
            let now = Timestamp.now.millisecondsSince1970
            let created = try environment.createDatabases(StoreLayout.allDatabases) { transaction, created in
                let meta = created[StoreLayout.allDatabases.firstIndex(of: StoreLayout.meta)!]
                try transaction.put(
                    meta, key: StoreLayout.MetaKey.formatVersion,
                    value: StoreLayout.uint32Value(StoreLayout.formatVersion))
                try transaction.put(meta, key: StoreLayout.MetaKey.deviceID, value: Array(deviceID.utf8))
                try transaction.put(meta, key: StoreLayout.MetaKey.head, value: StoreLayout.headValue(seq: 0, hash: .zero))
                try transaction.put(meta, key: StoreLayout.MetaKey.createdAt, value: withUnsafeBytes(of: now.bigEndian) { Array($0) })
                try transaction.put(meta, key: StoreLayout.MetaKey.pseudonymKey, value: SecretKey.random().bytes)
            }
            databases = Databases(
                events: created[0], byID: created[1], byUser: created[2], bySession: created[3], meta: created[4],
                snapshots: created[5], userKeys: created[StoreLayout.allDatabases.firstIndex(of: StoreLayout.userKeys)!])
        } else {
            func database(_ name: String) throws -> Database {
                guard let database = try environment.openDatabase(name, create: false) else {
                    throw StoreError(.corrupted, "store at \(path) lacks its \(name) database; run onboard verify")
                }
                return database
            }
            // Stores made before snapshots existed gain the database on their first writable open.
            let snapshots = try environment.openDatabase(StoreLayout.snapshots, create: !options.readOnly)
            // Stores of format 1 gain it on their first writable open, which migrates them.
            let userKeys = try environment.openDatabase(StoreLayout.userKeys, create: !options.readOnly)
            databases = Databases(
                events: try database(StoreLayout.events), byID: try database(StoreLayout.byID),
                byUser: try database(StoreLayout.byUser), bySession: try database(StoreLayout.bySession),
                meta: try database(StoreLayout.meta), snapshots: snapshots, userKeys: userKeys)
        }
        let (version, deviceID) = try environment.read { transaction in
            (
                try transaction.get(databases.meta, key: StoreLayout.MetaKey.formatVersion),
                try transaction.get(databases.meta, key: StoreLayout.MetaKey.deviceID)
            )
        }
        guard let version, version.count == 4, let deviceBytes = deviceID,
            let device = String(validating: deviceBytes, as: UTF8.self)
        else {
            throw StoreError(.notAStore, "\(path) is an LMDB environment but its meta database is not an OnboardingStore's")
        }
        let number = version.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard number <= StoreLayout.formatVersion else {
            throw StoreError(
                .newerFormat, "store at \(path) has format version \(number), newer than this onboard reads (\(StoreLayout.formatVersion)); upgrade onboard")
        }
        guard number == StoreLayout.formatVersion || !options.readOnly else {
            throw StoreError(
                .needsMigration,
                "store at \(path) has format version \(number); open it writable once (any writing command) to migrate it to version \(StoreLayout.formatVersion)"
            )
        }
        return (databases, device)
    }

    // MARK: Lifecycle

    /// Flushes relaxed commits every interval until the store closes. A flush that fails is kept
    /// as the store's flush failure (see ``sync()``), and the commits are flushed again on the next
    /// tick: the failure must neither be lost nor stop the retries.
    private func startRelaxedSync() {
        let interval = DispatchTimeInterval.milliseconds(options.relaxedSyncIntervalMilliseconds)
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + interval) { [weak self] in
            guard let self, !self.isClosed else { return }
            if self.committer.takeUnsyncedCommits() {
                do throws(StoreError) { try self.flush() } catch { self.committer.markUnsynced() }
            }
            self.startRelaxedSync()
        }
    }

    /// Flushes pending commits to disk (with `relaxed` durability, what the background flush does
    /// every interval).
    ///
    /// With `relaxed` durability a failed flush is sticky: once one failed (here or in the
    /// background), this and every append of the open store throw ``StoreError/Code/notDurable``,
    /// even after a later flush succeeds, because a successful fsync after a failed one does not
    /// prove the earlier pages reached the disk (Linux may drop dirty pages whose write-back
    /// failed and report it only once). The background flush keeps retrying; closing the store
    /// and opening it again clears the failure.
    public func sync() throws(StoreError) {
        try flush()
        try throwIfFlushFailed()
    }

    /// One flush. In `relaxed` durability a failure becomes the store's sticky flush failure.
    func flush() throws(StoreError) {
        do {
            try environment.sync(force: true)
        } catch {
            guard options.durability == .relaxed else {
                // Every full-durability commit was on disk when it returned: nothing acknowledged is at risk.
                throw StoreError(.storage, "sync of \(path) failed: \(error)", underlying: error)
            }
            let since =
                background.withLock { $0.lastFlush }.map { "since the last successful flush at \($0.iso8601)" }
                ?? "since the store was opened"
            let failure = StoreError(
                .notDurable,
                "flushing \(path) to disk failed (\(error)): the commits acknowledged \(since) may not be on disk and a power loss may lose them; appends are refused until the store is opened again — check the disk (free space, I/O errors), then close the store, open it again and run onboard verify"
            )
            return try background.withLock { state throws(StoreError) in
                if state.flushFailure == nil { state.flushFailure = failure }
                hasFlushFailure.store(true, ordering: .releasing)
                throw state.flushFailure!
            }
        }
        let now = Timestamp.now
        background.withLock { $0.lastFlush = now }
    }

    /// Throws the sticky flush failure, if a flush failed since the store was opened.
    func throwIfFlushFailed() throws(StoreError) {
        guard hasFlushFailure.load(ordering: .acquiring) else { return }
        if let failure = background.withLock({ $0.flushFailure }) { throw failure }
    }

    /// Whether ``close()`` has run.
    public var isClosed: Bool { background.withLock { $0.isClosed } }

    /// Finishes pending appends, flushes, and closes the LMDB environment. Idempotent.
    public func close() {
        let wasOpen = background.withLock { state in
            defer { state.isClosed = true }
            return !state.isClosed
        }
        guard wasOpen else { return }
        committer.drainAndStop()
        for finish in closeObservers.withLock({ observers in
            defer { observers = [:] }; return Array(observers.values)
        }) { finish() }
        projectorQueue.sync {}
        projections.withLock { applyPending(&$0) }
        snapshotQueue.sync {} // a snapshot being written finishes before the final one
        if !options.readOnly {
            try? writeSnapshotIfBehind(minimumEvents: 1)
            // The last head this process wrote is signed, so verify can tell a later truncation.
            if signingKey.withLock({ $0 }) != nil { _ = try? signHeadWhileOpen() }
            try? environment.sync(force: true)
        }
        environment.close()
    }

    func ensureOpen() throws(StoreError) {
        if isClosed { throw StoreError(.closed, "store at \(path) is closed") }
    }

    /// How many LMDB write transactions appends have committed (group commit makes this smaller
    /// than the number of appends under concurrency).
    public var commitCount: Int { committer.commitCount }

    /// How many times the LMDB map grew.
    public var mapGrowthCount: Int { environment.mapGrowthCount }
}
