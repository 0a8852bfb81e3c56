import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
    private let streamSocket = Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue)
    private func systemAccept(_ socket: Int32) -> Int32 { Glibc.accept(socket, nil, nil) }
#elseif canImport(Darwin)
    import Darwin
    private let streamSocket = SOCK_STREAM
    private func systemAccept(_ socket: Int32) -> Int32 { Darwin.accept(socket, nil, nil) }
#endif

/// A real HTTP/1.1 server on 127.0.0.1 whose answers a test scripts: honest ones (from a real
/// sync server's handler, say), lies, redirects, bodies that never end, one byte a second, or a
/// dropped connection. It parses requests itself (raw sockets, a thread per connection), so the
/// client under test talks to it over TCP exactly as it would to a server on the network.
///
/// ```swift
/// let server = try ScriptedHTTPServer { request in
///     request.path.hasSuffix("/cursor") ? .answer(200, body: cursorJSON) : .drop
/// }
/// defer { server.stop() }
/// let url = URL(string: "http://127.0.0.1:\(server.port)")!
/// ```
///
/// Every reply is bounded in time and bytes (``ScriptedReply/endlessChunked(status:bound:)``
/// stops at its bound), so a client that never gives up cannot hold a test forever.
public final class ScriptedHTTPServer: @unchecked Sendable {
    /// One request as it arrived.
    public struct Request: Sendable {
        public let method: String
        public let path: String
        /// Lower-cased names.
        public let headers: [String: String]
        public let body: [UInt8]
        /// Whether the whole body the `Content-Length` announced arrived.
        public let bodyComplete: Bool
        /// Which accepted connection it came on (0, 1, …).
        public let connection: Int
    }

    public enum Reply: Sendable {
        /// A complete answer with `Content-Length`; the connection stays open for the next request.
        case answer(Int, headers: [String: String] = [:], body: [UInt8] = [])
        /// These bytes as they are, then the connection is closed.
        case raw([UInt8])
        /// These bytes one at a time, `interval` apart, then close (stops when the peer goes).
        case drip([UInt8], interval: Duration)
        /// A 200 (or `status`) with a chunked body of 64 KiB chunks that does not end until the
        /// peer closes or `bound` bytes or seconds have been sent.
        case endlessChunked(status: Int, bound: Bound = Bound())
        /// Close the connection without answering.
        case drop
    }

    /// How far an endless reply goes before the server gives up on the client stopping it.
    public struct Bound: Sendable {
        public var bytes: Int
        public var time: Duration
        public init(bytes: Int = 4 << 30, time: Duration = .seconds(60)) {
            self.bytes = bytes
            self.time = time
        }
    }

    public let port: UInt16
    private let listener: Int32
    private let script: @Sendable (Request) -> Reply

    private struct State {
        var requests: [Request] = []
        var connections = 0
        var open: Set<Int32> = []
        var stopped = false
        /// Bytes written by endless and dripped replies, per connection.
        var streamedBytes: [Int: Int] = [:]
        /// How long each connection was open, from accept to its end (the client closing it, or
        /// the reply done): measured on the server's own threads, so a test can time the client
        /// even when the Swift cooperative pool it awaits on is busy with other tests.
        var lifetimes: [Int: Duration] = [:]
        var running = 0
    }

    private let state = Mutex(State())

