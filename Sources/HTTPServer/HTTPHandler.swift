/// Answers requests for an ``HTTPServer``.
///
/// Every conformer must satisfy:
/// - `handle` is **synchronous** and runs on one of the server's handler threads
///   (``HTTPServer/Limits/handlerThreadCount`` of them, never the Swift cooperative pool nor
///   libmicrohttpd's polling threads), possibly on all of them at once. It may block — on a lock,
///   a disk write, an fsync — without stalling any connection, but every blocked call holds a
///   handler thread, and when all are held requests queue (then get 503), so keep it bounded. Do
///   not `await` into an actor from here by blocking on a semaphore while that actor could be
///   waiting on this thread.
/// - It never traps on bad input: malformed paths, methods, headers or bodies get a 4xx response.
/// - It returns a response for every request; status codes and bodies are its business (the
///   server answers 400 / 413 / 431 / 503 itself, before the handler runs, see ``HTTPServer``).
///
/// ```swift
/// struct Hello: HTTPHandler {
///     func handle(_ request: HTTPRequest) -> HTTPResponse { .text("hello \(request.path)") }
/// }
/// ```
public protocol HTTPHandler: Sendable {
    func handle(_ request: HTTPRequest) -> HTTPResponse
    /// The server calls this one: answer through `responder`, now or later from any thread,
    /// exactly once (a request never answered holds its connection until ``HTTPServer/stop()``
    /// answers it 503). Returning without answering frees the handler thread: for waits that
    /// would otherwise hold it (long polls). By default, answers ``handle(_:)``'s response.
    func handle(_ request: HTTPRequest, responder: HTTPResponder)
}

extension HTTPHandler {
    public func handle(_ request: HTTPRequest, responder: HTTPResponder) { responder.respond(handle(request)) }
}

/// An ``HTTPHandler`` made from a closure, for small servers and tests.
///
/// ```swift
/// let server = HTTPServer(handler: ClosureHTTPHandler { _ in .text("ok") })
/// ```
public struct ClosureHTTPHandler: HTTPHandler {
    private let body: @Sendable (HTTPRequest) -> HTTPResponse

    public init(_ body: @escaping @Sendable (HTTPRequest) -> HTTPResponse) { self.body = body }

    public func handle(_ request: HTTPRequest) -> HTTPResponse { body(request) }
}
