/// One complete HTTP request as the server hands it to an ``HTTPHandler``: the body has already
/// been read in full (and is at most ``HTTPServer/Limits/maximumRequestBodyBytes`` long).
///
/// ```swift
/// if request.method == "POST", request.path == "/v1/events",
///    request.headers["Content-Type"] == "application/json" { … request.body … }
/// ```
public struct HTTPRequest: Sendable, Equatable {
    /// The method exactly as sent (`GET`, `POST`, …); validating it is the handler's business.
    public var method: String
    /// The path without the query string, percent-decoded (as sent when it is not valid
    /// percent-encoded UTF-8).
    public var path: String
    /// The path exactly as sent, still percent-encoded: what a router splits into segments, so
    /// that an encoded `/` (`%2F`) stays inside its segment.
    public var rawPath: String
    /// The query arguments, percent-decoded. A repeated name keeps its first value; a name with
    /// no `=` maps to the empty string.
    public var query: [String: String]
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// The peer's IP address as text (`127.0.0.1`, `::1`), or `"unknown"`.
    public var remoteAddress: String

    public init(
        method: String, path: String, rawPath: String? = nil, query: [String: String] = [:], headers: HTTPHeaders = [:],
        body: [UInt8] = [], remoteAddress: String = "unknown"
    ) {
        self.method = method
        self.path = path
        self.rawPath = rawPath ?? path
        self.query = query
        self.headers = headers
        self.body = body
        self.remoteAddress = remoteAddress
    }
}
