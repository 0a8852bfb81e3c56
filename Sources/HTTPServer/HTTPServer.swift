import CMicroHTTPD
import CTLS
import Synchronization
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A small HTTP/1.1 server on libmicrohttpd that reads each request in full (bounded by
/// ``Limits``) and hands it to a synchronous ``HTTPHandler``.
///
/// Threading — event-driven I/O, handlers on a bounded pool of their own:
/// - one **acceptor** thread owns the listening socket: it refuses connections over
///   ``Limits/connectionLimit`` or ``Limits/perAddressConnectionLimit`` with a 503, survives
///   running out of descriptors without spinning, hands every other socket to libmicrohttpd, and
///   enforces ``Limits/requestDeadlineSeconds`` (it shuts down the socket of a connection past
///   its deadline);
/// - ``Limits/pollingThreadCount`` libmicrohttpd **polling** threads (epoll on Linux) read and
///   parse every connection and write every response; they never block, so a waiting or
///   trickling client costs a socket and a little memory, not a thread;
/// - ``Limits/handlerThreadCount`` **handler** threads run ``HTTPHandler/handle(_:)``: a complete
///   request is queued (at most ``Limits/maximumQueuedRequests``, then 503) and its connection
///   suspended until the handler's answer is ready, so a handler blocked on the disk stalls no
///   other connection.
///
/// Binds to loopback by default; pass another IPv4 `host` deliberately.
///
/// ```swift
/// HTTPServer.raiseFileDescriptorLimit()
/// let server = HTTPServer(port: 0, handler: ClosureHTTPHandler { request in
///     .json(#"{"path":"\#(request.path)"}"#)
/// })
/// try server.start()
/// print("listening on 127.0.0.1:\(server.port), up to \(server.connectionLimit) connections")
/// defer { server.stop() }
/// ```
public final class HTTPServer: Sendable {
    /// The IPv4 address listened on.
    public let host: String
    /// The port asked for; 0 means any free port (read the result from ``port``).
    public let requestedPort: UInt16
    public let limits: Limits
    /// HTTPS when set (``TLSConfiguration``), else plain HTTP.
    public let tls: TLSConfiguration?
    /// What ``certificate`` answers; set at start and by each reload.
    let certificateInfo = Mutex<TLSCertificateInfo?>(nil)

    private let core: ServerCore

    private enum State {
        case idle
        /// `daemon` and `acceptor` are used only by `stop()` (and deinit), which first moves the
        /// state out of `.running` under the lock, so exactly one caller ever stops them.
        case running(daemon: OpaquePointer, acceptor: Acceptor, connectionLimit: Int)
        case stopped(port: UInt16, connectionLimit: Int)
    }

    private let state = Mutex(State.idle)

    /// - Parameters:
    ///   - accessLog: called once per finished request, on a polling thread, with no headers or
    ///     body (they carry tokens). Keep it quick: that thread serves other connections.
    ///   - warningLog: called at most every few seconds per kind, on the acceptor thread, with a
    ///     line for the operator when a resource runs out (connections refused for a limit or
    ///     for want of descriptors, 503s for a full handler queue or body budget, connections
    ///     cut at their deadline). Holds no addresses, paths or secrets.
    ///   - responseHeaders: added to every response that does not set them itself, the
    ///     handler's and the ones the server answers on its own (413, 431, 503, …): security
    ///     headers such as `X-Content-Type-Options`.
    ///   - tls: serve HTTPS with this certificate (TLS 1.2 and 1.3 only).
    public init(
        host: String = "127.0.0.1", port: UInt16 = 0, limits: Limits = Limits(),
        handler: any HTTPHandler, accessLog: (@Sendable (HTTPAccessLogEntry) -> Void)? = nil,
        warningLog: (@Sendable (String) -> Void)? = nil, responseHeaders: HTTPHeaders = [:],
        tls: TLSConfiguration? = nil
    ) {
        self.host = host
        self.requestedPort = port
        self.limits = limits
        self.tls = tls
        self.core = ServerCore(
            handler: handler, limits: limits, accessLog: accessLog, warningLog: warningLog,
            responseHeaders: responseHeaders)
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
            case .running(_, let acceptor, _): acceptor.port
            case .stopped(let port, _): port
            }
        }
    }

    /// The connection limit in force: ``Limits/connectionLimit``, or less when the process may
    /// not open that many descriptors (see ``start()``).
    public var connectionLimit: Int {
        state.withLock { state in
            switch state {
            case .idle: limits.connectionLimit
            case .running(_, _, let limit), .stopped(_, let limit): limit
            }
        }
    }

    /// Requests whose headers arrived and whose completion callback has not run yet — each holds
    /// a retained request context, so 0 after `stop()` means none leaked. For tests.
    var inFlightRequestCount: Int { core.inFlight }

    /// Connections accepted and not yet closed (the connection table). For tests.
    var openConnectionCount: Int { core.connections.count }

    /// Open connections from one IPv4 address (dotted form). For tests.
    func openConnectionCount(from address: String) -> Int {
        var parsed = in_addr()
        guard inet_pton(AF_INET, address, &parsed) == 1 else { return 0 }
        return core.connections.count(from: parsed.s_addr)
    }

    /// Whether ``start()`` succeeded and ``stop()`` has not been called.
    var isRunning: Bool {
        state.withLock { state in
            if case .running = state { return true }
            return false
        }
    }

    /// Requests waiting for a handler thread. For tests.
    var queuedRequestCount: Int { core.pool.queuedCount }

    /// Connections open now and complete requests waiting for a handler thread: for metrics.
    public var load: (openConnections: Int, queuedRequests: Int) { (core.connections.count, core.pool.queuedCount) }

    /// Requests a handler took and has not answered yet (long polls). For tests.
    var unansweredRequestCount: Int { core.unansweredCount }

    /// Request-body bytes held right now. For tests.
    var bufferedBodyByteCount: Int { core.bufferedBodyByteCount }

    /// Starts listening. A server starts once; make a new one to listen again.
    ///
    /// Every connection is a file descriptor, so the connection limit is checked against the
    /// process's `RLIMIT_NOFILE` (call ``raiseFileDescriptorLimit()`` first): what is left after
    /// the descriptors already open, ``Limits/reservedFileDescriptors`` and the server's own
    /// lowers the limit (see ``connectionLimit``); when that is below
    /// ``Limits/minimumConnectionLimit`` the server refuses to start
    /// (``HTTPServerError/outOfFileDescriptors``, saying what to raise the limit to).
    public func start() throws(HTTPServerError) {
        try state.withLock { (state: inout State) throws(HTTPServerError) in
            guard case .idle = state else {
                throw HTTPServerError(.alreadyStarted, "the server on \(host) has already been started; create a new HTTPServer to listen again")
            }
            if let problem = limits.problem() {
                throw HTTPServerError(.invalidLimits, "invalid HTTPServer.Limits: \(problem)")
            }
            var address = in_addr()
            guard inet_pton(AF_INET, host, &address) == 1 else {
                throw HTTPServerError(.invalidHost, "'\(host)' is not an IPv4 address such as 127.0.0.1; pass a numeric address")
            }
            let budget = DescriptorBudget(softLimit: Self.fileDescriptorLimit(), inUse: Self.fileDescriptorsInUse(), limits: limits)
            let connectionLimit = try budget.connectionLimit(for: limits)
            core.warnings.configure(.init(connectionLimit: connectionLimit, descriptorLimit: budget.softLimit))

            // The certificate is checked before anything listens: a bad file fails the start.
            let credentials = try tls.map { configuration throws(HTTPServerError) in try TLSCredentials(configuration) }
            let acceptor = try Acceptor.listen(on: address, host: host, port: requestedPort, limits: limits, secure: tls != nil)
            if let credentials {
                do throws(HTTPServerError) { try credentials.install(port: acceptor.port) } catch {
                    acceptor.close()
                    throw error
                }
                certificateInfo.withLock { $0 = credentials.info }
            }
            var flags =
                MHD_USE_INTERNAL_POLLING_THREAD.rawValue
                | MHD_USE_NO_LISTEN_SOCKET.rawValue // the acceptor accepts (see Acceptor)
                | MHD_ALLOW_SUSPEND_RESUME.rawValue // handlers run on the pool; includes MHD_USE_ITC
                | MHD_USE_AUTO.rawValue // epoll on Linux, poll elsewhere: no FD_SETSIZE ceiling
            if tls != nil { flags |= MHD_USE_TLS.rawValue }
            let tlsPort = tls == nil ? nil : acceptor.port
            /// Gives back the certificates of this port, when a start fails after installing them.
            func releaseTLS() { if let tlsPort { onboard_tls_release(tlsPort) } }
            let corePointer = Unmanaged.passUnretained(core).toOpaque()
            // MHD's own limit is only a backstop (the acceptor enforces the real one) and applies
            // per polling thread, which MHD picks by descriptor number: each must hold them all.
            let backstop = UInt32(clamping: connectionLimit * limits.pollingThreadCount)
            guard
                let daemon = onboard_mhd_start_daemon(
                    flags,
                    onboardAccessHandler, corePointer,
                    onboardRequestCompleted, corePointer,
                    onboardConnectionNotified, corePointer,
                    UInt32(limits.pollingThreadCount), backstop,
                    limits.connectionMemoryLimitBytes, UInt32(limits.connectionTimeoutSeconds),
                    tls == nil ? nil : onboard_tls_certificate_callback(), onboard_tls_priorities)
            else {
                releaseTLS()
                acceptor.close()
                throw HTTPServerError(
                    .addressUnavailable,
                    "libmicrohttpd could not start its \(limits.pollingThreadCount) polling threads on \(host):\(requestedPort) (out of threads or memory); lower pollingThreadCount or free resources"
                )
            }
            // The threads hold the core, not the server, so dropping the server still runs deinit
            // (and stop(), which joins them).
            let core = self.core
            do throws(ServerThread.StartError) {
                try core.pool.start { job, refusing in runHandlerJob(core, job, refusing: refusing) }
            } catch {
                MHD_stop_daemon(daemon)
                releaseTLS()
                acceptor.close()
                throw HTTPServerError(
                    .outOfThreads,
                    "could not start \(limits.handlerThreadCount) handler threads (\(error.message)); lower handlerThreadCount or raise the process's thread limit"
                )
            }
            do throws(ServerThread.StartError) {
                try acceptor.start(core: core, daemon: Acceptor.Daemon(pointer: daemon), connectionLimit: connectionLimit)
            } catch {
                core.pool.stop(refusingQueued: true)
                MHD_stop_daemon(daemon)
                releaseTLS()
                acceptor.close()
                throw HTTPServerError(.outOfThreads, "could not start the accept thread (\(error.message)); raise the process's thread limit")
            }
            state = .running(daemon: daemon, acceptor: acceptor, connectionLimit: connectionLimit)
        }
    }

    /// Stops gracefully and blocks until done: new connections are refused at once, requests
    /// already being handled get up to ``Limits/stopDrainTimeout`` to finish (requests still
    /// queued after that get 503 without reaching the handler, and so do requests a handler left
    /// for a later answer through its ``HTTPResponder``, once nothing else runs), the answers get up to
    /// ``Limits/stopAnswerFlushTimeout`` to go out, then every connection is closed and every
    /// server thread joined. Does nothing if not running.
    ///
    /// Never call it from a handler: it waits for that very handler and then joins its thread.
    public func stop() {
        let running: (daemon: OpaquePointer, acceptor: Acceptor)? = state.withLock { state in
            guard case .running(let daemon, let acceptor, let connectionLimit) = state else { return nil }
            state = .stopped(port: acceptor.port, connectionLimit: connectionLimit)
            return (daemon, acceptor)
        }
        guard let running else { return }

        core.beginDraining()
        running.acceptor.stop()

        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: limits.stopDrainTimeout)
        // Requests a handler left for later (long polls) wait for something a stopping server
        // may never see: the drain ends once only they are left.
        while core.inFlight > core.unansweredCount, clock.now < deadline {
            usleep(1_000)
        }
        // Every suspended connection must be resumed before MHD_stop_daemon (MHD's rule): the
        // workers finish or refuse what is left and resume each one, then are joined.
        core.pool.stop(refusingQueued: true)
        // Requests a handler took and left for later (long polls) are answered now: MHD may not
        // stop with a connection still suspended.
        core.answerUnanswered(with: .unavailable("the server is shutting down; retry shortly"))
        while core.unansweredCount > 0, clock.now < deadline.advanced(by: Limits.stopAnswerFlushTimeout) {
            usleep(1_000)
        }
        // A resume only asks the polling thread to send the answer; give it the moment it needs,
        // or MHD_stop_daemon would close those connections with their answers unsent.
        let flushDeadline = clock.now.advanced(by: Limits.stopAnswerFlushTimeout)
        while core.inFlight > 0, clock.now < flushDeadline {
            usleep(1_000)
        }
        MHD_stop_daemon(running.daemon)
        // Every handshake thread is joined: the port's certificates may go.
        if tls != nil { onboard_tls_release(running.acceptor.port) }
        running.acceptor.close()
    }
}
