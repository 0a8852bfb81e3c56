internal import CTLS
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
    private let streamSocket = Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue)
    private let sendFlags = Int32(MSG_NOSIGNAL)
    private func systemConnect(_ socket: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 { Glibc.connect(socket, address, length) }
    private func systemSend(_ socket: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int { Glibc.send(socket, bytes, count, sendFlags) }
#elseif canImport(Darwin)
    import Darwin
    private let streamSocket = SOCK_STREAM
    private func systemConnect(_ socket: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 { Darwin.connect(socket, address, length) }
    private func systemSend(_ socket: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int { Darwin.send(socket, bytes, count, 0) }
#endif

/// The sync protocol's own HTTP/1.1 client for `http://` and `https://` servers: a few hundred
/// lines whose every byte is bounded, because the server at the other end may be broken or hostile.
///
/// ```swift
/// let transport = try HTTPTransport(baseURL: URL(string: "http://127.0.0.1:8080")!)
/// let client = SyncClient(store: store, transport: transport, token: token)
/// ```
///
/// - **One deadline per request** (``timeout``), from the first connection attempt to the last
///   byte of the answer: an answer dripped a byte a second, or one that never ends, fails when
///   it passes.
/// - **Bounded memory.** The answer is read as it arrives and the request fails as soon as its
///   body passes ``maximumAnswerBytes`` (a `Content-Length` above it fails before the body is
///   read); the head may be at most 64 KiB.
/// - **No redirects.** A 3xx is returned as it is; nothing is sent anywhere but ``baseURL``.
/// - **A connection per request** (`Connection: close`): a failed request never leaves a
///   half-used connection for the next one, and a dropped connection costs one new handshake.
/// - The blocking socket work runs on a thread of its own per request, never on the Swift
///   cooperative pool; cancelling the calling task closes the connection at once.
///
/// - **`https://`** through GnuTLS: TLS 1.2 or 1.3, the server's certificate verified against
///   the system's CAs or those of ``caFile`` (a private CA), its name — or for an address, its
///   IP address — against the host of ``baseURL``. A certificate that does not verify fails the
///   request before anything is sent, saying why.
public struct HTTPTransport: SyncTransport {
    public let baseURL: URL
    public let timeout: Duration
    public let maximumAnswerBytes: Int
    /// The PEM file of the CAs an `https://` server's certificate must chain to; nil: the system's.
    public let caFile: String?
    private let host: String
    private let port: UInt16
    private let secure: Bool
    private let pathPrefix: String

    /// The most an answer's status line and headers may take.
    public static let maximumHeadBytes = 64 << 10

    public init(
        baseURL: URL, timeout: Duration = URLSessionTransport.defaultTimeout,
        maximumAnswerBytes: Int = SyncLimits.maximumBodyBytes, caFile: String? = nil
    ) throws(TransportError) {
        precondition(timeout > .zero, "a transport timeout must be positive")
        precondition(maximumAnswerBytes > 0, "the answer limit must be positive")
        let scheme = baseURL.scheme?.lowercased()
        guard scheme == "http" || scheme == "https", let host = baseURL.host, !host.isEmpty else {
            throw TransportError("\(baseURL.absoluteString) is not an http:// or https:// address with a host; give one like https://sync.example:8443")
        }
        if let caFile, !FileManager.default.isReadableFile(atPath: caFile) {
            throw TransportError("the CA file \(caFile) cannot be read; give the PEM file of the CA that signed the server's certificate")
        }
        guard baseURL.user == nil, baseURL.password == nil, baseURL.query == nil, baseURL.fragment == nil else {
            throw TransportError("the server address may not carry a user, password, query or fragment; give one like http://sync.example:8080")
        }
        let port = baseURL.port ?? (scheme == "https" ? 443 : 80)
        guard (1...65535).contains(port) else { throw TransportError("port \(port) of the server address is outside 1…65535") }
        self.baseURL = baseURL
        self.timeout = timeout
        self.maximumAnswerBytes = maximumAnswerBytes
        self.caFile = caFile
        secure = scheme == "https"
        self.host = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        self.port = UInt16(port)
        var prefix = baseURL.path
        while prefix.hasSuffix("/") { prefix.removeLast() }
        pathPrefix = prefix
    }

    /// `http://host:port` (or `https://`), as messages name the server (never a path or a header).
    public var origin: String { "\(secure ? "https" : "http")://\(host.contains(":") ? "[\(host)]" : host):\(port)" }

    public func send(_ request: SyncRequest) async throws -> SyncResponse {
        let bytes = try requestBytes(request)
        let connection = Connection()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<SyncResponse, any Error>) in
                let exchange = Exchange(
                    host: host, port: port, origin: origin, deadline: .now + timeout, timeout: timeout,
                    maximumAnswerBytes: maximumAnswerBytes, noBody: request.method == "HEAD", connection: connection,
                    tls: secure ? Exchange.TLS(caFile: caFile) : nil)
                Thread {
                    continuation.resume(with: Result { () throws(TransportError) in try exchange.run(bytes) })
                }.start()
            }
        } onCancel: {
            connection.cancel()
        }
    }

    private func requestBytes(_ request: SyncRequest) throws(TransportError) -> [UInt8] {
        let path = pathPrefix + request.path
        guard path.hasPrefix("/"), !path.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else {
            throw TransportError("the request path \(request.path.debugDescription) is not a valid HTTP path")
        }
        let hostHeader = (host.contains(":") ? "[\(host)]" : host) + (port == (secure ? 443 : 80) ? "" : ":\(port)")
        var head = "\(request.method) \(path) HTTP/1.1\r\nhost: \(hostHeader)\r\nconnection: close\r\n"
        for (name, value) in request.headers.sorted(by: { $0.key < $1.key }) {
            let lowered = name.lowercased()
            guard !["host", "connection", "content-length", "transfer-encoding"].contains(lowered) else { continue }
            // A header may not smuggle a second line (or a second request) into the head.
            guard !name.isEmpty, !(name + value).utf8.contains(where: { $0 == 13 || $0 == 10 || $0 == 0 }) else {
                throw TransportError("the header \(name.debugDescription) holds a line break; it was not sent")
            }
            head += "\(lowered): \(value)\r\n"
        }
        if !request.body.isEmpty || request.method == "POST" || request.method == "PUT" {
            head += "content-length: \(request.body.count)\r\n"
        }
        return Array((head + "\r\n").utf8) + request.body
    }
}

/// A failure to get an answer from the server (it may or may not have received the request).
/// The message names the server's origin and what went wrong, never a header or a token.
public struct TransportError: Error, Sendable, CustomStringConvertible {
    public let message: String
    /// A failure that trying again cannot mend (the server's certificate does not verify, the CA
    /// file is unusable): the sync client gives up at once instead of retrying.
    public let isPermanent: Bool
    public init(_ message: String, permanent: Bool = false) {
        self.message = message
        isPermanent = permanent
    }
    public var description: String { message }
}

/// Picks the transport for a server address.
public enum SyncTransports {
    /// ``HTTPTransport`` for `http://` and `https://` (with `caFile`, the CAs a private
    /// server's certificate chains to).
    public static func make(
        baseURL: URL, timeout: Duration = URLSessionTransport.defaultTimeout,
        caFile: String? = nil
    ) throws(TransportError) -> any SyncTransport {
        switch baseURL.scheme?.lowercased() {
        case "http", "https": return try HTTPTransport(baseURL: baseURL, timeout: timeout, caFile: caFile)
        default: throw TransportError("\(baseURL.absoluteString) is neither http:// nor https://; give an address like https://sync.example:8443")
        }
    }
}

/// The socket of one request, closable from another thread (task cancellation).
private final class Connection: Sendable {
    private struct State {
        var socket: Int32 = -1
        var cancelled = false
    }

    private let state = Mutex(State())

    /// Records the socket; false when cancelled already (the caller closes it).
    func adopt(_ socket: Int32) -> Bool {
        state.withLock { state in
            guard !state.cancelled else { return false }
            state.socket = socket
            return true
        }
    }

    var isCancelled: Bool { state.withLock { $0.cancelled } }

    func cancel() {
        state.withLock { state in
            state.cancelled = true
            if state.socket >= 0 { shutdown(state.socket, Int32(SHUT_RDWR)) }
        }
    }

    func close() {
        state.withLock { state in
            if state.socket >= 0 { Glibc.close(state.socket) }
            state.socket = -1
        }
    }
}

extension HTTPTransport {
    /// Reads one HTTP answer from a connected `socket` (the request already sent) as ``send(_:)``
    /// does, with the same limits and a deadline of `timeout`: for the fuzz target and tests of
    /// the answer parser, which feed it bytes through a socket pair.
    @_spi(Testing)
    public static func readAnswer(
        from socket: Int32, timeout: Duration = .seconds(2),
        maximumAnswerBytes: Int = SyncLimits.maximumBodyBytes
    ) throws(TransportError) -> SyncResponse {
        let exchange = Exchange(
            host: "test", port: 1, origin: "the server", deadline: .now + timeout, timeout: timeout,
            maximumAnswerBytes: maximumAnswerBytes, noBody: false, connection: Connection(), tls: nil)
        var reader = Reader(channel: Channel(socket: socket), exchange: exchange)
        return try Exchange.answer(from: &reader, exchange: exchange)
    }
}

/// One request and its answer, run on a thread of its own.
private struct Exchange: Sendable {
    let host: String
    let port: UInt16
    let origin: String
    let deadline: ContinuousClock.Instant
    let timeout: Duration
    let maximumAnswerBytes: Int
    let noBody: Bool
    let connection: Connection
    let tls: TLS?

    /// What an `https://` exchange verifies the server against.
    struct TLS: Sendable {
        let caFile: String?
    }

    func run(_ request: [UInt8]) throws(TransportError) -> SyncResponse {
        let socket = try connect()
        defer { connection.close() }
        guard connection.adopt(socket) else {
            Glibc.close(socket)
            throw TransportError("the request to \(origin) was cancelled")
        }
        let channel = Channel(socket: socket)
        // Before the socket closes: the session's last words go out on it.
        defer { channel.endTLS() }
        if let tls { try handshake(channel, tls) }
        var reader = Reader(channel: channel, exchange: self)
        do { try write(channel, request) } catch let failure {
            // A server may answer before it has read the whole body (413, 401) and close: that
            // answer is what counts, if one arrived; otherwise the send failure is.
            guard !connection.isCancelled, let early = try? reader.head() else { throw failure }
            return SyncResponse(status: early.0, headers: early.1, body: (try? reader.earlyBody(early.1)) ?? [])
        }
        return try Self.answer(from: &reader, exchange: self)
    }

    /// The rest of an answer, after the request went out: status and headers (past any 1xx),
    /// then the body as the headers frame it, every part within its limit.
    static func answer(from reader: inout Reader, exchange: Exchange) throws(TransportError) -> SyncResponse {
        let origin = exchange.origin, maximumAnswerBytes = exchange.maximumAnswerBytes, noBody = exchange.noBody
        var (status, headers) = try reader.head()
        // 1xx answers (100 Continue) come before the real one.
        while (100...199).contains(status) { (status, headers) = try reader.head() }
        let body: [UInt8]
        if noBody || status == 204 || status == 304 {
            body = []
        } else if let coding = headers["transfer-encoding"] {
            guard coding.lowercased() == "chunked" else {
                throw TransportError("\(origin) answered with transfer-encoding \(coding.debugDescription), which the protocol does not use")
            }
            body = try reader.chunkedBody()
        } else if let text = headers["content-length"] {
            guard let length = Int(text.trimmingCharacters(in: .whitespaces)), length >= 0 else {
                throw TransportError("\(origin) answered with content-length \(text.debugDescription), not a number")
            }
            guard length <= maximumAnswerBytes else {
                throw TransportError(
                    "\(origin) announced an answer of \(length) bytes, more than the protocol's \(maximumAnswerBytes); nothing of it was read — check the server address"
                )
            }
            body = try reader.bytes(length)
        } else {
            body = try reader.toEnd()
        }
        return SyncResponse(status: status, headers: headers, body: body)
    }

    var timeoutMessage: String {
        return
            "\(origin) sent no complete answer within \(timeout.secondsText) (the deadline of one request, connecting included); the server or the network is too slow or stalled"
    }

    /// Milliseconds left before the deadline; throws once it has passed.
    func remainingMilliseconds() throws(TransportError) -> Int32 {
        if connection.isCancelled { throw TransportError("the request to \(origin) was cancelled") }
        let left = deadline - .now
        guard left > .zero else { throw TransportError(timeoutMessage) }
        return Int32(clamping: max(1, Int((left / .milliseconds(1)).rounded(.up))))
    }

    /// Waits until `socket` is ready for `events`, within the deadline.
    func wait(_ socket: Int32, for events: Int16) throws(TransportError) {
        while true {
            var watched = pollfd(fd: socket, events: events, revents: 0)
            let result = poll(&watched, 1, try remainingMilliseconds())
            if result > 0 { return }
            if result < 0, errno == EINTR { continue }
            if result < 0 { throw TransportError("waiting for \(origin) failed: \(String(cString: strerror(errno)))") }
        }
    }

    private func connect() throws(TransportError) -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let list else {
            throw TransportError("the host of \(origin) is unknown (\(String(cString: gai_strerror(status)))); check the server address")
        }
        defer { freeaddrinfo(list) }
        var lastError = ECONNREFUSED
        var entry: UnsafeMutablePointer<addrinfo>? = list
        while let current = entry {
            entry = current.pointee.ai_next
            let socket = Glibc.socket(current.pointee.ai_family, streamSocket, 0)
            guard socket >= 0 else {
                lastError = errno
                continue
            }
            let flags = fcntl(socket, F_GETFL)
            _ = fcntl(socket, F_SETFL, flags | O_NONBLOCK)
            if systemConnect(socket, current.pointee.ai_addr, current.pointee.ai_addrlen) == 0 { return socket }
            guard errno == EINPROGRESS else {
                lastError = errno
                Glibc.close(socket)
                continue
            }
            do { try wait(socket, for: Int16(POLLOUT)) } catch {
                Glibc.close(socket)
                throw error
            }
            var failure: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            if getsockopt(socket, SOL_SOCKET, SO_ERROR, &failure, &length) == 0, failure == 0 { return socket }
            lastError = failure
            Glibc.close(socket)
        }
        if lastError == ECONNREFUSED { throw TransportError("\(origin) refused the connection; is the server running at that address?") }
        throw TransportError("cannot connect to \(origin): \(String(cString: strerror(lastError)))")
    }

    /// The TLS handshake, the server's certificate verified in it.
    private func handshake(_ channel: Channel, _ tls: TLS) throws(TransportError) {
        var error = [CChar](repeating: 0, count: 512)
        guard let client = onboard_tls_client_new(channel.socket, host, tls.caFile, &error, error.count) else {
            throw TransportError(
                "TLS with \(origin) cannot start: \(String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))",
                permanent: true)
        }
        channel.tls = client
        while true {
            let code = onboard_tls_client_handshake(client)
            switch code {
            case 0: return
            case Int32(ONBOARD_TLS_WANT_READ): try wait(channel.socket, for: Int16(POLLIN))
            case Int32(ONBOARD_TLS_WANT_WRITE): try wait(channel.socket, for: Int16(POLLOUT))
            default:
                if connection.isCancelled { throw TransportError("the request to \(origin) was cancelled") }
                let reason = String(cString: onboard_tls_client_error(client))
                let untrusted = onboard_tls_client_verification_failed(client) != 0
                throw TransportError(
                    "TLS with \(origin) failed: \(reason)\(untrusted && tls.caFile == nil ? " (for a private CA, give its certificate with --ca-file)" : "")",
                    permanent: untrusted)
            }
        }
    }

    private func write(_ channel: Channel, _ bytes: [UInt8]) throws(TransportError) {
        var sent = 0
        while sent < bytes.count {
            if channel.tls == nil { try wait(channel.socket, for: Int16(POLLOUT)) }
            switch bytes[sent...].withUnsafeBytes({ channel.send($0) }) {
            case .done(let count): sent += count
            case .wait(let events): try wait(channel.socket, for: events)
            case .ended, .failed:
                if connection.isCancelled { throw TransportError("the request to \(origin) was cancelled") }
                throw TransportError("the connection to \(origin) was lost while sending the request (\(sent) of \(bytes.count) bytes sent)")
            }
        }
    }
}

