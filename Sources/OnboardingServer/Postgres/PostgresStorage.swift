import Foundation
import OnboardingModel
import OnboardingProjections
import OnboardingStore
import PostgreSQL

/// The server's storage in PostgreSQL (`onboard serve --database postgres://…`): any number of
/// server processes on one database serve the same devices, since nothing a request depends on
/// is kept in a node's memory (docs/server-storage.md). Each device's writes hold that device's
/// advisory lock; the lockout across devices is folded from the database on every query.
package final class PostgresStorage: ServerStorage {
    package let pool: PGPool
    package let signingKey: SigningKeyPair
    /// The key of the server-side user index: `events.user_key` is the keyed BLAKE2b-128 of how
    /// a record names its user (the readable id, or the device's pseudonym once forgotten), so a
    /// user's records across all devices are one index range, found with one hash per query.
    private let userIndexKey: SecretKey
    /// The key the access log pseudonymises user ids with (``SyncServer/AccessLog``), shared by every node.
    package let accessLogKey: SecretKey
    /// The user search's keys: MACs of folded name prefixes, and the seal of the readable id and
    /// display name (``PostgresSearchIndex``); the seal also covers server actions' users and reasons.
    let searchKey: SecretKey
    let namesKey: SecretKey
    private let policy: LockoutPolicy
    /// The admin token made on first start, when the database had none.
    package let createdAdminToken: String?
    /// Device users this node read or wrote lately, each valid for one `devices.users_version`.
    let usersCache = DeviceUsersCache()

    /// Rows read per round trip by histories and folds: a page of 500 records is ~100 KB.
    static let readBatchRows = 500

    /// Connects, migrates the schema (see ``PostgresSchema``) and loads the server's keys,
    /// creating them (and an admin token) on first start.
    package init(
        url: DatabaseURL, pool options: PGPool.Options = PGPool.Options(), policy: LockoutPolicy,
        createsAdminToken: Bool = true
    ) throws {
        var options = options
        // An acknowledged batch must be durable whatever the database's default says.
        options.connection.sessionSettings["synchronous_commit"] = "on"
        pool = PGPool(url: url, options: options)
        self.policy = policy
        let keys = try pool.withConnection {
            connection throws -> (signing: [UInt8], userIndex: [UInt8], accessLog: [UInt8], search: [UInt8], names: [UInt8], admin: String?) in
            try PostgresSchema.migrate(connection)
            return try connection.transaction { connection in
                try connection.execute("SELECT pg_advisory_xact_lock($1)", [.int64(PostgresSchema.migrationLockKey)])
                try connection.execute(
                    """
                    INSERT INTO server_keys (name, secret) VALUES ('signing', $1), ('user_index', $2), ('access_log', $3), ('search', $4), ('names', $5)
                    ON CONFLICT (name) DO NOTHING
                    """,
                    [
                        .bytes(SigningKeyPair.generate().secretBytes), .bytes(SecretKey.random().bytes), .bytes(SecretKey.random().bytes),
                        .bytes(SecretKey.random().bytes), .bytes(SecretKey.random().bytes)
                    ])
                let rows = try connection.execute(
                    "SELECT name, secret FROM server_keys WHERE name IN ('signing', 'user_index', 'access_log', 'search', 'names')")
                var found: [String: [UInt8]] = [:]
                for row in rows { found[try row.string(0)] = try row.bytes(1) }
                var admin: String?
                if createsAdminToken, !(try connection.execute("SELECT EXISTS (SELECT 1 FROM tokens WHERE role = 'admin')")[0].bool(0)) {
                    let token = TokenStore.newToken()
                    try connection.execute("INSERT INTO tokens (token_hash, role, expires_at_ms) VALUES ($1, 'admin', NULL)", [.bytes(TokenStore.key(token))])
                    admin = token
                }
                return (
                    found["signing"] ?? [], found["user_index"] ?? [], found["access_log"] ?? [], found["search"] ?? [], found["names"] ?? [],
                    admin
                )
            }
        }
        guard let signing = SigningKeyPair(secretBytes: keys.signing),
            [keys.userIndex, keys.accessLog, keys.search, keys.names].allSatisfy({ $0.count == SecretKey.byteCount })
        else {
            throw Self.corrupted("the server_keys table holds a key of the wrong size; restore it from a backup")
        }
        signingKey = signing
        userIndexKey = SecretKey(bytes: keys.userIndex)
        accessLogKey = SecretKey(bytes: keys.accessLog)
        searchKey = SecretKey(bytes: keys.search)
        namesKey = SecretKey(bytes: keys.names)
        createdAdminToken = keys.admin
        try PostgresSearchIndex.backfill(self)
    }

    package func close() { pool.close() }

    static func corrupted(_ message: String) -> StoreError { StoreError(.corrupted, message) }

    /// `events.user_key` of records that name their user `name` (a readable id or a pseudonym literal).
    package func userKey(of name: String) -> [UInt8] { UserRef(user: name, pseudonymKey: userIndexKey).bytes }

    /// The advisory lock of `device`'s log: a hash with the top bit set, so it never equals
    /// ``PostgresSchema/migrationLockKey``.
    static func deviceLockKey(_ device: String) -> Int64 {
        let bytes = Digest.hash(Array(("onboard.device\0" + device).utf8)).bytes
        let value = bytes.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return Int64(bitPattern: value | (1 << 63))
    }

    // MARK: Tokens

    package func issueToken(role: TokenRole, device: String?, expiresAt: Timestamp?) throws -> String {
        precondition((role == .device) == (device != nil), "a device token names its device, no other does")
        let token = TokenStore.newToken()
        try pool.transaction { connection in
            // A device token enrols its device, as on LMDB: the device then has a log.
            if let device {
                try connection.execute(
                    prepared: "device_row_insert",
                    "INSERT INTO devices (device, pseudonym_key, head_hash) VALUES ($1, $2, $3) ON CONFLICT (device) DO NOTHING",
                    [.text(device), .bytes(SecretKey.random().bytes), .bytes(Digest.zero.bytes)])
            }
            try connection.execute(
                prepared: "token_insert", "INSERT INTO tokens (token_hash, role, device, expires_at_ms) VALUES ($1, $2, $3, $4)",
                [
                    .bytes(TokenStore.key(token)), .text(role.rawValue), device.map { .text($0) } ?? .null,
                    expiresAt.map { .int64($0.millisecondsSince1970) } ?? .null
                ])
        }
        return token
    }

    package func grant(for token: String) throws -> TokenGrant? {
        let rows = try pool.withConnection { connection in
            try connection.execute(
                prepared: "token_grant", "SELECT role, device, expires_at_ms FROM tokens WHERE token_hash = $1", [.bytes(TokenStore.key(token))])
        }
        guard let row = rows.first, let role = TokenRole(rawValue: try row.string(0)) else { return nil }
        return TokenGrant(role: role, device: try row.optionalString(1), expiresAt: try row.optionalInt64(2).map { Timestamp(millisecondsSince1970: $0) })
    }

    package func rotateAdminToken(beforeCommit: (String) throws -> Void) throws -> (token: String, revoked: Int) {
        let token = TokenStore.newToken()
        let revoked = try pool.transaction { connection in
            try beforeCommit(token)
            let revoked = try connection.execute("DELETE FROM tokens WHERE role = 'admin'").affectedRows
            try connection.execute("INSERT INTO tokens (token_hash, role, expires_at_ms) VALUES ($1, 'admin', NULL)", [.bytes(TokenStore.key(token))])
            return revoked
        }
        return (token, revoked)
    }

    package func revokeTokens(device: String) throws -> Int {
        try pool.withConnection { connection in
            try connection.execute(prepared: "tokens_revoke", "DELETE FROM tokens WHERE role = 'device' AND device = $1", [.text(device)]).affectedRows
        }
    }

    package func revokeAuditorTokens() throws -> Int {
        try pool.withConnection { try $0.execute("DELETE FROM tokens WHERE role = 'auditor'").affectedRows }
    }

    package func hasAdmin() throws -> Bool {
        try pool.withConnection { try $0.execute("SELECT EXISTS (SELECT 1 FROM tokens WHERE role = 'admin')")[0].bool(0) }
    }

    // MARK: Devices

    package func enrolledDevices() throws -> [String] {
        try pool.withConnection { connection in
            try connection.execute(prepared: "devices_all", "SELECT device FROM devices ORDER BY device").map { try $0.string(0) }
        }
    }

    package func isEnrolled(_ device: String) throws -> Bool {
        try pool.withConnection { connection in
            try connection.execute(prepared: "device_exists", "SELECT EXISTS (SELECT 1 FROM devices WHERE device = $1)", [.text(device)])[0].bool(0)
        }
    }

    package func registeredKey(of device: String) throws -> SigningPublicKey? {
        try pool.withConnection { connection in
            let rows = try connection.execute(prepared: "device_key", "SELECT public_key FROM devices WHERE device = $1", [.text(device)])
            return try rows.first?.optionalBytes(0).flatMap { SigningPublicKey(bytes: $0) }
        }
    }

    package func enroll(_ device: String, publicKey: SigningPublicKey?) throws {
        try withDeviceLog(device) { log in
            guard let publicKey else { return }
            if let registered = try log.signingPublicKey() {
                guard registered == publicKey else { throw TokenStore.KeyMismatch(device: device, registered: registered, offered: publicKey) }
                return
            }
            try log.recordSigningPublicKey(publicKey)
        }
    }

    // MARK: Device logs

    package func withDeviceLog<R>(_ device: String, _ body: (any DeviceLog) throws -> R) throws -> R {
        let (result, log) = try pool.transaction { connection in
            try connection.execute(prepared: "device_lock", "SELECT pg_advisory_xact_lock($1)", [.int64(Self.deviceLockKey(device))])
            let log = try PostgresDeviceLog(device: device, connection: connection, storage: self)
            return (try body(log), log)
        }
        // Committed: the users as the transaction left them are the ones at their version. (A
        // transaction PostgreSQL rolled back at COMMIT leaves a version no row holds: never read.)
        if log.usersToCache { usersCache.store(log.cacheEntry, of: device) }
        return result
    }

    /// The users of `device`'s log as its records need them to be read.
    static func loadUsers(of device: String, pseudonymKey: SecretKey, connection: PGConnection) throws -> (directory: UserDirectory, nextNumber: Int64) {
        var directory = UserDirectory(pseudonymKey: pseudonymKey)
        var next: Int64 = 1
        let rows = try connection.execute(
            prepared: "device_users", "SELECT ref, number, key, sealed_name FROM device_users WHERE device = $1 ORDER BY number",
            [.text(device)])
        for row in rows {
            next = max(next, try row.int64(1) + 1)
            try addUser(ref: try row.bytes(0), key: try row.optionalBytes(2), sealedName: try row.optionalBytes(3), of: device, to: &directory)
        }
        return (directory, next)
    }

    /// A `devices.pseudonym_key` as read, checked.
    static func pseudonymKey(_ bytes: [UInt8]) throws -> SecretKey {
        guard bytes.count == SecretKey.byteCount else { throw corrupted("the pseudonym key of a device has \(bytes.count) bytes") }
        return SecretKey(bytes: bytes)
    }

    /// One `device_users` row into `directory`: a live user when its sealed id opens with its
    /// key, else forgotten (as a damaged entry reads in a store).
    static func addUser(ref: [UInt8], key: [UInt8]?, sealedName: [UInt8]?, of device: String, to directory: inout UserDirectory) throws {
        guard ref.count == UserRef.byteCount else { throw corrupted("a user row of \(device) has a pseudonym of \(ref.count) bytes") }
        if let key, key.count == SecretKey.byteCount, let sealedName,
            let plaintext = sealedName.withUnsafeBytes({ PersonalData.open($0, key: SecretKey(bytes: key)) }),
            let name = String(validating: plaintext, as: UTF8.self)
        {
            directory.add(UserRef(bytes: ref), name: name, key: SecretKey(bytes: key))
        } else {
            directory.forget(UserRef(bytes: ref))
        }
    }

    /// A stored record, read with its device's users.
    static func decode(_ bytes: [UInt8], seq: UInt64, device: String, users: UserDirectory) throws -> Record {
        do { return try RecordCodec.decode(bytes, expectedSeq: seq, users: users) } catch {
            throw StoreError(.corrupted, "the record at seq \(seq) of \(device) in the database is damaged: \(error); run onboard audit", seq: seq)
        }
    }

    /// Reads records of several devices, loading each device's users once.
    final class RecordReader {
        let connection: PGConnection
        let storage: PostgresStorage
        private var directories: [String: UserDirectory] = [:]

        init(connection: PGConnection, storage: PostgresStorage) {
            self.connection = connection
            self.storage = storage
        }

        /// Loads the users of every device in `devices` not loaded yet: from the node's cache
        /// when its copy is at the device's users version, else in one more query for all of them
        /// (a user's records span a few devices; queries per device would dominate).
        func preload(_ devices: [String]) throws {
            let missing = Array(Set(devices).filter { directories[$0] == nil })
            guard !missing.isEmpty else { return }
            var stale: [String: SecretKey] = [:]
            for row in try connection.execute(
                prepared: "devices_users_versions",
                "SELECT device, pseudonym_key, users_version FROM devices WHERE device = ANY($1::text[])",
                [.textArray(missing)])
            {
                let device = try row.string(0)
                let key = try PostgresStorage.pseudonymKey(try row.bytes(1))
                if let cached = storage.usersCache.entry(of: device, version: try row.int64(2), pseudonymKey: key) {
                    directories[device] = cached.directory
                } else {
                    stale[device] = key
                }
            }
            guard !stale.isEmpty else { return }
            // Read here, not kept: the version read above and these rows are two statements, so
            // they may straddle another node's commit. (Only a device log, which reads both under
            // the device's lock, fills the cache.)
            var loaded: [String: UserDirectory] = stale.mapValues { UserDirectory(pseudonymKey: $0) }
            for row in try connection.execute(
                prepared: "devices_users",
                """
                SELECT device, ref, key, sealed_name FROM device_users WHERE device = ANY($1::text[]) ORDER BY device, number
                """, [.textArray(Array(stale.keys))])
            {
                let device = try row.string(0)
                guard loaded[device] != nil else { continue }
                try PostgresStorage.addUser(
                    ref: try row.bytes(1), key: try row.optionalBytes(2), sealedName: try row.optionalBytes(3),
                    of: device, to: &loaded[device]!)
            }
            for (device, directory) in loaded { directories[device] = directory }
        }

        func record(device: String, seq: UInt64, bytes: [UInt8]) throws -> Record {
            if directories[device] == nil { try preload([device]) }
            guard let users = directories[device] else { throw PostgresStorage.corrupted("the records of \(device) have no device row") }
            return try PostgresStorage.decode(bytes, seq: seq, device: device, users: users)
        }
    }

    // MARK: Across devices

    package func history(_ query: HistoryQuery) throws -> (history: History, devices: [String]) {
        try pool.withConnection { connection in
            let reader = RecordReader(connection: connection, storage: self)
            var builder = History.Builder(query: query)
            if let device = query.device {
                guard
                    try connection.execute(
                        prepared: "device_exists", "SELECT EXISTS (SELECT 1 FROM devices WHERE device = $1)",
                        [.text(device)])[0].bool(0)
                else { return (History(user: query.user), []) }
                // One device's log, in its seq order, from the cursor on.
                var after = Int64(clamping: query.after?.seq ?? 0)
                let userFilter: PGValue = query.user.map { .bytes(self.userKey(of: $0)) } ?? .null
                while !builder.isSettled {
                    let rows = try connection.execute(
                        prepared: "history_device",
                        """
                        SELECT seq, record FROM events WHERE device = $1 AND seq > $2 AND ($3::bytea IS NULL OR user_key = $3)
                        ORDER BY seq LIMIT $4
                        """, [.text(device), .int64(after), userFilter, .int64(Int64(Self.readBatchRows))])
                    for row in rows where !builder.isSettled {
                        let seq = try row.int64(0)
                        builder.add(try reader.record(device: device, seq: UInt64(seq), bytes: try row.bytes(1)))
                        after = seq
                    }
                    if rows.count < Self.readBatchRows { break }
                }
                let mentioned =
                    try query.user.map { user in
                        try connection.execute(
                            prepared: "device_mentions", "SELECT EXISTS (SELECT 1 FROM events WHERE device = $1 AND user_key = $2)",
                            [.text(device), .bytes(userKey(of: user))])[0].bool(0)
                    } ?? true
                return (builder.history, mentioned ? [device] : [])
            }
            guard let user = query.user else { preconditionFailure("a history across devices needs a user") }
            // One range of the user index, in (at, device, seq) order, from the cursor on.
            let key = userKey(of: user)
            var position = query.after.map { (Int64($0.at.millisecondsSince1970), $0.device, Int64(clamping: $0.seq)) } ?? (Int64.min, "", 0)
            var seen = Set<UUID>()
            while !builder.isSettled {
                let rows = try connection.execute(
                    prepared: "history_user",
                    """
                    SELECT device, seq, record FROM events
                    WHERE user_key = $1 AND (at_ms, device, seq) > ($2, $3, $4) AND at_ms >= $5 AND at_ms < $6
                    ORDER BY at_ms, device, seq LIMIT $7
                    """,
                    [
                        .bytes(key), .int64(position.0), .text(position.1), .int64(position.2),
                        .int64(query.since?.millisecondsSince1970 ?? Int64.min), .int64(query.until?.millisecondsSince1970 ?? Int64.max),
                        .int64(Int64(Self.readBatchRows))
                    ])
                try reader.preload(try rows.map { try $0.string(0) })
                for row in rows where !builder.isSettled {
                    let device = try row.string(0)
                    let seq = try row.int64(1)
                    let record = try reader.record(device: device, seq: UInt64(seq), bytes: try row.bytes(2))
                    position = (record.event.at.millisecondsSince1970, device, seq)
                    if seen.insert(record.event.id).inserted { builder.add(record) }
                }
                if rows.count < Self.readBatchRows { break }
            }
            let devices = try connection.execute(
                prepared: "user_devices", "SELECT DISTINCT device FROM events WHERE user_key = $1 ORDER BY 1",
                [.bytes(key)]
            ).map { try $0.string(0) }
            return (builder.history, devices)
        }
    }

    /// The event types that can change a lockout key, as stored codes.
    private static let lockoutTypes = EventType.allCases.filter(LockoutEngine.mayAffectKeys).map { Int64($0.code) }

    package func lockoutEntries(user: String, at: Timestamp) throws -> [LockoutEngine.Entry] {
        try pool.withConnection { connection in
            let reader = RecordReader(connection: connection, storage: self)
            var engine = LockoutEngine(policy: policy, acrossDevices: true)
            let rows = try connection.execute(
                prepared: "lockout_user",
                """
                SELECT device, seq, record FROM events WHERE user_key = $1 AND type = ANY($2::int8[]::int2[])
                ORDER BY at_ms, device, seq
                """, [.bytes(userKey(of: user)), .int64Array(Self.lockoutTypes)])
            try reader.preload(try rows.map { try $0.string(0) })
            // The administrators' clears go in at (at, "", seq): before any device's records of
            // their millisecond (docs/sync-protocol.md § Server actions).
            var clears = try actions(ofUser: user, connection: connection).filter { $0.kind == .lockoutCleared }[...]
            for row in rows {
                let record = try reader.record(device: try row.string(0), seq: UInt64(try row.int64(1)), bytes: try row.bytes(2))
                let position = HistoryCursor(at: record.event.at, device: record.event.device, seq: record.seq)
                while let clear = clears.first, clear.position < position {
                    engine.clear(user: user, factor: clear.factor)
                    clears.removeFirst()
                }
                engine.apply(record)
            }
            for clear in clears { engine.clear(user: user, factor: clear.factor) }
            return engine.entries(ofUser: user, at: at)
        }
    }

    package func forgetUser(_ user: String, at: Timestamp) throws -> [ForgetOutcome] {
        var results: [ForgetOutcome] = []
        for device in try enrolledDevices() {
            let outcome = try withDeviceLog(device) { log -> ForgetOutcome? in
                guard let log = log as? PostgresDeviceLog else { return nil }
                return try log.forgetUserKey(user, requestedAt: at)
            }
            if let outcome { results.append(outcome) }
        }
        try pool.transaction { connection in
            try PostgresSearchIndex.forget(connection, storage: self, user: user)
            try forgetActions(ofUser: user, connection: connection)
        }
        return results
    }

    package func audit() throws -> [DeviceAudit] {
        try enrolledDevices().map { device in try pool.withConnection { try PostgresAudit.audit(device, connection: $0, storage: self) } }
    }
}
