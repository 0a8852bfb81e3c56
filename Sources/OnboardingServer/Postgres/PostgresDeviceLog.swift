import Foundation
import OnboardingModel
import OnboardingProjections
import OnboardingStore
import PostgreSQL

/// One device's log in PostgreSQL, inside the transaction that holds the device's advisory lock
/// (``PostgresStorage/withDeviceLog(_:_:)``). It keeps the device's users as its replica store
/// would (docs/server-storage.md): the device's pseudonym key, one row per user with the user's
/// key and sealed readable id (a tombstone once forgotten), and the keys of the upload in
/// progress, which seal and are never kept for a forgotten user. Records are stored as the
/// device wrote them, so they hash as the device's do.
final class PostgresDeviceLog: DeviceLog {
    let device: String
    private let connection: PGConnection
    private let storage: PostgresStorage
    private(set) var users: UserDirectory
    private var holdsDevicePseudonymKey: Bool
    private var headSeq: UInt64
    private var headHash: Digest
    private var publicKey: SigningPublicKey?
    /// The user keys the upload in progress carried.
    private var pendingKeys: [UserRef: SecretKey] = [:]
    private var nextUserNumber: Int64

    /// `devices.users_version` as this transaction leaves it (see ``DeviceUsersCache``).
    private var usersVersion: Int64
    /// Whether ``users`` was read from the table or changed here: the cache takes it after the commit.
    private(set) var usersToCache: Bool

    /// Loads the device's row (creating it for a device enrolled before it had one) and users:
    /// from the node's cache when its copy is at the row's users version, else from the table.
    init(device: String, connection: PGConnection, storage: PostgresStorage) throws {
        self.device = device
        self.connection = connection
        self.storage = storage
        try connection.execute(
            prepared: "device_row_insert",
            "INSERT INTO devices (device, pseudonym_key, head_hash) VALUES ($1, $2, $3) ON CONFLICT (device) DO NOTHING",
            [.text(device), .bytes(SecretKey.random().bytes), .bytes(Digest.zero.bytes)])
        let rows = try connection.execute(
            prepared: "device_row",
            """
            SELECT head_seq, head_hash, pseudonym_key, holds_device_pseudonym_key, public_key, users_version FROM devices WHERE device = $1
            """, [.text(device)])
        guard let row = rows.first else { throw PostgresStorage.corrupted("the devices row of \(device) vanished inside its lock") }
        let seq = try row.int64(0)
        let hash = try row.bytes(1)
        let pseudonymKey = try row.bytes(2)
        guard seq >= 0, hash.count == Digest.byteCount, pseudonymKey.count == SecretKey.byteCount else {
            throw PostgresStorage.corrupted("the devices row of \(device) holds a head or key of the wrong size")
        }
        headSeq = UInt64(seq)
        headHash = Digest(bytes: hash)
        holdsDevicePseudonymKey = try row.bool(3)
        publicKey = try row.optionalBytes(4).flatMap { SigningPublicKey(bytes: $0) }
        usersVersion = try row.int64(5)
        if let cached = storage.usersCache.entry(of: device, version: usersVersion, pseudonymKey: SecretKey(bytes: pseudonymKey)) {
            users = cached.directory
            nextUserNumber = cached.nextNumber
            usersToCache = false
        } else {
            let loaded = try PostgresStorage.loadUsers(of: device, pseudonymKey: SecretKey(bytes: pseudonymKey), connection: connection)
            users = loaded.directory
            nextUserNumber = loaded.nextNumber
            usersToCache = true
        }
    }

    /// The users as the committed transaction left them, for ``DeviceUsersCache``.
    var cacheEntry: DeviceUsersCache.Entry { .init(version: usersVersion, directory: users, nextNumber: nextUserNumber) }

    /// A new users version for a change this transaction makes to the device's users.
    private func nextUsersVersion() -> Int64 {
        var version: Int64
        repeat { version = Int64.random(in: .min ... .max) } while version == 0 || version == usersVersion
        return version
    }

    func head() throws -> (seq: UInt64, hash: Digest) { (headSeq, headHash) }

