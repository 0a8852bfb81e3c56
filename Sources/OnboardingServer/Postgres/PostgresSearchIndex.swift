import Foundation
import OnboardingModel
import OnboardingProjections
import OnboardingStore
import PostgreSQL

/// The user search in PostgreSQL (schema v3): `user_names` (each user's id and latest display
/// name, sealed under the server's `names` key), `user_search` (keyed MACs of their folded
/// prefixes under the `search` key, ``SearchTerms``) and `user_devices` (the devices whose
/// records read as the user), all keyed by `user_key` (``PostgresStorage/userKey(of:)``). Kept by
/// the ingest, in the upload's transaction, only when a batch names a user new to its device or
/// gives a display name: an ordinary batch costs nothing more. Deleted by a forget.
enum PostgresSearchIndex {
    /// A display name a record gives its user, at its place in the fold order.
    struct Name {
        var user: String
        var displayName: String
        var position: HistoryCursor
    }

    /// 1,000 users per statement while a search opens sealed names, and while a backfill writes.
    static let batchUsers = 1_000

    /// The display name `payload` gives its user, if any.
    static func displayName(in payload: Payload) -> String? {
        switch payload {
        case .userAdded(let displayName, _, _, _, _): displayName
        case .userProfileUpdated(let displayName?, _, _): displayName
        default: nil
        }
    }

    /// What an upload of `device` adds: `users` it names readably for the first time, `names`
    /// its records give (the latest per user is kept when it is later than the stored one).
    static func ingest(_ connection: PGConnection, storage: PostgresStorage, device: String, users: [String], names: [Name]) throws {
        var latest: [String: Name] = [:]
        for name in names where latest[name.user].map({ $0.position < name.position }) ?? true { latest[name.user] = name }
        let named = Array(Set(users).union(latest.keys))
        guard !named.isEmpty else { return }
        try connection.execute(prepared: "user_devices_insert", """
            INSERT INTO user_devices (user_key, device) SELECT key, $2 FROM unnest($1::bytea[]) AS new (key) ON CONFLICT DO NOTHING
            """, [.bytesArray(named.map(storage.userKey(of:))), .text(device)])
        let fresh = Array(Set(users))
        if !fresh.isEmpty {
            let inserted = try connection.execute(prepared: "user_names_insert", """
                INSERT INTO user_names (user_key, sealed) SELECT * FROM unnest($1::bytea[], $2::bytea[]) ON CONFLICT DO NOTHING RETURNING user_key
                """, [.bytesArray(fresh.map(storage.userKey(of:))),
                      .bytesArray(fresh.map { PersonalData.sealRandom(SearchTerms.nameBytes(user: $0, displayName: nil), key: storage.namesKey) })])
            let keys = Set(try inserted.map { try $0.bytes(0) })
            try insertMACs(connection, storage: storage, fresh.filter { keys.contains(storage.userKey(of: $0)) }.map { ($0, nil) })
        }
        for name in latest.values {
            // Kept only when later in (at, device, seq) than the name stored (on any device).
            let updated = try connection.execute(prepared: "user_names_rename", """
                INSERT INTO user_names AS n (user_key, sealed, name_at_ms, name_device, name_seq) VALUES ($1, $2, $3, $4, $5)
                ON CONFLICT (user_key) DO UPDATE SET sealed = EXCLUDED.sealed, name_at_ms = EXCLUDED.name_at_ms,
                    name_device = EXCLUDED.name_device, name_seq = EXCLUDED.name_seq
                WHERE n.name_at_ms IS NULL OR (n.name_at_ms, n.name_device, n.name_seq) < (EXCLUDED.name_at_ms, EXCLUDED.name_device, EXCLUDED.name_seq)
                RETURNING user_key
                """, [.bytes(storage.userKey(of: name.user)),
                      .bytes(PersonalData.sealRandom(SearchTerms.nameBytes(user: name.user, displayName: name.displayName), key: storage.namesKey)),
                      .int64(name.position.at.millisecondsSince1970), .text(name.position.device), .int64(Int64(clamping: name.position.seq))])
            guard !updated.isEmpty else { continue }
            try connection.execute(prepared: "user_search_clear", "DELETE FROM user_search WHERE user_key = $1", [.bytes(storage.userKey(of: name.user))])
            try insertMACs(connection, storage: storage, [(name.user, name.displayName)])
        }
    }

    private static func insertMACs(_ connection: PGConnection, storage: PostgresStorage, _ users: [(user: String, displayName: String?)]) throws {
        var macs: [[UInt8]] = []
        var keys: [[UInt8]] = []
        for (user, displayName) in users {
            let key = storage.userKey(of: user)
            for mac in SearchTerms.macs(user: user, displayName: displayName, key: storage.searchKey) {
                macs.append(mac.bytes)
                keys.append(key)
            }
        }
        guard !macs.isEmpty else { return }
        try connection.execute(prepared: "user_search_insert", """
            INSERT INTO user_search (mac, user_key) SELECT * FROM unnest($1::bytea[], $2::bytea[]) ON CONFLICT DO NOTHING
            """, [.bytesArray(macs), .bytesArray(keys)])
    }

    /// `device` forgot `user` (its `user_forgotten` arrived): its records no longer read as the
    /// user; once no device's do, the user is not found any more.
    static func deviceForgot(_ connection: PGConnection, storage: PostgresStorage, device: String, user: String) throws {
        let key = storage.userKey(of: user)
        try connection.execute(prepared: "user_devices_delete", "DELETE FROM user_devices WHERE user_key = $1 AND device = $2", [.bytes(key), .text(device)])
        let left = try connection.execute(prepared: "user_devices_any", "SELECT EXISTS (SELECT 1 FROM user_devices WHERE user_key = $1)", [.bytes(key)])
        if try !left[0].bool(0) { try forget(connection, storage: storage, user: user) }
    }

