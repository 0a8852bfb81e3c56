/// One line of the access log: what was asked, what was answered, how long it took.
///
/// It deliberately holds no headers, query and no body: those carry bearer tokens and user data,
/// and an access log is copied to places secrets must not go. Its text fields are as the client
/// sent them: escape them before writing a line (``escaped(_:)``), or a client can forge lines.
///
/// ```swift
/// let server = HTTPServer(handler: handler) { entry in
///     print("\(HTTPAccessLogEntry.escaped(entry.method)) \(HTTPAccessLogEntry.escaped(entry.rawPath)) \(entry.status)")
/// }
/// ```
public struct HTTPAccessLogEntry: Sendable, Equatable {
    public var method: String
    /// The path without the query string (the query may carry secrets), percent-decoded: it may
    /// hold any character, line breaks included.
    public var path: String
    /// The path as sent, still percent-encoded, without the query string.
    public var rawPath: String
    /// The status sent, or 0 when no response was sent (the client went away or timed out first).
    public var status: Int
    /// Bytes of request body received, including any the server read and discarded.
    public var requestBodyBytes: Int
    /// Bytes of response body queued for sending.
    public var responseBodyBytes: Int
    /// From the end of the request headers to the end of the response.
    public var duration: Duration
    /// False when libmicrohttpd ended the request early (client disconnect, timeout, shutdown).
    public var completed: Bool

    public init(
        method: String, path: String, status: Int, requestBodyBytes: Int, responseBodyBytes: Int,
        duration: Duration, completed: Bool, rawPath: String? = nil
    ) {
        self.method = method
        self.path = path
        self.rawPath = rawPath ?? path
        self.status = status
        self.requestBodyBytes = requestBodyBytes
        self.responseBodyBytes = responseBodyBytes
        self.duration = duration
        self.completed = completed
    }
}
