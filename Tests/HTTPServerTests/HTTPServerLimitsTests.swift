import Foundation
import Synchronization
import Testing
@testable import HTTPServer
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Starts a server, runs `body` off the cooperative pool (it blocks on sockets), always stops it,
/// and checks that nothing leaked: no request context, no connection entry, no body bytes.
func withBlockingServer<T: Sendable>(
    limits: HTTPServer.Limits = HTTPServer.Limits(), handler: any HTTPHandler = healthHandler,
    accessLog: (@Sendable (HTTPAccessLogEntry) -> Void)? = nil, warningLog: (@Sendable (String) -> Void)? = nil,
    _ body: @escaping @Sendable (HTTPServer) throws -> T
) async throws -> T {
    let server = HTTPServer(port: 0, limits: limits, handler: handler, accessLog: accessLog, warningLog: warningLog)
    try server.start()
    let result = await Result { try await onOwnThread { try body(server) } }
    try await onOwnThread { server.stop() }
    #expect(server.inFlightRequestCount == 0)
    #expect(server.openConnectionCount == 0)
    #expect(server.bufferedBodyByteCount == 0)
    return try result.get()
}

/// Waits (bounded: `seconds`, polling every 10 ms) until `condition` holds; returns whether it did.
func eventually(within seconds: Double = 5, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        Thread.sleep(forTimeInterval: 0.01)
    }
    return condition()
}

/// A handler whose `/block` requests wait for `gate` (at most 10 s), counting who entered.
final class GatedHandler: HTTPHandler {
    let gate = DispatchSemaphore(value: 0)
    let entered = Atomic<Int>(0)

    func handle(_ request: HTTPRequest) -> HTTPResponse {
        if request.path == "/block" {
            entered.wrappingAdd(1, ordering: .sequentiallyConsistent)
            _ = gate.wait(timeout: .now() + 10)
            return .text("unblocked \(request.body.count)")
        }
        return .text("fast")
    }

    var enteredCount: Int { entered.load(ordering: .sequentiallyConsistent) }

    func open(_ count: Int) { for _ in 0..<count { gate.signal() } }
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}

/// Lines collected from several threads.
final class Collected: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}

/// Sends `text` on a new connection from `source` and reads the answer to the end (bounded by
/// the client's 15 s timeouts), without blocking the caller: the answer arrives in `answers`.
func sendInBackground(
    port: UInt16, _ text: String, from source: String = "127.0.0.1",
    into answers: Collected, done: DispatchSemaphore
) {
    detachThread {
        var answer = ""
        if let socket = LoopbackClient.connect(port: port, from: source, timeout: .seconds(10)) {
            LoopbackClient.setTimeout(socket, .seconds(15))
            LoopbackClient.send(socket, Array(text.utf8))
            answer = String(decoding: LoopbackClient.readToEnd(socket), as: UTF8.self)
            close(socket)
        }
        answers.append(answer)
        done.signal()
    }
}

@Suite(.serialized, .slow) struct HTTPServerLimitsTests {
    // MARK: Connection limits

    @Test func oneAddressCannotExceedItsLimitAndOthersStillGetIn() async throws {
        #if os(Linux)
            var limits = HTTPServer.Limits()
            limits.perAddressConnectionLimit = 4
            try await withBlockingServer(limits: limits) { server in
                let crowd = SlowClients(port: server.port, count: 6, sources: ["127.0.0.3"])
                defer { crowd.closeAll() }
                #expect(eventually { crowd.answers().count == 2 && server.openConnectionCount(from: "127.0.0.3") == 4 })
                #expect(crowd.openCount == 4)
                for answer in crowd.answers().map({ String(decoding: $0, as: UTF8.self) }) {
                    #expect(answer.hasPrefix("HTTP/1.1 503 "))
                    #expect(answer.contains("Retry-After: 1\r\n"))
                    #expect(answer.contains("at most 4 at once"))
                }
                // Another address is not affected.
                #expect(LoopbackClient.status(port: server.port, from: "127.0.0.4", timeout: .seconds(2)) == 200)
                // The places come back when the connections close.
                crowd.closeAll()
                #expect(eventually { server.openConnectionCount(from: "127.0.0.3") == 0 })
                #expect(LoopbackClient.status(port: server.port, from: "127.0.0.3", timeout: .seconds(2)) == 200)
            }
        #endif
    }

