import Foundation
import OnboardingServer
@testable import OnboardingStore
import Synchronization
import Testing
import TestSupport

/// The PostgreSQL-backed server when its database goes away: PostgreSQL stopped as a crash
/// would stop it (`pg_ctl stop -m immediate`) between and during a device's batches, then
/// started again while the server keeps running. The server answers 503 with Retry-After, never
/// a wrong acknowledgement, reconnects by itself, and the client resumes to a copy equal to the
/// device's log. Each test runs a cluster of its own (stopping the shared one would disturb the
/// other suites).
@Suite(.serialized, .timed, .enabled(if: TestDatabase.isEnabled, TestDatabase.skipNote), .slow)
struct PostgresFaultTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("tools/pg-test-cluster.sh").path

    static func cluster(_ arguments: [String]) throws -> String {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [script] + arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw TestFailure("pg-test-cluster.sh \(arguments.joined(separator: " ")) failed") }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func theDatabaseCrashingMidSyncGives503ThenTheServerReconnectsAndTheSyncResumes() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            // Its own directory under /tmp (the postgres user must be able to enter it).
            let clusterDirectory = NSTemporaryDirectory() + "onboard-fault-pg-\(UUID().uuidString.prefix(8))"
            let url = try Self.cluster(["start", clusterDirectory])
            defer {
                _ = try? Self.cluster(["stop", clusterDirectory, "immediate"])
                try? FileManager.default.removeItem(atPath: clusterDirectory)
            }
            let server = try SyncServer(databaseURL: url, options: SyncServer.Options())
            defer { server.close() }
            let admin = try #require(server.createdAdminToken)
            let enrolled = server.handle(
                SyncRequest(
                    method: "POST", path: SyncPaths.devices,
                    headers: ["authorization": "Bearer \(admin)", "content-type": SyncWire.contentType],
                    body: SyncWire.enrolBody(device: SyncFixture.device)))
            let token = try SyncWire.token(from: enrolled.body)
            let store = try SyncFixture.openStore(in: directory)
            defer { store.close() }
            let transport = InMemoryTransport { server.handle($0) }

            _ = try runBlocking { try await SyncFixture.append(300, to: store) }
            let first = try runBlocking { try await SyncClient(store: store, transport: transport, token: token, batchEvents: 50).run() }
            #expect(first.acknowledgedSeq == 300)

            // The database crashes: every request is 503 with Retry-After, and nothing is
            // acknowledged that the database does not hold.
            _ = try runBlocking { try await SyncFixture.append(300, to: store, from: 300) }
            _ = try Self.cluster(["stop", clusterDirectory, "immediate"])
            let cursor = server.handle(
                SyncRequest(
                    method: "GET", path: SyncPaths.cursor(device: SyncFixture.device),
                    headers: ["authorization": "Bearer \(token)"]))
            #expect(cursor.status == 503 && cursor.headers["retry-after"] != nil, "\(cursor.status)")
            let during = runBlockingResult {
                try await SyncClient(store: store, transport: transport, token: token, batchEvents: 50).run(timeLimit: .seconds(2))
            }
            #expect(throws: SyncError.self) { try during.get() }
            #expect(try store.syncCursor() == 300, "no batch was acknowledged while the database was down")

            // Started again while the server runs: the pool reconnects, the client resumes.
            _ = try Self.cluster(["restart", clusterDirectory])
            let resumed = try runBlocking { try await SyncClient(store: store, transport: transport, token: token, batchEvents: 50).run() }
            #expect(resumed.acknowledgedSeq == 600)
            let copy = try server.withDeviceLog(of: SyncFixture.device) { log in (try log.head(), try log.records(in: 1...600)) }
            let head = try store.head()
            let local = try SyncFixture.allRecords(store)
            #expect(copy.0.seq == 600 && copy.0.hash == head.hash)
            #expect(copy.1.map(\.hash) == local.map(\.hash))
            #expect(try server.audit().allSatisfy(\.isValid))
        }
    }
}

/// Runs async work from a thread of its own, waiting for it.
func runBlocking<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) throws -> T {
    try runBlockingResult(work).get()
}

func runBlockingResult<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) -> Result<T, any Error> {
    let box = ResultBox<T>()
    let done = DispatchSemaphore(value: 0)
    Task {
        do { box.set(.success(try await work())) } catch { box.set(.failure(error)) }
        done.signal()
    }
    done.wait()
    return box.get()
}

private final class ResultBox<T: Sendable>: Sendable {
    private let value = Mutex<Result<T, any Error>?>(nil)
    func set(_ result: Result<T, any Error>) { value.withLock { $0 = result } }
    func get() -> Result<T, any Error> { value.withLock { $0! } }
}