    func storedRecord(at seq: UInt64) throws -> Record? {
        guard seq >= 1, seq <= headSeq else { return nil }
        let rows = try connection.execute(
            prepared: "event_at", "SELECT record FROM events WHERE device = $1 AND seq = $2",
            [.text(device), .int64(Int64(seq))])
        guard let row = rows.first else { return nil }
        return try PostgresStorage.decode(try row.bytes(0), seq: seq, device: device, users: users)
    }

    func records(in range: ClosedRange<UInt64>) throws -> [Record] {
        guard range.lowerBound <= headSeq else { return [] }
        let upper = min(range.upperBound, headSeq)
        return try connection.execute(
            prepared: "events_range", "SELECT seq, record FROM events WHERE device = $1 AND seq BETWEEN $2 AND $3 ORDER BY seq",
            [.text(device), .int64(Int64(range.lowerBound)), .int64(Int64(upper))]
        ).map { row in
            try PostgresStorage.decode(try row.bytes(1), seq: UInt64(try row.int64(0)), device: device, users: users)
        }
    }

    func userRef(of user: String) -> UserRef { users.ref(of: user) }

    /// As a replica store's: `nil` when the event names a readable user this log has no key for.
    func checkingSeal(for event: Event) -> OnboardingStore.CheckingSeal? {
        guard let user = event.user else { return .init(seal: nil) }
        let ref = users.ref(of: user)
        if UserRef.isLiteral(user) { return .init(seal: UserSeal(ref: ref, key: nil)) }
        if users.isForgotten(ref) {
            // Forgotten here first: the device may still seal with the key it sent.
            return .init(seal: UserSeal(ref: ref, key: event.hasPersonalFields ? pendingKeys[ref] : nil))
        }
        guard let key = users.key(of: ref) ?? pendingKeys[ref] else { return nil }
        return .init(seal: UserSeal(ref: ref, key: event.hasPersonalFields ? key : nil))
    }

    /// The device's pseudonym key is adopted while the log holds nothing that depends on the one
    /// it has; another one afterwards is another store (`StoreError` `.conflict`).
    func adoptKeys(pseudonymKey: SecretKey, userKeys: [UserRef: SecretKey]) throws {
        let holds = holdsDevicePseudonymKey || !users.entries.isEmpty || !users.forgotten.isEmpty
        if pseudonymKey != users.pseudonymKey || !holds {
            guard !holds else {
                throw StoreError(
                    .conflict,
                    "the device's pseudonym key differs from the one its log on the server was written with; the device store was replaced — enroll it as a new device"
                )
            }
            let version = nextUsersVersion()
            try connection.execute(
                prepared: "device_adopt",
                "UPDATE devices SET pseudonym_key = $2, holds_device_pseudonym_key = true, users_version = $3 WHERE device = $1",
                [.text(device), .bytes(pseudonymKey.bytes), .int64(version)])
            users = UserDirectory(pseudonymKey: pseudonymKey)
            holdsDevicePseudonymKey = true
            usersVersion = version
            usersToCache = true
        }
        pendingKeys = userKeys
    }