    @Test func theConnectionLimitAnswers503ToTheNextClient() async throws {
        #if os(Linux)
            var limits = HTTPServer.Limits()
            limits.connectionLimit = 8
            limits.perAddressConnectionLimit = 8
            let warnings = Collected()
            try await withBlockingServer(limits: limits, warningLog: { warnings.append($0) }) { server in
                #expect(server.connectionLimit == 8)
                let crowd = SlowClients(port: server.port, count: 8, sources: ["127.0.0.5"])
                defer { crowd.closeAll() }
                #expect(eventually { server.openConnectionCount == 8 })
                let socket = try #require(LoopbackClient.connect(port: server.port, from: "127.0.0.6"))
                defer { close(socket) }
                let answer = String(decoding: LoopbackClient.readToEnd(socket), as: UTF8.self)
                #expect(answer.hasPrefix("HTTP/1.1 503 "))
                #expect(answer.contains("connection limit"))
                #expect(answer.contains("Retry-After: 1\r\n"))
                #expect(eventually { warnings.all.contains { $0.contains("refused 1 connection with 503: all 8 connections are in use") } })
            }
        #endif
    }

    // MARK: Deadlines

    /// One byte every 200 ms never leaves the connection idle, so only a deadline on the whole
    /// request can end it: the old server, with only an idle timeout, kept it forever.
    @Test func aTricklingRequestIsCutAtItsDeadlineHeadersOrBody() async throws {
        var limits = HTTPServer.Limits()
        limits.requestDeadlineSeconds = 2
        let warnings = Collected()
        try await withBlockingServer(limits: limits, warningLog: { warnings.append($0) }) { server in
            let headers = Array("GET /slow HTTP/1.1\r\nHost: x\r\nX-Slow: ".utf8) + [UInt8](repeating: 0x61, count: 200)
            let body = Array("POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n".utf8) + [UInt8](repeating: 0x62, count: 200)
            for (name, bytes, firstChunk) in [("headers", headers, 0), ("body", body, 53)] {
                let socket = try #require(LoopbackClient.connect(port: server.port))
                defer { close(socket) }
                let clock = ContinuousClock()
                let start = clock.now
                LoopbackClient.send(socket, Array(bytes[..<firstChunk]))
                var cutAfter: Duration?
                // Bounded: 200 bytes at 5 a second is 40 s; the deadline must end it in 2.
                for byte in bytes[firstChunk...] where cutAfter == nil {
                    if !LoopbackClient.send(socket, [byte]) || LoopbackClient.peerState(socket) != .open {
                        cutAfter = clock.now - start
                    }
                    Thread.sleep(forTimeInterval: 0.2)
                }
                let elapsed = try #require(cutAfter, "the trickling \(name) was never cut")
                #expect(elapsed >= .milliseconds(1800) && elapsed < .seconds(5), "\(name) cut after \(elapsed)")
            }
            #expect(LoopbackClient.status(port: server.port, from: "127.0.0.1", timeout: .seconds(2)) == 200)
            #expect(eventually { warnings.all.contains { $0.contains("longer than 2 s to send a request") } })
        }
    }

