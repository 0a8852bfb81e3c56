import Foundation
import OnboardingModel
import OnboardingStore
import PostgreSQL

/// `onboard migrate-server --data DIR --database URL`: copies an LMDB-backed server (its tokens,
/// keys and every device replica) into PostgreSQL, byte for byte, so the devices sync on with
/// the same tokens and the same pinned server key. Every replica's chain and signed heads are
/// verified first (nothing is copied from a damaged server); then each device is copied in
/// commits of ``batchRecords`` records from where the database's copy ends, so a run that was
/// stopped resumes and a finished one copies nothing again. Each copy is audited afterwards.
package enum PostgresMigration {
    /// 1,000 records per commit: an upload's batch, a few hundred KB per transaction.
    package static let batchRecords = 1_000

    package struct Progress: Sendable {
        package var device: String
        package var copiedRecords: Int
        package var totalRecords: Int
    }

    package struct DeviceResult: Sendable {
        package var device: String
        package var records: Int
        package var copied: Int
        package var audit: DeviceAudit
    }

    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }

    package static func run(
        dataDirectory: String, into storage: PostgresStorage,
        progress: (Progress) -> Void = { _ in }
    ) throws -> [DeviceResult] {
        let tokens = try TokenStore(directory: (dataDirectory as NSString).appendingPathComponent("server"))
        defer { tokens.close() }
        let signing = try OnboardingStore.signingKey(at: ReplicaStorage.signingKeyPath(dataDirectory: dataDirectory))
        let accessLog = try SyncServer.AccessLog.existingKey(dataDirectory: dataDirectory)
        let replicas = try DeviceReplicas(directory: (dataDirectory as NSString).appendingPathComponent("devices"))
        let devices = try tokens.enrolledDevices()

        // Verified first, all of them: a damaged server is not half copied.
        var stores: [(device: String, store: OnboardingStore?)] = []
        defer { for entry in stores { entry.store?.close() } }
        for device in devices {
            let path = replicas.path(for: device)
            guard FileManager.default.fileExists(atPath: path) else {
                stores.append((device, nil))
                continue
            }
            var options = OnboardingStore.Options()
            options.readOnly = true
            options.maintainProjections = false
            options.signsHeads = false
            let store = try OnboardingStore.open(at: path, options: options)
            stores.append((device, store))
            let report = try store.verify()
            if let problem = report.firstProblem {
                throw Failure(
                    description: "the replica of \(device) does not verify (\(problem)); run onboard audit --data \(dataDirectory), nothing was copied")
            }
            if let registered = tokens.publicKey(for: device), let recorded = report.signingPublicKey, registered != recorded {
                throw Failure(description: "the replica of \(device) records another signing key than the one it enrolled with; nothing was copied")
            }
        }

        try storage.pool.transaction { connection in
            try connection.execute("SELECT pg_advisory_xact_lock($1)", [.int64(PostgresSchema.migrationLockKey)])
            let current = try connection.execute("SELECT secret FROM server_keys WHERE name = 'signing'").first?.bytes(0)
            if current != signing.secretBytes {
                // Another key is only replaced on a database that serves no device yet: devices
                // pinned the LMDB server's key, and a database in use has pinned its own.
                let used = try connection.execute("SELECT EXISTS (SELECT 1 FROM devices d WHERE NOT (d.device = ANY($1::text[])))", [.textArray(devices)])[0]
                    .bool(0)
                guard !used else {
                    throw Failure(description: "the database already serves devices under another server key; migrate into an empty database")
                }
                try connection.execute("UPDATE server_keys SET secret = $1 WHERE name = 'signing'", [.bytes(signing.secretBytes)])
                if let accessLog { try connection.execute("UPDATE server_keys SET secret = $1 WHERE name = 'access_log'", [.bytes(accessLog.bytes)]) }
            }
            let all = try tokens.allTokens()
            // Issued when the LMDB server says so (tokens of an older onboard: now).
            try connection.execute(
                """
                INSERT INTO tokens (token_hash, role, device, issued_at, expires_at_ms)
                SELECT hash, role, device, coalesce(to_timestamp(issued_ms / 1000.0), now()), CASE WHEN expires_ms = -1 THEN NULL ELSE expires_ms END
                FROM unnest($1::bytea[], $2::text[], $3::text[], $4::int8[], $5::int8[]) AS t (hash, role, device, issued_ms, expires_ms)
                ON CONFLICT (token_hash) DO NOTHING
                """,
                [
                    .bytesArray(all.map(\.hash)), .textArray(all.map(\.grant.role.rawValue)),
                    .optionalTextArray(all.map(\.grant.device)), .int64Array(all.map { $0.issuedAt?.millisecondsSince1970 ?? -1 }),
                    .int64Array(all.map { $0.grant.expiresAt?.millisecondsSince1970 ?? -1 })
                ])
            try connection.execute(
                "UPDATE tokens SET issued_at = now() WHERE token_hash = ANY($1::bytea[]) AND issued_at < to_timestamp(0)",
                [.bytesArray(all.filter { $0.issuedAt == nil }.map(\.hash))])
        }
        var results: [DeviceResult] = []
        let times = try tokens.deviceTimesByDevice()
        for (device, store) in stores {
            results.append(try copy(device, store: store, registered: tokens.publicKey(for: device), into: storage, progress: progress))
            if let time = times[device] {
                try storage.pool.withConnection { connection in
                    try connection.execute(
                        """
                        UPDATE devices SET enrolled_at = coalesce(to_timestamp($2::int8 / 1000.0), enrolled_at), last_upload_at_ms = coalesce($3, last_upload_at_ms)
                        WHERE device = $1
                        """,
                        [
                            .text(device), time.enrolled.map { .int64($0.millisecondsSince1970) } ?? .null,
                            time.lastUpload.map { .int64($0.millisecondsSince1970) } ?? .null
                        ])
                }
            }
        }
        try copyActions(dataDirectory: dataDirectory, into: storage)
        // The copied users go into the user search, as at the first start of a database written
        // before it: once more, over everything the database now holds.
        try storage.pool.withConnection { try $0.execute("DELETE FROM server_state WHERE name = 'user_search'") }
        try PostgresSearchIndex.backfill(storage)
        return results
    }

    /// The server actions of `DATA/actions`, in their order, each once (by id) however often
    /// the migration runs.
    private static func copyActions(dataDirectory: String, into storage: PostgresStorage) throws {
        let directory = (dataDirectory as NSString).appendingPathComponent("actions")
        guard FileManager.default.fileExists(atPath: (directory as NSString).appendingPathComponent("data.mdb")) else { return }
        let actions = try ActionStore(directory: directory)
        defer { actions.close() }
        for action in actions.all() { try storage.record(action, ifNew: true) }
    }

    private static func copy(
        _ device: String, store: OnboardingStore?, registered: SigningPublicKey?, into storage: PostgresStorage,
        progress: (Progress) -> Void
    ) throws -> DeviceResult {
        guard let store else {
            // Enrolled and never uploaded: the device row alone.
            try storage.enroll(device, publicKey: registered)
            return DeviceResult(
                device: device, records: 0, copied: 0,
                audit: try storage.pool.withConnection { try PostgresAudit.audit(device, connection: $0, storage: storage) })
        }
        let head = try store.head()
        let users = store.currentUsers
        let entries = try store.userEntries()
        let holdsKey = try store.holdsDevicePseudonymKey()
        var copied = 0
        var done = try storage.pool.transaction { connection -> UInt64 in
            try connection.execute("SELECT pg_advisory_xact_lock($1)", [.int64(PostgresStorage.deviceLockKey(device))])
            try connection.execute(
                """
                INSERT INTO devices (device, public_key, pseudonym_key, holds_device_pseudonym_key, head_hash) VALUES ($1, $2, $3, $4, $5)
                ON CONFLICT (device) DO UPDATE SET pseudonym_key = excluded.pseudonym_key, holds_device_pseudonym_key = excluded.holds_device_pseudonym_key,
                    public_key = coalesce(devices.public_key, excluded.public_key)
                WHERE devices.head_seq = 0 OR devices.pseudonym_key = excluded.pseudonym_key
                """, [.text(device), registered.map { .bytes($0.bytes) } ?? .null, .bytes(users.pseudonymKey.bytes), .bool(holdsKey), .bytes(Digest.zero.bytes)]
            )
            let rows = try connection.execute("SELECT head_seq, head_hash, pseudonym_key FROM devices WHERE device = $1", [.text(device)])
            guard let row = rows.first, try row.bytes(2) == users.pseudonymKey.bytes else {
                throw Failure(description: "the database already holds a log of \(device) under another pseudonym key; it is not this server's copy")
            }
            return UInt64(max(0, try row.int64(0)))
        }
        if done > head.seq {
            throw Failure(description: "the database holds \(device) up to seq \(done), beyond the replica's \(head.seq); it is not this server's copy")
        }
        var batch: [(bytes: [UInt8], record: Record)] = []
        func flush() throws {
            guard !batch.isEmpty else { return }
            let rows = batch
            batch.removeAll(keepingCapacity: true)
            try storage.pool.transaction { connection in
                try connection.execute("SELECT pg_advisory_xact_lock($1)", [.int64(PostgresStorage.deviceLockKey(device))])
                let at = try connection.execute("SELECT head_seq, head_hash FROM devices WHERE device = $1", [.text(device)])
                guard let current = at.first, UInt64(max(0, try current.int64(0))) == rows[0].record.seq - 1 else {
                    throw Failure(
                        description: "the database's copy of \(device) moved during the migration; stop every server on it and run migrate-server again")
                }
                if rows[0].record.seq > 1, try current.bytes(1) != rows[0].record.previousHash.bytes {
                    throw Failure(
                        description:
                            "the database's copy of \(device) does not end where the replica's seq \(rows[0].record.seq) follows on; it is not this server's copy"
                    )
                }
                try connection.execute(
                    """
                    INSERT INTO events (device, seq, id, at_ms, type, user_key, hash, record)
                    SELECT $1, seq, id, at_ms, type::int2, user_key, hash, record
                    FROM unnest($2::int8[], $3::uuid[], $4::int8[], $5::int8[], $6::bytea[], $7::bytea[], $8::bytea[])
                        AS batch (seq, id, at_ms, type, user_key, hash, record)
                    """,
                    [
                        .text(device), .int64Array(rows.map { Int64($0.record.seq) }), .uuidArray(rows.map(\.record.event.id)),
                        .int64Array(rows.map { $0.record.event.at.millisecondsSince1970 }), .int64Array(rows.map { Int64($0.record.event.type.code) }),
                        .optionalBytesArray(rows.map { $0.record.event.user.map { storage.userKey(of: $0) } }),
                        .bytesArray(rows.map(\.record.hash.bytes)), .bytesArray(rows.map(\.bytes))
                    ])
                let last = rows[rows.count - 1].record
                try connection.execute(
                    "UPDATE devices SET head_seq = $2, head_hash = $3 WHERE device = $1",
                    [.text(device), .int64(Int64(last.seq)), .bytes(last.hash.bytes)])
            }
            copied += rows.count
            progress(Progress(device: device, copiedRecords: Int(rows[rows.count - 1].record.seq), totalRecords: Int(head.seq)))
        }
        if done < head.seq {
            try store.forEachStoredRecord(from: done + 1) { bytes, record in
                batch.append((bytes, record))
                if batch.count >= batchRecords { try flush() }
                return true
            }
            try flush()
            done = head.seq
        } else {
            progress(Progress(device: device, copiedRecords: Int(head.seq), totalRecords: Int(head.seq)))
        }
        // The users, signed heads and forget requests as the replica has them now.
        let heads = try store.signedHeads()
        let requests = try store.forgetRequests()
        try storage.pool.transaction { connection in
            try connection.execute("SELECT pg_advisory_xact_lock($1)", [.int64(PostgresStorage.deviceLockKey(device))])
            try connection.execute(
                """
                INSERT INTO device_users (device, ref, number, key, sealed_name)
                SELECT $1, ref, number, key, sealed_name FROM unnest($2::bytea[], $3::int8[], $4::bytea[], $5::bytea[]) AS u (ref, number, key, sealed_name)
                ON CONFLICT (device, ref) DO UPDATE SET key = excluded.key, sealed_name = excluded.sealed_name, number = excluded.number
                """,
                [
                    .text(device), .bytesArray(entries.map(\.ref.bytes)), .int64Array(entries.map { Int64($0.number) }),
                    .optionalBytesArray(entries.map { $0.key?.bytes }), .optionalBytesArray(entries.map(\.sealedName))
                ])
            // The users changed: every node's copy of them is stale (``DeviceUsersCache``).
            try connection.execute(
                "UPDATE devices SET users_version = $2 WHERE device = $1",
                [.text(device), .int64(Int64.random(in: 1 ... .max))])
            if !heads.isEmpty {
                try connection.execute(
                    """
                    INSERT INTO signed_heads (device, seq, hash, signature) SELECT $1, * FROM unnest($2::int8[], $3::bytea[], $4::bytea[])
                    ON CONFLICT (device, seq) DO NOTHING
                    """, [.text(device), .int64Array(heads.map { Int64($0.seq) }), .bytesArray(heads.map(\.hash.bytes)), .bytesArray(heads.map(\.signature))])
            }
            if !requests.isEmpty {
                try connection.execute(
                    """
                    INSERT INTO forget_requests (device, ref, requested_at_ms) SELECT $1, ref, $3 FROM unnest($2::bytea[]) AS r (ref)
                    ON CONFLICT (device, ref) DO NOTHING
                    """, [.text(device), .bytesArray(requests.map(\.bytes)), .int64(Timestamp.now.millisecondsSince1970)])
            }
        }
        let audit = try storage.pool.withConnection { try PostgresAudit.audit(device, connection: $0, storage: storage) }
        return DeviceResult(device: device, records: Int(head.seq), copied: copied, audit: audit)
    }
}
