import Foundation
import PostgreSQL

/// The server's tables in PostgreSQL, versioned (docs/server-storage.md). `onboard serve
/// --database` creates and migrates them at start, under an advisory lock and in one
/// transaction: two nodes starting at once are safe, and a failed migration leaves nothing
/// half-done. A database written by a newer `onboard` is refused.
enum PostgresSchema {
    /// The schema this build writes.
    static let currentVersion = 4

    /// The advisory lock migrations take (`pg_advisory_xact_lock`): "onboard" in ASCII, so it
    /// collides with no device lock (those are hashes with the top bit set, see ``deviceLockKey(_:)``).
    static let migrationLockKey: Int64 = 0x6F_6E_62_6F_61_72_64

    /// Hash partitions of `events`: 16 spread a fleet's write load and vacuum work, and stay few
    /// enough that a query naming no device (a user's history) plans quickly.
    static let eventPartitions = 16

    /// The statements of each version, in order; version n's are run on a database at n − 1.
    static let migrations: [[String]] = [
        // Version 1.
        [
            """
            CREATE TABLE server_keys (
                name text PRIMARY KEY,
                secret bytea NOT NULL
            )
            """,
            """
            CREATE TABLE tokens (
                token_hash bytea PRIMARY KEY,
                role text NOT NULL CHECK (role IN ('admin', 'auditor', 'device')),
                device text COLLATE "C",
                issued_at timestamptz NOT NULL DEFAULT now(),
                CHECK ((role = 'device') = (device IS NOT NULL))
            )
            """,
            "CREATE INDEX tokens_by_device ON tokens (device) WHERE device IS NOT NULL",
            """
            CREATE TABLE devices (
                device text COLLATE "C" PRIMARY KEY,
                public_key bytea,
                pseudonym_key bytea NOT NULL,
                holds_device_pseudonym_key boolean NOT NULL DEFAULT false,
                head_seq int8 NOT NULL DEFAULT 0 CHECK (head_seq >= 0),
                head_hash bytea NOT NULL,
                enrolled_at timestamptz NOT NULL DEFAULT now()
            )
            """,
            """
            CREATE TABLE device_users (
                device text COLLATE "C" NOT NULL,
                ref bytea NOT NULL,
                number int8 NOT NULL,
                key bytea,
                sealed_name bytea,
                PRIMARY KEY (device, ref),
                CHECK ((key IS NULL) = (sealed_name IS NULL))
            )
            """,
            """
            CREATE TABLE events (
                device text COLLATE "C" NOT NULL,
                seq int8 NOT NULL CHECK (seq > 0),
                id uuid NOT NULL,
                at_ms int8 NOT NULL,
                type int2 NOT NULL,
                user_key bytea,
                hash bytea NOT NULL,
                record bytea NOT NULL,
                PRIMARY KEY (device, seq),
                UNIQUE (device, id)
            ) PARTITION BY HASH (device)
            """
        ]
            + (0..<eventPartitions).map { index in
                "CREATE TABLE events_p\(String(format: "%02d", index)) PARTITION OF events FOR VALUES WITH (MODULUS \(eventPartitions), REMAINDER \(index))"
            } + [
                "CREATE INDEX events_by_user ON events (user_key, at_ms, device, seq) WHERE user_key IS NOT NULL",
                """
                CREATE TABLE signed_heads (
                    device text COLLATE "C" NOT NULL,
                    seq int8 NOT NULL,
                    hash bytea NOT NULL,
                    signature bytea NOT NULL,
                    PRIMARY KEY (device, seq)
                )
                """,
                """
                CREATE TABLE forget_requests (
                    device text COLLATE "C" NOT NULL,
                    ref bytea NOT NULL,
                    requested_at_ms int8 NOT NULL,
                    PRIMARY KEY (device, ref)
                )
                """
            ],
        // Version 2: a version of each device's users, set anew (a random number) by every
        // change to its `device_users` rows, so a node can keep them in memory and know when
        // its copy is stale (``DeviceUsersCache``). 0 for a device whose users no node changed
        // since: a device at 0 on v1 is read from the table once, like any cache miss.
        [
            "ALTER TABLE devices ADD COLUMN users_version int8 NOT NULL DEFAULT 0"
        ],
        // Version 3: the audit console (docs/sync-protocol.md § The audit console). A device's
        // last upload time; the server actions; the user search, which keeps no readable name:
        // per user and device whose records read as the user, `user_names` holds the id and the
        // latest display name that device gave, sealed under the `names` key, and the keyed MACs
        // of their folded prefixes (`search` key), looked up through a GIN index. Its rows are
        // keyed by `user_key` (as `events.user_key`) and the device, so uploads of different
        // devices never write the same row, and are deleted by a forget. A database migrated
        // from v2 fills it once, at the next start (``PostgresSearchIndex/backfill(_:)``).
        [
            "ALTER TABLE devices ADD COLUMN last_upload_at_ms int8",
            """
            CREATE TABLE server_actions (
                seq int8 GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                id uuid NOT NULL UNIQUE,
                at_ms int8 NOT NULL,
                actor text NOT NULL,
                action text NOT NULL,
                user_key bytea,
                sealed bytea,
                factor text,
                device text COLLATE "C",
                token text
            )
            """,
            "CREATE INDEX server_actions_by_user ON server_actions (user_key, at_ms, seq) WHERE user_key IS NOT NULL",
            "CREATE INDEX server_actions_by_time ON server_actions (at_ms, seq)",
            """
            CREATE TABLE user_names (
                user_key bytea NOT NULL,
                device text COLLATE "C" NOT NULL,
                sealed bytea NOT NULL,
                name_at_ms int8,
                name_seq int8,
                macs bytea[] NOT NULL,
                PRIMARY KEY (user_key, device)
            )
            """,
            // The search's key: every MAC of a row, to the rows holding it.
            "CREATE INDEX user_names_by_mac ON user_names USING gin (macs)",
            "CREATE TABLE server_state (name text PRIMARY KEY, done_at timestamptz NOT NULL DEFAULT now())"
        ],
        // Version 4: token lifetimes (docs/operations.md § Rotating tokens and keys). A token's
        // expiry in ms since the epoch, NULL for one that never expires (the admin's). Device and
        // auditor tokens issued before get now + the default lifetime, as on LMDB: an upgrade
        // neither cuts off the fleet at once nor leaves a token valid forever. The column's
        // default is the same, so a token that a node not yet upgraded issues during a rolling
        // upgrade expires too; this version's nodes always give the expiry (NULL included).
        [
            "ALTER TABLE tokens ADD COLUMN expires_at_ms int8 DEFAULT ((extract(epoch FROM now()) * 1000)::int8 + \(TokenLifetime.defaultMilliseconds))",
            "UPDATE tokens SET expires_at_ms = NULL WHERE role = 'admin'"
        ]
    ]

