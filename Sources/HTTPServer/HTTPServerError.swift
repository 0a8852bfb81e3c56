/// Why an ``HTTPServer`` could not start. Match with `catch HTTPServerError.addressUnavailable`;
/// the description says what was wrong and what to do.
public struct HTTPServerError: Error, Equatable, CustomStringConvertible {
    enum Code: Equatable {
        case invalidHost
        case alreadyStarted
        case addressUnavailable
        case invalidLimits
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
    /// libmicrohttpd could not listen (port in use, no permission, out of threads or descriptors).
    public static let addressUnavailable = HTTPServerError(.addressUnavailable, "address unavailable")
    /// A limit is zero, negative or too large for libmicrohttpd.
    public static let invalidLimits = HTTPServerError(.invalidLimits, "invalid limits")

    public var description: String { message }

    // Errors compare by kind so `catch HTTPServerError.invalidHost` matches whatever the message.
    public static func == (left: HTTPServerError, right: HTTPServerError) -> Bool { left.code == right.code }
}
