import Foundation
import OnboardingModel
import OnboardingServer
import OnboardingStore

/// A sync server for a test: the fake (``FakeSyncServer``), the reference ``SyncServer`` on LMDB
/// replicas, or (`postgres`) on a fresh PostgreSQL database, with a device token for
/// ``SyncFixture/device``.
struct ServerUnderTest: Sendable {
    let name: String
    let handle: @Sendable (SyncRequest) -> SyncResponse
    let token: String
    let close: @Sendable () -> Void

    static func make(_ name: String, in directory: TemporaryDirectory) throws -> ServerUnderTest {
        switch name {
        case "fake":
            let server = FakeSyncServer()
            return ServerUnderTest(name: name, handle: { server.handle($0) }, token: SyncFixture.token, close: {})
        default:
            var dropDatabase: (@Sendable () -> Void)?
            let server: SyncServer
            if name == "postgres" {
                let database = try TestDatabase.freshDatabase()
                dropDatabase = database.drop
                server = try SyncServer(databaseURL: database.url, options: SyncServer.Options())
            } else {
                server = try SyncServer(dataDirectory: directory.appending("server"))
            }
            guard let admin = server.createdAdminToken else { throw TestFailure("a new server made no admin token") }
            let response = server.handle(
                SyncRequest(
                    method: "POST", path: SyncPaths.devices,
                    headers: ["authorization": "Bearer \(admin)", "content-type": SyncWire.contentType],
                    body: SyncWire.enrolBody(device: SyncFixture.device)))
            guard response.status == 201 else {
                throw TestFailure("enrolment answered \(response.status): \(String(decoding: response.body, as: UTF8.self))")
            }
            let drop = dropDatabase
            return ServerUnderTest(
                name: name, handle: { server.handle($0) }, token: try SyncWire.token(from: response.body),
                close: {
                    server.close(); drop?()
                })
        }
    }

    /// The server's cursor for the device, read through the protocol.
    func cursor() -> SyncWire.Cursor? {
        let response = handle(
            SyncRequest(
                method: "GET", path: SyncPaths.cursor(device: SyncFixture.device),
                headers: ["authorization": "Bearer \(token)"]))
        return response.status == 200 ? try? SyncWire.cursor(from: response.body) : nil
    }

    /// Why the server's log is not a gap-free prefix of `store`'s (or the store's cursor claims
    /// more than the server holds); `nil` when all is well. The hash chain makes the head hash
    /// at the server's seq stand for the whole prefix.
    func prefixProblem(of store: OnboardingStore) -> String? {
        guard let cursor = cursor() else { return "the server's cursor is unreadable" }
        let local: Record?
        do { local = try store.storedRecord(at: cursor.acknowledgedSeq) } catch { return "local read failed: \(error)" }
        if cursor.acknowledgedSeq == 0 {
            guard cursor.headHash == .zero else { return "an empty server log has head hash \(cursor.headHash)" }
        } else if local?.hash != cursor.headHash {
            return "the server's seq \(cursor.acknowledgedSeq) has hash \(cursor.headHash), the store's \(local?.hash.hex ?? "none")"
        }
        let stored = (try? store.syncCursor()) ?? .max
        guard stored <= cursor.acknowledgedSeq else {
            return "the local cursor says \(stored) but the server holds only \(cursor.acknowledgedSeq)"
        }
        return nil
    }
}
