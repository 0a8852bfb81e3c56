import Foundation
import LMDB
import OnboardingModel

/// The store's users (docs/format.md § User entries, docs/audit.md § Erasure).
///
/// Each user has an entry in `user_keys`, outside the hashed log, numbered in order of first
/// sighting: value = pseudonym (16) ‖ the user's secretbox key (32) ‖ nonce (24) ‖ the readable
/// user id sealed with that key — or the pseudonym alone (a tombstone) once the user is
/// forgotten. A new user's entry is appended (`MDB_APPEND`) in the transaction of the user's
/// first event: the entries of a group's new users share the tree's last page. The pseudonym key
/// is in `meta`. All entries are read into a ``UserDirectory`` on open.
extension OnboardingStore {
    /// `pseudonym ‖ key ‖ nonce ‖ secretbox(readable id)`.
    static func userEntryValue(ref: UserRef, name: String, key: SecretKey) -> [UInt8] {
        ref.bytes + key.bytes + PersonalData.sealRandom(Array(name.utf8), key: key)
    }

    static func userEntryValue(ref: UserRef, name: String, key: SecretKey, nonce: [UInt8]) -> [UInt8] {
        ref.bytes + key.bytes + PersonalData.seal(Array(name.utf8), key: key, randomNonce: nonce)
    }

    /// The pseudonym an entry value names (its first 16 bytes), `nil` when too short.
    static func userEntryRef(_ value: UnsafeRawBufferPointer) -> UserRef? {
        value.count >= UserRef.byteCount ? UserRef(bytes: UnsafeRawBufferPointer(rebasing: value[..<UserRef.byteCount])) : nil
    }

    /// A live entry's readable id and key; `nil` for a tombstone or an entry that does not open.
    static func userEntry(from value: UnsafeRawBufferPointer) -> UserDirectory.Entry? {
        let keyStart = UserRef.byteCount
        guard value.count > keyStart + SecretKey.byteCount else { return nil }
        let key = SecretKey(bytes: UnsafeRawBufferPointer(rebasing: value[keyStart..<(keyStart + SecretKey.byteCount)]))
        guard let plaintext = PersonalData.open(UnsafeRawBufferPointer(rebasing: value[(keyStart + SecretKey.byteCount)...]), key: key),
            let name = String(validating: plaintext, as: UTF8.self)
        else { return nil }
        return UserDirectory.Entry(name: name, key: key)
    }

    /// Reads the pseudonym key and every user entry: live users with their readable id,
    /// forgotten ones as pseudonyms only. A format 1 store has neither: it gets a new pseudonym
    /// key, which its migration stores (a read-only one is refused: it must be migrated first).
    static func loadUserDirectory(
        _ environment: Environment, databases: Databases, path: String,
        readOnly: Bool, formatVersion: UInt32
    ) throws -> UserDirectory {
        guard formatVersion >= StoreLayout.formatVersion, let userKeys = databases.userKeys else {
            guard !readOnly else {
                throw StoreError(
                    .needsMigration,
                    "store at \(path) is of format \(formatVersion); open it writable once to migrate it to format \(StoreLayout.formatVersion)")
            }
            return UserDirectory(pseudonymKey: SecretKey.random())
        }
        return try environment.read { transaction in
            guard let pseudonymKey = try transaction.get(databases.meta, key: StoreLayout.MetaKey.pseudonymKey),
                pseudonymKey.count == SecretKey.byteCount
            else {
                throw StoreError(.corrupted, "the meta database of \(path) has no pseudonym key; run onboard verify")
            }
            var directory = UserDirectory(pseudonymKey: SecretKey(bytes: pseudonymKey))
            try transaction.withCursor(userKeys) { cursor in
                var entry = try cursor.first()
                while let current = entry {
                    // A damaged entry does not stop the store: its user reads as the pseudonym,
                    // erased (as if forgotten, so no second entry is made), and verify names it.
                    if let ref = userEntryRef(current.value) {
                        if current.value.count > UserRef.byteCount, let user = userEntry(from: current.value) {
                            directory.add(ref, name: user.name, key: user.key)
                        } else {
                            directory.forget(ref)
                        }
                    }
                    entry = try cursor.next()
                }
            }
            return directory
        }
    }

