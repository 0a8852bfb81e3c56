import Synchronization

/// What the C callbacks need, shared by every connection thread. `HTTPServer` owns it and keeps it
/// alive until after `MHD_stop_daemon` returns, which joins every thread that could call back; the
/// callbacks therefore use an unretained pointer to it.
final class ServerCore: Sendable {
    let handler: any HTTPHandler
    let limits: HTTPServer.Limits
    let accessLog: (@Sendable (HTTPAccessLogEntry) -> Void)?

    private struct Counters {
        /// Requests whose headers have arrived and whose completion callback has not yet run.
        var inFlight = 0
        /// Set by `stop()`: responses then carry `Connection: close` so keep-alive clients leave.
        var draining = false
    }

    private let counters = Mutex(Counters())

    init(handler: any HTTPHandler, limits: HTTPServer.Limits,
         accessLog: (@Sendable (HTTPAccessLogEntry) -> Void)?) {
        self.handler = handler
        self.limits = limits
        self.accessLog = accessLog
    }

    func requestStarted() { counters.withLock { $0.inFlight += 1 } }

    func requestFinished() {
        counters.withLock {
            precondition($0.inFlight > 0, "a request finished that never started: MHD called back twice")
            $0.inFlight -= 1
        }
    }

    var inFlight: Int { counters.withLock { $0.inFlight } }

    var draining: Bool {
        get { counters.withLock { $0.draining } }
    }

    func beginDraining() { counters.withLock { $0.draining = true } }
}
