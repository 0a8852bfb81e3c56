import Foundation
import Synchronization
import Testing
import TestSupport
import OnboardingStore

/// Both real transports (our ``HTTPTransport`` and ``URLSessionTransport``, which `https://`
/// uses) against a server that lies, stalls, floods and redirects: a scripted HTTP server on
/// loopback (``ScriptedHTTPServer``), not a transport double.
@Suite(.timed, .slow) struct TransportTests {
    enum Kind: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case http, urlSession
        var testDescription: String { rawValue }
    }

    static func transport(
        _ kind: Kind, _ server: ScriptedHTTPServer, timeout: Duration = .seconds(5),
        limit: Int = SyncLimits.maximumBodyBytes
    ) throws -> any SyncTransport {
        let url = URL(string: "http://127.0.0.1:\(server.port)")!
        switch kind {
        case .http: return try HTTPTransport(baseURL: url, timeout: timeout, maximumAnswerBytes: limit)
        case .urlSession: return URLSessionTransport(baseURL: url, timeout: timeout, maximumAnswerBytes: limit)
        }
    }

    static let upload = SyncRequest(
        method: "POST", path: "/v1/devices/kiosk-7/events",
        headers: ["authorization": "Bearer secret-token", "content-type": "application/json"],
        body: Array(repeating: UInt8(ascii: "x"), count: 430_374))

    /// The message of what `send` threw, and how long it took.
    static func failure(_ transport: any SyncTransport, _ request: SyncRequest) async -> (message: String, seconds: Double)? {
        let started = ContinuousClock.now
        do {
            _ = try await transport.send(request)
            return nil
        } catch {
            return ("\(error)", (ContinuousClock.now - started).seconds)
        }
    }

    /// How long `connection` stayed open, measured by the server's own thread (the test's awaits
    /// may wait for a thread of the cooperative pool that other tests keep busy).
    static func lifetime(of connection: Int, on server: ScriptedHTTPServer) async -> Duration? {
        for _ in 0..<600 {
            if let lifetime = server.connectionLifetimes[connection] { return lifetime }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return nil
    }

    @Test(arguments: Kind.allCases)
    func anUnreachableServerThrowsInsteadOfAnsweringAStatus(kind: Kind) async throws {
        // Port 9 (discard) on the loopback address: nothing listens, the connection is refused.
        let url = URL(string: "http://127.0.0.1:9/")!
        let transport: any SyncTransport = kind == .http ? try HTTPTransport(baseURL: url) : URLSessionTransport(baseURL: url)
        let failure = await Self.failure(transport, SyncRequest(method: "GET", path: SyncPaths.health))
        #expect(failure?.message == "http://127.0.0.1:9 refused the connection; is the server running at that address?")
    }

    @Test(arguments: Kind.allCases)
    func anEndlessChunkedAnswerIsCutAtTheLimitWithBoundedMemory(kind: Kind) async throws {
        let server = try ScriptedHTTPServer { _ in .endlessChunked(status: 200, bound: .init(bytes: 1 << 30, time: .seconds(30))) }
        defer { server.stop() }
        let failure = try #require(await Self.failure(try Self.transport(kind, server, timeout: .seconds(20)), Self.upload))
        #expect(failure.message.contains("longer than the protocol's \(SyncLimits.maximumBodyBytes) bytes"), "\(failure.message)")
        // Our transport closes the connection at once: far less than the server's 1 GiB bound
        // goes out. (URLSession's libcurl sometimes goes on reading after the task is cancelled;
        // its memory stays bounded, the bandwidth does not — one more reason for HTTPTransport.)
        if kind == .http {
            let lifetime = await Self.lifetime(of: 0, on: server)
            #expect(lifetime.map { $0 < .seconds(10) } == true, "the connection lived \(String(describing: lifetime))")
            #expect(server.streamedBytes(connection: 0) < 64 << 20)
        }
    }

    @Test(arguments: Kind.allCases)
    func aContentLengthAboveTheLimitFailsBeforeTheBodyIsRead(kind: Kind) async throws {
        let server = try ScriptedHTTPServer { _ in
            .raw(Array("HTTP/1.1 200 OK\r\ncontent-length: 900000000\r\n\r\n{".utf8))
        }
        defer { server.stop() }
        let failure = try #require(await Self.failure(try Self.transport(kind, server), Self.upload))
        #expect(failure.message.contains("announced an answer of 900000000 bytes"), "\(failure.message)")
    }

    @Test(arguments: Kind.allCases)
    func aDrippedAnswerIsCutAtTheDeadlineWhateverArrives(kind: Kind) async throws {
        let answer = Array("HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n".utf8) + [UInt8](repeating: 0x20, count: 100)
        let server = try ScriptedHTTPServer { _ in .drip(answer, interval: .milliseconds(100)) }
        defer { server.stop() }
        let failure = try #require(await Self.failure(try Self.transport(kind, server, timeout: .seconds(2)), Self.upload))
        #expect(
            failure.message
                == "http://127.0.0.1:\(server.port) sent no complete answer within 2 s (the deadline of one request, connecting included); the server or the network is too slow or stalled"
        )
        // Cut at the deadline by the client: not before it (the client's own clock: a loaded
        // machine can delay the server thread's accept, which shortens what it measures), and
        // long before the 10 s the drip takes (the server's clock: it sees the connection go;
        // URLSession closes its socket some seconds after giving up — measured 5.1–5.9 s).
        #expect(failure.seconds >= 1.9, "the client gave up after \(failure.seconds) s")
        let lifetime = await Self.lifetime(of: 0, on: server)
        #expect(lifetime.map { $0 < .seconds(8) } == true, "the connection lived \(String(describing: lifetime))")
        #expect(!failure.message.contains("(null)") && !failure.message.contains("-1001"))
    }

    @Test(arguments: Kind.allCases, [301, 302, 307, 308])
    func redirectsAreReturnedNotFollowedAndTheTokenGoesNowhereElse(kind: Kind, status: Int) async throws {
        let elsewhere = try ScriptedHTTPServer { _ in .answer(200, body: Array("{}".utf8)) }
        defer { elsewhere.stop() }
        let server = try ScriptedHTTPServer { _ in
            .answer(status, headers: ["location": "http://127.0.0.1:\(elsewhere.port)/v1/devices/kiosk-7/events"])
        }
        defer { server.stop() }
        // Not a test of deadlines: a generous one, so that the timing phase's load (URLSession's
        // redirect answer took over 5 s in one CI run next to the 60-upload suites) cannot fail it.
        let response = try await Self.transport(kind, server, timeout: .seconds(30)).send(Self.upload)
        #expect(response.status == status)
        #expect(response.headers["location"] == "http://127.0.0.1:\(elsewhere.port)/v1/devices/kiosk-7/events")
        try await Task.sleep(for: .milliseconds(200))
        #expect(elsewhere.requests.isEmpty, "the redirect was followed")
        #expect(server.requests.count == 1)
    }

    @Test(arguments: Kind.allCases)
    func afterADroppedConnectionTheRetryCarriesItsWholeBody(kind: Kind) async throws {
        let answered = Mutex(0)
        let server = try ScriptedHTTPServer { request in
            // The first request is read whole and the connection dropped without an answer.
            answered.withLock { count in
                count += 1
                return count == 1 ? .drop : .answer(200, body: Array("{}".utf8))
            }
        }
        defer { server.stop() }
        let transport = try Self.transport(kind, server, timeout: .seconds(10))
        // Warm a kept-alive connection first, as a sync run has.
        let first = await Self.failure(transport, Self.upload)
        #expect(first != nil)
        let response = try await transport.send(Self.upload)
        #expect(response.status == 200)
        let requests = server.requests
        #expect(requests.count == 2)
        // On a new connection, never the one the server dropped; and whole (the old failure sent
        // the head and no body, then waited out its timeout).
        #expect(requests.count == 2 && requests[0].connection != requests[1].connection)
        #expect(
            requests.allSatisfy { $0.bodyComplete && $0.body.count == Self.upload.body.count },
            "bodies: \(requests.map { "\($0.body.count)/\($0.headers["content-length"] ?? "-")" })")
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
