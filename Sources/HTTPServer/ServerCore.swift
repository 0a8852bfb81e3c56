import Synchronization

/// What the C callbacks, the acceptor and the handler workers share. `HTTPServer` owns it and
/// keeps it alive until after `MHD_stop_daemon` returns, which joins every thread that could call
/// back; the callbacks therefore use an unretained pointer to it.
final class ServerCore: Sendable {
    let handler: any HTTPHandler
    let limits: HTTPServer.Limits
    let accessLog: (@Sendable (HTTPAccessLogEntry) -> Void)?
    /// Added to every response that does not set them (``HTTPServer/init(host:port:limits:handler:accessLog:warningLog:responseHeaders:)``).
    let responseHeaders: HTTPHeaders
    let warnings: ServerWarnings
    let connections: ConnectionTable
    let pool: HandlerPool

    private struct Counters {
        /// Requests whose headers have arrived and whose completion callback has not yet run.
        var inFlight = 0
        /// Set by `stop()`: responses then carry `Connection: close` so keep-alive clients leave.
        var draining = false
    }

    private let counters = Mutex(Counters())
    /// Responders whose request a handler has taken and not answered yet (``HTTPResponder``).
    private let unanswered = Mutex<[ObjectIdentifier: HTTPResponder]>([:])
    /// Request-body bytes held across all connections (see ``HTTPServer/Limits/maximumBufferedBodyBytes``).
    private let bufferedBodyBytes = Atomic<Int>(0)

    init(
        handler: any HTTPHandler, limits: HTTPServer.Limits,
        accessLog: (@Sendable (HTTPAccessLogEntry) -> Void)?, warningLog: (@Sendable (String) -> Void)?,
        responseHeaders: HTTPHeaders = [:]
    ) {
        self.handler = handler
        self.limits = limits
        self.accessLog = accessLog
        self.responseHeaders = responseHeaders
        warnings = ServerWarnings(limits: limits, sink: warningLog)
        connections = ConnectionTable(requestDeadline: .seconds(limits.requestDeadlineSeconds))
        pool = HandlerPool(threadCount: limits.handlerThreadCount, capacity: limits.maximumQueuedRequests)
    }

    func requestStarted() { counters.withLock { $0.inFlight += 1 } }

    func requestFinished() {
        counters.withLock {
            precondition($0.inFlight > 0, "a request finished that never started: MHD called back twice")
            $0.inFlight -= 1
        }
    }

    var inFlight: Int { counters.withLock { $0.inFlight } }

    var draining: Bool { counters.withLock { $0.draining } }

    func beginDraining() { counters.withLock { $0.draining = true } }

    /// Whether `byteCount` more body bytes fit in the budget right now (nothing is reserved).
    func bodyBudgetAllows(_ byteCount: Int) -> Bool {
        bufferedBodyBytes.load(ordering: .relaxed) + byteCount <= limits.maximumBufferedBodyBytes
    }

    /// Counts `byteCount` body bytes of `context` against the budget; false (and nothing counted)
    /// when they do not fit.
    func chargeBody(_ byteCount: Int, to context: RequestContext) -> Bool {
        let after = bufferedBodyBytes.wrappingAdd(byteCount, ordering: .relaxed).newValue
        guard after <= limits.maximumBufferedBodyBytes else {
            bufferedBodyBytes.wrappingSubtract(byteCount, ordering: .relaxed)
            return false
        }
        context.chargedBodyBytes += byteCount
        return true
    }

    /// Gives back whatever `context` holds of the budget.
    func releaseBody(of context: RequestContext) {
        guard context.chargedBodyBytes > 0 else { return }
        bufferedBodyBytes.wrappingSubtract(context.chargedBodyBytes, ordering: .relaxed)
        context.chargedBodyBytes = 0
    }

    var bufferedBodyByteCount: Int { bufferedBodyBytes.load(ordering: .relaxed) }

    /// A responder for `job`, counted as unanswered until it answers.
    func makeResponder(for job: HandlerPool.Job) -> HTTPResponder {
        let responder = HTTPResponder(core: self, job: job)
        unanswered.withLock { $0[responder.identifier] = responder }
        return responder
    }

    func deferredAnswered(_ responder: HTTPResponder) {
        _ = unanswered.withLock { $0.removeValue(forKey: responder.identifier) }
    }

    /// Requests a handler took and has not answered yet (long polls). For `stop()` and tests.
    var unansweredCount: Int { unanswered.withLock { $0.count } }

    /// Answers `response` to every request still unanswered (each responder sends at most once, so
    /// one answering at the same moment elsewhere wins and this one does nothing).
    func answerUnanswered(with response: @autoclosure () -> HTTPResponse) {
        for responder in unanswered.withLock({ Array($0.values) }) { responder.respond(response()) }
    }
}
