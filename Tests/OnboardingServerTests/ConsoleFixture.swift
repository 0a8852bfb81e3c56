import Foundation
import OnboardingModel
import OnboardingProjections
@testable import OnboardingServer
import OnboardingStore
import Synchronization
import Testing
import TestSupport

/// A server on either storage for the console API's tests, which can also be opened again on the
/// same storage (a restart on LMDB, another node on PostgreSQL), with device stores to upload
/// from and an auditor token.
final class ConsoleFixture: @unchecked Sendable {
    static let start = SyncServerTests.start

    let storage: String
    let directory: TemporaryDirectory
    let databaseURL: String?
    private(set) var server: SyncServer
    let admin: String
    private(set) var auditor = ""
    private let dropDatabase: @Sendable () -> Void
    private var stores: [String: (store: OnboardingStore, token: String)] = [:]
    private var others: [SyncServer] = []

    init(storage: String, clock: (@Sendable () -> Timestamp)? = nil) throws {
        self.storage = storage
        directory = try TemporaryDirectory()
        var options = SyncServer.Options()
        if let clock { options.clock = clock }
        options.scratchDirectory = directory.path
        if storage == "postgres" {
            let database = try TestDatabase.freshDatabase()
            databaseURL = database.url
            dropDatabase = database.drop
            server = try SyncServer(databaseURL: database.url, options: options)
        } else {
            databaseURL = nil
            dropDatabase = {}
            server = try SyncServer(dataDirectory: directory.appending("server-data"), options: options)
        }
        admin = try #require(server.createdAdminToken)
        auditor = try SyncWire.token(from: call("POST", SyncPaths.auditorTokens, token: admin).body)
    }

    var options: SyncServer.Options { server.options }

    /// Another server on the same storage: on PostgreSQL a second node (both stay open), on LMDB
    /// this one closed and opened again (a restart), which then is ``server``.
    func reopen() throws -> SyncServer {
        if let databaseURL {
            let node = try SyncServer(databaseURL: databaseURL, options: options, createsAdminToken: false)
            others.append(node)
            return node
        }
        server.close()
        server = try SyncServer(dataDirectory: directory.appending("server-data"), options: options)
        return server
    }

    func close() {
        for store in stores.values { store.store.close() }
        for node in others { node.close() }
        server.close()
        dropDatabase()
        directory.remove()
    }

    /// The device store of `device` (made, and enrolled, on first use) and its token.
    func device(_ device: String) throws -> (store: OnboardingStore, token: String) {
        if let known = stores[device] { return known }
        var options = OnboardingStore.Options()
        options.deviceID = device
        options.durability = .relaxed
        options.maximumClockSkewMilliseconds = nil
        let store = try OnboardingStore.open(at: directory.appending("device-\(device)"), options: options)
        let token = try server.issueToken(role: .device, device: device)
        stores[device] = (store, token)
        return (store, token)
    }

    /// Appends `events` (all of one device) on their device and uploads every record the server lacks.
    @discardableResult
    func record(_ events: [Event], through node: SyncServer? = nil) async throws -> SyncResponse {
        precondition(Set(events.map(\.device)).count == 1, "one device's events at a time")
        let (store, token) = try device(events[0].device)
        _ = try await store.append(events)
        return try upload(store.deviceID, token: token, through: node)
    }

    @discardableResult
    func upload(_ device: String, token: String? = nil, through node: SyncServer? = nil) throws -> SyncResponse {
        let (store, storedToken) = try self.device(device)
        let server = node ?? self.server
        let cursor = try SyncWire.cursor(
            from: server.handle(
                SyncRequest(
                    method: "GET", path: SyncPaths.cursor(device: device),
                    headers: ["authorization": "Bearer \(token ?? storedToken)"])
            ).body)
        let head = try store.head().seq
        guard head > cursor.acknowledgedSeq else { return SyncResponse(status: 200) }
        let records = try store.records(in: (cursor.acknowledgedSeq + 1)...head)
        let response = server.handle(
            SyncRequest(
                method: "POST", path: SyncPaths.events(device: device),
                headers: ["authorization": "Bearer \(token ?? storedToken)", "content-type": SyncWire.contentType],
                body: SyncWire.uploadBody(device: device, records: records, keys: try store.syncKeys(for: records))))
        #expect(response.status == 200, "upload of \(device): \(String(decoding: response.body, as: UTF8.self))")
        return response
    }

    func call(_ method: String, _ path: String, token: String?, body: [UInt8] = [], through node: SyncServer? = nil) -> SyncResponse {
        var headers: [String: String] = [:]
        if let token { headers["authorization"] = "Bearer \(token)" }
        if !body.isEmpty { headers["content-type"] = SyncWire.contentType }
        return (node ?? server).handle(SyncRequest(method: method, path: path, headers: headers, body: body))
    }

    /// A GET as the auditor, its status and JSON.
    func get(_ path: String, token: String? = nil, through node: SyncServer? = nil) throws -> (status: Int, body: JSONValue) {
        let response = call("GET", path, token: token ?? auditor, through: node)
        return (response.status, try JSONValue.parse(bytes: response.body))
    }

    /// A 400's message.
    func refusal(_ path: String, method: String = "GET", token: String? = nil, body: [UInt8] = []) -> (status: Int, message: String?) {
        let response = call(method, path, token: token ?? auditor, body: body)
        return (response.status, SyncWire.error(from: response.body)?.message)
    }

    static func event(
        _ device: String, _ second: Int, user: String? = "alice",
        _ payload: Payload = .signInFailed(method: .password, reason: .invalidPassword)
    ) -> Event {
        Event(id: UUID(), device: device, at: start.adding(milliseconds: Int64(second) * 1000), user: user, flow: nil, payload: payload)
    }

    static func array(_ value: JSONValue?) -> [JSONValue] {
        if case .array(let items)? = value { return items }
        return []
    }

    static func string(_ value: JSONValue?) -> String? { value?.stringValue }

    static func integer(_ value: JSONValue?) -> Int? {
        if case .number(let text)? = value { return Int(text) }
        return nil
    }
}
