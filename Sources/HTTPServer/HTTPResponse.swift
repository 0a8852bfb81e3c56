import Foundation

/// What an ``HTTPHandler`` answers. `Content-Length` is computed by the server; do not set it (nor
/// `Transfer-Encoding`), or libmicrohttpd refuses the header and the client gets a 500. A header
/// with an empty value is left out (libmicrohttpd cannot send one).
///
/// ```swift
/// return .json(status: 201, #"{"appended":3}"#)
/// return .error(status: 404, "no route for GET /nope")
/// ```
public struct HTTPResponse: Sendable, Equatable {
    /// The status code; anything outside 200...599 is replaced by a 500 when sent.
    public var status: Int
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// A body sent from a file instead of ``body`` (which is then ignored): for answers too large
    /// to hold in memory.
    public var bodyFile: HTTPBodyFile?

    public init(status: Int, headers: HTTPHeaders = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public init(status: Int, headers: HTTPHeaders = [:], bodyFile: HTTPBodyFile) {
        self.status = status
        self.headers = headers
        self.body = []
        self.bodyFile = bodyFile
    }

    /// A response with a JSON body (already encoded) and `Content-Type: application/json`.
    public static func json(status: Int = 200, _ body: [UInt8]) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "application/json"], body: body)
    }

    /// A response with a JSON body given as text and `Content-Type: application/json`.
    public static func json(status: Int = 200, _ text: String) -> HTTPResponse {
        json(status: status, Array(text.utf8))
    }

    /// A response whose body is `value` encoded as JSON with sorted keys.
    public static func json<Value: Encodable>(status: Int = 200, encoding value: Value) throws -> HTTPResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return json(status: status, Array(try encoder.encode(value)))
    }

    /// A plain-text response (`text/plain; charset=utf-8`).
    public static func text(status: Int = 200, _ text: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "text/plain; charset=utf-8"], body: Array(text.utf8))
    }

    /// The server's uniform error shape, `{"error": {"code", "message"}}` (the sync protocol's), so
    /// every client parses one format whichever layer refused. The message should say what was
    /// wrong and what to do; never put secrets in it.
    public static func error(status: Int, _ message: String) -> HTTPResponse {
        let body =
            (try? JSONEncoder().encode(["error": ["code": errorCode(status), "message": message]])).map { Array($0) }
            ?? Array(#"{"error":{"code":"internal","message":"internal error"}}"#.utf8)
        return json(status: status, body)
    }

    /// 503 in the uniform error shape with `Retry-After`: a resource of the HTTP layer ran out (a
    /// connection place, the handler queue, body memory); the client waits and sends again.
    static func unavailable(_ message: String) -> HTTPResponse {
        var response = error(status: 503, message)
        response.headers.add(name: "Retry-After", value: String(HTTPServer.Limits.busyRetryAfterSeconds))
        return response
    }

    /// The machine code of an error the HTTP layer answers itself.
    static func errorCode(_ status: Int) -> String {
        switch status {
        case 400: "malformed"
        case 413: "too_large"
        case 431: "too_many_headers"
        case 500: "internal"
        case 503: "unavailable"
        default: "http_\(status)"
        }
    }
}
