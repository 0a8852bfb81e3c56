import Foundation
import OnboardingModel
import OnboardingProjections
import OnboardingStore
import PostgreSQL

/// The user search in PostgreSQL (schema v3): `user_names`, one row per user and device whose
/// records read as the user — the id and the latest display name that device gave, sealed under
/// the server's `names` key, and the keyed MACs of their folded prefixes under the `search` key
/// (``SearchTerms``), which a GIN index keys — `user_key` (``PostgresStorage/userKey(of:)``) and
/// device its primary key. Written by the ingest, in the upload's transaction, only when a batch
/// names a user new to its device or gives a display name (an ordinary batch writes nothing
/// here), and only the uploading device's rows: uploads of different devices naming the same
/// users never wait on one another. A search takes, per user, the latest name over its devices.
/// Deleted by a forget.
enum PostgresSearchIndex {
    /// A display name a record gives its user, at its place in the device's order.
    struct Name {
        var user: String
        var displayName: String
        var position: HistoryCursor
    }

    /// 1,000 users per statement while a search opens sealed names.
    static let batchUsers = 1_000

    /// The display name `payload` gives its user, if any.
    static func displayName(in payload: Payload) -> String? {
        switch payload {
        case .userAdded(let displayName, _, _, _, _): displayName
        case .userProfileUpdated(let displayName?, _, _): displayName
        default: nil
        }
    }

    /// A row's MACs, as the `macs` array holds them.
    private static func macs(_ user: String, _ displayName: String?, storage: PostgresStorage) -> [[UInt8]] {
        SearchTerms.macs(user: user, displayName: displayName, key: storage.searchKey).map(\.bytes).sorted { $0.lexicographicallyPrecedes($1) }
    }

    /// What an upload of `device` adds: `users` it names readably for the first time, `names`
    /// its records give (the latest per user is kept when it is later than the one stored for
    /// the device).
    static func ingest(_ connection: PGConnection, storage: PostgresStorage, device: String, users: [String], names: [Name]) throws {
        var latest: [String: Name] = [:]
        for name in names where latest[name.user].map({ $0.position < name.position }) ?? true { latest[name.user] = name }
        let fresh = Array(Set(users).subtracting(latest.keys))
        if !fresh.isEmpty {
            try connection.execute(
                prepared: "user_names_insert",
                """
                INSERT INTO user_names (user_key, device, sealed, macs)
                SELECT key, $3, sealed, macs::bytea[] FROM unnest($1::bytea[], $2::bytea[], $4::text[]) AS new (key, sealed, macs)
                ON CONFLICT DO NOTHING
                """,
                [
                    .bytesArray(fresh.map(storage.userKey(of:))),
                    .bytesArray(fresh.map { PersonalData.sealRandom(SearchTerms.nameBytes(user: $0, displayName: nil), key: storage.namesKey) }),
                    .text(device), .textArray(fresh.map { arrayLiteral(macs($0, nil, storage: storage)) })
                ])
        }
        guard !latest.isEmpty else { return }
        let renames = Array(latest.values)
        try connection.execute(
            prepared: "user_names_rename",
            """
            INSERT INTO user_names AS n (user_key, device, sealed, name_at_ms, name_seq, macs)
            SELECT key, $3, sealed, at, seq, macs::bytea[] FROM unnest($1::bytea[], $2::bytea[], $4::int8[], $5::int8[], $6::text[]) AS new (key, sealed, at, seq, macs)
            ON CONFLICT (user_key, device) DO UPDATE SET sealed = EXCLUDED.sealed, name_at_ms = EXCLUDED.name_at_ms, name_seq = EXCLUDED.name_seq,
                macs = EXCLUDED.macs
            WHERE n.name_at_ms IS NULL OR (n.name_at_ms, n.name_seq) < (EXCLUDED.name_at_ms, EXCLUDED.name_seq)
            """,
            [
                .bytesArray(renames.map { storage.userKey(of: $0.user) }),
                .bytesArray(renames.map { PersonalData.sealRandom(SearchTerms.nameBytes(user: $0.user, displayName: $0.displayName), key: storage.namesKey) }),
                .text(device), .int64Array(renames.map { $0.position.at.millisecondsSince1970 }),
                .int64Array(renames.map { Int64(clamping: $0.position.seq) }),
                .textArray(renames.map { arrayLiteral(macs($0.user, $0.displayName, storage: storage)) })
            ])
    }