    /// The key (user number) of `ref`'s entry in `user_keys`, by a scan: only forgetting needs it.
    func userEntryNumber(_ ref: UserRef, in transaction: Transaction) throws -> [UInt8]? {
        guard let userKeys = databases.userKeys else { return nil }
        return try transaction.withCursor(userKeys) { cursor in
            var entry = try cursor.first()
            while let current = entry {
                if Self.userEntryRef(current.value) == ref { return Array(current.key) }
                entry = try cursor.next()
            }
            return nil
        }
    }

    static func formatVersion(_ environment: Environment, databases: Databases) throws -> UInt32 {
        try environment.read { transaction in
            (try transaction.get(databases.meta, key: StoreLayout.MetaKey.formatVersion) ?? [0, 0, 0, 0])
                .reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        }
    }

    /// The users as they stand now (a copy: a read keeps it for its whole scan).
    var users: UserDirectory { userDirectory.withLock { $0 } }

    /// The pseudonym of `user` in this store (`user` itself when it is a pseudonym literal).
    public func userRef(of user: String) -> UserRef { users.ref(of: user) }

    /// How `user` reads in this store's records and projections now: the readable id while the
    /// user has a key, the pseudonym literal once forgotten.
    public func canonicalUser(_ user: String) -> String { users.canonicalName(of: user) }

    /// Whether `user` (readable id or pseudonym literal) was forgotten in this store.
    public func isForgotten(_ user: String) throws(StoreError) -> Bool {
        try ensureOpen()
        let users = users
        return users.isForgotten(users.ref(of: user))
    }

    /// On a sync server's replica, after an upload that carried the keys of `refs` (users the
    /// device holds, so has not forgotten): keeps a forget request for each of them this replica
    /// forgot, unless one is pending or the device's log already has its `user_forgotten`. That
    /// is a user the server forgot before any of the device's records of it had arrived. Returns
    /// how many requests were added.
    @discardableResult
    package func requestForgetOfUsersTheDeviceHolds(_ refs: [UserRef], requestedAt: Timestamp) throws(StoreError) -> Int {
        try ensureOpen()
        let current = users
        // Every upload that carries keys comes here: nothing more than a lookup per user unless
        // the replica forgot one of them.
        let forgotten = refs.filter { current.isForgotten($0) }
        guard !forgotten.isEmpty else { return 0 }
        let pending = Set(try forgetRequests())
        var added: [UserRef] = []
        for ref in forgotten where !pending.contains(ref) {
            let forgotByDevice = try records(user: ref.literal).contains { $0.event.type == .userForgotten }
            if !forgotByDevice { added.append(ref) }
        }
        guard !added.isEmpty else { return 0 }
        let time = withUnsafeBytes(of: UInt64(bitPattern: requestedAt.millisecondsSince1970).bigEndian) { Array($0) }
        do {
            try environment.write { transaction in
                for ref in added { try transaction.put(databases.meta, key: StoreLayout.MetaKey.forgetRequestPrefix + ref.bytes, value: time) }
            }
        } catch {
            throw StoreError(.storage, "cannot keep forget requests in \(path): \(error)")
        }
        return added.count
    }

    /// Whether this store holds `user` (readable id or pseudonym literal) with its key: a user
    /// it has seen and not forgotten. The sync client forgets on the server's request only these.
    public func holdsLiveUser(_ user: String) throws(StoreError) -> Bool {
        try ensureOpen()
        let users = users
        return users.key(of: users.ref(of: user)) != nil
    }

    // MARK: Forgetting

