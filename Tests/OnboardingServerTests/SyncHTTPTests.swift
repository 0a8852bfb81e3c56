import Foundation
import HTTPServer
import OnboardingModel
@testable import OnboardingServer
import OnboardingStore
import Testing
import TestSupport

/// The sync server over real HTTP on loopback: every refusal status, and many devices at once, on
/// either storage.
@Suite(.slow) struct SyncHTTPTests {
    /// A running server on a free loopback port.
    struct Running {
        let directory: TemporaryDirectory
        let storage: TestServerStorage
        let server: SyncServer
        let http: HTTPServer
        let transport: HTTPTransport

        init(storage name: String) throws {
            directory = try TemporaryDirectory()
            storage = try TestServerStorage(name, in: directory)
            server = try storage.open()
            http = HTTPServer(port: 0, limits: SyncHTTPHandler.limits, handler: SyncHTTPHandler(server: server))
            try http.start()
            transport = try HTTPTransport(baseURL: URL(string: "http://127.0.0.1:\(http.port)")!, timeout: .seconds(20))
        }

        func send(
            _ method: String, _ path: String, token: String?, body: [UInt8] = [],
            contentType: String? = "application/json"
        ) async throws -> SyncResponse {
            var headers: [String: String] = [:]
            if let token { headers["authorization"] = "Bearer \(token)" }
            if let contentType, !body.isEmpty { headers["content-type"] = contentType }
            return try await transport.send(SyncRequest(method: method, path: path, headers: headers, body: body))
        }

        func device(_ name: String, events: Int) async throws -> (OnboardingStore, String) {
            var options = OnboardingStore.Options()
            options.deviceID = name
            options.durability = .relaxed
            let store = try OnboardingStore.open(at: directory.appending("device-\(name)"), options: options)
            let start = Timestamp(millisecondsSince1970: 1_796_054_400_000)
            if events > 0 {
                _ = try await store.append(
                    (0..<events).map { index in
                        Event(
                            id: UUID(), device: name, at: start.adding(milliseconds: Int64(index) * 700), user: "user-\(index % 9)",
                            flow: nil,
                            payload: index % 3 == 0
                                ? .signInStarted(method: .password)
                                : .signInFailed(method: .password, reason: .invalidPassword))
                    })
            }
            return (store, try server.issueToken(role: .device, device: name))
        }

        func stop() {
            server.beginShutdown()
            http.stop()
            server.close()
            storage.remove()
            directory.remove()
        }
    }

