import Foundation

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

/// Blocking TCP on loopback for load and hostile-client tests: connections from a chosen source
/// address (Linux routes all of 127.0.0.0/8 to `lo`, so 127.0.0.2 is "another client"), with
/// every call bounded by a deadline. Run it on threads of its own, never on the Swift
/// cooperative pool.
public enum LoopbackClient {
    /// A connected socket to 127.0.0.1:`port` from `source`, or nil when the connection is not
    /// established within `timeout`. Blocking, with send and receive timeouts of `timeout`.
    public static func connect(port: UInt16, from source: String = "127.0.0.1", timeout: Duration = .seconds(5)) -> Int32? {
        let socket = makeSocket()
        guard socket >= 0 else { return nil }
        #if canImport(Darwin)
            var one: Int32 = 1
            setsockopt(socket, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = inet_addr(source)
        var remote = sockaddr_in()
        remote.sin_family = sa_family_t(AF_INET)
        remote.sin_port = port.bigEndian
        remote.sin_addr.s_addr = inet_addr("127.0.0.1")
        let size = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, size) } }
        guard bound == 0 else {
            close(socket)
            return nil
        }
        // Non-blocking connect, so a full backlog (the SYN dropped and retried after 1 s) cannot
        // take longer than the timeout.
        let flags = fcntl(socket, F_GETFL)
        _ = fcntl(socket, F_SETFL, flags | O_NONBLOCK)
        let started = withUnsafePointer(to: &remote) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { systemConnect(socket, $0, size) } }
        if started != 0 {
            guard errno == EINPROGRESS else {
                close(socket)
                return nil
            }
            var watched = pollfd(fd: socket, events: Int16(POLLOUT), revents: 0)
            var failure: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            guard poll(&watched, 1, milliseconds(timeout)) == 1,
                getsockopt(socket, SOL_SOCKET, SO_ERROR, &failure, &length) == 0, failure == 0
            else {
                close(socket)
                return nil
            }
        }
        _ = fcntl(socket, F_SETFL, flags)
        setTimeout(socket, timeout)
        return socket
    }

    /// Sends all of `bytes`; false when the peer closed or the send timed out.
    @discardableResult
    public static func send(_ socket: Int32, _ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let result = bytes[sent...].withUnsafeBytes { systemSend(socket, $0.baseAddress, $0.count) }
            if result <= 0 { return false }
            sent += result
        }
        return true
    }

    /// Reads until the peer closes, the receive timeout passes, or `limit` bytes arrived.
    public static func readToEnd(_ socket: Int32, limit: Int = 1 << 20) -> [UInt8] {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        while received.count < limit {
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            received.append(contentsOf: buffer[..<count])
        }
        return received
    }

    /// What the peer has done to a connection the client keeps open without reading: nothing
    /// yet, sent bytes (a refusal), or closed it.
    public enum PeerState: Equatable {
        case open, sentData, closed
    }

    public static func peerState(_ socket: Int32) -> PeerState {
        var byte: UInt8 = 0
        let count = recv(socket, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        if count > 0 { return .sentData }
        if count == 0 { return .closed }
        return errno == EAGAIN || errno == EWOULDBLOCK ? .open : .closed
    }

    /// The status of one `GET path` from `source` (Connection: close), or nil when no complete
    /// status line arrived within `timeout`, connecting included.
    public static func status(port: UInt16, from source: String, path: String = "/health", timeout: Duration) -> Int? {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        guard let socket = connect(port: port, from: source, timeout: timeout) else { return nil }
        defer { close(socket) }
        setTimeout(socket, max(.milliseconds(1), deadline - clock.now))
        guard send(socket, Array("GET \(path) HTTP/1.1\r\nHost: probe\r\nConnection: close\r\n\r\n".utf8)) else { return nil }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while clock.now < deadline, !received.contains(0x0A) {
            setTimeout(socket, max(.milliseconds(1), deadline - clock.now))
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            received.append(contentsOf: buffer[..<count])
        }
        guard clock.now <= deadline else { return nil }
        let line = String(decoding: received.prefix { $0 != 0x0D && $0 != 0x0A }, as: UTF8.self)
        let parts = line.split(separator: " ")
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1.") else { return nil }
        return Int(parts[1])
    }

    public static func setTimeout(_ socket: Int32, _ timeout: Duration) {
        let microseconds = max(1_000, Int(timeout / .microseconds(1)))
        var value = timeval(tv_sec: microseconds / 1_000_000, tv_usec: Int(microseconds % 1_000_000))
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    private static func makeSocket() -> Int32 { socket(AF_INET, streamSocket, 0) }

    static func milliseconds(_ duration: Duration) -> Int32 {
        Int32(clamping: max(0, Int((duration / .milliseconds(1)).rounded(.up))))
    }
}
