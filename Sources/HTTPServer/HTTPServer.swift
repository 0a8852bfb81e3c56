import CMicroHTTPD
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A small HTTP/1.1 server on libmicrohttpd that reads each request in full (bounded by
/// ``Limits``) and hands it to a synchronous ``HTTPHandler``.
///
/// Threading: one thread per connection (`MHD_USE_THREAD_PER_CONNECTION` with an internal polling
/// thread for `accept`). Handlers are synchronous and may block on disk or locks; with a thread
/// pool, one blocked handler would stall every connection multiplexed on its thread, whereas here
/// it stalls only its own. The cost, a thread per connection, is bounded by
/// ``Limits/connectionLimit``.
///
/// Binds to loopback by default; pass another IPv4 `host` deliberately.
///
/// ```swift
/// let server = HTTPServer(port: 0, handler: ClosureHTTPHandler { request in
///     .json(#"{"path":"\#(request.path)"}"#)
/// })
/// try server.start()
/// print("listening on 127.0.0.1:\(server.port)")
/// defer { server.stop() }
/// ```
public final class HTTPServer: Sendable {
    /// The IPv4 address listened on.
    public let host: String
    /// The port asked for; 0 means any free port (read the result from ``port``).
    public let requestedPort: UInt16
    public let limits: Limits

    private let core: ServerCore

    private enum State {
        case idle
        /// `daemon` is used only by `stop()` (and deinit), which first moves the state out of
        /// `.running` under the lock, so exactly one caller ever stops a daemon.
        case running(daemon: OpaquePointer, port: UInt16)
        case stopped(port: UInt16)
    }

    private let state = Mutex(State.idle)

    /// - Parameters:
    ///   - accessLog: called once per finished request, on the connection's thread, with no
    ///     headers or body (they carry tokens). Keep it quick; it delays the next request on
    ///     that connection.
    public init(
        host: String = "127.0.0.1", port: UInt16 = 0, limits: Limits = Limits(),
        handler: any HTTPHandler, accessLog: (@Sendable (HTTPAccessLogEntry) -> Void)? = nil
    ) {
        self.host = host
        self.requestedPort = port
        self.limits = limits
        self.core = ServerCore(handler: handler, limits: limits, accessLog: accessLog)
    }

    deinit {
        stop()
    }

    /// The port being listened on once started (the real one when ``requestedPort`` was 0), the
    /// last one after ``stop()``, and ``requestedPort`` before ``start()``.
    public var port: UInt16 {
        state.withLock { state in
            switch state {
            case .idle: requestedPort
            case .running(_, let port), .stopped(let port): port
            }
        }
    }

    /// Requests whose headers arrived and whose completion callback has not run yet — each holds
    /// a retained request context, so 0 after `stop()` means none leaked. For tests.
    var inFlightRequestCount: Int { core.inFlight }

    /// Starts listening. A server starts once; make a new one to listen again.
    public func start() throws(HTTPServerError) {
        try state.withLock { (state: inout State) throws(HTTPServerError) in
            guard case .idle = state else {
                throw HTTPServerError(.alreadyStarted, "the server on \(host) has already been started; create a new HTTPServer to listen again")
            }
            if let problem = limits.problem() {
                throw HTTPServerError(.invalidLimits, "invalid HTTPServer.Limits: \(problem)")
            }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = requestedPort.bigEndian
            guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
                throw HTTPServerError(.invalidHost, "'\(host)' is not an IPv4 address such as 127.0.0.1; pass a numeric address")
            }
            let flags = MHD_USE_INTERNAL_POLLING_THREAD.rawValue
                | MHD_USE_THREAD_PER_CONNECTION.rawValue
                | MHD_USE_ITC.rawValue // required by MHD_quiesce_daemon in stop()
                | MHD_USE_AUTO.rawValue // poll() rather than select(), so descriptors above 1023 work
            let corePointer = Unmanaged.passUnretained(core).toOpaque()
            let daemon = withUnsafePointer(to: &address) { ipv4 in
                ipv4.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                    onboard_mhd_start_daemon(
                        flags, requestedPort, generic,
                        onboardAccessHandler, corePointer,
                        onboardRequestCompleted, corePointer,
                        UInt32(limits.connectionLimit), limits.connectionMemoryLimitBytes,
                        UInt32(limits.connectionTimeoutSeconds))
                }
            }
            guard let daemon else {
                throw HTTPServerError(.addressUnavailable, "could not listen on \(host):\(requestedPort); the port may be in use or need privileges — choose another port, or 0 for any free one")
            }
            let bound = onboard_mhd_bound_port(daemon)
            guard bound != 0 else {
                MHD_stop_daemon(daemon)
                throw HTTPServerError(.addressUnavailable, "listening on \(host) but libmicrohttpd cannot report the port; upgrade libmicrohttpd to 0.9.71 or later")
            }
            state = .running(daemon: daemon, port: bound)
        }
    }

    /// Stops gracefully and blocks until done: new connections are refused at once, requests
    /// already being handled get up to ``Limits/stopDrainTimeout`` to finish, then every
    /// connection is closed and every server thread joined. Does nothing if not running.
    ///
    /// Never call it from a handler: it waits for that very handler and then joins its thread.
    public func stop() {
        let daemon: OpaquePointer? = state.withLock { state in
            guard case .running(let daemon, let port) = state else { return nil }
            state = .stopped(port: port)
            return daemon
        }
        guard let daemon else { return }

        core.beginDraining()
        // Quiesce hands the listening socket to us. MHD's thread may still hold it for a moment, so
        // it is not closed until MHD_stop_daemon has joined that thread; shutting it down now makes
        // the kernel refuse new connections instead of queueing them in the backlog.
        let listener = MHD_quiesce_daemon(daemon)
        if listener >= 0 {
            // Failure only means connections queue (and are then reset) instead of being refused.
            _ = shutdown(listener, Int32(SHUT_RDWR))
        }

        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: limits.stopDrainTimeout)
        while core.inFlight > 0, clock.now < deadline {
            usleep(1_000)
        }
        MHD_stop_daemon(daemon)
        if listener >= 0 {
            _ = close(listener) // nothing useful to do if it fails: the descriptor is gone either way
        }
    }
}