    /// Forgets `user`: appends `user_forgotten` (naming only the pseudonym), which destroys the
    /// user's entry in `user_keys` in the same transaction. Afterwards the user reads as the
    /// pseudonym literal with personal fields erased everywhere, the chain is untouched, and the
    /// projections are rebuilt with the user known by the pseudonym (lockout state included, so
    /// ``signInDecision(user:device:factor:at:)`` for the readable id still applies it).
    /// Returns the pseudonym literal and the seq of the erasure event.
    ///
    /// ```swift
    /// let (pseudonym, seq) = try store.forgetUser("alice", at: now)
    /// ```
    public func forgetUser(_ user: String, at: Timestamp) throws(StoreError) -> (pseudonym: String, seq: UInt64) {
        let event = try forgetEvent(user, at: at)
        return (event.user!, try appendBlocking([event])[0].seq)
    }

    /// ``forgetUser(_:at:)`` for async callers (the sync client, when the server asks).
    public func forgetUser(_ user: String, at: Timestamp) async throws(StoreError) -> (pseudonym: String, seq: UInt64) {
        let event = try forgetEvent(user, at: at)
        return (event.user!, try await append(event).seq)
    }

    private func forgetEvent(_ user: String, at: Timestamp) throws(StoreError) -> Event {
        do { try Event.validate(userID: user) } catch { throw StoreError(.invalidEvent, "user \(error.message)") }
        if let point = try prunedThrough() {
            throw StoreError(
                .pruned,
                "cannot forget a user in \(path): it was pruned through seq \(point.seq), and the base snapshot kept at the prune point holds readable ids that a forget cannot rewrite; forget the user on the sync server, or in a store that was not pruned",
                seq: point.seq)
        }
        return Event(id: UUID(), device: deviceID, at: at, user: userRef(of: user).literal, flow: nil, payload: .userForgotten)
    }

    /// How `forgetUserKey(_:requestedAt:)`, the sync server's erasure of a user's key in a
    /// replica, found the user.
    public enum KeyErasure: String, Sendable {
        /// The user's key was destroyed.
        case erased
        /// The user was already forgotten here.
        case alreadyForgotten = "already_forgotten"
        /// The store never held the user; a tombstone keeps later records of the user erased.
        case neverSeen = "never_seen"
    }

    /// The sync server's forget (`POST /v1/users/{user}/forget`, `onboard forget-user --data`):
    /// on a device's replica, destroys the user's key like ``forgetUser(_:at:)`` but appends no
    /// event — the replica's records are the device's, and only the device extends its chain.
    /// Instead the replica keeps a forget request for the pseudonym, which the server sends to
    /// the device with its cursor until the device's own `user_forgotten` arrives (see
    /// ``forgetRequests()``). Records of the user that arrive meanwhile are stored as the
    /// device sealed them and read as erased.
    package func forgetUserKey(_ user: String, requestedAt: Timestamp) throws(StoreError) -> (pseudonym: String, outcome: KeyErasure) {
        do { try Event.validate(userID: user) } catch { throw StoreError(.invalidEvent, "user \(error.message)") }
        try ensureOpen()
        guard !options.readOnly else { throw StoreError(.notWritable, "store at \(path) is open read-only") }
        if let point = try prunedThrough() {
            throw StoreError(
                .pruned,
                "cannot forget a user in \(path): it was pruned through seq \(point.seq), and the base snapshot kept at the prune point holds readable ids that a forget cannot rewrite",
                seq: point.seq)
        }
        let ref = userRef(of: user)
        // The device recorded user_forgotten already (it forgot the user first): nothing to ask of
        // it, and a request would never end, since only that event ends one.
        let userRecords = try records(user: ref.literal)
        let deviceForgot = userRecords.contains { $0.event.type == .userForgotten }
        // Only a replica holding records of the user asks its device to forget: a device forgets
        // only users it holds, and those records came from it. (A tombstone alone may be all a
        // replica has of a user it never saw, from an earlier forget.) Should the device's records
        // of the user arrive later, with the user's key, the upload asks then
        // (requestForgetOfUsersTheDeviceHolds).
        let asks = !deviceForgot && !userRecords.isEmpty
        let result: Result<KeyErasure, StoreError> = committer.runExclusive {
            let before = users
            let outcome: KeyErasure = before.key(of: ref) != nil ? .erased : before.isForgotten(ref) ? .alreadyForgotten : .neverSeen
            holdSnapshots()
            defer { releaseSnapshots() }
            do {
                try environment.write { transaction in
                    try destroyUserEntry(ref, in: transaction)
                    if asks {
                        try transaction.put(
                            databases.meta, key: StoreLayout.MetaKey.forgetRequestPrefix + ref.bytes,
                            value: withUnsafeBytes(of: UInt64(bitPattern: requestedAt.millisecondsSince1970).bigEndian) { Array($0) })
                    }
                    if let snapshots = databases.snapshots { _ = try transaction.delete(snapshots, key: StoreLayout.stateSnapshotKey) }
                }
            } catch {
                return .failure(StoreError(.storage, "cannot forget a user in \(path): \(error)"))
            }
            userDirectory.withLock { $0.forget(ref) }
            resetProjectionsAfterErasure()
            return .success(outcome)
        }
        return (ref.literal, try result.get())
    }