    /// The server forgets `user`: nothing of the search names them any more.
    static func forget(_ connection: PGConnection, storage: PostgresStorage, user: String) throws {
        let key = PGValue.bytes(storage.userKey(of: user))
        try connection.execute(prepared: "user_search_forget", "DELETE FROM user_search WHERE user_key = $1", [key])
        try connection.execute(prepared: "user_names_forget", "DELETE FROM user_names WHERE user_key = $1", [key])
        try connection.execute(prepared: "user_devices_forget", "DELETE FROM user_devices WHERE user_key = $1", [key])
    }

    /// `GET /v1/users?search=`: the candidates of every word's MAC, each checked against its
    /// sealed name (a MAC covers 16 characters and could collide), the first `limit` by id.
    static func search(_ search: [String], limit: Int, storage: PostgresStorage, connection: PGConnection) throws -> [UserMatch] {
        let macs = Array(Set(search.map { SearchTerms.lookupMAC($0, key: storage.searchKey).bytes }))
        guard !macs.isEmpty else { return [] }
        let candidates = try connection.execute(prepared: "user_search_lookup", """
            SELECT user_key FROM user_search WHERE mac = ANY($1::bytea[]) GROUP BY user_key HAVING count(*) = $2
            """, [.bytesArray(macs), .int64(Int64(macs.count))]).map { try $0.bytes(0) }
        // Kept sorted and cut to `limit` as each batch is opened: memory bounded by the limit.
        var best: [(user: String, displayName: String?, key: [UInt8])] = []
        var start = 0
        while start < candidates.count {
            let batch = Array(candidates[start..<min(candidates.count, start + batchUsers)])
            start += batchUsers
            for row in try connection.execute(prepared: "user_names_open", "SELECT user_key, sealed FROM user_names WHERE user_key = ANY($1::bytea[])",
                                              [.bytesArray(batch)]) {
                let sealed = try row.bytes(1)
                guard let opened = sealed.withUnsafeBytes({ PersonalData.open($0, key: storage.namesKey) }),
                      let name = SearchTerms.name(from: opened),
                      SearchTerms.matches(search, words: SearchTerms.words(name.user) + (name.displayName.map(SearchTerms.words) ?? [])) else { continue }
                best.append((name.user, name.displayName, try row.bytes(0)))
            }
            best.sort { SearchTerms.precedes($0.user, $1.user) }
            if best.count > limit { best.removeLast(best.count - limit) }
        }
        guard !best.isEmpty else { return [] }
        var devices: [[UInt8]: Int] = [:]
        for row in try connection.execute(prepared: "user_devices_count",
                                          "SELECT user_key, count(*) FROM user_devices WHERE user_key = ANY($1::bytea[]) GROUP BY user_key",
                                          [.bytesArray(best.map(\.key))]) {
            devices[try row.bytes(0)] = Int(try row.int64(1))
        }
        return best.map { UserMatch(user: $0.user, displayName: $0.displayName, devices: devices[$0.key] ?? 0) }
    }

    /// Fills the search from the stored logs, once per database (`server_state` row
    /// `user_search`): for a database written before schema v3. Runs at start in one
    /// transaction under the migration lock, so of several nodes starting at once one does it.
    static func backfill(_ storage: PostgresStorage) throws {
        try storage.pool.transaction { connection in
            try connection.execute("SELECT pg_advisory_xact_lock($1)", [.int64(PostgresSchema.migrationLockKey)])
            let first = try connection.execute("INSERT INTO server_state (name) VALUES ('user_search') ON CONFLICT DO NOTHING RETURNING name")
            guard !first.isEmpty else { return }
            let reader = PostgresStorage.RecordReader(connection: connection, storage: storage)
            let devices = try connection.execute("SELECT device FROM devices ORDER BY device").map { try $0.string(0) }
            for device in devices {
                // The users each device names readably: its live users' rows.
                let entry = try PostgresStorage.loadUsers(of: device, pseudonymKey: try deviceKey(device, connection), connection: connection)
                let users = entry.directory.entries.values.map(\.name)
                var names: [Name] = []
                var after: Int64 = 0
                while true {
                    let rows = try connection.execute("""
                        SELECT seq, record FROM events WHERE device = $1 AND seq > $2 AND type = ANY($3::int8[]::int2[]) ORDER BY seq LIMIT $4
                        """, [.text(device), .int64(after), .int64Array([Int64(EventType.userAdded.code), Int64(EventType.userProfileUpdated.code)]),
                              .int64(Int64(PostgresStorage.readBatchRows))])
                    for row in rows {
                        after = try row.int64(0)
                        let record = try reader.record(device: device, seq: UInt64(after), bytes: try row.bytes(1))
                        if let user = record.event.user, !UserRef.isLiteral(user), let displayName = displayName(in: record.event.payload) {
                            names.append(Name(user: user, displayName: displayName, position: HistoryCursor(at: record.event.at, device: device, seq: record.seq)))
                        }
                    }
                    if rows.count < PostgresStorage.readBatchRows { break }
                }
                try ingest(connection, storage: storage, device: device, users: users, names: names)
            }
        }
    }

    private static func deviceKey(_ device: String, _ connection: PGConnection) throws -> SecretKey {
        try PostgresStorage.pseudonymKey(try connection.execute("SELECT pseudonym_key FROM devices WHERE device = $1", [.text(device)])[0].bytes(0))
    }
}
