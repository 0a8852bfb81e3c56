import CMicroHTTPD
import Synchronization
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The server's listening socket and the thread that accepts on it.
///
/// libmicrohttpd is started without a listening socket of its own: on `accept()` failing with
/// EMFILE while it holds no connection it busy-waits (it says so itself: "Will try busy waiting
/// for system resources to become magically available"), which is the 100 % CPU of a server
/// started with too few descriptors. Accepting here instead, the server decides:
/// - over the total or per-address limit → a 503 written straight to the new socket, then close;
/// - out of descriptors → the spare descriptor is given up so pending clients can be accepted
///   and told 503, then a pause before trying again, never a spin;
/// - otherwise the socket goes to MHD (`MHD_add_connection`) with an entry in the connection table.
/// The same thread runs the reaper (deadlines) and flushes the warnings on each tick.
final class Acceptor: Sendable {
    /// The daemon pointer, shared with the acceptor thread; MHD_add_connection is thread-safe.
    struct Daemon: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    /// 1,024: connections the kernel completes while the acceptor is busy; a burst beyond it is
    /// refused by the kernel (clients retry), not queued without bound.
    static let listenBacklog: Int32 = 1024
    /// 250 ms: how often deadlines are checked, so one is enforced within a quarter second; a scan
    /// of 10,000 table entries takes well under a millisecond.
    static let tickInterval = Duration.milliseconds(250)
    /// 256: sockets accepted per wake-up before the reaper and `stop()` get a turn, so a flood of
    /// connections cannot starve them.
    static let maximumAcceptsPerWake = 256
    /// 100 ms: the pause after accept() fails for want of descriptors or memory. Long enough that a
    /// starved process does not spin, short enough to notice when resources come back.
    static let exhaustedPause = Duration.milliseconds(100)
    /// 8 KiB: what is read and dropped from a refused socket before closing it, so the close sends
    /// FIN (the client reads the 503) rather than RST (the client may lose it).
    static let refusalDrainBytes = 8 << 10

    let listener: Int32
    let port: UInt16
    private let stopping = Atomic<Bool>(false)
    private let thread = Mutex<ServerThread?>(nil)
    private let refusals: Refusals
    /// HTTPS: a refused client expects a TLS handshake, not a plain 503, so it gets only the close.
    private let secure: Bool

    private init(listener: Int32, port: UInt16, limits: HTTPServer.Limits, secure: Bool) {
        self.listener = listener
        self.port = port
        self.secure = secure
        refusals = Refusals(limits: limits)
    }

