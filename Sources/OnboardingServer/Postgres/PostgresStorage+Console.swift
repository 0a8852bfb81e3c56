import Foundation
import OnboardingModel
import OnboardingProjections
import OnboardingStore
import PostgreSQL

extension PostgresStorage {
    /// Other nodes write to the database too: a waiting history poll looks again every second.
    package var changesAreLocal: Bool { false }

    // MARK: Records in page order

    package func forEachRecord(_ query: HistoryQuery, newestFirst: Bool, _ body: (Record) throws -> Bool) throws {
        try pool.withConnection { connection in
            let reader = RecordReader(connection: connection, storage: self)
            let since = query.since?.millisecondsSince1970 ?? Int64.min
            let until = query.until?.millisecondsSince1970 ?? Int64.max
            if let device = query.device {
                // One device's log in its seq order, in read batches, from the cursor on.
                var bound: Int64 = newestFirst ? Int64(clamping: query.after?.seq ?? UInt64(Int64.max)) : Int64(clamping: query.after?.seq ?? 0)
                let userFilter: PGValue = query.user.map { .bytes(userKey(of: $0)) } ?? .null
                while true {
                    let rows =
                        newestFirst
                        ? try connection.execute(
                            prepared: "records_device_desc",
                            """
                            SELECT seq, record FROM events WHERE device = $1 AND seq < $2 AND ($3::bytea IS NULL OR user_key = $3)
                              AND at_ms >= $4 AND at_ms < $5 ORDER BY seq DESC LIMIT $6
                            """, [.text(device), .int64(bound), userFilter, .int64(since), .int64(until), .int64(Int64(Self.readBatchRows))])
                        : try connection.execute(
                            prepared: "records_device_asc",
                            """
                            SELECT seq, record FROM events WHERE device = $1 AND seq > $2 AND ($3::bytea IS NULL OR user_key = $3)
                              AND at_ms >= $4 AND at_ms < $5 ORDER BY seq LIMIT $6
                            """, [.text(device), .int64(bound), userFilter, .int64(since), .int64(until), .int64(Int64(Self.readBatchRows))])
                    for row in rows {
                        bound = try row.int64(0)
                        let record = try reader.record(device: device, seq: UInt64(bound), bytes: try row.bytes(1))
                        if query.covers(record.event), try !body(record) { return }
                    }
                    if rows.count < Self.readBatchRows { return }
                }
            }
            guard let user = query.user else { return }
            // One range of the user index in (at, device, seq) order, either way from the cursor.
            let key = userKey(of: user)
            var position =
                query.after.map { (Int64($0.at.millisecondsSince1970), $0.device, Int64(clamping: $0.seq)) }
                ?? (newestFirst ? (Int64.max, "", Int64.max) : (Int64.min, "", 0))
            var window = EventIDWindow()
            while true {
                let parameters: [PGValue] = [
                    .bytes(key), .int64(position.0), .text(position.1), .int64(position.2), .int64(since), .int64(until),
                    .int64(Int64(Self.readBatchRows))
                ]
                let rows =
                    newestFirst
                    ? try connection.execute(
                        prepared: "records_user_desc",
                        """
                        SELECT device, seq, record FROM events
                        WHERE user_key = $1 AND (at_ms, device, seq) < ($2, $3, $4) AND at_ms >= $5 AND at_ms < $6
                        ORDER BY at_ms DESC, device DESC, seq DESC LIMIT $7
                        """, parameters)
                    : try connection.execute(
                        prepared: "history_user",
                        """
                        SELECT device, seq, record FROM events
                        WHERE user_key = $1 AND (at_ms, device, seq) > ($2, $3, $4) AND at_ms >= $5 AND at_ms < $6
                        ORDER BY at_ms, device, seq LIMIT $7
                        """, parameters)
                try reader.preload(try rows.map { try $0.string(0) })
                for row in rows {
                    let device = try row.string(0)
                    let seq = try row.int64(1)
                    let record = try reader.record(device: device, seq: UInt64(seq), bytes: try row.bytes(2))
                    position = (record.event.at.millisecondsSince1970, device, seq)
                    guard query.covers(record.event), window.isFirst(record) else { continue }
                    guard try body(record) else { return }
                }
                if rows.count < Self.readBatchRows { return }
            }
        }
    }