    func append(_ events: [Event], claimedSeqs: [UInt64?], expectedHead: UInt64, sealedSections: [[UInt8]?]?) throws {
        guard !events.isEmpty else { return }
        guard expectedHead == headSeq else {
            throw StoreError(.headMoved, "the log of \(device) is at seq \(headSeq), not \(expectedHead)")
        }
        // The batch's rows, in `events`' column order (see ``eventColumns``).
        var rows: [[PGValue]] = []
        rows.reserveCapacity(events.count)
        var newUsers: [(ref: UserRef, number: Int64, key: [UInt8]?, sealedName: [UInt8]?)] = []
        /// For the user search: users this device names readably for the first time, and the
        /// display names the batch gives users (``PostgresSearchIndex``).
        var namedUsers: [String] = []
        var displayNames: [PostgresSearchIndex.Name] = []
        /// The users the device forgot in this batch, with the readable id they had here.
        var forgotten: [(ref: UserRef, name: String?)] = []
        var previous = headHash
        var directory = users
        for (index, event) in events.enumerated() {
            let seq = headSeq + UInt64(index) + 1
            guard claimedSeqs[index] == nil || claimedSeqs[index] == seq else {
                throw StoreError(.seqMismatch, "event \(index + 1) claims seq \(claimedSeqs[index]!), but it would be stored at \(seq)", batchIndex: index)
            }
            var seal: UserSeal?
            var readsAs: String?
            if let user = event.user {
                let needsKey = event.hasPersonalFields
                let ref = directory.ref(of: user)
                // In the replica store's order: a pseudonym literal or a forgotten user reads as
                // the pseudonym, erased; a live user by name keeps its key; anyone else is new.
                if UserRef.isLiteral(user) || directory.isForgotten(ref) {
                    seal = UserSeal(ref: ref, key: !UserRef.isLiteral(user) && needsKey ? pendingKeys[ref] : nil)
                    readsAs = ref.literal
                    // Every pseudonym a record names has a row: a tombstone for one never seen.
                    if directory.entries[ref] == nil && !directory.isForgotten(ref) {
                        newUsers.append((ref, nextUserNumber, nil, nil))
                        nextUserNumber += 1
                        directory.forget(ref)
                    }
                } else if let key = directory.key(of: ref) {
                    seal = UserSeal(ref: ref, key: needsKey ? key : nil)
                    readsAs = user
                } else {
                    guard let key = pendingKeys[ref] else {
                        throw StoreError(.invalidEvent, "seq \(seq) names a user whose key the upload did not carry", batchIndex: index)
                    }
                    newUsers.append((ref, nextUserNumber, key.bytes, PersonalData.sealRandom(Array(user.utf8), key: key)))
                    nextUserNumber += 1
                    directory.add(ref, name: user, key: key)
                    namedUsers.append(user)
                    seal = UserSeal(ref: ref, key: needsKey ? key : nil)
                    readsAs = user
                }
                if seal?.key == nil, let sections = sealedSections, let sealed = sections[index] { seal?.sealed = sealed }
                if event.type == .userForgotten, let ref = seal?.ref {
                    forgotten.append((ref, directory.name(of: ref)))
                    directory.forget(ref)
                }
                // A record reads as its pseudonym's entry says (a record uploaded by pseudonym
                // reads by name while the user is live here), which is what the index holds.
                if let ref = seal?.ref { readsAs = directory.displayName(of: ref) }
                if let name = readsAs, !UserRef.isLiteral(name), let displayName = PostgresSearchIndex.displayName(in: event.payload) {
                    displayNames.append(.init(user: name, displayName: displayName, position: HistoryCursor(at: event.at, device: device, seq: seq)))
                }
            }
            let bytes = RecordCodec.encode(event, seq: seq, previousHash: previous, seal: seal)
            let hash = Array(bytes[RecordCodec.hashOffset..<(RecordCodec.hashOffset + Digest.byteCount)])
            rows.append([
                .text(device), .int64(Int64(seq)), .uuid(event.id), .int64(event.at.millisecondsSince1970), .int16(Int16(event.type.code)),
                readsAs.map { .bytes(storage.userKey(of: $0)) } ?? .null, .bytes(hash), .bytes(bytes)
            ])
            previous = Digest(bytes: hash)
        }
        // One COPY for the batch's rows, straight into `events` (binary: no text round trip; the
        // floor of what PostgreSQL ingests). A unique violation is an event id stored at another
        // seq: the whole transaction is void. (A `catch where` on this typed throw crashes the
        // Swift 6.3 compiler, hence the Result.)
        let inserted = Result { () throws(PostgreSQLError) in
            try connection.copy(into: "events", columns: Self.eventColumns, rows: rows)
        }
        if case .failure(let error) = inserted {
            guard error.isUniqueViolation else { throw error }
            throw StoreError(
                .conflict,
                "an event id of the batch is already stored for \(device) at another seq with other content; an event id may only be reused for the identical event"
            )
        }
        if !newUsers.isEmpty {
            try connection.execute(
                prepared: "users_insert",
                """
                INSERT INTO device_users (device, ref, number, key, sealed_name)
                SELECT $1, ref, number, key, sealed_name FROM unnest($2::bytea[], $3::int8[], $4::bytea[], $5::bytea[]) AS new (ref, number, key, sealed_name)
                ON CONFLICT (device, ref) DO NOTHING
                """,
                [
                    .text(device), .bytesArray(newUsers.map(\.ref.bytes)), .int64Array(newUsers.map(\.number)),
                    .optionalBytesArray(newUsers.map(\.key)), .optionalBytesArray(newUsers.map(\.sealedName))
                ])
        }
        try PostgresSearchIndex.ingest(connection, storage: storage, device: device, users: namedUsers, names: displayNames)
        for (ref, name) in forgotten {
            if let name { try PostgresSearchIndex.deviceForgot(connection, storage: storage, device: device, user: name) }
            // The device forgot the user: its row becomes a tombstone, its earlier records read
            // by the pseudonym from now on, and a forget request the server kept is answered.
            try connection.execute(
                prepared: "user_tombstone", "UPDATE device_users SET key = NULL, sealed_name = NULL WHERE device = $1 AND ref = $2",
                [.text(device), .bytes(ref.bytes)])
            if let name {
                try connection.execute(
                    prepared: "events_rename_user", "UPDATE events SET user_key = $3 WHERE device = $1 AND user_key = $2",
                    [.text(device), .bytes(storage.userKey(of: name)), .bytes(storage.userKey(of: ref.literal))])
            }
            try connection.execute(
                prepared: "forget_request_done", "DELETE FROM forget_requests WHERE device = $1 AND ref = $2",
                [.text(device), .bytes(ref.bytes)])
        }
        let newHead = headSeq + UInt64(events.count)
        let version = newUsers.isEmpty && forgotten.isEmpty ? usersVersion : nextUsersVersion()
        try connection.execute(
            prepared: "device_head",
            "UPDATE devices SET head_seq = $2, head_hash = $3, users_version = $4, last_upload_at_ms = $5 WHERE device = $1",
            [
                .text(device), .int64(Int64(newHead)), .bytes(previous.bytes), .int64(version),
                .int64(Timestamp.now.millisecondsSince1970)
            ])
        headSeq = newHead
        headHash = previous
        users = directory
        if version != usersVersion {
            usersVersion = version
            usersToCache = true
        }
    }