    /// The pseudonyms this replica forgot whose device has not recorded `user_forgotten` yet.
    public func forgetRequests() throws(StoreError) -> [UserRef] {
        let prefix = StoreLayout.MetaKey.forgetRequestPrefix
        return try reading { transaction in
            try transaction.withCursor(databases.meta) { cursor in
                var refs: [UserRef] = []
                var entry = try cursor.seek(atLeast: prefix)
                while let current = entry, current.key.starts(with: prefix) {
                    if current.key.count == prefix.count + UserRef.byteCount {
                        refs.append(UserRef(bytes: UnsafeRawBufferPointer(rebasing: current.key[prefix.count...])))
                    }
                    entry = try cursor.next()
                }
                return refs
            }
        }
    }

    /// Destroys `ref`'s entry: overwrites the value (key and sealed id) with zeros in place,
    /// then replaces it with an empty tombstone, so a later event of the same user id stays
    /// pseudonymous instead of getting a new readable entry. LMDB copies pages on write: the
    /// old page is freed, not wiped, until reused — `onboard forget-user` compacts the file
    /// afterwards (docs/audit.md § Erasure).
    func destroyUserEntry(_ ref: UserRef, in transaction: Transaction) throws {
        guard let userKeys = databases.userKeys else { return }
        if let number = try userEntryNumber(ref, in: transaction) {
            if let old = try transaction.get(userKeys, key: number), old.count > UserRef.byteCount {
                try transaction.put(userKeys, key: number, value: [UInt8](repeating: 0, count: old.count))
            }
            try transaction.put(userKeys, key: number, value: ref.bytes)
        } else {
            // Never seen here: a tombstone all the same, so later events of the user stay erased.
            try appendUserEntries([ref.bytes], in: transaction)
        }
    }

    /// Appends entries to `user_keys` under the next user numbers (the last key read in this
    /// transaction: a retried transaction numbers them again from the same place).
    func appendUserEntries(_ values: [[UInt8]], in transaction: Transaction) throws {
        guard !values.isEmpty else { return }
        guard let userKeys = databases.userKeys else {
            throw StoreError(.notWritable, "store at \(path) has no user_keys database")
        }
        try Self.appendUserEntries(values, to: userKeys, in: transaction)
    }

    static func appendUserEntries(_ values: [[UInt8]], to userKeys: Database, in transaction: Transaction) throws {
        var number = try transaction.withCursor(userKeys) { cursor in
            try cursor.last().flatMap { StoreLayout.seq(fromKey: $0.key) } ?? 0
        }
        guard number <= UInt64.max - UInt64(values.count) else {
            throw StoreError(
                .corrupted,
                "user_keys holds an entry numbered \(number), too close to 2^64 − 1 to number \(values.count) more (the database was changed); run onboard verify"
            )
        }
        var key: [UInt8] = []
        for value in values {
            number += 1
            StoreLayout.writeSeqKey(number, into: &key)
            try transaction.put(userKeys, key: key, value: value, flags: .append)
        }
    }

