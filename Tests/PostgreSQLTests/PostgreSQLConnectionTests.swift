import Foundation
import PostgreSQL
import Testing
import TestSupport

/// The libpq layer against a real PostgreSQL server: binary parameters and results, errors that
/// say what went wrong without the password, statement timeouts.
@Suite(.timed, .enabled(if: TestDatabase.isEnabled, TestDatabase.skipNote), .slow)
struct PostgreSQLConnectionTests {
    @Test func everyParameterTypeRoundTripsInBinary() throws {
        try withFreshDatabase { url in
            let connection = try PGConnection(url: url)
            for value in [Int64(0), -1, 1, Int64.max, Int64.min] {
                #expect(try connection.execute("SELECT $1::int8", [.int64(value)])[0].int64(0) == value)
            }
            #expect(try connection.execute("SELECT $1::int4", [.int32(Int32.min)])[0].int64(0) == Int64(Int32.min))
            #expect(try connection.execute("SELECT $1::bool, NOT $1::bool", [.bool(true)]).map { [try $0.bool(0), try $0.bool(1)] } == [[true, false]])
            let text = "José\u{0}\u{1}\t\u{7F}\u{202E}🙂"
            // A NUL cannot be in a PostgreSQL text; everything else comes back byte for byte.
            let storable = text.replacingOccurrences(of: "\u{0}", with: "")
            #expect(try connection.execute("SELECT $1::text", [.text(storable)])[0].string(0) == storable)
            let bytes = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) } + [0, 0, 0xFF]
            #expect(try connection.execute("SELECT $1::bytea", [.bytes(bytes)])[0].bytes(0) == bytes)
            #expect(try connection.execute("SELECT $1::bytea", [.bytes([])])[0].bytes(0) == [])
            let id = UUID()
            #expect(try connection.execute("SELECT $1::uuid", [.uuid(id)])[0].uuid(0) == id)
            let null = try connection.execute("SELECT $1::int8, $2::bytea", [.null, .null])
            #expect(null[0].isNull(0) && null[0].isNull(1))
            #expect(try null[0].optionalInt64(0) == nil && null[0].optionalBytes(1) == nil)
        }
    }

    @Test func arraysUnnestIntoRowsInOneStatement() throws {
        try withFreshDatabase { url in
            let connection = try PGConnection(url: url)
            try connection.execute("CREATE TABLE t (seq int8 PRIMARY KEY, body bytea, name text, id uuid)")
            let ids = (0..<1000).map { _ in UUID() }
            let inserted = try connection.execute(
                "INSERT INTO t SELECT * FROM unnest($1::int8[], $2::bytea[], $3::text[], $4::uuid[])",
                [
                    .int64Array((1...1000).map { Int64($0) }), .optionalBytesArray((1...1000).map { $0 % 10 == 0 ? nil : [UInt8($0 % 256)] }),
                    .textArray((1...1000).map { "user \($0)" }), .uuidArray(ids)
                ])
            #expect(inserted.affectedRows == 1000)
            let rows = try connection.execute("SELECT seq, body, name, id FROM t WHERE seq IN (10, 11, 1000) ORDER BY seq")
            #expect(try rows.map { try $0.int64(0) } == [10, 11, 1000])
            #expect(try rows[0].isNull(1) && rows[1].bytes(1) == [11])
            #expect(try rows[2].string(2) == "user 1000" && rows[2].uuid(3) == ids[999])
            // Empty arrays insert nothing, without an error.
            #expect(
                try connection.execute(
                    "INSERT INTO t SELECT * FROM unnest($1::int8[], $2::bytea[], $3::text[], $4::uuid[])",
                    [.int64Array([]), .bytesArray([]), .textArray([]), .uuidArray([])]
                ).affectedRows == 0)
        }
    }

    @Test func aResultOfAnotherTypeThanAskedIsAnErrorNotAGuess() throws {
        try withFreshDatabase { url in
            let connection = try PGConnection(url: url)
            let rows = try connection.execute("SELECT 'x'::text, NULL::int8")
            #expect(throws: PostgreSQLError.self) { try rows[0].int64(0) }
            #expect(throws: PostgreSQLError.self) { try rows[0].int64(1) }
            #expect(throws: PostgreSQLError.self) { try rows[0].bytes(7) }
        }
    }

    @Test func aRefusedStatementNamesItsSQLStateAndKeepsTheConnection() throws {
        try withFreshDatabase { url in
            let connection = try PGConnection(url: url)
            try connection.execute("CREATE TABLE t (k int8 PRIMARY KEY)")
            try connection.execute("INSERT INTO t VALUES ($1)", [.int64(1)])
            let error = try #require(throws: PostgreSQLError.self) { try connection.execute("INSERT INTO t VALUES ($1)", [.int64(1)]) }
            #expect(error.kind == .query && error.isUniqueViolation && error.message.contains("SQLSTATE 23505"), "\(error)")
            #expect(!error.message.contains("\n"))
            #expect(try connection.execute("SELECT count(*) FROM t")[0].int64(0) == 1)
        }
    }

    @Test func aStatementPastItsTimeoutIsCancelledAndTheConnectionStaysUsable() throws {
        try withFreshDatabase { url in
            var settings = PGConnection.Settings()
            settings.statementTimeout = .milliseconds(200)
            let connection = try PGConnection(url: url, settings: settings)
            let started = ContinuousClock.now
            let error = try #require(throws: PostgreSQLError.self) { try connection.execute("SELECT pg_sleep(10)") }
            #expect(error.kind == .timeout && error.sqlState == "57014", "\(error)")
            #expect(ContinuousClock.now - started < .seconds(5))
            #expect(try connection.execute("SELECT 1::int8")[0].int64(0) == 1)
        }
    }

    @Test func aTransactionRollsBackWhenItsBodyThrows() throws {
        try withFreshDatabase { url in
            let connection = try PGConnection(url: url)
            try connection.execute("CREATE TABLE t (k int8)")
            struct Stop: Error {}
            #expect(throws: Stop.self) {
                try connection.transaction { connection in
                    try connection.execute("INSERT INTO t VALUES (1)")
                    throw Stop()
                }
            }
            #expect(try connection.execute("SELECT count(*) FROM t")[0].int64(0) == 0)
            #expect(connection.isReusable)
            try connection.transaction { try $0.execute("INSERT INTO t VALUES (2)") }
            #expect(try connection.execute("SELECT count(*) FROM t")[0].int64(0) == 1)
        }
    }

    @Test func aPreparedStatementIsPreparedOncePerConnection() throws {
        try withFreshDatabase { url in
            let connection = try PGConnection(url: url)
            for value in [Int64(1), 2, 3] {
                #expect(try connection.execute(prepared: "plus_one", "SELECT $1::int8 + 1", [.int64(value)])[0].int64(0) == value + 1)
            }
            #expect(try connection.execute("SELECT count(*) FROM pg_prepared_statements WHERE name = 'plus_one'")[0].int64(0) == 1)
        }
    }
}