    /// The columns of `events` an append writes, in the order of its rows.
    static let eventColumns = ["device", "seq", "id", "at_ms", "type", "user_key", "hash", "record"]

    func signingPublicKey() throws -> SigningPublicKey? { publicKey }

    func recordSigningPublicKey(_ key: SigningPublicKey) throws {
        try connection.execute(
            prepared: "device_key_record", "UPDATE devices SET public_key = $2 WHERE device = $1 AND public_key IS NULL",
            [.text(device), .bytes(key.bytes)])
        if publicKey == nil { publicKey = key }
    }

    func latestSignedHead() throws -> SignedHead? {
        let rows = try connection.execute(
            prepared: "signed_head_latest",
            "SELECT seq, hash, signature FROM signed_heads WHERE device = $1 ORDER BY seq DESC LIMIT 1", [.text(device)])
        guard let row = rows.first else { return nil }
        return SignedHead(device: device, seq: UInt64(try row.int64(0)), hash: Digest(bytes: try row.bytes(1)), signature: try row.bytes(2))
    }

    func recordSignedHead(_ head: SignedHead) throws {
        try connection.execute(
            prepared: "signed_head_insert",
            "INSERT INTO signed_heads (device, seq, hash, signature) VALUES ($1, $2, $3, $4) ON CONFLICT (device, seq) DO NOTHING",
            [.text(device), .int64(Int64(head.seq)), .bytes(head.hash.bytes), .bytes(head.signature)])
    }

    /// After an upload that carried the keys of `refs` (users the device holds): a forget
    /// request for each of them the server forgot, unless one is pending or the device's log
    /// already has its `user_forgotten`.
    func requestForgetOfUsersTheDeviceHolds(_ refs: [UserRef], requestedAt: Timestamp) throws {
        let forgotten = refs.filter { users.isForgotten($0) }
        guard !forgotten.isEmpty else { return }
        let pending = Set(try forgetRequests())
        for ref in forgotten where !pending.contains(ref) {
            guard try !deviceForgot(ref) else { continue }
            try connection.execute(
                prepared: "forget_request_insert",
                "INSERT INTO forget_requests (device, ref, requested_at_ms) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
                [.text(device), .bytes(ref.bytes), .int64(requestedAt.millisecondsSince1970)])
        }
    }