    // MARK: Sync

    /// The keys of `refs` that this store still holds (the sync client sends them with the
    /// records so the server's replica can re-encode, check and read them).
    package func liveKeys(for refs: Set<UserRef>) -> [UserRef: SecretKey] {
        let users = users
        var keys: [UserRef: SecretKey] = [:]
        for ref in refs { if let key = users.key(of: ref) { keys[ref] = key } }
        return keys
    }

    /// The sealed personal sections of those `records` whose user this store forgot after
    /// sealing them, by seq: the server cannot re-encode such a record from its erased event,
    /// so the sync client sends the section with it (docs/sync-protocol.md § Keys).
    package func sealedSections(for records: [Record]) throws(StoreError) -> [UInt64: [UInt8]] {
        let candidates = records.filter { record in
            record.event.hasPersonalFields && record.event.user.map(UserRef.isLiteral) == true
        }
        guard !candidates.isEmpty else { return [:] }
        return try reading { transaction in
            var sections: [UInt64: [UInt8]] = [:]
            for record in candidates {
                let section = try transaction.withValue(databases.events, key: StoreLayout.seqKey(record.seq)) { value in
                    try RecordCodec.sealedSection(of: value)
                }
                if let section = section ?? nil { sections[record.seq] = section }
            }
            return sections
        }
    }

    /// Drops the keys of the last upload from memory (the server calls it when the upload is
    /// done: a forgotten user's key must not outlive the request that needed it).
    package func clearPendingKeys() {
        pendingKeys.withLock { $0.removeAll() }
    }

    /// Whether this replica's pseudonyms are its device's: it adopted the device's key, or holds
    /// user entries made with the key it has (a replica written before the adoption was
    /// recorded). A replica that received only records naming no user has its own random key,
    /// under which a pseudonym would mean nothing on the device.
    package func holdsDevicePseudonymKey() throws(StoreError) -> Bool {
        let current = users
        if !current.entries.isEmpty || !current.forgotten.isEmpty { return true }
        return try reading { try $0.get(databases.meta, key: StoreLayout.MetaKey.devicePseudonymKey) } != nil
    }

    /// This store's pseudonym key (sent to the sync server's replica of this device only).
    package var pseudonymKeyForSync: SecretKey { users.pseudonymKey }

    /// Takes the keys a device sent with one upload (a server replica): adopts the device's
    /// pseudonym key while the replica holds nothing that depends on its own (no user entry, no
    /// tombstone; records naming no user do not: a first upload without users may come without
    /// keys), refuses a different one once it has adopted one, and holds the user keys of this
    /// upload in memory until its records are appended: a new user's key is stored with the
    /// user's first record; the key of a user the replica forgot only seals (the device's
    /// records must hash the same) and is never stored. Readable ids are learnt from the
    /// uploaded events when they are appended.
    package func adoptKeys(pseudonymKey devicePseudonymKey: SecretKey, userKeys: [UserRef: SecretKey]) throws(StoreError) {
        try ensureOpen()
        let current = users
        let holds = try holdsDevicePseudonymKey()
        if devicePseudonymKey != current.pseudonymKey || !holds {
            guard !holds else {
                throw StoreError(
                    .conflict,
                    "the device's pseudonym key differs from the one its replica at \(path) was written with; the device store was replaced — enroll it as a new device"
                )
            }
            do {
                try environment.write { transaction in
                    try transaction.put(databases.meta, key: StoreLayout.MetaKey.pseudonymKey, value: devicePseudonymKey.bytes)
                    try transaction.put(databases.meta, key: StoreLayout.MetaKey.devicePseudonymKey, value: [1])
                }
            } catch {
                throw StoreError(.storage, "cannot store the device's pseudonym key in \(path): \(error)", underlying: error)
            }
            userDirectory.withLock { $0 = UserDirectory(pseudonymKey: devicePseudonymKey) }
        }
        if !userKeys.isEmpty { hasPendingKeys.store(true, ordering: .relaxed) }
        pendingKeys.withLock { pending in
            // All of them, also of users live here: a server forget may land between the upload's
            // checks and its append, and the append must then still seal as the device did.
            pending = userKeys
        }
    }
}

