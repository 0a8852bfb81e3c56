import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import Synchronization
import Testing
@testable import HTTPServer
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Answers a handler gives later from another thread (long polls), and bodies sent from files.
@Suite(.slow) struct HTTPDeferredAnswerTests {
    /// `/later` is left unanswered (its responder kept for the test to answer); anything else is
    /// answered at once.
    final class LaterHandler: HTTPHandler {
        let pending = Mutex<[HTTPResponder]>([])

        func handle(_ request: HTTPRequest) -> HTTPResponse { .text("now") }

        func handle(_ request: HTTPRequest, responder: HTTPResponder) {
            guard request.path == "/later" else {
                responder.respond(handle(request))
                return
            }
            pending.withLock { $0.append(responder) }
        }
    }

    /// How long a client here waits for an answer, and a condition for its turn: five minutes,
    /// however loaded the machine (the whole suite on two cores once took three for this test).
    /// Nothing here is expected to take long; a wait that ends here is the failure.
    static let patience = Duration.seconds(300)

    /// `GET path` on a raw socket, `Connection: close`: everything the server wrote (blocks up
    /// to ``patience``: call it on a thread of its own).
    static func rawGet(_ port: UInt16, _ path: String) -> String {
        guard let socket = LoopbackClient.connect(port: port, timeout: patience) else { return "" }
        defer { close(socket) }
        LoopbackClient.send(socket, Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8))
        return String(decoding: LoopbackClient.readToEnd(socket), as: UTF8.self)
    }

    /// Waits (up to ``patience``) until `condition` holds, on a thread of its own: the suite's
    /// other tests may hold the cooperative pool's threads.
    static func eventually(_ condition: @escaping @Sendable () -> Bool) async throws {
        try await onOwnThread {
            let deadline = ContinuousClock.now + patience
            while !condition() && ContinuousClock.now < deadline { usleep(10_000) }
        }
    }

    /// One handler thread, and more deferred requests than threads: none of them holds it, so a
    /// request that answers at once is answered while they all still wait.
    @Test func deferredAnswersHoldNoHandlerThread() async throws {
        var limits = HTTPServer.Limits()
        limits.handlerThreadCount = 1
        let handler = LaterHandler()
        try await withServer(limits: limits, handler: handler) { server in
            let port = server.port
            let answers = Mutex<[String]>([])
            let group = DispatchGroup()
            for _ in 0..<4 {
                group.enter()
                detachThread {
                    defer { group.leave() }
                    let text = Self.rawGet(port, "/later")
                    answers.withLock { $0.append(text) }
                }
            }
            try await Self.eventually { handler.pending.withLock { $0.count } == 4 }
            #expect(server.unansweredRequestCount == 4)
            let now = try await onOwnThread { Self.rawGet(port, "/now") }
            #expect(now.hasPrefix("HTTP/1.1 200") && now.hasSuffix("now"), "\(now)")
            #expect(handler.pending.withLock { $0.count } == 4 && answers.withLock { $0.isEmpty }, "the four still wait")
            for responder in handler.pending.withLock({ $0 }) {
                DispatchQueue.global().async { responder.respond(.text("later")) }
            }
            #expect(try await onOwnThread { group.wait(timeout: .now() + .seconds(300)) } == .success)
            #expect(answers.withLock { $0 }.allSatisfy { $0.hasPrefix("HTTP/1.1 200") && $0.hasSuffix("later") })
            try await Self.eventually { server.unansweredRequestCount == 0 }
            #expect(server.unansweredRequestCount == 0)
        }
    }

    /// A request never answered is answered 503 by `stop()`, which does not wait out its drain
    /// (ten minutes here) for it; a late answer after that sends nothing.
    @Test func stopAnswersWhatAHandlerLeftUnanswered() async throws {
        let handler = LaterHandler()
        var limits = HTTPServer.Limits()
        limits.stopDrainTimeout = .seconds(600)
        let server = HTTPServer(port: 0, limits: limits, handler: handler)
        try server.start()
        let port = server.port
        let waiting = Task { try await onOwnThread { Self.rawGet(port, "/later") } }
        try await Self.eventually { handler.pending.withLock { !$0.isEmpty } }
        let stopped = ContinuousClock.now
        try await offPool { server.stop() }
        let answer = try await waiting.value
        #expect(answer.hasPrefix("HTTP/1.1 503"))
        #expect(answer.contains("shutting down"))
        #expect(ContinuousClock.now - stopped < .seconds(300), "stop did not wait out its drain (600 s) for a request no handler is running")
        #expect(server.inFlightRequestCount == 0)
        #expect(handler.pending.withLock { $0.allSatisfy { !$0.respond(.text("too late")) } })
    }

    /// A responder answers once: a second answer is refused and the first one is the one sent.
    @Test func aResponderAnswersOnce() async throws {
        struct Twice: HTTPHandler {
            func handle(_ request: HTTPRequest) -> HTTPResponse { .text("first") }
            func handle(_ request: HTTPRequest, responder: HTTPResponder) {
                #expect(responder.respond(.text("first")))
                #expect(!responder.respond(.text("second")))
            }
        }
        try await withServer(handler: Twice()) { server in
            let (_, body) = try await send("GET", port: server.port, "/", using: session())
            #expect(body == Array("first".utf8))
        }
    }

    /// A temporary file holding `bytes`, unlinked, open for reading.
    static func unlinkedFile(_ bytes: [UInt8], tag: String) throws -> Int32 {
        var template = Array((NSTemporaryDirectory() + "/onboard-body-\(tag)-XXXXXX").utf8CString)
        let descriptor = mkstemp(&template)
        guard descriptor >= 0 else { throw TestFailure("mkstemp failed") }
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + offset, bytes.count - offset) }
            guard written > 0 else { throw TestFailure("write failed") }
            offset += written
        }
        return descriptor
    }

    /// How many of this process's descriptors are open on files made with `tag` (parallel tests
    /// open and close others meanwhile, so a plain count would not say).
    static func openFiles(tagged tag: String) -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return names.filter { name in
            ((try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + name)) ?? "").contains("onboard-body-\(tag)-")
        }.count
    }

    /// 24 MiB from a file arrive whole, and the file's descriptor is closed afterwards.
    @Test func aBodyFileIsSentWholeAndClosed() async throws {
        let bytes = randomBytes(24 << 20, seed: 7)
        let tag = String(UUID().uuidString.prefix(8))
        struct FileHandler: HTTPHandler {
            let bytes: [UInt8]
            let tag: String
            func handle(_ request: HTTPRequest) -> HTTPResponse {
                guard let descriptor = try? HTTPDeferredAnswerTests.unlinkedFile(bytes, tag: tag) else { return .error(status: 500, "no file") }
                return HTTPResponse(
                    status: 200, headers: ["Content-Type": "application/octet-stream"],
                    bodyFile: HTTPBodyFile(descriptor: descriptor, byteCount: bytes.count))
            }
        }
        try await withServer(handler: FileHandler(bytes: bytes, tag: tag)) { server in
            for _ in 0..<3 {
                let (response, body) = try await send("GET", port: server.port, "/", using: session())
                #expect(response.statusCode == 200)
                #expect(response.value(forHTTPHeaderField: "Content-Length") == String(bytes.count))
                #expect(body.count == bytes.count && body == bytes)
            }
        }
        #expect(Self.openFiles(tagged: tag) == 0, "every body file was closed")
    }

    @Test func aBodyFileDroppedUnsentIsClosedAndReadsBack() throws {
        let tag = String(UUID().uuidString.prefix(8))
        do {
            let file = HTTPBodyFile(descriptor: try Self.unlinkedFile(Array("hello".utf8), tag: tag), byteCount: 5)
            #expect(file.readAll() == Array("hello".utf8))
            #expect(Self.openFiles(tagged: tag) == 1)
        }
        #expect(Self.openFiles(tagged: tag) == 0)
    }
}
