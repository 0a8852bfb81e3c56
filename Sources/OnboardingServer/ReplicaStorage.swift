import Foundation
import OnboardingModel
import OnboardingProjections
import OnboardingStore
import Synchronization

/// The embedded server storage (`onboard serve --data DIR`): `DIR/server` holds the hashed
/// tokens, the enrolled devices and the server's signing key; `DIR/devices/<hex id>` one replica
/// store per device (at most a bound open at once); `DIR/actions` the server actions
/// (``ActionStore``). The lockout across devices is folded in memory from every replica and the
/// actions (``GlobalLockout``), and so are the user search (``UserSearchIndex``) and each
/// device's head. One process serves a data directory.
package final class ReplicaStorage: ServerStorage {
    package let dataDirectory: String
    package let tokens: TokenStore
    package let signingKey: SigningKeyPair
    let replicas: DeviceReplicas
    /// Replicas open now (for metrics).
    var openReplicaCount: Int { replicas.counts.open }
    let actionStore: ActionStore
    let policy: LockoutPolicy
    let failureLog: (@Sendable (String) -> Void)?
    /// The cross-device lockout.
    let global: Mutex<GlobalLockout>
    /// The user search, kept with the lockout: built by the same scans, refolded with it.
    let search: Mutex<UserSearchIndex>
    /// Each device's head and latest signed head, as its replica holds them.
    let heads: Mutex<[String: ReplicaHead]>
    /// Last upload times, exact here; written to `DIR/server` all at once at most every
    /// ``uploadTimePersistInterval`` (and at close), so an upload costs no second durable commit
    /// however many devices sync. A crash loses at most that much of them.
    let uploadTimes = Mutex(UploadTimes())
    /// 10 s: one commit of every device's new upload time per 10 s, not one per upload.
    static let uploadTimePersistInterval: Int64 = 10_000
    /// A refold of ``global`` could not read some replica for want of a resource (every replica
    /// the server may open was leased): ``global`` is stale until a refold succeeds, which every
    /// later upload, forget and lockout query tries first.
    private let refoldPending = Atomic<Bool>(false)
    /// The admin token created on first start, when there was none (written to `DIR/admin.token`).
    package let createdAdminToken: String?
    /// Replicas whose log could not be read whole at start (one line each: the device and what
    /// is wrong). Their records up to the damage count in the global views; the audit names it.
    package let unreadableReplicas: [String]

    package init(
        dataDirectory: String, policy: LockoutPolicy, maximumOpenReplicas: Int, replicaInitialMapSizeBytes: Int,
        failureLog: (@Sendable (String) -> Void)?
    ) throws {
        self.dataDirectory = dataDirectory
        self.policy = policy
        self.failureLog = failureLog
        try FileManager.default.createDirectory(
            atPath: dataDirectory, withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
        tokens = try TokenStore(directory: (dataDirectory as NSString).appendingPathComponent("server"))
        signingKey = try OnboardingStore.signingKey(at: Self.signingKeyPath(dataDirectory: dataDirectory))
        replicas = try DeviceReplicas(
            directory: (dataDirectory as NSString).appendingPathComponent("devices"),
            maximumOpen: maximumOpenReplicas, initialMapSizeBytes: replicaInitialMapSizeBytes)
        actionStore = try ActionStore(directory: (dataDirectory as NSString).appendingPathComponent("actions"))
        if try tokens.hasAdmin() {
            createdAdminToken = nil
        } else {
            let token = try tokens.issue(role: .admin)
            let file = (dataDirectory as NSString).appendingPathComponent("admin.token")
            _ = FileManager.default.createFile(atPath: file, contents: Data((token + "\n").utf8), attributes: [.posixPermissions: 0o600])
            createdAdminToken = token
        }
        let built = try Self.buildViews(tokens: tokens, replicas: replicas, policy: policy, actions: actionStore.all())
        unreadableReplicas = built.unreadable
        global = Mutex(built.views.lockout)
        search = Mutex(built.views.search)
        heads = Mutex(built.views.heads)
        // The start-up scan needs no replica afterwards: their descriptors go back before the
        // HTTP layer counts what it may use.
        replicas.closeIdle()
    }

    /// Where the server keeps its signing key: `DIR/server/signing.key`.
    package static func signingKeyPath(dataDirectory: String) -> String {
        ((dataDirectory as NSString).appendingPathComponent("server") as NSString).appendingPathComponent("signing.key")
    }

    package func close() {
        persistUploadTimes(all: true)
        replicas.closeAll()
        actionStore.close()
        tokens.close()
    }

    // MARK: Tokens and devices

    package func issueToken(role: TokenRole, device: String?, expiresAt: Timestamp?) throws -> String {
        try tokens.issue(role: role, device: device, expiresAt: expiresAt)
    }
    package func rotateAdminToken(beforeCommit: (String) throws -> Void) throws -> (token: String, revoked: Int) {
        try tokens.rotateAdmin(beforeCommit: beforeCommit)
    }
    package func grant(for token: String) throws -> TokenGrant? { tokens.grant(for: token) }
    package func revokeTokens(device: String) throws -> Int { try tokens.revoke(device: device) }
    package func revokeAuditorTokens() throws -> Int { try tokens.revokeAuditors() }
    package func hasAdmin() throws -> Bool { try tokens.hasAdmin() }
    package func enrolledDevices() throws -> [String] { try tokens.enrolledDevices() }
    package func isEnrolled(_ device: String) throws -> Bool { tokens.isEnrolled(device) }
    package func registeredKey(of device: String) throws -> SigningPublicKey? { tokens.publicKey(for: device) }

    package func enroll(_ device: String, publicKey: SigningPublicKey?) throws {
        if let publicKey { try tokens.register(publicKey: publicKey, device: device) }
        // The replica first: a token is only handed out for a device the server can store.
        try replicas.withReplica(device) { store in
            if let publicKey { try store.recordSigningPublicKey(publicKey) }
        }
    }

    // MARK: Device logs

    package func withDeviceLog<R>(_ device: String, _ body: (any DeviceLog) throws -> R) throws -> R {
        refoldIfPending()
        var refold = false
        let result = try replicas.withReplica(device) { store in
            let log = ReplicaLog(store: store)
            // A forgotten user's key must not outlive the request that needed it. Only the lease
            // that took the keys drops them: a cursor read of the same replica during an upload
            // must not take the keys from under that upload's append (uploads of one device are
            // one at a time, so no other lease holds keys of its own).
            defer { if log.adoptedKeys { store.clearPendingKeys() } }
            let result = try body(log)
            if log.appendedForget {
                // Earlier records of the forgotten user now read by the pseudonym: refold.
                refold = true
            } else if let range = log.appended {
                // Folded as the replica reads them, as a rebuild does: a user the server forgot
                // before the device did arrives by name and is stored under the pseudonym.
                let stored = try store.records(in: range)
                global.withLock { $0.apply(stored) }
                search.withLock { $0.add(stored) }
            }
            if log.appended != nil || log.signedHeadChanged {
                let head = try store.head()
                let signed = try store.latestSignedHead()
                heads.withLock { $0[device] = ReplicaHead(seq: head.seq, hash: head.hash, signed: signed.map { ($0.seq, $0.hash) }) }
            }
            if log.appended != nil { noteUpload(of: device, at: Timestamp.now) }
            return result
        }
        // Outside the lease: the refold opens every replica.
        if refold { refoldGlobalLockout() }
        return result
    }

    // MARK: The global lockout

    package func lockoutEntries(user: String, at: Timestamp) throws -> [LockoutEngine.Entry] {
        refoldIfPending()
        return global.withLock { $0.entries(user: user, at: at) }
    }

    /// What the server derives from every replica's records.
    struct Views {
        var lockout: GlobalLockout
        var search: UserSearchIndex
        var heads: [String: ReplicaHead]
    }

    /// The global lockout (with the clears among `actions`), the user search and the heads from
    /// every replica's records. A replica that cannot be read whole (a damaged record)
    /// contributes its records up to the damage and is listed; `isPartial` says that a replica
    /// could not be read now for want of a resource (it would be read later).
    static func buildViews(
        tokens: TokenStore, replicas: DeviceReplicas, policy: LockoutPolicy,
        actions: [ServerAction]
    ) throws -> (views: Views, unreadable: [String], isPartial: Bool) {
        var relevant: [Record] = []
        var search = UserSearchIndex()
        var heads: [String: ReplicaHead] = [:]
        var unreadable: [String] = []
        var isPartial = false
        for device in try tokens.enrolledDevices() {
            do {
                try replicas.withReplica(device) { store in
                    let head = try store.head()
                    let signed = try store.latestSignedHead()
                    heads[device] = ReplicaHead(seq: head.seq, hash: head.hash, signed: signed.map { ($0.seq, $0.hash) })
                    try store.forEachRecord { record in
                        if LockoutEngine.mayAffectKeys(record.event.type) { relevant.append(record) }
                        search.add(record)
                        return true
                    }
                }
            } catch {
                unreadable.append("\(device): \(error)")
                if ServerFailure(error).isResourceShortage { isPartial = true }
            }
        }
        return (
            Views(lockout: GlobalLockout(policy: policy, records: relevant, actions: actions), search: search, heads: heads),
            unreadable, isPartial
        )
    }

    /// Replaces the global lockout with a rebuild from every replica. A rebuild that could not
    /// read a replica now (every replica the server may open is leased) never stands for all of
    /// them: the current lockout stays, and the refold is tried again by the next upload, forget
    /// or lockout query. Call it without holding a replica lease (with one open replica allowed,
    /// a held lease would keep every other replica from opening).
    func refoldGlobalLockout() {
        do {
            let actions = actionStore.all()
            let built = try Self.buildViews(tokens: tokens, replicas: replicas, policy: policy, actions: actions)
            guard !built.isPartial else {
                refoldPending.store(true, ordering: .sequentiallyConsistent)
                failureLog?(
                    "onboard serve: the global lockout could not be refolded now (\(built.unreadable.count) replicas could not be opened); it is refolded on the next request"
                )
                return
            }
            global.withLock { lockout in
                lockout = built.views.lockout
                // Clears stored while the replicas were read (``record(_:)`` folds under this lock).
                for action in actionStore.all() where action.seq > (actions.last?.seq ?? 0) { lockout.apply(action) }
            }
            search.withLock { $0 = built.views.search }
            heads.withLock { $0 = built.views.heads }
            refoldPending.store(false, ordering: .sequentiallyConsistent)
        } catch {
            refoldPending.store(true, ordering: .sequentiallyConsistent)
            failureLog?("onboard serve: the global lockout could not be refolded now (\(ServerFailure(error).logLine)); it is refolded on the next request")
        }
    }

    func refoldIfPending() {
        if refoldPending.load(ordering: .sequentiallyConsistent) { refoldGlobalLockout() }
    }

    /// The global lockout rebuilt from the replicas, compared with the one kept in memory (tests
    /// and the simulator: the two must hold the same keys whatever the upload order).
    package func globalLockoutMatchesRebuild() throws -> Bool {
        let rebuilt = try Self.buildViews(tokens: tokens, replicas: replicas, policy: policy, actions: actionStore.all()).views.lockout
        return global.withLock { $0.hasSameKeys(as: rebuilt) }
    }

    // MARK: Forgetting

    package func forgetUser(_ user: String, at: Timestamp) throws -> [ForgetOutcome] {
        var results: [ForgetOutcome] = []
        for device in try tokens.enrolledDevices() {
            try replicas.withReplica(device) { store in
                // A replica without its device's pseudonym key holds no record naming a user
                // (uploads naming one carry the keys), and a pseudonym under its own key would
                // mean nothing to the device: nothing to forget there.
                guard try store.holdsDevicePseudonymKey() else { return }
                let (pseudonym, outcome) = try store.forgetUserKey(user, requestedAt: at)
                results.append(ForgetOutcome(device: device, pseudonym: pseudonym, outcome: outcome))
            }
        }
        // Never found again, also when the refold below cannot read every replica now.
        search.withLock { $0.remove(user: user) }
        try actionStore.forget(user: user, as: ServerAction.pseudonym())
        refoldGlobalLockout()
        return results
    }

    // MARK: History and audit

    package func history(_ query: HistoryQuery) throws -> (history: History, devices: [String]) {
        guard let device = query.device else {
            var devices: [String] = []
            let history = try mergedHistory(query, devices: &devices)
            return (history, devices)
        }
        guard tokens.isEnrolled(device) else { return (History(user: query.user), []) }
        return try replicas.withReplica(device) { store in
            let history = try store.history(query)
            guard let user = query.user else { return (history, [device]) }
            return (history, try store.records(user: user).contains { $0.event.user == user } ? [device] : [])
        }
    }

    /// The history of `query.user` across every replica, merged in `(at, device, seq)` order,
    /// each event id counted once; `devices` gets the enrolled devices whose records read as the user.
    private func mergedHistory(_ query: HistoryQuery, devices: inout [String]) throws -> History {
        guard let user = query.user else { preconditionFailure("a history across devices needs a user") }
        var records: [Record] = []
        for device in try tokens.enrolledDevices() {
            var mentioned = false
            let found = try replicas.withReplica(device) { try $0.records(user: user) }
            for record in found where record.event.user == user {
                // The pseudonym's records that read by name (or by name, erased) are not this user's reading.
                mentioned = true
                if query.covers(record.event) { records.append(record) }
            }
            if mentioned { devices.append(device) }
        }
        func key(_ record: Record) -> HistoryCursor { HistoryCursor(at: record.event.at, device: record.event.device, seq: record.seq) }
        records.sort { key($0) < key($1) }
        var seen = Set<UUID>()
        var builder = History.Builder(query: query)
        for record in records where seen.insert(record.event.id).inserted {
            if let after = query.after, !(after < key(record)) { continue }
            builder.add(record)
            if builder.isSettled { break }
        }
        return builder.history
    }

    package func audit() throws -> [DeviceAudit] {
        try ReplicaAudit.run(
            tokens: tokens, detailed: false, open: { device throws(StoreError) in try replicas.leaseForAudit(device) },
            release: { store in replicas.release(store.deviceID) })
    }
}

/// A replica as an upload sees it: the store, plus what the upload appended (for the global
/// lockout, which the storage folds after the upload).
final class ReplicaLog: DeviceLog {
    let store: OnboardingStore
    /// The seqs the upload appended.
    private(set) var appended: ClosedRange<UInt64>?
    /// The upload appended a `user_forgotten`.
    private(set) var appendedForget = false
    /// The upload's signed head was recorded.
    private(set) var signedHeadChanged = false
    /// This lease gave the store the upload's keys (it drops them when it ends).
    private(set) var adoptedKeys = false

    init(store: OnboardingStore) { self.store = store }

    var device: String { store.deviceID }
    func head() throws -> (seq: UInt64, hash: Digest) { try store.head() }
    func storedRecord(at seq: UInt64) throws -> Record? { try store.storedRecord(at: seq) }
    func records(in range: ClosedRange<UInt64>) throws -> [Record] { try store.records(in: range) }
    func userRef(of user: String) -> UserRef { store.userRef(of: user) }
    func checkingSeal(for event: Event) -> OnboardingStore.CheckingSeal? { store.checkingSeal(for: event) }
    func adoptKeys(pseudonymKey: SecretKey, userKeys: [UserRef: SecretKey]) throws {
        adoptedKeys = true
        try store.adoptKeys(pseudonymKey: pseudonymKey, userKeys: userKeys)
    }
    func append(_ events: [Event], claimedSeqs: [UInt64?], expectedHead: UInt64, sealedSections: [[UInt8]?]?) throws {
        let results = try store.appendBlocking(events, claimedSeqs: claimedSeqs, expectedHead: expectedHead, sealedSections: sealedSections)
        if let first = results.first?.seq, let last = results.last?.seq { appended = first...last }
        if events.contains(where: { $0.type == .userForgotten }) { appendedForget = true }
    }
    func signingPublicKey() throws -> SigningPublicKey? { try store.signingPublicKey() }
    func recordSigningPublicKey(_ key: SigningPublicKey) throws { try store.recordSigningPublicKey(key) }
    func latestSignedHead() throws -> SignedHead? { try store.latestSignedHead() }
    func recordSignedHead(_ head: SignedHead) throws {
        try store.recordSignedHead(head)
        signedHeadChanged = true
    }
    func requestForgetOfUsersTheDeviceHolds(_ refs: [UserRef], requestedAt: Timestamp) throws {
        try store.requestForgetOfUsersTheDeviceHolds(refs, requestedAt: requestedAt)
    }
    func forgetRequests() throws -> [UserRef] { try store.forgetRequests() }
}
