/// A failure of ``URLSessionTransport`` that is not a `URLError` (a bad address, a non-HTTP answer).
public struct URLSessionTransportError: Error, Sendable, CustomStringConvertible {
    public let message: String
    init(_ message: String) { self.message = message }
    public var description: String { message }
}