    /// Binds and listens on `address:port` (0: any free port).
    static func listen(
        on address: in_addr, host: String, port: UInt16, limits: HTTPServer.Limits,
        secure: Bool = false
    ) throws(HTTPServerError) -> Acceptor {
        let listener = makeSocket()
        guard listener >= 0 else {
            throw HTTPServerError(.addressUnavailable, "could not create a socket to listen on \(host):\(port): \(String(cString: strerror(errno)))")
        }
        var reuse: Int32 = 1
        _ = setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var socketAddress = sockaddr_in()
        socketAddress.sin_family = sa_family_t(AF_INET)
        socketAddress.sin_port = port.bigEndian
        socketAddress.sin_addr = address
        let bound = withUnsafePointer(to: &socketAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listenOn(listener, listenBacklog) == 0 else {
            let reason = String(cString: strerror(errno))
            _ = closeDescriptor(listener)
            throw HTTPServerError(
                .addressUnavailable,
                "could not listen on \(host):\(port) (\(reason)); the port may be in use or need privileges — choose another port, or 0 for any free one")
        }
        _ = fcntl(listener, F_SETFL, fcntl(listener, F_GETFL) | O_NONBLOCK)
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        return Acceptor(listener: listener, port: UInt16(bigEndian: actual.sin_port), limits: limits, secure: secure)
    }

    /// Starts the accept thread.
    func start(core: ServerCore, daemon: Daemon, connectionLimit: Int) throws(ServerThread.StartError) {
        let started = ServerThread.start(name: "onboard-accept") { [self] in
            run(core: core, daemon: daemon, connectionLimit: connectionLimit)
        }
        switch started {
        case .success(let running): thread.withLock { $0 = running }
        case .failure(let error): throw error
        }
    }

    /// Stops accepting at once: the listener is shut down, so the kernel refuses new connections
    /// instead of queueing them, and the thread is joined. The listener stays open (its number
    /// reserved) until ``close()``.
    func stop() {
        stopping.store(true, ordering: .sequentiallyConsistent)
        // Wakes the thread's poll; failure only means it notices at its next tick.
        _ = shutdown(listener, Int32(SHUT_RDWR))
        let running = thread.withLock { thread in
            defer { thread = nil }
            return thread
        }
        running?.join()
    }

    func close() {
        _ = closeDescriptor(listener) // nothing useful to do if it fails: the descriptor is gone either way
    }

    // MARK: The accept thread

    private enum BatchOutcome {
        case drained, more, exhausted
    }

    private func run(core: ServerCore, daemon: Daemon, connectionLimit: Int) {
        let clock = ContinuousClock()
        // Given up when descriptors run out, so one pending client can be accepted and told 503.
        var spare = openSpare()
        var nextTick = clock.now + Self.tickInterval
        var pausedUntil: ContinuousClock.Instant?
        while !stopping.load(ordering: .sequentiallyConsistent) {
            let now = clock.now
            let wakeAt = min(nextTick, pausedUntil ?? nextTick)
            let waitMilliseconds = max(0, Int32(((wakeAt - now) / .milliseconds(1)).rounded(.up)))
            // While paused the listener is left out (a negative descriptor is ignored by poll).
            var watched = pollfd(fd: pausedUntil == nil ? listener : -1, events: Int16(POLLIN), revents: 0)
            _ = poll(&watched, 1, waitMilliseconds)
            if stopping.load(ordering: .sequentiallyConsistent) { break }

            let woke = clock.now
            if woke >= nextTick {
                let reaped = core.connections.reap(now: woke)
                core.warnings.note(.deadline, count: reaped.overdue)
                core.warnings.flush(now: woke)
                if spare < 0 { spare = openSpare() }
                nextTick = woke + Self.tickInterval
            }
            if let until = pausedUntil {
                if woke < until { continue }
                pausedUntil = nil
            }
            if watched.revents == 0 && watched.fd >= 0 { continue }
            if acceptBatch(core: core, daemon: daemon, connectionLimit: connectionLimit, spare: &spare) == .exhausted {
                pausedUntil = clock.now + Self.exhaustedPause
            }
        }
        if spare >= 0 { _ = closeDescriptor(spare) }
    }

    private func acceptBatch(core: ServerCore, daemon: Daemon, connectionLimit: Int, spare: inout Int32) -> BatchOutcome {
        for _ in 0..<Self.maximumAcceptsPerWake {
            var peer = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let socket = acceptOne(&peer, &length)
            guard socket >= 0 else {
                let error = errno
                if error == EAGAIN || error == EWOULDBLOCK { return .drained }
                if error == EINTR || error == ECONNABORTED || error == EPROTO { continue }
                if error == EMFILE || error == ENFILE {
                    refuseWithSpare(core: core, spare: &spare)
                } else if error == ENOBUFS || error == ENOMEM {
                    core.warnings.note(.outOfSocketMemory)
                }
                // Anything else (the listener shut down by stop()) also pauses: never a spin.
                return .exhausted
            }
            admit(socket, peer: peer, length: length, core: core, daemon: daemon, connectionLimit: connectionLimit)
        }
        return .more
    }

    private func admit(_ socket: Int32, peer: sockaddr_in, length: socklen_t, core: ServerCore, daemon: Daemon, connectionLimit: Int) {
        let perAddressLimit =
            core.limits.addressesWithoutPerAddressLimit.contains(peer.sin_addr.s_addr)
            ? connectionLimit : core.limits.perAddressConnectionLimit
        switch core.connections.admit(socket, address: peer.sin_addr.s_addr, connectionLimit: connectionLimit, perAddressLimit: perAddressLimit) {
        case .admitted(let serial):
            var peer = peer
            let added = withUnsafePointer(to: &peer) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { MHD_add_connection(daemon.pointer, socket, $0, length) }
            }
            // MHD closed the socket (it always does on failure): the entry must go too.
            if added != .YES { core.connections.abandon(socket, serial: serial) }
        case .overConnectionLimit:
            core.warnings.note(.connectionLimit)
            refuse(socket, refusals.connectionLimit)
        case .overAddressLimit:
            core.warnings.note(.addressLimit)
            refuse(socket, refusals.addressLimit)
        }
    }