    // MARK: Devices

    package func deviceStatuses(after: String?, limit: Int) throws -> [DeviceStatus] {
        try pool.withConnection { connection in
            let rows = try connection.execute(
                prepared: "device_statuses",
                """
                SELECT d.device, (extract(epoch FROM d.enrolled_at) * 1000)::int8, d.last_upload_at_ms, d.head_seq, d.head_hash,
                       d.public_key IS NOT NULL, h.seq, h.hash
                FROM devices d
                LEFT JOIN LATERAL (SELECT seq, hash FROM signed_heads s WHERE s.device = d.device ORDER BY seq DESC LIMIT 1) h ON true
                WHERE $1::text IS NULL OR d.device > $1 ORDER BY d.device LIMIT $2
                """, [after.map { .text($0) } ?? .null, .int64(Int64(limit))])
            var statuses = try rows.map { row -> DeviceStatus in
                let signedSeq = try row.optionalInt64(6)
                let signedHash = try row.optionalBytes(7)
                return DeviceStatus(
                    device: try row.string(0), enrolledAt: Timestamp(millisecondsSince1970: try row.int64(1)),
                    lastUploadAt: try row.optionalInt64(2).map { Timestamp(millisecondsSince1970: $0) },
                    acknowledgedSeq: UInt64(max(0, try row.int64(3))), headHash: Digest(bytes: try row.bytes(4)),
                    signedHead: signedSeq.flatMap { seq in signedHash.map { (UInt64(max(0, seq)), Digest(bytes: $0)) } },
                    hasPublicKey: try row.bool(5), tokens: [])
            }
            guard !statuses.isEmpty else { return [] }
            var tokens: [String: [DeviceStatus.Token]] = [:]
            for row in try connection.execute(
                prepared: "device_tokens",
                """
                SELECT device, token_hash, (extract(epoch FROM issued_at) * 1000)::int8, expires_at_ms FROM tokens WHERE device = ANY($1::text[]) ORDER BY device, token_hash
                """, [.textArray(statuses.map(\.device))])
            {
                tokens[try row.string(0), default: []].append(
                    .init(
                        id: TokenStore.tokenID(hash: try row.bytes(1)),
                        issuedAt: Timestamp(millisecondsSince1970: try row.int64(2)),
                        expiresAt: try row.optionalInt64(3).map { Timestamp(millisecondsSince1970: $0) }))
            }
            for index in statuses.indices { statuses[index].tokens = tokens[statuses[index].device] ?? [] }
            return statuses
        }
    }

    package func audit(device: String) throws -> DeviceAudit? {
        guard try isEnrolled(device) else { return nil }
        return try pool.withConnection { try PostgresAudit.audit(device, connection: $0, storage: self) }
    }

    package func revokeToken(device: String, id: String) throws -> Int {
        guard let prefix = HexBytes.decode(id) else { return 0 }
        return try pool.withConnection { connection in
            try connection.execute(
                prepared: "token_revoke_one",
                """
                DELETE FROM tokens WHERE role = 'device' AND device = $1 AND substring(token_hash FROM 1 FOR $3) = $2
                """, [.text(device), .bytes(prefix), .int32(Int32(prefix.count))]
            ).affectedRows
        }
    }

    // MARK: Actions

    package func record(_ action: ServerAction) throws -> ServerAction {
        try record(action, ifNew: false) ?? action
    }

