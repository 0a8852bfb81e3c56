import CLibPQ
import Foundation
#if canImport(Glibc)
    import Glibc
#endif

/// One libpq connection. Not for concurrent use: a ``PGPool`` hands it to one thread at a time
/// (hence `@unchecked Sendable`: it moves between threads, never shared by two at once).
///
/// Every statement goes with binary parameters and asks for binary results; a statement that
/// runs past ``Settings/statementTimeout`` is cancelled by the server (``PostgreSQLError/Kind/timeout``).
///
/// ```swift
/// let connection = try PGConnection(url: try DatabaseURL("postgres://onboard@127.0.0.1/onboard"))
/// let rows = try connection.execute("SELECT $1::int8 + 1", [.int64(41)])
/// try rows[0].int64(0)   // 42
/// ```
public final class PGConnection: @unchecked Sendable {
    public struct Settings: Sendable, Hashable {
        /// 10 s: the slowest statement the server runs (a batch of 1,000 rows, a user's
        /// history page) takes milliseconds; one that takes seconds is stuck behind a lock or a
        /// sick database, and the client's retry does better than waiting on.
        public var statementTimeout = Duration.seconds(10)
        /// 5 s to connect (libpq counts whole seconds, at least 2): a database on the same
        /// network answers in milliseconds, and a request should fail while its client still waits.
        public var connectTimeout = Duration.seconds(5)
        /// How the connections show in `pg_stat_activity`.
        public var applicationName = "onboard"
        /// Server settings for the session (`-c name=value` at connect: no round trip), e.g.
        /// `synchronous_commit=on`. Names and values are letters, digits and `_` only.
        public var sessionSettings: [String: String] = [:]

        public init() {}
    }

    public let url: DatabaseURL
    public let settings: Settings
    private var handle: OpaquePointer?
    /// Statements prepared on this connection (prepared statements live per connection).
    private var prepared: Set<String> = []

