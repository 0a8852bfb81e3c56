import Dispatch
import Synchronization

/// A bounded pool of connections to one database, for blocking callers (the HTTP server's
/// handler threads). At most ``Options/maximumConnections`` connections are open; a caller waits
/// up to ``Options/checkoutTimeout`` for one, then gets ``PostgreSQLError/Kind/poolExhausted``.
///
/// A connection that broke (the database restarted, a network cut) is dropped when its caller
/// is done, and the next caller connects anew: the pool reconnects by itself.
///
/// ```swift
/// let pool = PGPool(url: try DatabaseURL("postgres://onboard@127.0.0.1/onboard"))
/// let count = try pool.withConnection { try $0.execute("SELECT count(*) FROM devices")[0].int64(0) }
/// ```
public final class PGPool: Sendable {
    public struct Options: Sendable, Hashable {
        /// 8: a server node's handler threads share them; PostgreSQL's default of 100
        /// connections then serves a dozen nodes, and more need pgbouncer (docs/scaling.md).
        public var maximumConnections = 8
        /// 2 s: a request that cannot get a connection that soon answers 503 and is retried,
        /// instead of piling up behind a saturated database.
        public var checkoutTimeout = Duration.seconds(2)
        public var connection = PGConnection.Settings()

        public init() {}
    }

    public let url: DatabaseURL
    public let options: Options
    private let slots: DispatchSemaphore
    private let idle = Mutex<[PGConnection]>([])
    private let openCount = Atomic<Int>(0)
    private let checkedOut = Atomic<Int>(0)

    public init(url: DatabaseURL, options: Options = Options()) {
        precondition(options.maximumConnections > 0, "a pool needs at least one connection")
        self.url = url
        self.options = options
        slots = DispatchSemaphore(value: options.maximumConnections)
    }

    /// Connections open now (idle or in use), and in use now: for metrics.
    public var openConnections: Int { openCount.load(ordering: .relaxed) }
    public var connectionsInUse: Int { checkedOut.load(ordering: .relaxed) }

    /// Runs `body` with a connection of the pool's, waiting for one up to the checkout timeout.
    @discardableResult
    public func withConnection<R>(_ body: (PGConnection) throws -> R) throws -> R {
        let wait = DispatchTime.now() + .milliseconds(max(0, options.checkoutTimeout.milliseconds))
        guard slots.wait(timeout: wait) == .success else {
            throw PostgreSQLError(
                .poolExhausted, "all \(options.maximumConnections) database connections stayed busy for \(options.checkoutTimeout.milliseconds) ms")
        }
        defer { slots.signal() }
        checkedOut.add(1, ordering: .relaxed)
        defer { checkedOut.subtract(1, ordering: .relaxed) }
        let connection = try take()
        defer { giveBack(connection) }
        return try body(connection)
    }

    /// Runs `body` in a transaction on a pooled connection.
    @discardableResult
    public func transaction<R>(_ body: (PGConnection) throws -> R) throws -> R {
        try withConnection { try $0.transaction(body) }
    }

    /// Closes the idle connections; those in use close when their callers are done.
    public func close() {
        let connections = idle.withLock { idle in
            defer { idle = [] }; return idle
        }
        for connection in connections { discard(connection) }
    }

    private func take() throws(PostgreSQLError) -> PGConnection {
        // An idle connection the server dropped meanwhile (a restart, an idle timeout) is
        // replaced before anyone runs a statement on it.
        while let connection = idle.withLock({ $0.popLast() }) {
            if connection.isAlive() { return connection }
            discard(connection)
        }
        let connection = try PGConnection(url: url, settings: options.connection)
        openCount.add(1, ordering: .relaxed)
        return connection
    }

    private func giveBack(_ connection: PGConnection) {
        guard connection.isReusable else {
            discard(connection)
            return
        }
        idle.withLock { $0.append(connection) }
    }

    private func discard(_ connection: PGConnection) {
        connection.close()
        openCount.subtract(1, ordering: .relaxed)
    }
}