    /// Brings the database at `connection` to ``currentVersion``; returns the version it found
    /// (0 for an empty database). Throws ``PostgresStorageError/newerSchema`` for a newer one.
    @discardableResult
    static func migrate(_ connection: PGConnection) throws -> Int {
        try connection.transaction { connection in
            try connection.execute("SELECT pg_advisory_xact_lock($1)", [.int64(migrationLockKey)])
            try connection.execute("CREATE TABLE IF NOT EXISTS onboard_schema (version int4 NOT NULL, migrated_at timestamptz NOT NULL DEFAULT now())")
            let found = Int(try connection.execute("SELECT coalesce(max(version), 0)::int8 FROM onboard_schema")[0].int64(0))
            guard found <= currentVersion else {
                throw PostgresStorageError.newerSchema(found: found, supported: currentVersion)
            }
            for version in (found + 1)..<(currentVersion + 1) {
                for statement in migrations[version - 1] { try connection.execute(statement) }
                try connection.execute("INSERT INTO onboard_schema (version) VALUES ($1)", [.int32(Int32(version))])
            }
            return found
        }
    }
}

/// Why the PostgreSQL storage cannot be used as it is.
enum PostgresStorageError: Error, CustomStringConvertible {
    case newerSchema(found: Int, supported: Int)

    var description: String {
        switch self {
        case let .newerSchema(found, supported):
            "the database holds the server schema version \(found), newer than this onboard's \(supported); upgrade onboard on this node (the database is left as it is)"
        }
    }
}