    public init(script: @escaping @Sendable (Request) -> Reply) throws {
        self.script = script
        let descriptor = socket(AF_INET, streamSocket, 0)
        guard descriptor >= 0 else { throw TestFailure("socket() failed: errno \(errno)") }
        var one: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var size = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, size) } }
        guard bound == 0, listen(descriptor, 128) == 0 else {
            close(descriptor)
            throw TestFailure("bind/listen on 127.0.0.1 failed: errno \(errno)")
        }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &size) } }
        port = UInt16(bigEndian: address.sin_port)
        listener = descriptor
        state.withLock { $0.running += 1 }
        detachThread { [self] in acceptLoop() }
    }

    /// The requests so far, in arrival order.
    public var requests: [Request] { state.withLock { $0.requests } }

    /// Bytes sent by streaming replies (endless, drip) on `connection`.
    public func streamedBytes(connection: Int) -> Int { state.withLock { $0.streamedBytes[connection] ?? 0 } }

    /// How long each ended connection was open, by connection index.
    public var connectionLifetimes: [Int: Duration] { state.withLock { $0.lifetimes } }

    /// Closes the listener and every connection, and waits (up to 10 s) for their threads.
    public func stop() {
        let sockets = state.withLock { state -> Set<Int32> in
            state.stopped = true
            return state.open
        }
        shutdown(listener, Int32(SHUT_RDWR))
        for socket in sockets { shutdown(socket, Int32(SHUT_RDWR)) }
        let deadline = ContinuousClock.now + .seconds(10)
        while state.withLock({ $0.running }) > 0, ContinuousClock.now < deadline { usleep(5_000) }
        close(listener)
    }

    private func acceptLoop() {
        defer { state.withLock { $0.running -= 1 } }
        while true {
            let connection = systemAccept(listener)
            guard connection >= 0 else {
                let failure = errno
                if isStopped { return }
                // Out of descriptors or a connection reset before accept: wait, do not quit.
                if failure != EINTR { usleep(10_000) }
                continue
            }
            let index: Int? = state.withLock { state in
                guard !state.stopped else { return nil }
                state.connections += 1
                state.open.insert(connection)
                state.running += 1
                return state.connections - 1
            }
            guard let index else {
                close(connection)
                return
            }
            LoopbackClient.setTimeout(connection, .seconds(10))
            let accepted = ContinuousClock.now
            detachThread { [self] in
                serve(connection, index: index)
                state.withLock { state in
                    state.open.remove(connection)
                    state.lifetimes[index] = ContinuousClock.now - accepted
                    state.running -= 1
                }
                close(connection)
            }
        }
    }

    private func serve(_ socket: Int32, index: Int) {
        var pending: [UInt8] = []
        while let request = readRequest(socket, connection: index, pending: &pending) {
            state.withLock { $0.requests.append(request) }
            switch script(request) {
            case .answer(let status, let headers, let body):
                var head = "HTTP/1.1 \(status) \(Self.reason(status))\r\ncontent-length: \(body.count)\r\n"
                for (name, value) in headers { head += "\(name): \(value)\r\n" }
                guard send(socket, Array((head + "\r\n").utf8) + body) else { return }
            case .raw(let bytes):
                _ = send(socket, bytes)
                return
            case .drip(let bytes, let interval):
                for byte in bytes {
                    guard !isStopped, send(socket, [byte]) else { return }
                    state.withLock { $0.streamedBytes[index, default: 0] += 1 }
                    Thread.sleep(forTimeInterval: Double(interval / .milliseconds(1)) / 1000)
                }
                return
            case .endlessChunked(let status, let bound):
                let started = ContinuousClock.now
                guard
                    send(
                        socket, Array("HTTP/1.1 \(status) \(Self.reason(status))\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n".utf8))
                else { return }
                let chunk = Array("10000\r\n".utf8) + [UInt8](repeating: UInt8(ascii: " "), count: 0x10000) + Array("\r\n".utf8)
                var sent = 0
                while sent < bound.bytes, ContinuousClock.now - started < bound.time, !isStopped {
                    guard send(socket, chunk) else { return }
                    sent += 0x10000
                    state.withLock { $0.streamedBytes[index, default: 0] += 0x10000 }
                }
                return
            case .drop:
                return
            }
        }
    }

    private var isStopped: Bool { state.withLock { $0.stopped } }

    /// Reads one request (head, then as much of the `Content-Length` body as arrives within the
    /// socket's timeout); nil when the peer closed or sent no complete head.
    private func readRequest(_ socket: Int32, connection: Int, pending: inout [UInt8]) -> Request? {
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        let separator: [UInt8] = [13, 10, 13, 10]
        var headEnd: Int?
        while headEnd == nil {
            if let found = Self.find(separator, in: pending) {
                headEnd = found
                break
            }
            guard pending.count < 256 << 10 else { return nil }
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return nil }
            pending.append(contentsOf: buffer[..<count])
        }
        guard let headEnd else { return nil }
        let head = String(decoding: pending[..<headEnd], as: UTF8.self)
        pending.removeFirst(headEnd + 4)
        let lines = head.components(separatedBy: "\r\n")
        let parts = lines[0].split(separator: " ")
        guard parts.count >= 2 else { return nil }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let length = Int(headers["content-length"] ?? "0") ?? 0
        while pending.count < length {
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            pending.append(contentsOf: buffer[..<count])
        }
        let body = Array(pending.prefix(length))
        pending.removeFirst(body.count)
        return Request(
            method: String(parts[0]), path: String(parts[1]), headers: headers, body: body,
            bodyComplete: body.count == length, connection: connection)
    }

    private func send(_ socket: Int32, _ bytes: [UInt8]) -> Bool { LoopbackClient.send(socket, bytes) }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if Array(haystack[start..<start + needle.count]) == needle { return start }
        }
        return nil
    }

    private static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 409: "Conflict"
        case 500: "Internal Server Error"
        case 503: "Service Unavailable"
        default: "Status"
        }
    }
}