/// Bad URLs and unreachable servers: one clear line, never the password, and fast.
@Suite(.slow) struct DatabaseURLTests {
    @Test(arguments: [
        ("mysql://root:hunter2@127.0.0.1/db", "must start with postgres://"),
        ("127.0.0.1:5432", "must start with postgres://"),
        ("", "must start with postgres://"),
        ("postgres://u:hunter2@127.0.0.1:notaport/db", "not valid"),
        ("postgres://u:hunter2@127.0.0.1/db?nosuchoption=1", "not valid"),
        ("postgres://u:hunter2@127.0.0.1/db\nhost=evil", "control character")
    ])
    func aBadURLIsRefusedInOneLineWithoutThePassword(url: String, says: String) {
        let error = #expect(throws: PostgreSQLError.self) { try DatabaseURL(url) }
        #expect(error?.kind == .badURL)
        #expect(error?.message.contains(says) == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("hunter2") == false)
        #expect(error?.message.contains("\n") == false)
    }

    @Test func theRedactedFormHasNoPassword() throws {
        let url = try DatabaseURL("postgresql://onboard:hunter2@db.example.org:6432/fleet?sslmode=require")
        #expect(url.redacted == "postgres://onboard@db.example.org:6432/fleet")
        #expect(!"\(url)".contains("hunter2"))
        #expect(url.parameters["sslmode"] == "require")
    }

