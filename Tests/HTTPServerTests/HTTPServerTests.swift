import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import Synchronization
import Testing
@testable import HTTPServer
import TestSupport

/// Echoes the request back: body as body, everything else in `X-Echo-*` headers.
struct EchoHandler: HTTPHandler {
    func handle(_ request: HTTPRequest) -> HTTPResponse {
        let query = request.query.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "&")
        return HTTPResponse(
            status: 200,
            headers: [
                "Content-Type": "application/octet-stream",
                "X-Echo-Method": request.method,
                "X-Echo-Path": request.path,
                "X-Echo-Raw-Path": request.rawPath,
                "X-Echo-Query": query,
                "X-Echo-Test-Header": request.headers["x-test-header"] ?? "(none)",
                "X-Echo-Remote": request.remoteAddress,
                "X-Echo-Body-Bytes": String(request.body.count)
            ], body: request.body)
    }
}

/// Starts a server on a free loopback port, runs `body`, and always stops it.
func withServer<T>(
    limits: HTTPServer.Limits = HTTPServer.Limits(),
    handler: any HTTPHandler = EchoHandler(),
    accessLog: (@Sendable (HTTPAccessLogEntry) -> Void)? = nil,
    _ body: (HTTPServer) async throws -> T
) async throws -> T {
    let server = HTTPServer(port: 0, limits: limits, handler: handler, accessLog: accessLog)
    try server.start()
    let result: T
    do {
        result = try await body(server)
    } catch {
        server.stop()
        throw error
    }
    server.stop()
    // Every request that started completed exactly once, so every request context was released.
    #expect(server.inFlightRequestCount == 0)
    return result
}

func session() -> URLSession {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.timeoutIntervalForRequest = 10
    configuration.timeoutIntervalForResource = 20
    configuration.connectionProxyDictionary = [:]
    return URLSession(configuration: configuration)
}

func send(
    _ method: String, port: UInt16, _ pathAndQuery: String, body: [UInt8]? = nil,
    headers: [String: String] = [:], using session: URLSession
) async throws -> (HTTPURLResponse, [UInt8]) {
    let url = try #require(URL(string: "http://127.0.0.1:\(port)\(pathAndQuery)"))
    var request = URLRequest(url: url)
    request.httpMethod = method
    if let body { request.httpBody = Data(body) }
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    let (data, response) = try await session.data(for: request)
    return (try #require(response as? HTTPURLResponse), Array(data))
}

func randomBytes(_ count: Int, seed: UInt64) -> [UInt8] {
    var generator = SplitMix64(seed: seed)
    return (0..<count).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
}

/// Runs blocking work (sockets, semaphores, `stop()`) on a GCD thread, never on the cooperative
/// pool, which has as few threads as cores and would otherwise starve the test's own awaits.
func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(with: Result { try work() }) }
    }
}

/// Waits off the pool until `semaphore` is signalled or 10 s pass.
func waitOffPool(_ semaphore: DispatchSemaphore) async throws -> Bool {
    try await offPool { semaphore.wait(timeout: .now() + 10) == .success }
}

/// A flag one task sets and another reads.
final class Flag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .sequentiallyConsistent) }
    var isSet: Bool { value.load(ordering: .sequentiallyConsistent) }
}