    public init(url: DatabaseURL, settings: Settings = Settings()) throws(PostgreSQLError) {
        let plain = { (text: String) in
            !text.isEmpty
                && text.utf8.allSatisfy { $0 == UInt8(ascii: "_") || (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }
        }
        precondition(settings.sessionSettings.allSatisfy { plain($0.key) && plain($0.value) }, "session settings are letters, digits and _ only")
        self.url = url
        self.settings = settings
        let milliseconds = max(1, settings.statementTimeout.milliseconds)
        // Ours first: the URL (expanded from `dbname`) comes last, so what it names wins.
        let parameters: [(String, String)] = [
            ("connect_timeout", String(max(2, settings.connectTimeout.milliseconds / 1000))),
            ("application_name", settings.applicationName),
            (
                "options",
                (["-c statement_timeout=\(milliseconds)"] + settings.sessionSettings.sorted { $0.key < $1.key }.map { "-c \($0.key)=\($0.value)" })
                    .joined(separator: " ")
            ),
            // A peer that vanished (no FIN, no RST) fails the connection instead of hanging it.
            ("tcp_user_timeout", String(milliseconds + 5000)),
            ("keepalives", "1"),
            ("dbname", url.text)
        ]
        let handle = Self.withCStrings(parameters.map(\.0)) { keywords in
            Self.withCStrings(parameters.map(\.1)) { values in PQconnectdbParams(keywords, values, 1) }
        }
        guard let handle, PQstatus(handle) == CONNECTION_OK else {
            let reason = handle.map { String(cString: PQerrorMessage($0)) } ?? "out of memory"
            if let handle { PQfinish(handle) }
            throw PostgreSQLError(.unavailable, "cannot connect to the database at \(url.redacted): \(url.scrubbed(reason))")
        }
        // Notices (`… already exists, skipping`) would go to stderr; nothing of them is needed.
        PQsetNoticeProcessor(handle, { _, _ in }, nil)
        self.handle = handle
    }

    deinit { close() }

    public func close() {
        if let handle { PQfinish(handle) }
        handle = nil
        prepared = []
    }

    /// Connected, and not inside a transaction: fit to go back to a pool.
    public var isReusable: Bool {
        guard let handle else { return false }
        return PQstatus(handle) == CONNECTION_OK && PQtransactionStatus(handle) == PQTRANS_IDLE
    }

    /// Whether an idle connection is still fit to use, without blocking. An idle session gets
    /// nothing from the server (this layer never LISTENs), so anything readable on its socket —
    /// the FATAL message of a terminated backend or a restart, or the end of the stream — means
    /// the server has ended it.
    public func isAlive() -> Bool {
        guard let handle, PQstatus(handle) == CONNECTION_OK else { return false }
        var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
        let ready = poll(&descriptor, 1, 0)
        return ready == 0
    }

    /// The server process serving this connection (`pg_backend_pid()`), for tests and logs.
    public var backendPID: Int32 { handle.map { PQbackendPID($0) } ?? 0 }

    /// Runs `sql` with `parameters` (`$1`, `$2`, …) and returns its rows.
    @discardableResult
    public func execute(_ sql: String, _ parameters: [PGValue] = []) throws(PostgreSQLError) -> PGRows {
        let handle = try open()
        let result = Self.withParameters(parameters) { types, values, lengths, formats in
            PQexecParams(handle, sql, Int32(parameters.count), types, values, lengths, formats, 1)
        }
        return try check(result)
    }

    /// Runs the statement `sql` prepared once per connection under `name`: the server parses and
    /// plans it once, and each call sends only the parameters.
    @discardableResult
    public func execute(prepared name: String, _ sql: String, _ parameters: [PGValue] = []) throws(PostgreSQLError) -> PGRows {
        let handle = try open()
        if !prepared.contains(name) {
            let types = parameters.map { $0.encoded.oid }
            let result = types.withUnsafeBufferPointer { PQprepare(handle, name, sql, Int32(types.count), $0.baseAddress) }
            _ = try check(result)
            prepared.insert(name)
        }
        let result = Self.withParameters(parameters) { _, values, lengths, formats in
            PQexecPrepared(handle, name, Int32(parameters.count), values, lengths, formats, 1)
        }
        return try check(result)
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    @discardableResult
    public func transaction<R>(_ body: (PGConnection) throws -> R) throws -> R {
        try execute("BEGIN")
        do {
            let value = try body(self)
            try execute("COMMIT")
            return value
        } catch {
            if let handle, PQstatus(handle) == CONNECTION_OK { _ = try? execute("ROLLBACK") }
            throw error
        }
    }

    /// Starts a statement that answers with `PGRES_COPY_IN` (a `COPY … FROM STDIN`).
    func execute(_ sql: String, expectingCopy: Bool) throws(PostgreSQLError) {
        let handle = try open()
        guard let result = PQexec(handle, sql) else {
            throw PostgreSQLError(
                .unavailable, "lost the connection to the database at \(url.redacted): \(url.scrubbed(String(cString: PQerrorMessage(handle))))")
        }
        if PQresultStatus(result) == PGRES_COPY_IN {
            PQclear(result)
            return
        }
        _ = try check(result)
        throw PostgreSQLError(.unexpectedResult, "the statement did not start a COPY")
    }

    func openHandle() throws(PostgreSQLError) -> OpaquePointer { try open() }

    /// ``check(_:)`` for a result taken with `PQgetResult`.
    func finish(_ result: OpaquePointer) throws(PostgreSQLError) -> PGRows { try check(result) }

    private func open() throws(PostgreSQLError) -> OpaquePointer {
        guard let handle else { throw PostgreSQLError(.unavailable, "the connection to \(url.redacted) is closed") }
        return handle
    }

    /// SQLSTATE classes and codes that mean "the database, not the statement": retry later.
    static func meansUnavailable(_ state: String) -> Bool {
        state.hasPrefix("08") || ["57P01", "57P02", "57P03", "53300", "53400", "40001", "40P01"].contains(state)
    }

    private func check(_ result: OpaquePointer?) throws(PostgreSQLError) -> PGRows {
        guard let result else {
            let reason = handle.map { String(cString: PQerrorMessage($0)) } ?? ""
            throw PostgreSQLError(.unavailable, "lost the connection to the database at \(url.redacted): \(url.scrubbed(reason))")
        }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        if status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK { return PGRows(result: result) }
        let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
        let primary =
            PQresultErrorField(result, Int32(UInt8(ascii: "M"))).map { String(cString: $0) }
            ?? String(cString: PQresultErrorMessage(result))
        let message = url.scrubbed(primary)
        if let handle, PQstatus(handle) != CONNECTION_OK {
            throw PostgreSQLError(.unavailable, "lost the connection to the database at \(url.redacted): \(message)", sqlState: state)
        }
        if state == "57014" {
            throw PostgreSQLError(
                .timeout, "the database cancelled a statement after the \(settings.statementTimeout.milliseconds) ms statement timeout",
                sqlState: state)
        }
        if let state, Self.meansUnavailable(state) {
            throw PostgreSQLError(.unavailable, "the database at \(url.redacted) is unavailable: \(message) (SQLSTATE \(state))", sqlState: state)
        }
        throw PostgreSQLError(.query, "the database refused a statement: \(message)\(state.map { " (SQLSTATE \($0))" } ?? "")", sqlState: state)
    }

    /// Hands libpq the parameters as C arrays: type OIDs, value pointers, lengths, and formats
    /// (all binary), alive for the call.
    private static func withParameters<R>(
        _ parameters: [PGValue],
        _ body: (
            UnsafePointer<UInt32>?, UnsafePointer<UnsafePointer<CChar>?>?,
            UnsafePointer<Int32>?, UnsafePointer<Int32>?
        ) -> R
    ) -> R {
        let encoded = parameters.map(\.encoded)
        let types = encoded.map(\.oid)
        let lengths = encoded.map { Int32($0.bytes?.count ?? 0) }
        let formats = [Int32](repeating: 1, count: encoded.count)
        // One buffer for every value; each pointer points into it (a NULL value gets no pointer).
        let total = encoded.reduce(0) { $0 + ($1.bytes?.count ?? 0) }
        let storage = UnsafeMutablePointer<CChar>.allocate(capacity: max(total, 1))
        defer { storage.deallocate() }
        var pointers: [UnsafePointer<CChar>?] = []
        var offset = 0
        for value in encoded {
            guard let bytes = value.bytes else {
                pointers.append(nil)
                continue
            }
            bytes.withUnsafeBytes { source in
                if let base = source.baseAddress { (storage + offset).update(from: base.assumingMemoryBound(to: CChar.self), count: bytes.count) }
            }
            pointers.append(UnsafePointer(storage + offset))
            offset += bytes.count
        }
        return types.withUnsafeBufferPointer { types in
            pointers.withUnsafeBufferPointer { values in
                lengths.withUnsafeBufferPointer { lengths in
                    formats.withUnsafeBufferPointer { formats in
                        body(types.baseAddress, values.baseAddress, lengths.baseAddress, formats.baseAddress)
                    }
                }
            }
        }
    }

    private static func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
        let copies = strings.map { strdup($0) }
        defer { copies.forEach { free($0) } }
        let pointers = copies.map { UnsafePointer($0) } + [nil]
        return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}

extension Duration {
    /// Whole milliseconds, rounded down, saturating.
    var milliseconds: Int {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        guard !overflow else { return seconds < 0 ? Int.min : Int.max }
        return Int(clamping: scaled + attoseconds / 1_000_000_000_000_000)
    }
}
