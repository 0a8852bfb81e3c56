import Foundation
@_spi(Testing) import OnboardingStore
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `HTTPTransport`'s answer parser fed hostile bytes through a socket pair: every one ends in an
/// answer within the limits or a one-line error naming what was wrong, never a trap or a hang.
@Suite struct HTTPAnswerParserTests {
    /// The answer `bytes` parse to (the peer closes after sending them), or the error message.
    static func parse(_ bytes: [UInt8], limit: Int = 1 << 20) -> Result<SyncResponse, TransportError> {
        var pair: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0 else { return .failure(TransportError("socketpair failed")) }
        defer { close(pair[0]) }
        let writer = pair[1]
        Thread {
            var sent = 0
            while sent < bytes.count {
                let count = bytes[sent...].withUnsafeBytes { send(writer, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if count <= 0 { break }
                sent += count
            }
            close(writer)
        }.start()
        return Result { () throws(TransportError) in try HTTPTransport.readAnswer(from: pair[0], timeout: .seconds(5), maximumAnswerBytes: limit) }
    }

    static func message(_ text: String, limit: Int = 1 << 20) -> String? {
        if case .failure(let error) = parse(Array(text.utf8), limit: limit) { return error.message }
        return nil
    }

    @Test func wellFormedAnswersParse() throws {
        let plain = try Self.parse(Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-A: 1\r\n\r\n{}".utf8)).get()
        #expect(plain.status == 200 && plain.body == Array("{}".utf8) && plain.headers["x-a"] == "1")
        let chunked = try Self.parse(Array("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2;ext=1\r\n{\"\r\n1\r\n}\r\n0\r\ntrailer: x\r\n\r\n".utf8))
            .get()
        #expect(chunked.body == Array("{\"}".utf8))
        let continued = try Self.parse(Array("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 409 Conflict\r\ncontent-length: 0\r\n\r\n".utf8)).get()
        #expect(continued.status == 409)
        let toEnd = try Self.parse(Array("HTTP/1.0 503 Busy\r\nretry-after: 2\r\n\r\nlater".utf8)).get()
        #expect(toEnd.status == 503 && toEnd.body == Array("later".utf8) && toEnd.retryAfterSeconds == 2)
    }

    @Test(
        arguments: [
            ("", "the server closed the connection without answering"),
            ("HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\n{}", "the server closed the connection after 2 of the 10 bytes it announced"),
            ("HTTP/1.1 200 OK\r\ncontent-length: -1\r\n\r\n", "the server answered with content-length \"-1\", not a number"),
            (
                "HTTP/1.1 200 OK\r\ncontent-length: 18446744073709551616\r\n\r\n",
                "the server answered with content-length \"18446744073709551616\", not a number"
            ),
            ("HTTP/1.1 200 OK\r\ncontent-length: 2000000\r\n\r\n", "the server announced an answer of 2000000 bytes, more than the protocol's 1048576"),
            (
                "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nffffffffffffffffffff\r\n",
                "the server sent a chunk size that is not hexadecimal (\"ffffffffffffffffffff\")"
            ),
            ("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n-5\r\n", "the server sent a chunk size that is not hexadecimal (\"-5\")"),
            ("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n200000\r\n", "the server sent an answer longer than the protocol's 1048576 bytes"),
            ("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\n{}}\r\n0\r\n\r\n", "the server sent a chunk longer than its size said"),
            ("HTTP/1.1 200 OK\r\ntransfer-encoding: gzip\r\n\r\n", "the server answered with transfer-encoding \"gzip\", which the protocol does not use"),
            ("HTTP/1.1 2000 OK\r\n\r\n", "the server sent an answer that is not HTTP/1.1"),
            ("SSH-2.0-OpenSSH_9.2\r\n", "the server sent an answer that is not HTTP/1.1"),
            ("HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", "the server sent a header line without a colon"),
            ("HTTP/1.1 200 OK\r\nx: \u{7}\u{1b}[31m\r\ncontent-length: 0\r\n\r\n", nil)
        ] as [(String, String?)])
    func hostileAnswersEndInAClearError(answer: String, expected: String?) {
        let message = Self.message(answer)
        if let expected {
            #expect(message?.hasPrefix(expected) == true, "\(answer.debugDescription): \(message ?? "parsed")")
            #expect(message?.contains("\n") == false)
        } else {
            #expect(message == nil, "\(answer.debugDescription): \(message ?? "")")
        }
    }

    @Test func headsAndLinesAreBounded() {
        let longHeader = "HTTP/1.1 200 OK\r\nx: " + String(repeating: "a", count: 70_000) + "\r\n\r\n"
        #expect(Self.message(longHeader)?.contains("longer than 65536 bytes") == true)
        let manyHeaders = "HTTP/1.1 200 OK\r\n" + String(repeating: "x: y\r\n", count: 20_000) + "\r\n"
        #expect(Self.message(manyHeaders)?.contains("headers longer than 65536 bytes") == true)
        let endlessStatus = String(repeating: "H", count: 100_000)
        #expect(Self.message(endlessStatus)?.contains("longer than 65536 bytes") == true)
        let unframed = "HTTP/1.1 200 OK\r\n\r\n" + String(repeating: "z", count: 2_000_000)
        #expect(Self.message(unframed)?.hasPrefix("the server sent an answer longer than the protocol's 1048576 bytes") == true)
    }
}