    @Test func anUnreachableDatabaseIsUnavailableNamingWhereButNotThePassword() throws {
        // A port nothing listens on: bound, then closed.
        let port = try LoopbackSockets.freePort()
        let started = ContinuousClock.now
        let error = #expect(throws: PostgreSQLError.self) {
            try PGConnection(url: DatabaseURL("postgres://onboard:hunter2@127.0.0.1:\(port)/onboard"))
        }
        #expect(error?.kind == .unavailable)
        #expect(error?.message.contains("postgres://onboard@127.0.0.1:\(port)/onboard") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("hunter2") == false)
        #expect(error?.message.contains("\n") == false)
        #expect(ContinuousClock.now - started < .seconds(5))
    }
}

/// Session settings go with the connection, and the server storage asks for durable commits.
@Suite(.timed, .enabled(if: TestDatabase.isEnabled, TestDatabase.skipNote), .slow)
struct PostgreSQLSessionSettingsTests {
    @Test func sessionSettingsApplyFromTheFirstStatement() throws {
        try withFreshDatabase { url in
            var settings = PGConnection.Settings()
            settings.sessionSettings = ["synchronous_commit": "on", "lock_timeout": "1234"]
            let connection = try PGConnection(url: url, settings: settings)
            #expect(try connection.execute("SELECT current_setting('synchronous_commit')")[0].string(0) == "on")
            #expect(try connection.execute("SELECT current_setting('lock_timeout')")[0].string(0) == "1234ms")
            // A database whose default is off still gets durable commits from such a session.
            try connection.execute("ALTER DATABASE \(url.parameters["dbname"]!) SET synchronous_commit = off")
            let fresh = try PGConnection(url: url, settings: settings)
            #expect(try fresh.execute("SELECT current_setting('synchronous_commit')")[0].string(0) == "on")
            let plain = try PGConnection(url: url)
            #expect(try plain.execute("SELECT current_setting('synchronous_commit')")[0].string(0) == "off")
        }
    }
}

/// Binary COPY: rows arrive as sent, NULLs included, and a refused row refuses the COPY.
@Suite(.timed, .enabled(if: TestDatabase.isEnabled, TestDatabase.skipNote), .slow)
struct PostgreSQLCopyTests {
    @Test func binaryCopyLoadsEveryRowAsSent() throws {
        try withFreshDatabase { url in
            let connection = try PGConnection(url: url)
            try connection.execute("CREATE TABLE t (k int8 PRIMARY KEY, body bytea, name text)")
            let rows: [[PGValue]] = (1...3000).map { [.int64(Int64($0)), $0 % 7 == 0 ? .null : .bytes([UInt8($0 % 256), 0, 0xFF]), .text("row \($0) ✓")] }
            #expect(try connection.copy(into: "t", columns: ["k", "body", "name"], rows: rows) == 3000)
            let sample = try connection.execute("SELECT k, body, name FROM t WHERE k IN (7, 8, 3000) ORDER BY k")
            #expect(try sample[0].isNull(1) && sample[1].bytes(1) == [8, 0, 0xFF])
            #expect(try sample[2].string(2) == "row 3000 ✓")
            // A duplicate key refuses the whole COPY; the connection stays usable.
            let error = try #require(throws: PostgreSQLError.self) { try connection.copy(into: "t", columns: ["k", "body", "name"], rows: [rows[0]]) }
            #expect(error.isUniqueViolation, "\(error)")
            #expect(try connection.execute("SELECT count(*) FROM t")[0].int64(0) == 3000)
        }
    }
}