/// The byte stream of one exchange: the socket itself, or a TLS session on it.
private final class Channel {
    let socket: Int32
    var tls: OpaquePointer?

    init(socket: Int32) { self.socket = socket }

    enum Outcome {
        case done(Int)
        /// Nothing moved: wait for these poll events, then try again.
        case wait(Int16)
        case ended
        case failed(String)
    }

    /// Decrypted bytes already waiting: read them before polling.
    var hasPending: Bool { tls.map { onboard_tls_client_pending($0) > 0 } ?? false }

    func send(_ bytes: UnsafeRawBufferPointer) -> Outcome {
        if let tls { return outcome(onboard_tls_client_send(tls, bytes.baseAddress, bytes.count), session: tls) }
        let result = systemSend(socket, bytes.baseAddress, bytes.count)
        if result > 0 { return .done(result) }
        if result < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return .wait(Int16(POLLOUT)) }
        return .failed(String(cString: strerror(errno)))
    }

    func receive(_ bytes: UnsafeMutableRawBufferPointer) -> Outcome {
        if let tls { return outcome(onboard_tls_client_recv(tls, bytes.baseAddress, bytes.count), session: tls) }
        let result = recv(socket, bytes.baseAddress, bytes.count, 0)
        if result > 0 { return .done(result) }
        if result == 0 { return .ended }
        if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return .wait(Int16(POLLIN)) }
        return .failed(String(cString: strerror(errno)))
    }

    private func outcome(_ result: Int, session: OpaquePointer) -> Outcome {
        if result > 0 { return .done(result) }
        if result == 0 { return .ended }
        if result == Int(ONBOARD_TLS_WANT_READ) { return .wait(Int16(POLLIN)) }
        if result == Int(ONBOARD_TLS_WANT_WRITE) { return .wait(Int16(POLLOUT)) }
        return .failed(String(cString: onboard_tls_client_error(session)))
    }

    /// Ends the TLS session, if any (the socket stays for its owner to close).
    func endTLS() {
        if let tls { onboard_tls_client_free(tls) }
        tls = nil
    }
}