    /// Whether the device's log has its own `user_forgotten` for `ref`.
    func deviceForgot(_ ref: UserRef) throws -> Bool {
        try connection.execute(
            prepared: "device_forgot",
            "SELECT EXISTS (SELECT 1 FROM events WHERE device = $1 AND user_key = $2 AND type = $3::int2)",
            [.text(device), .bytes(storage.userKey(of: ref.literal)), .int64(Int64(EventType.userForgotten.code))])[0].bool(0)
    }

    func forgetRequests() throws -> [UserRef] {
        try connection.execute(prepared: "forget_requests", "SELECT ref FROM forget_requests WHERE device = $1 ORDER BY ref", [.text(device)])
            .map { row in
                let bytes = try row.bytes(0)
                guard bytes.count == UserRef.byteCount else {
                    throw PostgresStorage.corrupted("a forget request of \(device) names a pseudonym of \(bytes.count) bytes")
                }
                return UserRef(bytes: bytes)
            }
    }
}

extension PostgresDeviceLog {
    /// The server's forget in this device's log, as a replica store does it: the user's row
    /// becomes a tombstone (its key and readable id are gone), the user's records read by the
    /// pseudonym (`events.user_key` follows), and, when the log holds records of the user and
    /// the device has not forgotten it itself, a forget request is kept for the device.
    /// `nil` for a log that never adopted its device's pseudonym key: it names no user.
    func forgetUserKey(_ user: String, requestedAt: Timestamp) throws -> ForgetOutcome? {
        guard holdsDevicePseudonymKey || !users.entries.isEmpty || !users.forgotten.isEmpty else { return nil }
        let ref = users.ref(of: user)
        let literal = ref.literal
        let name = users.name(of: ref)
        let outcome: OnboardingStore.KeyErasure = users.key(of: ref) != nil ? .erased : users.isForgotten(ref) ? .alreadyForgotten : .neverSeen
        let keys = [storage.userKey(of: user), storage.userKey(of: literal)] + (name.map { [storage.userKey(of: $0)] } ?? [])
        let holdsRecords = try connection.execute(
            prepared: "device_holds_user",
            "SELECT EXISTS (SELECT 1 FROM events WHERE device = $1 AND user_key = ANY($2::bytea[]))",
            [.text(device), .bytesArray(keys)])[0].bool(0)
        let forgotByDevice = try deviceForgot(ref)
        let asks = holdsRecords && !forgotByDevice
        try connection.execute(
            prepared: "user_forget",
            """
            INSERT INTO device_users (device, ref, number, key, sealed_name) VALUES ($1, $2, $3, NULL, NULL)
            ON CONFLICT (device, ref) DO UPDATE SET key = NULL, sealed_name = NULL
            """, [.text(device), .bytes(ref.bytes), .int64(nextUserNumber)])
        nextUserNumber += 1
        if let name {
            try connection.execute(
                prepared: "events_rename_user", "UPDATE events SET user_key = $3 WHERE device = $1 AND user_key = $2",
                [.text(device), .bytes(storage.userKey(of: name)), .bytes(storage.userKey(of: literal))])
        }
        let version = nextUsersVersion()
        try connection.execute(
            prepared: "device_users_version", "UPDATE devices SET users_version = $2 WHERE device = $1",
            [.text(device), .int64(version)])
        if asks {
            try connection.execute(
                prepared: "forget_request_insert",
                "INSERT INTO forget_requests (device, ref, requested_at_ms) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
                [.text(device), .bytes(ref.bytes), .int64(requestedAt.millisecondsSince1970)])
        }
        users.forget(ref)
        usersVersion = version
        usersToCache = true
        return ForgetOutcome(device: device, pseudonym: literal, outcome: outcome)
    }
}