    @Test(arguments: TestDatabase.storages) func everyRefusalStatusOverHTTPAndTheServerKeepsServing(storage: String) async throws {
        let running = try Running(storage: storage)
        defer { running.stop() }
        let (store, token) = try await running.device("kiosk-7", events: 12)
        defer { store.close() }
        let (other, otherToken) = try await running.device("phone-1", events: 5)
        defer { other.close() }
        let path = SyncPaths.events(device: "kiosk-7")
        func body(_ range: ClosedRange<UInt64>) throws -> [UInt8] {
            SyncWire.uploadBody(device: "kiosk-7", records: try store.records(in: range), keys: try store.syncKeys(for: store.records(in: range)))
        }
        func code(_ response: SyncResponse) -> String? { SyncWire.error(from: response.body)?.wireCode }

        #expect(try await running.send("POST", path, token: token, body: try body(1...4)).status == 200)
        let malformed = try await running.send("POST", path, token: token, body: Array(#"{"device":"kiosk-7"}"#.utf8))
        #expect(malformed.status == 400 && code(malformed) == "malformed")
        let anonymous = try await running.send("POST", path, token: nil, body: try body(5...6))
        #expect(anonymous.status == 401 && code(anonymous) == "unauthorized")
        let foreign = try await running.send("POST", path, token: otherToken, body: try body(5...6))
        #expect(foreign.status == 403 && code(foreign) == "forbidden")
        let gap = try await running.send("POST", path, token: token, body: try body(7...8))
        #expect(gap.status == 409 && SyncWire.error(from: gap.body)?.expectedSeq == 5)
        var forkRecords = try store.records(in: 2...2)
        forkRecords[0].event.user = "someone-else"
        let fork = try await running.send(
            "POST", path, token: token, body: SyncWire.uploadBody(device: "kiosk-7", records: forkRecords, keys: store.syncKeys(for: forkRecords)))
        #expect(fork.status == 409 && code(fork) == "fork")
        var forged = try store.records(in: 5...5)
        forged[0].event.at = forged[0].event.at.adding(milliseconds: 1)
        let chain = try await running.send(
            "POST", path, token: token, body: SyncWire.uploadBody(device: "kiosk-7", records: forged, keys: store.syncKeys(for: forged)))
        #expect(chain.status == 409 && code(chain) == "chain_broken")
        let tooLarge = try await running.send("POST", path, token: token, body: [UInt8](repeating: 0x20, count: SyncLimits.maximumBodyBytes + 10))
        #expect(tooLarge.status == 413)
        let wrongType = try await running.send("POST", path, token: token, body: try body(5...6), contentType: "text/plain")
        #expect(wrongType.status == 415 && code(wrongType) == "unsupported_media_type")

        let notFound = try await running.send("GET", "/v1/elsewhere", token: token)
        #expect(notFound.status == 404 && code(notFound) == "not_found")
        let wrongMethod = try await running.send("DELETE", path, token: token)
        #expect(wrongMethod.status == 405 && code(wrongMethod) == "method_not_allowed")

        // After all of it, both devices still sync completely.
        let client = SyncClient(store: store, transport: running.transport, token: token, batchEvents: 3, seed: 1)
        #expect(try await client.run().acknowledgedSeq == 12)
        let otherClient = SyncClient(store: other, transport: running.transport, token: otherToken, seed: 2)
        #expect(try await otherClient.run().acknowledgedSeq == 5)
        #expect(try running.server.heldRecords(of: "kiosk-7", in: 1...12).map(\.hash) == (try store.records(in: 1...12)).map(\.hash))

        // 503 with Retry-After while shutting down.
        running.server.beginShutdown()
        let closing = try await running.send("GET", SyncPaths.cursor(device: "kiosk-7"), token: token)
        #expect(closing.status == 503 && closing.retryAfterSeconds == 5)
    }

    @Test(arguments: TestDatabase.storages) func aUserIdWithASlashOrAccentIsQueriedAndForgottenOverHTTP(storage: String) async throws {
        let running = try Running(storage: storage)
        defer { running.stop() }
        let (store, token) = try await running.device("kiosk-7", events: 0)
        defer { store.close() }
        let start = Timestamp(millisecondsSince1970: 1_796_054_400_000)
        _ = try await store.append(
            ["corp/alice", "José", "corp/alice"].enumerated().map { index, user in
                Event(
                    id: UUID(), device: "kiosk-7", at: start.adding(milliseconds: Int64(index) * 1000), user: user, flow: nil,
                    payload: .signInFailed(method: .password, reason: .invalidPassword))
            })
        let client = SyncClient(store: store, transport: running.transport, token: token)
        #expect(try await client.run().acknowledgedSeq == 3)
        let admin = try #require(running.server.createdAdminToken)
        let auditor = try running.server.issueToken(role: .auditor)

        let slashed = try await running.send("GET", SyncPaths.history(user: "corp/alice"), token: auditor)
        #expect(slashed.status == 200, "\(String(decoding: slashed.body, as: UTF8.self))")
        let text = String(decoding: slashed.body, as: UTF8.self)
        #expect(text.contains(#""user":"corp/alice""#))
        #expect(text.components(separatedBy: #""outcome":"failed""#).count - 1 == 2)
        let accented = try await running.send("GET", SyncPaths.history(user: "José"), token: auditor)
        #expect(String(decoding: accented.body, as: UTF8.self).components(separatedBy: #""outcome":"failed""#).count - 1 == 1)
        let forget = try await running.send("POST", SyncPaths.forget(user: "corp/alice"), token: admin)
        #expect(forget.status == 200)
        #expect(try running.server.holdsForgotten("corp/alice", on: "kiosk-7"))
        #expect(try !running.server.holdsForgotten("José", on: "kiosk-7"))
    }

    @Test(arguments: TestDatabase.storages) func concurrentUploadsOfOneDeviceGet429WithRetryAfter(storage: String) async throws {
        let running = try Running(storage: storage)
        defer { running.stop() }
        let (store, token) = try await running.device("kiosk-7", events: 1000)
        defer { store.close() }
        let body = SyncWire.uploadBody(device: "kiosk-7", records: try store.records(in: 1...1000), keys: try store.syncKeys(for: store.records(in: 1...1000)))
        // Eight identical uploads at once: one runs, any overlapping one is told to come back.
        let statuses = try await withThrowingTaskGroup(of: SyncResponse.self) { group in
            for _ in 0..<8 { group.addTask { try await running.send("POST", SyncPaths.events(device: "kiosk-7"), token: token, body: body) } }
            var all: [SyncResponse] = []
            for try await response in group { all.append(response) }
            return all
        }
        #expect(statuses.allSatisfy { $0.status == 200 || ($0.status == 429 && $0.retryAfterSeconds == 1) })
        #expect(statuses.contains { $0.status == 200 })
        #expect(try running.server.heldHead(of: "kiosk-7").seq == 1000)
    }

    /// 60 devices upload concurrently over loopback; bounded in count (60 × 300 events) and time.
    @Test(.timeLimit(.minutes(2)), arguments: TestDatabase.storages) func sixtyDevicesSyncConcurrently(storage: String) async throws {
        let running = try Running(storage: storage)
        defer { running.stop() }
        var devices: [(OnboardingStore, String)] = []
        for index in 0..<60 { devices.append(try await running.device("device-\(index)", events: 300)) }
        defer { devices.forEach { $0.0.close() } }
        let summaries = try await withThrowingTaskGroup(of: SyncSummary.self) { group in
            for (index, (store, token)) in devices.enumerated() {
                group.addTask {
                    try await SyncClient(store: store, transport: running.transport, token: token, batchEvents: 100, seed: UInt64(index)).run()
                }
            }
            var all: [SyncSummary] = []
            for try await summary in group { all.append(summary) }
            return all
        }
        #expect(summaries.count == 60)
        #expect(summaries.allSatisfy { $0.acknowledgedSeq == 300 })
        for (store, _) in devices {
            #expect(try running.server.heldHead(of: store.deviceID) == (try store.head()), "\(store.deviceID) is complete on the server")
        }
    }
}