/// Reads an answer off the socket, a bounded buffer at a time.
private struct Reader {
    let channel: Channel
    let exchange: Exchange
    private var buffer: [UInt8] = []
    private var start = 0
    private var ended = false

    init(channel: Channel, exchange: Exchange) {
        self.channel = channel
        self.exchange = exchange
    }

    private var origin: String { exchange.origin }
    private var available: Int { buffer.count - start }

    /// Reads more bytes; false at the end of the stream.
    private mutating func fill() throws(TransportError) -> Bool {
        if ended { return false }
        if start > 0, start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        } else if start >= 1 << 20 {
            buffer.removeFirst(start)
            start = 0
        }
        if !channel.hasPending { try exchange.wait(channel.socket, for: Int16(POLLIN)) }
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        switch chunk.withUnsafeMutableBytes({ channel.receive($0) }) {
        case .done(let count):
            buffer.append(contentsOf: chunk[..<count])
            return true
        case .ended:
            ended = true
            return false
        case .wait(let events):
            // TLS may need to write before it can read on (a renegotiation): wait for that.
            if events != Int16(POLLIN) { try exchange.wait(channel.socket, for: events) }
            return true
        case .failed(let reason):
            if exchange.connection.isCancelled { throw TransportError("the request to \(origin) was cancelled") }
            throw TransportError("the connection to \(origin) was lost before the answer was complete (\(reason))")
        }
    }

    private mutating func take(_ count: Int) -> [UInt8] {
        precondition(count >= 0 && count <= available, "Reader.take(\(count)) with \(available) bytes buffered")
        let taken = Array(buffer[start..<start + count])
        start += count
        return taken
    }

    /// One CRLF-terminated line of at most `limit` bytes, without its CRLF.
    private mutating func line(limit: Int, what: String) throws(TransportError) -> [UInt8] {
        var scanned = 0 // bytes after `start` known to hold no line feed (fill may move `start`)
        while true {
            if let end = buffer[(start + scanned)...].firstIndex(of: 10) {
                var line = take(end - start + 1)
                line.removeLast()
                if line.last == 13 { line.removeLast() }
                return line
            }
            scanned = available
            guard available <= limit else { throw TransportError("\(origin) sent \(what) longer than \(limit) bytes; check the server address") }
            guard try fill() else {
                throw TransportError(
                    available == 0 && what == "a status line"
                        ? "\(origin) closed the connection without answering"
                        : "\(origin) closed the connection in the middle of \(what)")
            }
        }
    }

    /// The status and headers (names lower-cased) of the next answer.
    mutating func head() throws(TransportError) -> (Int, [String: String]) {
        var budget = HTTPTransport.maximumHeadBytes
        let statusLine = String(decoding: try line(limit: budget, what: "a status line"), as: UTF8.self)
        budget -= statusLine.utf8.count
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), parts[1].count == 3, let status = Int(parts[1]), (100...599).contains(status) else {
            throw TransportError(
                "\(origin) sent an answer that is not HTTP/1.1 (status line \(String(statusLine.prefix(80)).debugDescription)); check the server address")
        }
        var headers: [String: String] = [:]
        while true {
            let bytes = try line(limit: max(budget, 0), what: "the answer's headers")
            budget -= bytes.count + 2
            guard budget >= 0 else {
                throw TransportError("\(origin) sent headers longer than \(HTTPTransport.maximumHeadBytes) bytes; check the server address")
            }
            if bytes.isEmpty { break }
            let text = String(decoding: bytes, as: UTF8.self)
            guard let colon = text.firstIndex(of: ":") else {
                throw TransportError("\(origin) sent a header line without a colon (\(String(text.prefix(80)).debugDescription))")
            }
            let name = text[..<colon].lowercased()
            let value = text[text.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            headers[name] = headers[name].map { "\($0), \(value)" } ?? value
        }
        return (status, headers)
    }

    /// Exactly `count` bytes of body (already checked against the limit).
    mutating func bytes(_ count: Int) throws(TransportError) -> [UInt8] {
        while available < count {
            guard try fill() else {
                throw TransportError("\(origin) closed the connection after \(available) of the \(count) bytes it announced")
            }
        }
        return take(count)
    }

    /// A chunked body, refused as soon as it passes the limit.
    mutating func chunkedBody() throws(TransportError) -> [UInt8] {
        var body: [UInt8] = []
        while true {
            let sizeLine = String(decoding: try line(limit: 1024, what: "a chunk size"), as: UTF8.self)
            let digits = sizeLine.prefix { $0 != ";" }.trimmingCharacters(in: .whitespaces)
            // Hex digits only: Int(_:radix:) would also take a sign, and "-5" is no chunk size.
            guard !digits.isEmpty, digits.count <= 15, digits.allSatisfy(\.isHexDigit), let size = Int(digits, radix: 16) else {
                throw TransportError("\(origin) sent a chunk size that is not hexadecimal (\(String(sizeLine.prefix(40)).debugDescription))")
            }
            if size == 0 {
                // Trailers, up to the empty line.
                while !(try line(limit: HTTPTransport.maximumHeadBytes, what: "the answer's trailers")).isEmpty {}
                return body
            }
            guard body.count + size <= exchange.maximumAnswerBytes else {
                throw TransportError(
                    "\(origin) sent an answer longer than the protocol's \(exchange.maximumAnswerBytes) bytes; it was cut off there — check the server address")
            }
            body += try bytes(size)
            guard try line(limit: 2, what: "a chunk").isEmpty else {
                throw TransportError("\(origin) sent a chunk longer than its size said")
            }
        }
    }

    /// The body of an answer that came before the request was sent whole, as far as it arrived.
    mutating func earlyBody(_ headers: [String: String]) throws(TransportError) -> [UInt8] {
        guard let text = headers["content-length"], let length = Int(text), length >= 0,
            length <= exchange.maximumAnswerBytes
        else { return [] }
        return try bytes(length)
    }

    /// The body up to the end of the stream (an answer with neither length nor chunks).
    mutating func toEnd() throws(TransportError) -> [UInt8] {
        while try fill() {
            guard available <= exchange.maximumAnswerBytes else {
                throw TransportError(
                    "\(origin) sent an answer longer than the protocol's \(exchange.maximumAnswerBytes) bytes; it was cut off there — check the server address")
            }
        }
        return take(available)
    }
}