    /// A `bytea[]` as PostgreSQL's array text (`{"\\x…","\\x…"}`): the binary parameters carry one
    /// array per statement, so each row's array travels as text and is cast there.
    private static func arrayLiteral(_ values: [[UInt8]]) -> String {
        "{" + values.map { "\"\\\\x" + HexBytes.encode($0) + "\"" }.joined(separator: ",") + "}"
    }

    /// `device` forgot `user` (its `user_forgotten` arrived): its records no longer read as the
    /// user, so its row goes; with no device's left, the user is not found any more.
    static func deviceForgot(_ connection: PGConnection, storage: PostgresStorage, device: String, user: String) throws {
        try connection.execute(
            prepared: "user_names_device_forget", "DELETE FROM user_names WHERE user_key = $1 AND device = $2",
            [.bytes(storage.userKey(of: user)), .text(device)])
    }

    /// The server forgets `user`: nothing of the search names them any more.
    static func forget(_ connection: PGConnection, storage: PostgresStorage, user: String) throws {
        try connection.execute(prepared: "user_names_forget", "DELETE FROM user_names WHERE user_key = $1", [.bytes(storage.userKey(of: user))])
    }

    /// `GET /v1/users?search=`: the users with a row holding a MAC of every word, each checked
    /// against its latest name over its devices (a MAC covers 16 characters and may collide),
    /// the first `limit` by id.
    static func search(_ search: [String], limit: Int, storage: PostgresStorage, connection: PGConnection) throws -> [UserMatch] {
        let macs = Array(Set(search.map { SearchTerms.lookupMAC($0, key: storage.searchKey).bytes }))
        guard !macs.isEmpty else { return [] }
        let candidates = try connection.execute(
            prepared: "user_names_lookup", "SELECT DISTINCT user_key FROM user_names WHERE macs @> $1::bytea[]",
            [.bytesArray(macs)]
        ).map { try $0.bytes(0) }
        // Kept sorted and cut to `limit` as each batch is opened: memory bounded by the limit.
        var best: [UserMatch] = []
        var start = 0
        while start < candidates.count {
            let batch = Array(candidates[start..<min(candidates.count, start + batchUsers)])
            start += batchUsers
            // Per user, its devices' rows; the latest name is the one of the latest position.
            var entries: [[UInt8]: (latest: (at: Int64, device: String, seq: Int64, sealed: [UInt8]), devices: Int)] = [:]
            for row in try connection.execute(
                prepared: "user_names_open",
                """
                SELECT user_key, device, sealed, coalesce(name_at_ms, $2), coalesce(name_seq, 0) FROM user_names WHERE user_key = ANY($1::bytea[])
                """, [.bytesArray(batch), .int64(Int64.min)])
            {
                let entry = (at: try row.int64(3), device: try row.string(1), seq: try row.int64(4), sealed: try row.bytes(2))
                let key = try row.bytes(0)
                if let known = entries[key] {
                    let later = (known.latest.at, known.latest.device, known.latest.seq) < (entry.at, entry.device, entry.seq)
                    entries[key] = (later ? entry : known.latest, known.devices + 1)
                } else {
                    entries[key] = (entry, 1)
                }
            }
            for (_, entry) in entries {
                guard let opened = entry.latest.sealed.withUnsafeBytes({ PersonalData.open($0, key: storage.namesKey) }),
                    let name = SearchTerms.name(from: opened),
                    SearchTerms.matches(search, words: SearchTerms.words(name.user) + (name.displayName.map(SearchTerms.words) ?? []))
                else { continue }
                best.append(UserMatch(user: name.user, displayName: name.displayName, devices: entry.devices))
            }
            best.sort { SearchTerms.precedes($0.user, $1.user) }
            if best.count > limit { best.removeLast(best.count - limit) }
        }
        return best
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
                    let rows = try connection.execute(
                        """
                        SELECT seq, record FROM events WHERE device = $1 AND seq > $2 AND type = ANY($3::int8[]::int2[]) ORDER BY seq LIMIT $4
                        """,
                        [
                            .text(device), .int64(after), .int64Array([Int64(EventType.userAdded.code), Int64(EventType.userProfileUpdated.code)]),
                            .int64(Int64(PostgresStorage.readBatchRows))
                        ])
                    for row in rows {
                        after = try row.int64(0)
                        let record = try reader.record(device: device, seq: UInt64(after), bytes: try row.bytes(1))
                        if let user = record.event.user, !UserRef.isLiteral(user), let displayName = displayName(in: record.event.payload) {
                            names.append(
                                Name(user: user, displayName: displayName, position: HistoryCursor(at: record.event.at, device: device, seq: record.seq)))
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
