import Foundation
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import TestSupport

/// A response as read off the wire by `RawHTTPClient`.
struct RawResponse {
    var status: Int
    var headers: [(String, String)]
    var body: [UInt8]

    func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    var bodyText: String { String(decoding: body, as: UTF8.self) }
}

/// A blocking loopback HTTP/1.1 client on a raw socket, for what URLSession will not send
/// (malformed requests, lying Content-Length, floods of headers) and for checking refusal.
/// Every call is bounded: a 5 s socket timeout and an 8 MiB read cap.
enum RawHTTPClient {
    static let timeoutSeconds = 5
    static let maximumReadBytes = 8 << 20

    /// Sends `pieces` one after another (with a short pause between, so the server sees them
    /// in separate reads) and returns everything the server wrote until it closed the connection.
    /// With `halfClose`, the write side is shut after the last piece, so the server sees the end
    /// of an incomplete request instead of waiting for the rest until its timeout.
    static func exchange(port: UInt16, _ pieces: [[UInt8]], halfClose: Bool = false) async throws -> [UInt8] {
        try await offPool { try exchangeBlocking(port: port, pieces, halfClose: halfClose) }
    }

    static func request(port: UInt16, _ text: String, body: [UInt8] = []) async throws -> RawResponse {
        try parse(try await exchange(port: port, [Array(text.utf8) + body]))
    }

    /// True when a TCP connection to the port is refused (nobody listening).
    static func isRefused(port: UInt16) async throws -> Bool {
        try await offPool { isRefusedBlocking(port: port) }
    }

    static func isRefusedBlocking(port: UInt16) -> Bool {
        guard let socketDescriptor = try? connected(port: port) else { return true }
        close(socketDescriptor)
        return false
    }

    /// The blocking form of ``request(port:_:body:)``, for tests that must not depend on the
    /// cooperative thread pool (other suites block it with child processes).
    static func requestBlocking(port: UInt16, _ text: String) throws -> RawResponse {
        try parse(try exchangeBlocking(port: port, [Array(text.utf8)], halfClose: false))
    }

    static func exchangeBlocking(port: UInt16, _ pieces: [[UInt8]], halfClose: Bool) throws -> [UInt8] {
        let socketDescriptor = try connected(port: port)
        defer { close(socketDescriptor) }
        for (index, piece) in pieces.enumerated() {
            if index > 0 { usleep(20_000) }
            var sent = 0
            while sent < piece.count {
                let result = piece[sent...].withUnsafeBytes { send(socketDescriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                // The server may answer early (413) and close: stop sending and read its answer.
                if result <= 0 { break }
                sent += result
            }
        }
        if halfClose { _ = shutdown(socketDescriptor, Int32(SHUT_WR)) }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while received.count < maximumReadBytes {
            let count = buffer.withUnsafeMutableBytes { recv(socketDescriptor, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break } // closed, reset or timed out
            received.append(contentsOf: buffer[..<count])
        }
        return received
    }

    static func parse(_ bytes: [UInt8]) throws -> RawResponse {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        guard let end = bytes.firstRange(of: separator) else {
            throw TestFailure("no complete response head in \(bytes.count) bytes: \(String(decoding: bytes.prefix(200), as: UTF8.self))")
        }
        let lines = String(decoding: bytes[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else {
            throw TestFailure("bad status line \(lines[0])")
        }
        let headers = lines.dropFirst().compactMap { line -> (String, String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        var body = Array(bytes[end.upperBound...])
        if let length = headers.first(where: { $0.0.lowercased() == "content-length" }).flatMap({ Int($0.1) }) {
            body = Array(body.prefix(length))
        }
        return RawResponse(status: status, headers: headers, body: body)
    }

    private static func connected(port: UInt16) throws -> Int32 {
        #if canImport(Glibc)
            let socketDescriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let socketDescriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard socketDescriptor >= 0 else { throw TestFailure("socket: \(String(cString: strerror(errno)))") }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(socketDescriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(socketDescriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socketDescriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            let message = String(cString: strerror(errno))
            close(socketDescriptor)
            throw TestFailure("connect to 127.0.0.1:\(port): \(message)")
        }
        return socketDescriptor
    }
}