    /// The handler's time is the server's: a request that takes longer than the deadline in its
    /// handler is still answered, and the kept-alive connection then gets a new deadline.
    @Test func theHandlersTimeDoesNotCountAgainstTheDeadline() async throws {
        var limits = HTTPServer.Limits()
        limits.requestDeadlineSeconds = 1
        let handler = ClosureHTTPHandler { request in
            if request.path == "/slow" { Thread.sleep(forTimeInterval: 2.5) }
            return .text("done \(request.path)")
        }
        try await withBlockingServer(limits: limits, handler: handler) { server in
            let socket = try #require(LoopbackClient.connect(port: server.port))
            defer { close(socket) }
            LoopbackClient.send(socket, Array("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = recv(socket, &buffer, buffer.count, 0)
            #expect(count > 0 && String(decoding: buffer[..<max(0, count)], as: UTF8.self).contains("done /slow"))
            // The same connection serves another request within its new deadline.
            LoopbackClient.send(socket, Array("GET /again HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8))
            #expect(String(decoding: LoopbackClient.readToEnd(socket), as: UTF8.self).contains("done /again"))
        }
    }

    // MARK: The handler pool

    @Test func aBlockedHandlerStallsNoOtherConnection() async throws {
        var limits = HTTPServer.Limits()
        limits.handlerThreadCount = 2
        let handler = GatedHandler()
        try await withBlockingServer(limits: limits, handler: handler) { server in
            let answers = Collected()
            let done = DispatchSemaphore(value: 0)
            sendInBackground(port: server.port, "GET /block HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", into: answers, done: done)
            #expect(eventually { handler.enteredCount == 1 })
            // One worker is blocked; 30 requests still go through the other one.
            let fast = (0..<30).filter { _ in LoopbackClient.status(port: server.port, from: "127.0.0.1", path: "/fast", timeout: .seconds(2)) == 200 }
            #expect(fast.count == 30)
            handler.open(1)
            #expect(done.wait(timeout: .now() + 10) == .success)
            #expect(answers.all.first?.contains("unblocked") == true)
        }
    }

    @Test func aFullHandlerQueueAnswers503WithRetryAfterAndRecovers() async throws {
        var limits = HTTPServer.Limits()
        limits.handlerThreadCount = 1
        limits.maximumQueuedRequests = 2
        let handler = GatedHandler()
        let warnings = Collected()
        try await withBlockingServer(limits: limits, handler: handler, warningLog: { warnings.append($0) }) { server in
            let answers = Collected()
            let done = DispatchSemaphore(value: 0)
            sendInBackground(port: server.port, "GET /block HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", into: answers, done: done)
            #expect(eventually { handler.enteredCount == 1 })
            for _ in 0..<2 {
                sendInBackground(port: server.port, "GET /block HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", into: answers, done: done)
            }
            #expect(eventually { server.queuedRequestCount == 2 })
            let refused = try RawHTTPClient.requestBlocking(port: server.port, "GET /fast HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(refused.status == 503)
            #expect(refused.header("Retry-After") == "1")
            #expect(refused.bodyText.contains(#""code":"unavailable""#))
            handler.open(3)
            for _ in 0..<3 { #expect(done.wait(timeout: .now() + 10) == .success) }
            #expect(answers.all.allSatisfy { $0.contains("200 OK") && $0.contains("unblocked") })
            #expect(LoopbackClient.status(port: server.port, from: "127.0.0.1", path: "/fast", timeout: .seconds(2)) == 200)
            #expect(eventually { warnings.all.contains { $0.contains("answered 1 request with 503: all 1 handler threads were busy") } })
        }
    }

    @Test func theBodyBudgetAnswers503AndIsGivenBack() async throws {
        var limits = HTTPServer.Limits()
        limits.maximumRequestBodyBytes = 64 << 10
        limits.maximumBufferedBodyBytes = 64 << 10
        let handler = GatedHandler()
        try await withBlockingServer(limits: limits, handler: handler) { server in
            let answers = Collected()
            let done = DispatchSemaphore(value: 0)
            let big = "POST /block HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 60000\r\n\r\n" + String(repeating: "b", count: 60_000)
            sendInBackground(port: server.port, big, into: answers, done: done)
            #expect(eventually { handler.enteredCount == 1 && server.bufferedBodyByteCount == 60_000 })
            // A declared length that cannot fit is refused before a byte of it is read…
            let declared = try RawHTTPClient.requestBlocking(
                port: server.port, "POST /fast HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 10000\r\n\r\n")
            #expect(declared.status == 503)
            #expect(declared.header("Retry-After") == "1")
            // …and a chunked one when it outgrows what is left.
            let chunk = String(repeating: "c", count: 8000)
            let chunked = try RawHTTPClient.parse(
                try RawHTTPClient.exchangeBlocking(
                    port: server.port,
                    [
                        Array("POST /fast HTTP/1.1\r\nHost: x\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n".utf8),
                        Array("1f40\r\n\(chunk)\r\n".utf8), Array("1f40\r\n\(chunk)\r\n0\r\n\r\n".utf8)
                    ], halfClose: false))
            #expect(chunked.status == 503)
            #expect(chunked.header("Retry-After") == "1")
            handler.open(1)
            #expect(done.wait(timeout: .now() + 10) == .success)
            #expect(answers.all.first?.contains("unblocked 60000") == true)
            #expect(eventually { server.bufferedBodyByteCount == 0 })
            // With the budget back, the same upload fits.
            let again = try RawHTTPClient.requestBlocking(
                port: server.port,
                "POST /fast HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 10000\r\n\r\n" + String(repeating: "d", count: 10_000))
            #expect(again.status == 200)
        }
    }

    /// `stop()` with requests still queued behind a blocked handler: the drain timeout passes,
    /// the queued ones get 503 without reaching the handler, every suspended connection is
    /// resumed before libmicrohttpd stops, every answer goes out, and nothing leaks.
    ///
    /// The polling thread is kept busy (one thread, held up in the access log of an unrelated
    /// request) while the worker resumes the connections, as on a loaded machine: stopping the
    /// daemon as soon as the workers were joined closed the connections with their answers unsent.
    @Test func stopAnswersQueuedRequestsAndResumesEverySuspendedConnection() async throws {
        var limits = HTTPServer.Limits()
        limits.handlerThreadCount = 1
        limits.pollingThreadCount = 1
        limits.stopDrainTimeout = .milliseconds(300)
        let handler = GatedHandler()
        let server = HTTPServer(
            port: 0, limits: limits, handler: handler,
            accessLog: { entry in
                if entry.path == "/busy" { Thread.sleep(forTimeInterval: 1) }
            })
        try server.start()
        let answers = Collected()
        let busyAnswer = try await onOwnThread { () -> String in
            // A kept-alive connection, opened before the stop, for the request that keeps the
            // polling thread busy.
            let keptAlive = try #require(LoopbackClient.connect(port: server.port))
            defer { close(keptAlive) }
            LoopbackClient.send(keptAlive, Array("GET /fast HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
            var buffer = [UInt8](repeating: 0, count: 4096)
            #expect(recv(keptAlive, &buffer, buffer.count, 0) > 0)
            let done = DispatchSemaphore(value: 0)
            for _ in 0..<3 {
                sendInBackground(port: server.port, "GET /block HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", into: answers, done: done)
            }
            #expect(eventually { handler.enteredCount == 1 && server.queuedRequestCount == 2 })
            let stopped = DispatchSemaphore(value: 0)
            detachThread {
                server.stop()
                stopped.signal()
            }
            Thread.sleep(forTimeInterval: 0.6) // past the drain timeout: stop() now waits on the handler
            #expect(stopped.wait(timeout: .now()) == .timedOut)
            LoopbackClient.send(keptAlive, Array("GET /busy HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
            Thread.sleep(forTimeInterval: 0.2) // the polling thread is now in /busy's access log
            handler.open(1)
            #expect(stopped.wait(timeout: .now() + 10) == .success)
            for _ in 0..<3 { #expect(done.wait(timeout: .now() + 10) == .success) }
            return String(decoding: LoopbackClient.readToEnd(keptAlive), as: UTF8.self)
        }
        let all = answers.all
        #expect(all.filter { $0.contains("unblocked") }.count == 1, "\(all)")
        #expect(all.filter { $0.hasPrefix("HTTP/1.1 503") && $0.contains("shutting down") }.count == 2, "\(all)")
        #expect(busyAnswer.hasPrefix("HTTP/1.1 503"))
        #expect(handler.enteredCount == 1)
        #expect(server.inFlightRequestCount == 0)
        #expect(server.openConnectionCount == 0)
    }

    // MARK: File descriptors

    @Test func theConnectionLimitIsSizedToTheDescriptorBudget() throws {
        let limits = HTTPServer.Limits()
        let own = HTTPServer.ownDescriptorCount(limits)
        let plenty = HTTPServer.DescriptorBudget(softLimit: 1 << 20, inUse: 30, limits: limits)
        #expect(try plenty.connectionLimit(for: limits) == limits.connectionLimit)
        // `ulimit -n 4096`: fewer connections, still a working server.
        let tight = HTTPServer.DescriptorBudget(softLimit: 4096, inUse: 100, limits: limits)
        #expect(try tight.connectionLimit(for: limits) == 4096 - 100 - limits.reservedFileDescriptors - own)
        // Data files took nearly everything: one clear error saying what to raise the limit to.
        let starved = HTTPServer.DescriptorBudget(softLimit: 4096, inUse: 3900, limits: limits)
        let error = #expect(throws: HTTPServerError.outOfFileDescriptors) { try starved.connectionLimit(for: limits) }
        let suggested = 3900 + limits.reservedFileDescriptors + own + limits.connectionLimit
        #expect(error?.message.contains("RLIMIT_NOFILE is 4096, 3900 are open") == true)
        #expect(error?.message.contains("ulimit -n \(suggested)") == true)
        #expect(error?.message.contains("\n") == false)
        // A deliberately small server needs only its own limit.
        var small = limits
        small.connectionLimit = 10
        small.perAddressConnectionLimit = 10
        #expect(try HTTPServer.DescriptorBudget(softLimit: 400, inUse: 100, limits: small).connectionLimit(for: small) == 10)
    }

    @Test func raisingTheDescriptorLimitReachesTheHardLimit() throws {
        var limit = rlimit()
        #if canImport(Glibc)
            let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        #else
            let resource = RLIMIT_NOFILE
        #endif
        #expect(getrlimit(resource, &limit) == 0)
        let soft = HTTPServer.raiseFileDescriptorLimit()
        #expect(getrlimit(resource, &limit) == 0)
        #expect(soft == Int(clamping: limit.rlim_cur))
        #expect(limit.rlim_cur == limit.rlim_max || limit.rlim_cur >= 1 << 16)
        #expect(HTTPServer.fileDescriptorLimit() == soft)
        // The server's own descriptors stay within what the budget keeps for them. Other tests
        // in this process open and close descriptors meanwhile, so the least growth of five
        // starts is what the server itself takes.
        var growths: [Int] = []
        var own = 0
        for _ in 0..<5 {
            let before = HTTPServer.fileDescriptorsInUse()
            let server = HTTPServer(port: 0, handler: healthHandler)
            try server.start()
            let during = HTTPServer.fileDescriptorsInUse()
            server.stop()
            growths.append(during - before)
            own = HTTPServer.ownDescriptorCount(server.limits)
        }
        #expect(growths.min()! <= own, "growths \(growths), the budget keeps \(own)")
    }

    @Test func limitsOutOfRangeAreRefused() throws {
        let broken: [(String, (inout HTTPServer.Limits) -> Void)] = [
            ("perAddressConnectionLimit", { $0.perAddressConnectionLimit = 0 }),
            ("perAddressConnectionLimit", { $0.perAddressConnectionLimit = $0.connectionLimit + 1 }),
            ("connectionLimit", { $0.connectionLimit = HTTPServer.Limits.maximumConnectionLimit + 1 }),
            ("requestDeadlineSeconds", { $0.requestDeadlineSeconds = 0 }),
            ("maximumBufferedBodyBytes", { $0.maximumBufferedBodyBytes = $0.maximumRequestBodyBytes - 1 }),
            ("handlerThreadCount", { $0.handlerThreadCount = 0 }),
            ("maximumQueuedRequests", { $0.maximumQueuedRequests = 0 }),
            ("pollingThreadCount", { $0.pollingThreadCount = 0 }),
            ("reservedFileDescriptors", { $0.reservedFileDescriptors = -1 })
        ]
        for (name, breakIt) in broken {
            var limits = HTTPServer.Limits()
            breakIt(&limits)
            let error = #expect(throws: HTTPServerError.invalidLimits) { try HTTPServer(limits: limits, handler: healthHandler).start() }
            #expect(error?.message.contains(name) == true, "\(name): \(error?.message ?? "")")
        }
        #expect(HTTPServer.Limits().problem() == nil)
    }
}
