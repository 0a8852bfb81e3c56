import Foundation
import PostgreSQL
import Testing

/// The PostgreSQL server the tests create their databases on: `$ONBOARD_TEST_DATABASE_URL`
/// (`.ci/run` starts a cluster and sets it), or else a throwaway cluster this test process starts
/// once with tools/pg-test-cluster.sh and stops when it exits. Without either (no PostgreSQL
/// installed) the PostgreSQL suites skip, visibly — unless `$CI` is set: then they run and fail.
///
/// ```swift
/// @Suite(.enabled(if: TestDatabase.isEnabled, TestDatabase.skipNote)) struct PoolTests {
///     @Test func connects() throws { let url = try TestDatabase.freshDatabaseURL(); … }
/// }
/// ```
public enum TestDatabase {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Where a cluster started by this process lives (removed at exit).
    nonisolated(unsafe) private static var clusterDirectory: String?

    /// The server's URL (its `postgres` database), or why there is none.
    public static let server: Result<String, TestDatabaseUnavailable> = {
        if let url = ProcessInfo.processInfo.environment["ONBOARD_TEST_DATABASE_URL"], !url.isEmpty { return .success(url) }
        let script = repository.appendingPathComponent("tools/pg-test-cluster.sh").path
        let directory = NSTemporaryDirectory() + "onboard-test-pg-\(getpid())-\(UUID().uuidString.prefix(8))"
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [script, "start", directory]
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        do { try process.run() } catch { return .failure(TestDatabaseUnavailable(reason: "cannot run \(script): \(error)")) }
        let url = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let reason = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0, url.hasPrefix("postgres://") else {
            try? FileManager.default.removeItem(atPath: directory)
            return .failure(TestDatabaseUnavailable(reason: reason.split(separator: "\n").last.map(String.init) ?? "tools/pg-test-cluster.sh failed"))
        }
        clusterDirectory = directory
        atexit {
            guard let directory = TestDatabase.clusterDirectory else { return }
            let stop = ChildProcess()
            stop.executableURL = URL(fileURLWithPath: "/bin/bash")
            stop.arguments = [TestDatabase.repository.appendingPathComponent("tools/pg-test-cluster.sh").path, "stop", directory]
            try? stop.run()
            stop.waitUntilExit()
            try? FileManager.default.removeItem(atPath: directory)
        }
        return .success(url)
    }()

    /// Whether the PostgreSQL suites run: with a server, or in CI (where a missing one fails them);
    /// never in the fast set (`ONBOARD_TEST_FAST`, docs/testing.md § The fast set), which then
    /// starts no cluster: every test that talks to PostgreSQL is slow, and so are the PostgreSQL
    /// cases of the suites parameterised over ``storages`` and ``serverBackends``.
    public static var isEnabled: Bool {
        if FastSet.isRunning { return false }
        if case .success = server { return true }
        return ProcessInfo.processInfo.environment["CI"].map { !$0.isEmpty } ?? false
    }

    /// The line a skipped suite shows.
    public static var skipNote: Comment {
        if FastSet.isRunning { return "slow: PostgreSQL is skipped in the fast set (ONBOARD_TEST_FAST)" }
        if case .failure(let why) = server { return "no PostgreSQL for the tests (\(why.reason)); set ONBOARD_TEST_DATABASE_URL or install postgresql" }
        return "PostgreSQL available"
    }

    /// The server's URL with another database name in place of `postgres`.
    public static func url(database: String) throws -> String {
        let base = try server.get()
        guard let slash = base.lastIndex(of: "/") else { return base }
        return base[..<slash] + "/" + database
    }

    /// A new database's name for one test: `onboard_test_<8 hex>`.
    public static func freshName() -> String {
        "onboard_test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(12).lowercased()
    }
}

/// Why no PostgreSQL server is available to the tests.
public struct TestDatabaseUnavailable: Error, CustomStringConvertible {
    public let reason: String
    public var description: String { "no PostgreSQL for the tests: \(reason)" }
}

extension TestDatabase {
    /// A new, empty database for one test on the tests' PostgreSQL server, dropped afterwards
    /// (also when `body` throws). Blocks: call it from a thread of its own.
    public static func withFreshDatabase<R>(_ body: (DatabaseURL) throws -> R) throws -> R {
        let name = freshName()
        let admin = try PGConnection(url: DatabaseURL(try url(database: "postgres")))
        defer { admin.close() }
        try admin.execute("CREATE DATABASE \(name)")
        defer { _ = try? admin.execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)") }
        return try body(DatabaseURL(try url(database: name)))
    }
}

/// ``TestDatabase/withFreshDatabase(_:)``.
public func withFreshDatabase<R>(_ body: (DatabaseURL) throws -> R) throws -> R {
    try TestDatabase.withFreshDatabase(body)
}

extension TestDatabase {
    /// A new, empty database for a fixture that outlives one call: its URL, and `drop` to
    /// remove it (idempotent).
    public static func freshDatabase() throws -> (url: String, drop: @Sendable () -> Void) {
        let name = freshName()
        let adminURL = try url(database: "postgres")
        let admin = try PGConnection(url: DatabaseURL(adminURL))
        defer { admin.close() }
        try admin.execute("CREATE DATABASE \(name)")
        return (
            try url(database: name),
            {
                guard let admin = try? PGConnection(url: DatabaseURL(adminURL)) else { return }
                defer { admin.close() }
                _ = try? admin.execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
            }
        )
    }

    /// The backends the parameterised server suites run against: the reference server on LMDB,
    /// and on PostgreSQL when a server is available (see ``isEnabled``).
    public static var serverBackends: [String] { isEnabled ? ["reference", "postgres"] : ["reference"] }
}

extension TestDatabase {
    /// The storages the server suites run against: `lmdb`, and `postgres` when a server is available.
    public static var storages: [String] { isEnabled ? ["lmdb", "postgres"] : ["lmdb"] }
}
