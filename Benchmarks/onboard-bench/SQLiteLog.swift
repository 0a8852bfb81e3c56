import CBaseline
import CSQLite
import Foundation

/// The SQLite baseline: what an app developer would write instead of the store. WAL mode, an
/// events table with the same columns the store indexes, `synchronous=FULL` for the store's
/// `full` durability and `NORMAL` for `relaxed`, one transaction per batch, the same value bytes.
final class SQLiteLog {
    private var database: OpaquePointer?
    private var insert: OpaquePointer?

    init(path: String, relaxed: Bool) {
        check(sqlite3_open_v2(path, &database, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil), "open \(path)")
        execute("PRAGMA journal_mode=WAL")
        execute("PRAGMA synchronous=\(relaxed ? "NORMAL" : "FULL")")
        execute(
            """
            CREATE TABLE IF NOT EXISTS events (
                seq INTEGER PRIMARY KEY, id BLOB NOT NULL UNIQUE, user TEXT, session BLOB, value BLOB NOT NULL)
            """)
        execute("CREATE INDEX IF NOT EXISTS events_user ON events(user)")
        execute("CREATE INDEX IF NOT EXISTS events_session ON events(session)")
        check(
            sqlite3_prepare_v2(
                database, "INSERT INTO events (seq, id, user, session, value) VALUES (?, ?, ?, ?, ?)",
                -1, &insert, nil), "prepare insert")
    }

    deinit {
        sqlite3_finalize(insert)
        sqlite3_close_v2(database)
    }

    /// One transaction inserting `events[range]`.
    func append(_ encoded: EncodedEvents, _ range: Range<Int>) {
        execute("BEGIN")
        for index in range {
            let event = encoded.descriptors[index]
            // SQLITE_STATIC (nil): the arena outlives the statement's step.
            sqlite3_bind_int64(insert, 1, Int64(event.seq))
            sqlite3_bind_blob(insert, 2, event.id, 16, nil)
            if let user = event.user {
                sqlite3_bind_text(insert, 3, UnsafeRawPointer(user).assumingMemoryBound(to: CChar.self), Int32(event.user_length), nil)
            } else {
                sqlite3_bind_null(insert, 3)
            }
            if let session = event.session {
                sqlite3_bind_blob(insert, 4, session, 16, nil)
            } else {
                sqlite3_bind_null(insert, 4)
            }
            sqlite3_bind_blob(insert, 5, event.record, Int32(event.record_length), nil)
            let rc = sqlite3_step(insert)
            guard rc == SQLITE_DONE else { fatalError("sqlite insert failed: \(message(rc))") }
            sqlite3_reset(insert)
        }
        execute("COMMIT")
    }

    private func execute(_ sql: String) {
        check(sqlite3_exec(database, sql, nil, nil, nil), sql)
    }

    private func check(_ rc: Int32, _ what: String) {
        // A benchmark baseline that fails cannot give a figure: stop with the reason.
        guard rc == SQLITE_OK else { fatalError("sqlite \(what) failed: \(message(rc))") }
    }

    private func message(_ rc: Int32) -> String {
        database.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
    }
}
