import Foundation
import PostgreSQL
import Synchronization
import Testing
import TestSupport

/// The pool against a real server: its bound holds under load, and it reconnects by itself when
/// the server drops its connections.
@Suite(.timed, .enabled(if: TestDatabase.isEnabled, TestDatabase.skipNote), .slow)
struct PGPoolTests {
    /// Connections of this pool the server lists, by the pool's own application name.
    static func serverSideConnections(_ url: DatabaseURL, named name: String) throws -> Int64 {
        let observer = try PGConnection(url: url)
        defer { observer.close() }
        return try observer.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", [.text(name)])[0].int64(0)
    }

    @Test func theBoundHoldsAndAWaiterPastTheCheckoutTimeoutIsToldSo() async throws {
        try await onOwnThread {
            try withFreshDatabase { url throws in
                var options = PGPool.Options()
                options.maximumConnections = 2
                options.checkoutTimeout = .milliseconds(300)
                options.connection.applicationName = "pool-bound-\(UUID().uuidString.prefix(8))"
                let pool = PGPool(url: url, options: options)
                defer { pool.close() }
                // Eight threads each hold a connection for 200 ms: never more than two are open,
                // and those that waited past 300 ms were refused, not queued for ever.
                let outcomes = Mutex<[String]>([])
                let maximumSeen = Atomic<Int>(0)
                let group = DispatchGroup()
                for _ in 0..<8 {
                    group.enter()
                    Thread.detachNewThread {
                        defer { group.leave() }
                        do {
                            try pool.withConnection { connection in
                                maximumSeen.max(pool.openConnections, ordering: .relaxed)
                                try connection.execute("SELECT pg_sleep(0.2)")
                            }
                            outcomes.withLock { $0.append("ok") }
                        } catch let error as PostgreSQLError {
                            outcomes.withLock { $0.append(error.kind.rawValue) }
                        } catch {
                            outcomes.withLock { $0.append("\(error)") }
                        }
                    }
                }
                #expect(group.wait(timeout: .now() + 30) == .success)
                let seen = outcomes.withLock { $0 }
                #expect(maximumSeen.load(ordering: .relaxed) <= 2)
                #expect(Set(seen).isSubset(of: ["ok", "poolExhausted"]), "\(seen)")
                #expect(seen.filter { $0 == "ok" }.count >= 2 && seen.contains("poolExhausted"), "\(seen)")
                #expect(try Self.serverSideConnections(url, named: options.connection.applicationName) <= 2)
            }
        }
    }

    @Test func aConnectionTheServerEndedIsReplacedWithoutAFailedStatement() async throws {
        try await onOwnThread {
            try withFreshDatabase { url throws in
                let pool = PGPool(url: url)
                defer { pool.close() }
                let first = try pool.withConnection { $0.backendPID }
                // The server ends that session (as a restart does to all of them).
                let admin = try PGConnection(url: url)
                defer { admin.close() }
                #expect(try admin.execute("SELECT pg_terminate_backend($1)", [.int32(first)])[0].bool(0))
                // The backend's exit reaches the client's socket within moments.
                let deadline = ContinuousClock.now + .seconds(10)
                while try admin.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = $1", [.int32(first)])[0].int64(0) > 0,
                    ContinuousClock.now < deadline
                {
                    Thread.sleep(forTimeInterval: 0.02)
                }
                Thread.sleep(forTimeInterval: 0.05)
                let (second, one) = try pool.withConnection { ($0.backendPID, try $0.execute("SELECT 1::int8")[0].int64(0)) }
                #expect(one == 1)
                #expect(second != first)
                #expect(pool.openConnections == 1)
            }
        }
    }

    @Test func aConnectionLeftInsideATransactionIsNotReused() async throws {
        try await onOwnThread {
            try withFreshDatabase { url throws in
                let pool = PGPool(url: url)
                defer { pool.close() }
                let first = try pool.withConnection { connection in
                    try connection.execute("BEGIN")
                    return connection.backendPID
                }
                let second = try pool.withConnection { $0.backendPID }
                #expect(first != second)
                #expect(pool.openConnections == 1)
            }
        }
    }
}