extension OnboardingStore {
    /// Rewrites the store's data file with only the pages in use (`mdb_env_copy2` with
    /// `MDB_CP_COMPACT` to a file beside it, fsync, rename over `data.mdb`). LMDB keeps freed
    /// pages for reuse, so a destroyed user entry can survive in a freed page until then; after
    /// compaction it is not in the file. The store must not be open in any process.
    public static func compact(at path: String) throws(StoreError) {
        let dataFile = (path as NSString).appendingPathComponent("data.mdb")
        let compacted = dataFile + ".compacting"
        try? FileManager.default.removeItem(atPath: compacted)
        do {
            var options = Environment.Options()
            options.readOnly = true
            let environment = try Environment.open(path: path, options: options)
            defer { environment.close() }
            try environment.copyCompacted(toFile: compacted)
        } catch {
            try? FileManager.default.removeItem(atPath: compacted)
            throw StoreError(.storage, "cannot compact \(path): \(error)")
        }
        guard rename(compacted, dataFile) == 0 else {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(atPath: compacted)
            throw StoreError(.storage, "cannot replace \(dataFile) with its compacted copy: \(reason)")
        }
    }
}

extension OnboardingStore {
    // MARK: Projections after an erasure

    /// Stops snapshots before a group that forgets a user: waits for one being written and keeps
    /// new ones from being queued, so no snapshot of the state from before the erasure (with the
    /// readable id in it) is written after the group deleted the stored one.
    func holdSnapshots() {
        snapshotQueue.sync {}
        snapshotPending.withLock { $0 = true }
    }

    func releaseSnapshots() {
        snapshotPending.withLock { $0 = false }
    }

    /// After a `user_forgotten` commit: earlier records now read with the user as its pseudonym,
    /// so the projections are dropped and rebuilt from the log (the group deleted the snapshot).
    /// Lockout state carries over under the pseudonym. Runs on the writer queue.
    func resetProjectionsAfterErasure() {
        projectorQueue.sync {}
        let wasActive = pendingProjection.withLock { pending in
            defer { pending = PendingProjection() }
            return pending.isActive
        }
        projections.withLock { $0 = ProjectionCache() }
        if wasActive { try? loadProjections() }
    }
}

extension OnboardingStore {
    /// What writing `event` here would seal with, for checking an uploaded record's hash (a sync
    /// server's replica): `nil` when the event names a readable user this replica has no key for
    /// (the device should have sent it). The inner seal is `nil` for an event without a user.
    package func checkingSeal(for event: Event) -> CheckingSeal? {
        guard let user = event.user else { return CheckingSeal(seal: nil) }
        let users = users
        let ref = users.ref(of: user)
        if UserRef.isLiteral(user) { return CheckingSeal(seal: UserSeal(ref: ref, key: nil)) }
        if users.isForgotten(ref) {
            // Forgotten here first: the device may still seal with the key it sent (see adoptKeys).
            let sent = event.hasPersonalFields ? pendingKeys.withLock { $0[ref] } : nil
            return CheckingSeal(seal: UserSeal(ref: ref, key: sent))
        }
        guard let key = users.key(of: ref) ?? pendingKeys.withLock({ $0[ref] }) else { return nil }
        return CheckingSeal(seal: UserSeal(ref: ref, key: event.hasPersonalFields ? key : nil))
    }

    /// See ``checkingSeal(for:)``.
    package struct CheckingSeal: Sendable {
        package var seal: UserSeal?
        package init(seal: UserSeal?) { self.seal = seal }
    }
}
