import Foundation
import HTTPServer
import OnboardingModel
@testable import OnboardingServer
import OnboardingStore
import Testing
import TestSupport

/// `GET /metrics` over real HTTP, read by a parser we did not write: `prometheus_client`'s
/// (Debian's python3-prometheus-client), which refuses anything outside the text format.
@Suite struct MetricsEndpointTests {
    /// Parses the exposition on stdin with prometheus_client and prints every sample as JSON.
    static let parser = #"""
        import json, sys
        from prometheus_client.parser import text_string_to_metric_families
        families = {}
        for family in text_string_to_metric_families(open(sys.argv[1], encoding="utf-8").read()):
            families[family.name] = {"type": family.type, "samples": [[s.name, s.labels, s.value] for s in family.samples]}
        print(json.dumps(families))
        """#

    struct Sample {
        let name: String
        let labels: [String: String]
        let value: Double
    }

    static func parse(_ text: String, in directory: TemporaryDirectory) throws -> [String: (type: String, samples: [Sample])] {
        let input = try directory.write("metrics.txt", text)
        let output = directory.appending("metrics.json"), errors = directory.appending("metrics.err")
        for path in [output, errors] { _ = FileManager.default.createFile(atPath: path, contents: nil) }
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", parser, input]
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errors))
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw TestFailure("prometheus_client refused the exposition: \((try? String(contentsOfFile: errors, encoding: .utf8)) ?? "")")
        }
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: output))) as? [String: [String: Any]] ?? [:]
        return object.mapValues { family in
            let samples = (family["samples"] as? [[Any]] ?? []).map { sample in
                Sample(name: sample[0] as? String ?? "", labels: sample[1] as? [String: String] ?? [:], value: (sample[2] as? NSNumber)?.doubleValue ?? .nan)
            }
            return (family["type"] as? String ?? "", samples)
        }
    }

    @Test(arguments: TestDatabase.storages) func theExpositionParsesAndCountsWhatHappened(storage name: String) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let storage = try TestServerStorage(name, in: directory)
        defer { storage.remove() }
        let server = try storage.open()
        let http = HTTPServer(port: 0, limits: SyncHTTPHandler.limits, handler: SyncHTTPHandler(server: server))
        server.observe(http)
        try http.start()
        defer {
            server.beginShutdown()
            http.stop()
            server.close()
        }
        let base = URL(string: "http://127.0.0.1:\(http.port)")!
        let transport = try HTTPTransport(baseURL: base, timeout: .seconds(30))
        var options = OnboardingStore.Options()
        options.deviceID = "kiosk-7"
        options.durability = .relaxed
        let store = try OnboardingStore.open(at: directory.appending("device"), options: options)
        defer { store.close() }
        let start = Timestamp(millisecondsSince1970: 1_796_054_400_000)
        _ = try await store.append(
            (0..<250).map { index in
                Event(
                    id: UUID(), device: "kiosk-7", at: start.adding(milliseconds: Int64(index) * 900), user: "user-\(index % 7)", flow: nil,
                    payload: .signInFailed(method: .password, reason: .invalidPassword))
            })
        let token = try server.issueToken(role: .device, device: "kiosk-7")
        let summary = try await SyncClient(store: store, transport: transport, token: token, batchEvents: 100).run()
        #expect(summary.appended == 250 && summary.batches == 3)
        // Three refusals of one kind, and a method nobody uses (counted as "other").
        for _ in 0..<3 { _ = try await transport.send(SyncRequest(method: "GET", path: SyncPaths.devices, headers: ["authorization": "Bearer nope"])) }
        _ = try await transport.send(SyncRequest(method: "BREW\u{7F}", path: "/v1/health"))

        let admin = try #require(server.createdAdminToken)
        #expect(try await transport.send(SyncRequest(method: "GET", path: "/metrics")).status == 401)
        let auditor = try server.issueToken(role: .auditor)
        #expect(try await transport.send(SyncRequest(method: "GET", path: "/metrics", headers: ["authorization": "Bearer \(auditor)"])).status == 403)
        let response = try await transport.send(SyncRequest(method: "GET", path: "/metrics", headers: ["authorization": "Bearer \(admin)"]))
        #expect(response.status == 200)
        #expect(response.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8")
        let text = String(decoding: response.body, as: UTF8.self)
        #expect(!text.contains(token) && !text.contains(admin) && !text.contains("kiosk-7") && !text.contains("user-"), "no token, device or user")
        let families = try await onOwnThread { try Self.parse(text, in: directory) }

        func value(_ family: String, _ sample: String? = nil, _ labels: [String: String] = [:]) -> Double? {
            families[family]?.samples.first { candidate in
                candidate.name == (sample ?? family) && labels.allSatisfy { key, value in candidate.labels[key] == value }
            }?.value
        }
        #expect(families["onboard_http_requests"]?.type == "counter", "\(families.keys.sorted())")
        #expect(value("onboard_http_requests", "onboard_http_requests_total", ["route": "upload", "method": "POST", "status": "200"]) == 3)
        #expect(value("onboard_http_requests", "onboard_http_requests_total", ["route": "devices", "status": "401"]) == 3)
        #expect(value("onboard_http_requests", "onboard_http_requests_total", ["route": "wrong_method", "method": "other"]) == 1)
        #expect(value("onboard_errors", "onboard_errors_total", ["code": "unauthorized"]) == 4, "three bad tokens and /metrics without one")
        #expect(value("onboard_errors", "onboard_errors_total", ["code": "forbidden"]) == 1, "/metrics with an auditor's token")
        #expect(value("onboard_events_ingested", "onboard_events_ingested_total") == 250)
        #expect((value("onboard_ingested_bytes", "onboard_ingested_bytes_total") ?? 0) > 250 * 100)
        #expect((value("onboard_http_open_connections") ?? -1) >= 0)
        #expect(value("onboard_http_connection_limit") == Double(http.connectionLimit))
        #expect(value("onboard_history_polls_waiting") == 0)
        // The histogram: cumulative buckets, +Inf equal to the count.
        let latency = try #require(families["onboard_http_request_duration_seconds"])
        #expect(latency.type == "histogram")
        let upload = latency.samples.filter { $0.labels["route"] == "upload" && $0.name.hasSuffix("_bucket") }.map(\.value)
        #expect(upload == upload.sorted() && upload.last == 3, "\(upload)")
        #expect(value("onboard_http_request_duration_seconds", "onboard_http_request_duration_seconds_count", ["route": "upload"]) == 3)
        if storage.isPostgres {
            #expect(value("onboard_database_connections_maximum") == 8)
            #expect((value("onboard_database_connections", nil, ["state": "idle"]) ?? -1) >= 0)
            #expect(value("onboard_open_replicas") == nil)
        } else {
            #expect(value("onboard_open_replicas") == 1)
            #expect(value("onboard_database_connections_maximum") == nil)
        }
    }

    @Test func labelValuesAreEscapedAndNumbersFormatted() {
        #expect(ServerMetrics.escape("a\\b\"c\nd") == #"a\\b\"c\nd"#)
        #expect(ServerMetrics.number(3) == "3" && ServerMetrics.number(0.25) == "0.25" && ServerMetrics.number(.infinity) == "+Inf")
    }
}
