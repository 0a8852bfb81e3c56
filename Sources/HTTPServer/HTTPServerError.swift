/// Why an ``HTTPServer`` could not start. Match with `catch HTTPServerError.addressUnavailable`;
/// the description says what was wrong and what to do.
public struct HTTPServerError: Error, Equatable, CustomStringConvertible {
    enum Code: Equatable {
        case invalidHost
        case alreadyStarted
        case addressUnavailable
        case invalidLimits
        case outOfFileDescriptors
        case outOfThreads
        case invalidTLS
    }

    let code: Code
    /// A one-line explanation naming the cause and the fix.
    public let message: String

    init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The host is not an IPv4 address in dotted form.
    public static let invalidHost = HTTPServerError(.invalidHost, "invalid host")
    /// `start()` was called on a server that is running or has been stopped.
    public static let alreadyStarted = HTTPServerError(.alreadyStarted, "already started")
    /// The address cannot be listened on (port in use, no permission), or libmicrohttpd cannot start.
    public static let addressUnavailable = HTTPServerError(.addressUnavailable, "address unavailable")
    /// A limit is zero, negative or too large for libmicrohttpd.
    public static let invalidLimits = HTTPServerError(.invalidLimits, "invalid limits")
    /// The process may open too few files (`RLIMIT_NOFILE`) for a working connection limit; the
    /// message says how many there are and what to raise the limit to.
    public static let outOfFileDescriptors = HTTPServerError(.outOfFileDescriptors, "out of file descriptors")
    /// The system refused to create the server's threads.
    public static let outOfThreads = HTTPServerError(.outOfThreads, "out of threads")
    /// The TLS certificate or key cannot be used (unreadable, not PEM, not a pair, expired), or
    /// a reload was asked of a server without TLS.
    public static let invalidTLS = HTTPServerError(.invalidTLS, "invalid TLS certificate")

    public var description: String { message }

    // Errors compare by kind so `catch HTTPServerError.invalidHost` matches whatever the message.
    public static func == (left: HTTPServerError, right: HTTPServerError) -> Bool { left.code == right.code }
}