    /// Out of descriptors: frees the spare, then accepts and refuses what is pending (each refused
    /// socket is closed before the next accept, so the one freed number is enough), and takes
    /// the spare back.
    private func refuseWithSpare(core: ServerCore, spare: inout Int32) {
        if spare >= 0 {
            _ = closeDescriptor(spare)
            spare = -1
        }
        var refused = 0
        for _ in 0..<Self.maximumAcceptsPerWake {
            var peer = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let socket = acceptOne(&peer, &length)
            guard socket >= 0 else { break }
            refuse(socket, refusals.outOfDescriptors)
            refused += 1
        }
        // Another thread may take the freed number first; then nobody could be told, and the
        // count says the refusals happened without a 503.
        core.warnings.note(.outOfDescriptors, count: max(refused, 1))
        spare = openSpare()
    }

    /// Writes a canned 503 to a socket the server will not serve, and closes it.
    private func refuse(_ socket: Int32, _ response: [UInt8]) {
        // A new socket's send buffer takes a few hundred bytes at once; if not, the client goes
        // without the explanation, which is no worse than the close it gets anyway.
        if !secure { _ = response.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Self.sendFlags) } }
        _ = shutdown(socket, Int32(SHUT_WR))
        var scratch = [UInt8](repeating: 0, count: 2048)
        var drained = 0
        while drained < Self.refusalDrainBytes {
            let count = scratch.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count <= 0 { break }
            drained += count
        }
        _ = closeDescriptor(socket)
    }

    private func acceptOne(_ peer: inout sockaddr_in, _ length: inout socklen_t) -> Int32 {
        withUnsafeMutablePointer(to: &peer) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                #if os(Linux)
                    return onboard_accept_nonblocking(listener, generic, &length)
                #else
                    let socket = accept(listener, generic, &length)
                    if socket >= 0 {
                        _ = fcntl(socket, F_SETFL, fcntl(socket, F_GETFL) | O_NONBLOCK)
                        _ = fcntl(socket, F_SETFD, FD_CLOEXEC)
                        var one: Int32 = 1
                        _ = setsockopt(socket, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
                    }
                    return socket
                #endif
            }
        }
    }

    private func openSpare() -> Int32 {
        open("/dev/null", O_RDONLY | O_CLOEXEC)
    }

    private static func makeSocket() -> Int32 {
        #if os(Linux)
            socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        #else
            socket(AF_INET, SOCK_STREAM, 0)
        #endif
    }

    #if os(Linux)
        private static let sendFlags = Int32(MSG_NOSIGNAL)
    #else
        private static let sendFlags: Int32 = 0
    #endif

    /// The canned 503s, built once through the same error shape as every other answer.
    private struct Refusals: Sendable {
        let connectionLimit: [UInt8]
        let addressLimit: [UInt8]
        let outOfDescriptors: [UInt8]

        init(limits: HTTPServer.Limits) {
            let retry = HTTPServer.Limits.busyRetryAfterSeconds
            connectionLimit = Self.wire("the server is at its connection limit; retry in \(retry) s")
            addressLimit = Self.wire(
                "too many connections from your address (at most \(limits.perAddressConnectionLimit) at once); close some or retry in \(retry) s")
            outOfDescriptors = Self.wire("the server is out of file descriptors; retry in \(retry) s")
        }

        static func wire(_ message: String) -> [UInt8] {
            let response = HTTPResponse.unavailable(message)
            var head = "HTTP/1.1 503 Service Unavailable\r\n"
            for (name, value) in response.headers { head += "\(name): \(value)\r\n" }
            head += "Connection: close\r\nContent-Length: \(response.body.count)\r\n\r\n"
            return Array(head.utf8) + response.body
        }
    }
}

// Free functions, because inside `Acceptor` the names `listen` and `close` mean its own members.
private func listenOn(_ socket: Int32, _ backlog: Int32) -> Int32 { listen(socket, backlog) }
private func closeDescriptor(_ descriptor: Int32) -> Int32 { close(descriptor) }
