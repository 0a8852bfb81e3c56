extension HTTPServer {
    /// Every resource a client can make the server spend, bounded (TigerBeetle style: each default
    /// is a named constant with the reason for its value). What each costs is measured in
    /// docs/sync-protocol.md, "Connection limits, deadlines and 503".
    ///
    /// ```swift
    /// var limits = HTTPServer.Limits()
    /// limits.maximumRequestBodyBytes = 64 << 10
    /// limits.perAddressConnectionLimit = limits.connectionLimit // behind a reverse proxy
    /// let server = HTTPServer(port: 0, limits: limits, handler: handler)
    /// ```
    public struct Limits: Sendable, Equatable {
        /// 4 MiB: a sync upload is a bounded batch of events (hundreds of records of a few KiB each).
        /// A body is held in memory until its handler returns; all bodies together are bounded by
        /// ``maximumBufferedBodyBytes``.
        public static let defaultMaximumRequestBodyBytes = 4 << 20
        /// 1 MiB: a chunked body (no Content-Length) that outgrows the limit is read and thrown
        /// away up to this many further bytes so the client still gets a readable 413 (or 503);
        /// past it the connection is dropped, so a client cannot make the server read forever.
        public static let defaultMaximumDiscardedBodyBytes = 1 << 20
        /// 64: URLSession and curl send fewer than 15; more is a mistake or an attack on the
        /// per-request header parsing.
        public static let defaultMaximumHeaderCount = 64
        /// 10,000: a fleet of thousands of devices that sync every few minutes has a few hundred
        /// connections open at once; the rest is room for keep-alive and for attackers, who
        /// ``perAddressConnectionLimit`` and ``requestDeadlineSeconds`` keep from holding much of
        /// it. A waiting connection costs one descriptor and no thread: 0.7 KiB of server memory
        /// until it sends a byte, 4.7 KiB after (measured with 5,000 open), so 10,000 cost under
        /// 50 MiB plus the kernel's socket buffers. ``HTTPServer/start()`` lowers it to the
        /// descriptors the process may open (and refuses to start below ``minimumConnectionLimit``).
        public static let defaultConnectionLimit = 10_000
        /// 64: a device syncs over one connection at a time, so 64 leaves room for a site of
        /// devices behind one NAT, while a single address can hold at most 64 of the 10,000
        /// places. Behind a reverse proxy every client has the proxy's address: raise this to
        /// ``connectionLimit`` there and let the proxy limit its clients.
        public static let defaultPerAddressConnectionLimit = 64
        /// 30 s: a connection that sends nothing for this long (an idle keep-alive, a client that
        /// went away) gives its place back; long enough for a mobile link's pauses.
        public static let defaultConnectionTimeoutSeconds = 30
        /// 120 s: the longest a client may take to send one whole request (from connecting, or
        /// from the end of the previous response, to its last body byte), and again to read the
        /// response, however steadily it trickles; an 8 MiB upload (the sync protocol's largest)
        /// at 1 Mbit/s, a poor mobile link, takes 67 s. The handler's own time does not count.
        public static let defaultRequestDeadlineSeconds = 120
        /// 64 KiB: libmicrohttpd's per-connection pool holds the request line, all headers and the
        /// read buffer, so it also bounds header bytes (too large → libmicrohttpd answers 431).
        /// Its pages are touched only as a request needs them, so an idle connection costs less.
        public static let defaultConnectionMemoryLimitBytes = 64 << 10
        /// 256 MiB: request bodies held at once, across all connections (received but not yet
        /// handled). 32 bodies of the sync protocol's 8 MiB maximum — more than the handler
        /// threads can work on at once — and the old thread-per-connection server's worst case
        /// (64 × 4 MiB). A body that does not fit gets 503 with `Retry-After`.
        public static let defaultMaximumBufferedBodyBytes = 256 << 20
        /// 8: handlers block on fsync and locks more than they compute, so more threads than
        /// cores let uploads of different devices wait on the disk together; each costs a stack.
        public static let defaultHandlerThreadCount = 8
        /// 256: requests waiting for a handler thread. About a second of work for the pool at the
        /// measured upload cost (~40 ms per 1,000-event batch, 8 threads), so a request that gets
        /// a place is answered within seconds; past it a 503 with `Retry-After` is the better answer.
        public static let defaultMaximumQueuedRequests = 256
        /// 2: the polling threads only parse and copy (handlers run on their own threads), so more
        /// than the cores buys nothing; two, so one busy with a 64 KiB header block does not delay
        /// every other connection.
        public static let defaultPollingThreadCount = 2
        /// 256: descriptors kept out of the connection budget for files the handler opens after
        /// start (the sync server keeps 3 per device replica it opens: data, lock, and a
        /// synchronous-write descriptor).
        public static let defaultReservedFileDescriptors = 256
        /// 10 s: `stop()` waits this long for in-flight requests before closing them, longer than
        /// any handler should take and short enough for a service manager's stop timeout.
        public static let defaultStopDrainTimeout = Duration.seconds(10)

        /// 64, the old server's fixed limit: with fewer connections than this a handful of clients
        /// could again take the whole server, so ``HTTPServer/start()`` refuses to start when the
        /// descriptor budget allows less (unless ``connectionLimit`` itself is lower).
        public static let minimumConnectionLimit = 64
        /// 2^20: Linux's default `fs.nr_open`, the most descriptors a process can have.
        public static let maximumConnectionLimit = 1 << 20
        /// 2 s: after the handler threads are joined, how long `stop()` lets the answers they made
        /// (and the 503s for requests still queued) go out before it closes every connection.
        /// Loopback and LAN clients read them in milliseconds; one that does not read cannot hold
        /// up a shutdown for longer.
        public static let stopAnswerFlushTimeout = Duration.seconds(2)
        /// 1 s: the `Retry-After` of every 503 the HTTP layer sends when a resource runs out. The
        /// handler queue drains in about a second (``defaultMaximumQueuedRequests``) and a
        /// deadline frees a trickling client's place within ``requestDeadlineSeconds``; clients
        /// back off further on their own.
        public static let busyRetryAfterSeconds = 1

        public var maximumRequestBodyBytes = defaultMaximumRequestBodyBytes
        public var maximumDiscardedBodyBytes = defaultMaximumDiscardedBodyBytes
        public var maximumHeaderCount = defaultMaximumHeaderCount
        /// The most connections open at once (accepted, not yet closed), whatever their state.
        public var connectionLimit = defaultConnectionLimit
        /// The most connections open at once from one IPv4 address; more get a 503 at once.
        public var perAddressConnectionLimit = defaultPerAddressConnectionLimit
        /// IPv4 addresses (network byte order, as `sin_addr.s_addr`) held only to the whole
        /// ``connectionLimit``: a trusted reverse proxy, whose connections carry every client's.
        public var addressesWithoutPerAddressLimit: Set<UInt32> = []
        /// Idle timeout: seconds without a byte from the client before the connection is closed.
        public var connectionTimeoutSeconds = defaultConnectionTimeoutSeconds
        /// Whole-request deadline: seconds to send a request, and again to read its response.
        public var requestDeadlineSeconds = defaultRequestDeadlineSeconds
        public var connectionMemoryLimitBytes = defaultConnectionMemoryLimitBytes
        public var maximumBufferedBodyBytes = defaultMaximumBufferedBodyBytes
        public var handlerThreadCount = defaultHandlerThreadCount
        public var maximumQueuedRequests = defaultMaximumQueuedRequests
        public var pollingThreadCount = defaultPollingThreadCount
        public var reservedFileDescriptors = defaultReservedFileDescriptors
        public var stopDrainTimeout = defaultStopDrainTimeout

        public init() {}

        /// Why these limits cannot be used, or nil when they can.
        func problem() -> String? {
            if maximumRequestBodyBytes < 0 { return "maximumRequestBodyBytes is negative" }
            if maximumDiscardedBodyBytes < 0 { return "maximumDiscardedBodyBytes is negative" }
            if maximumHeaderCount < 1 { return "maximumHeaderCount must be at least 1" }
            if !(1...Self.maximumConnectionLimit).contains(connectionLimit) {
                return "connectionLimit must be in 1...\(Self.maximumConnectionLimit)"
            }
            if !(1...connectionLimit).contains(perAddressConnectionLimit) {
                return "perAddressConnectionLimit must be in 1...connectionLimit (\(connectionLimit))"
            }
            if !(1...86_400).contains(connectionTimeoutSeconds) {
                return "connectionTimeoutSeconds must be in 1...86400"
            }
            if !(1...86_400).contains(requestDeadlineSeconds) {
                return "requestDeadlineSeconds must be in 1...86400"
            }
            // Below ~4 KiB libmicrohttpd cannot hold an ordinary request's headers.
            if !((4 << 10)...(64 << 20)).contains(connectionMemoryLimitBytes) {
                return "connectionMemoryLimitBytes must be in 4 KiB...64 MiB"
            }
            if maximumBufferedBodyBytes < maximumRequestBodyBytes {
                return "maximumBufferedBodyBytes must be at least maximumRequestBodyBytes, or the largest body never fits"
            }
            if !(1...1024).contains(handlerThreadCount) { return "handlerThreadCount must be in 1...1024" }
            if !(1...(1 << 20)).contains(maximumQueuedRequests) { return "maximumQueuedRequests must be in 1...1048576" }
            if !(1...64).contains(pollingThreadCount) { return "pollingThreadCount must be in 1...64" }
            if !(0...Self.maximumConnectionLimit).contains(reservedFileDescriptors) {
                return "reservedFileDescriptors must be in 0...\(Self.maximumConnectionLimit)"
            }
            if stopDrainTimeout < .zero { return "stopDrainTimeout is negative" }
            return nil
        }
    }
}