@Suite struct HTTPServerTests {
    @Test func portZeroBindsARealPortAndStartIsOnce() async throws {
        let server = HTTPServer(port: 0, handler: EchoHandler())
        #expect(server.port == 0)
        try server.start()
        let port = server.port
        #expect(port != 0)
        #expect(throws: HTTPServerError.alreadyStarted) { try server.start() }
        let response = try await RawHTTPClient.request(port: port, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(response.status == 200)
        server.stop()
        server.stop() // a second stop is a no-op
        #expect(server.port == port)
        #expect(try await RawHTTPClient.isRefused(port: port))
    }

    @Test func invalidConfigurationIsAnErrorNotATrap() throws {
        #expect(throws: HTTPServerError.invalidHost) {
            try HTTPServer(host: "localhost", handler: EchoHandler()).start()
        }
        var limits = HTTPServer.Limits()
        limits.connectionLimit = 0
        #expect(throws: HTTPServerError.invalidLimits) {
            try HTTPServer(limits: limits, handler: EchoHandler()).start()
        }
        // A port someone else holds.
        let holder = HTTPServer(port: 0, handler: EchoHandler())
        try holder.start()
        defer { holder.stop() }
        let error = #expect(throws: HTTPServerError.addressUnavailable) {
            try HTTPServer(port: holder.port, handler: EchoHandler()).start()
        }
        #expect(error?.message.contains("\(holder.port)") == true)
    }

    @Test(arguments: [0, 1, 1 << 20])
    func postEchoesBodiesOfEverySize(byteCount: Int) async throws {
        // 1 MiB is far beyond the 64 KiB connection memory pool, so it arrives across many
        // access-handler calls and exercises the accumulation.
        let body = randomBytes(byteCount, seed: UInt64(byteCount) + 1)
        try await withServer { server in
            let (response, received) = try await send("POST", port: server.port, "/upload", body: body, using: session())
            #expect(response.statusCode == 200)
            #expect(response.value(forHTTPHeaderField: "X-Echo-Method") == "POST")
            #expect(response.value(forHTTPHeaderField: "X-Echo-Body-Bytes") == String(byteCount))
            #expect(received == body)
        }
    }

    @Test func getParsesPathQueryHeadersAndPeer() async throws {
        try await withServer { server in
            let (response, received) = try await send(
                "GET", port: server.port, "/v1/devices/a%20b?limit=10&cursor=two%20words&flag",
                headers: ["X-Test-Header": "hello"], using: session())
            #expect(response.statusCode == 200)
            #expect(received.isEmpty)
            #expect(response.value(forHTTPHeaderField: "X-Echo-Method") == "GET")
            #expect(response.value(forHTTPHeaderField: "X-Echo-Path") == "/v1/devices/a b")
            #expect(response.value(forHTTPHeaderField: "X-Echo-Query") == "cursor=two words&flag=&limit=10")
            #expect(response.value(forHTTPHeaderField: "X-Echo-Test-Header") == "hello")
            #expect(response.value(forHTTPHeaderField: "X-Echo-Remote") == "127.0.0.1")
        }
    }

    @Test func theRawPathKeepsAnEncodedSlashInsideItsSegment() async throws {
        try await withServer { server in
            let (response, _) = try await send(
                "GET", port: server.port, "/v1/users/corp%2Falice/history?since=a%2Fb&who=jos%C3%A9", using: session())
            #expect(response.statusCode == 200)
            #expect(response.value(forHTTPHeaderField: "X-Echo-Raw-Path") == "/v1/users/corp%2Falice/history")
            #expect(response.value(forHTTPHeaderField: "X-Echo-Path") == "/v1/users/corp/alice/history")
            #expect(response.value(forHTTPHeaderField: "X-Echo-Query")?.removingPercentEncoding == "since=a/b&who=josé")
        }
    }

    @Test func headerLookupIgnoresCase() {
        var headers: HTTPHeaders = ["Content-Type": "a", "Set-Cookie": "1"]
        headers.add(name: "set-cookie", value: "2")
        #expect(headers["content-TYPE"] == "a")
        #expect(headers.values(for: "SET-COOKIE") == ["1", "2"])
        headers.replaceOrAdd(name: "SET-COOKIE", value: "3")
        #expect(headers.values(for: "set-cookie") == ["3"])
        #expect(headers["missing"] == nil)
    }

    @Test func declaredOversizedBodyGets413WithoutBeingRead() async throws {
        var limits = HTTPServer.Limits()
        limits.maximumRequestBodyBytes = 1024
        try await withServer(limits: limits) { server in
            // Only the head is sent: a 413 must arrive without the server waiting for the body.
            let response = try await RawHTTPClient.request(
                port: server.port, "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 1025\r\n\r\n")
            #expect(response.status == 413)
            #expect(response.header("Content-Type") == "application/json")
            let json = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: [String: String]]
            #expect(json?["error"]?["code"] == "too_large")
            #expect(json?["error"]?["message"]?.contains("1024") == true)

            // Exactly the limit is fine.
            let fits = try await RawHTTPClient.request(
                port: server.port, "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 1024\r\nConnection: close\r\n\r\n",
                body: randomBytes(1024, seed: 7))
            #expect(fits.status == 200)
            #expect(fits.body == randomBytes(1024, seed: 7))
        }
    }

    @Test func chunkedOversizedBodyGets413AndEndlessOneIsCut() async throws {
        var limits = HTTPServer.Limits()
        limits.maximumRequestBodyBytes = 1024
        limits.maximumDiscardedBodyBytes = 4096
        try await withServer(limits: limits) { server in
            let chunk = Array("3e8\r\n".utf8) + [UInt8](repeating: 0x61, count: 1000) + Array("\r\n".utf8)
            let head = Array("POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n".utf8)
            let bytes = try await RawHTTPClient.exchange(port: server.port, [head, chunk, chunk, chunk, Array("0\r\n\r\n".utf8)])
            let response = try RawHTTPClient.parse(bytes)
            #expect(response.status == 413)
            #expect(response.bodyText.contains("\"error\""))

            // 20 KB of chunks is past limit + discard bound: the server hangs up instead of reading on.
            let endless = try await RawHTTPClient.exchange(port: server.port, [head] + Array(repeating: chunk, count: 20))
            #expect(endless.isEmpty)

            // And it still serves.
            let after = try await RawHTTPClient.request(port: server.port, "GET /ok HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(after.status == 200)
        }
    }

    @Test func tooManyHeadersGets431() async throws {
        var limits = HTTPServer.Limits()
        limits.maximumHeaderCount = 8
        try await withServer(limits: limits) { server in
            let extra = (0..<20).map { "X-Filler-\($0): v\r\n" }.joined()
            let response = try await RawHTTPClient.request(
                port: server.port, "GET / HTTP/1.1\r\nHost: x\r\n\(extra)Connection: close\r\n\r\n")
            #expect(response.status == 431)
            #expect(response.bodyText.contains("at most 8"))
        }
    }

    @Test func malformedRequestsNeverCrashTheServer() async throws {
        try await withServer { server in
            let garbage: [String] = [
                "GARBAGE\r\n\r\n",
                "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: banana\r\n\r\n",
                "GET / HTTP/1.1\r\nNo colon here\r\n\r\n",
                "\u{0}\u{1}\u{2}\r\n\r\n",
                "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"
            ]
            for text in garbage {
                let bytes = try await RawHTTPClient.exchange(port: server.port, [Array(text.utf8)], halfClose: true)
                if let response = try? RawHTTPClient.parse(bytes) {
                    #expect((400...499).contains(response.status), "\(text.debugDescription) → \(response.status)")
                }
            }
            let after = try await RawHTTPClient.request(port: server.port, "GET /ok HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(after.status == 200)
        }
    }

    @Test func badHandlerResponsesBecome500() async throws {
        let handler = ClosureHTTPHandler { request in
            switch request.path {
            case "/status": HTTPResponse(status: 42)
            case "/length": HTTPResponse(status: 200, headers: ["Content-Length": "5"], body: [1])
            case "/newline": HTTPResponse(status: 200, headers: ["X-Bad": "a\r\nInjected: yes"])
            default: .json(#"{"ok":true}"#)
            }
        }
        try await withServer(handler: handler) { server in
            for path in ["/status", "/length", "/newline"] {
                let response = try await RawHTTPClient.request(
                    port: server.port, "GET \(path) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                #expect(response.status == 500, "\(path)")
                #expect(response.header("Injected") == nil)
            }
            let fine = try await RawHTTPClient.request(port: server.port, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(fine.status == 200)
            #expect(fine.header("Content-Type") == "application/json")
            #expect(fine.bodyText == #"{"ok":true}"#)
        }
    }

    @Test func fiftyConcurrentRequests() async throws {
        let requestCount = 50
        try await withServer { server in
            let urlSession = session()
            let statuses = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<requestCount {
                    group.addTask {
                        let body = randomBytes(1000 + index, seed: UInt64(index))
                        let (response, received) = try await send(
                            "POST", port: server.port, "/n/\(index)", body: body, using: urlSession)
                        return response.statusCode == 200 && received == body
                            && response.value(forHTTPHeaderField: "X-Echo-Path") == "/n/\(index)"
                    }
                }
                var results: [Bool] = []
                for try await result in group { results.append(result) }
                return results
            }
            #expect(statuses.count == requestCount)
            #expect(statuses.allSatisfy { $0 })
        }
    }

    /// Synchronous on purpose: everything runs on its own threads, so the test does not depend on
    /// the cooperative pool, which other suites keep busy with child processes.
    @Test func stopWaitsForTheInFlightRequestAndRefusesNewOnes() throws {
        let entered = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)
        let handler = ClosureHTTPHandler { request in
            if request.path == "/slow" {
                entered.signal()
                _ = gate.wait(timeout: .now() + 10)
                return .text("slow done")
            }
            return .text("fast")
        }
        let server = HTTPServer(port: 0, handler: handler)
        try server.start()
        let port = server.port
        defer { server.stop() }

        let slow = Mutex<Result<RawResponse, any Error>?>(nil)
        let slowDone = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            let result = Result { try RawHTTPClient.requestBlocking(port: port, "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n") }
            slow.withLock { $0 = result }
            slowDone.signal()
        }
        #expect(entered.wait(timeout: .now() + 10) == .success)

        let stopped = Flag()
        let stopDone = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            server.stop()
            stopped.set()
            stopDone.signal()
        }
        // Bounded: up to 5 s for the listener to go away.
        var refused = false
        for _ in 0..<500 where !refused {
            refused = RawHTTPClient.isRefusedBlocking(port: port)
            if !refused { Thread.sleep(forTimeInterval: 0.01) }
        }
        #expect(refused)
        #expect(!stopped.isSet, "stop() returned while a request was in flight")

        gate.signal()
        #expect(slowDone.wait(timeout: .now() + 10) == .success)
        let response = try #require(slow.withLock { $0 }).get()
        #expect(response.status == 200)
        #expect(response.bodyText == "slow done")
        #expect(response.header("Connection")?.lowercased() == "close")
        #expect(stopDone.wait(timeout: .now() + 15) == .success)
        #expect(stopped.isSet)
        #expect(server.inFlightRequestCount == 0)
    }

    @Test func accessLogSeesEveryRequestButNoSecrets() async throws {
        let entries = Mutex<[HTTPAccessLogEntry]>([])
        let server = HTTPServer(port: 0, handler: EchoHandler()) { entry in
            entries.withLock { $0.append(entry) }
        }
        try server.start()
        let port = server.port
        let secret = "secret-token-1234"
        let urlSession = session()
        _ = try await send("GET", port: port, "/a?token=\(secret)", headers: ["Authorization": "Bearer \(secret)"], using: urlSession)
        _ = try await send("POST", port: port, "/b", body: Array(secret.utf8), using: urlSession)
        _ = try await RawHTTPClient.request(port: port, "POST /c HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999\r\n\r\n")
        server.stop() // joins every connection thread, so every completion callback has run
        #expect(server.inFlightRequestCount == 0)

        let logged = entries.withLock { $0 }.sorted { $0.path < $1.path }
        #expect(logged.map(\.method) == ["GET", "POST", "POST"])
        #expect(logged.map(\.path) == ["/a", "/b", "/c"])
        #expect(logged.map(\.status) == [200, 200, 413])
        #expect(logged.map(\.requestBodyBytes) == [0, secret.utf8.count, 0])
        #expect(logged[1].responseBodyBytes == secret.utf8.count)
        #expect(logged.allSatisfy { $0.completed && $0.duration >= .zero })
        #expect(!logged.map { String(describing: $0) }.joined().contains(secret))
    }
}