    /// Stores `action`; with `ifNew`, nothing when an action of its id is stored (`nil`).
    @discardableResult
    func record(_ action: ServerAction, ifNew: Bool) throws -> ServerAction? {
        try pool.withConnection { connection in
            let sealed = action.user == nil && action.reason == nil ? nil : PersonalData.sealRandom(action.personalBytes, key: namesKey)
            let rows = try connection.execute(
                prepared: ifNew ? "action_insert_new" : "action_insert",
                """
                INSERT INTO server_actions (id, at_ms, actor, action, user_key, sealed, factor, device, token)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) \(ifNew ? "ON CONFLICT (id) DO NOTHING " : "")RETURNING seq
                """,
                [
                    .uuid(action.id), .int64(action.at.millisecondsSince1970), .text(action.actor), .text(action.kind.rawValue),
                    action.user.map { .bytes(userKey(of: $0)) } ?? .null, sealed.map { .bytes($0) } ?? .null,
                    action.factor.map { .text($0.rawValue) } ?? .null, action.device.map { .text($0) } ?? .null, action.token.map { .text($0) } ?? .null
                ])
            guard let row = rows.first else { return nil }
            var stored = action
            stored.seq = UInt64(try row.int64(0))
            return stored
        }
    }

    package func actions(ofUser user: String) throws -> [ServerAction] {
        try pool.withConnection { try actions(ofUser: user, connection: $0) }
    }

    static let actionColumns = "seq, id, at_ms, actor, action, sealed, factor, device, token"

    func actions(ofUser user: String, connection: PGConnection) throws -> [ServerAction] {
        try connection.execute(
            prepared: "actions_of_user", "SELECT \(Self.actionColumns) FROM server_actions WHERE user_key = $1 ORDER BY at_ms, seq",
            [.bytes(userKey(of: user))]
        ).map(action(from:))
    }

    package func actions(before: (at: Timestamp, seq: UInt64)?, limit: Int) throws -> [ServerAction] {
        try pool.withConnection { connection in
            try connection.execute(
                prepared: "actions_page",
                """
                SELECT \(Self.actionColumns) FROM server_actions WHERE (at_ms, seq) < ($1, $2) ORDER BY at_ms DESC, seq DESC LIMIT $3
                """,
                [
                    .int64(before?.at.millisecondsSince1970 ?? Int64.max), .int64(Int64(clamping: before?.seq ?? UInt64(Int64.max))),
                    .int64(Int64(limit))
                ]
            ).map(action(from:))
        }
    }

    private func action(from row: PGRows.Row) throws -> ServerAction {
        guard let kind = ServerAction.Kind(rawValue: try row.string(4)) else {
            throw Self.corrupted("a server action has the unknown action \(try row.string(4)); this onboard is older than the one that wrote it")
        }
        var action = ServerAction(
            id: try row.uuid(1), seq: UInt64(max(0, try row.int64(0))), kind: kind,
            at: Timestamp(millisecondsSince1970: try row.int64(2)), actor: try row.string(3))
        if let sealed = try row.optionalBytes(5) {
            guard let opened = sealed.withUnsafeBytes({ PersonalData.open($0, key: namesKey) }), let personal = ServerAction.personal(from: opened) else {
                throw Self.corrupted("the user of server action \(action.seq) cannot be opened; restore server_keys from a backup")
            }
            action.user = personal.user
            action.reason = personal.reason
        }
        action.factor = try row.optionalString(6).flatMap(LockoutFactor.init(rawValue:))
        action.device = try row.optionalString(7)
        action.token = try row.optionalString(8)
        return action
    }

    /// A forget: the user's actions name a fresh pseudonym and lose their reason.
    func forgetActions(ofUser user: String, connection: PGConnection) throws {
        let pseudonym = ServerAction.pseudonym()
        let sealed = PersonalData.sealRandom(ServerAction(kind: .lockoutCleared, at: .minimum, actor: "", user: pseudonym).personalBytes, key: namesKey)
        try connection.execute(
            prepared: "actions_forget", "UPDATE server_actions SET user_key = $2, sealed = $3 WHERE user_key = $1",
            [.bytes(userKey(of: user)), .bytes(userKey(of: pseudonym)), .bytes(sealed)])
    }

    // MARK: Users

    package func searchUsers(_ search: [String], limit: Int) throws -> [UserMatch] {
        try pool.withConnection { try PostgresSearchIndex.search(search, limit: limit, storage: self, connection: $0) }
    }
}
