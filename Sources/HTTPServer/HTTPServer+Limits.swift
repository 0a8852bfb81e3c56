extension HTTPServer {
    /// Every resource a client can make the server spend, bounded (TigerBeetle style: each default
    /// is a named constant with the reason for its value).
    ///
    /// ```swift
    /// var limits = HTTPServer.Limits()
    /// limits.maximumRequestBodyBytes = 64 << 10
    /// let server = HTTPServer(port: 0, limits: limits, handler: handler)
    /// ```
    public struct Limits: Sendable, Equatable {
        /// 4 MiB: a sync upload is a bounded batch of events (hundreds of records of a few KiB each);
        /// the whole body is held in memory per connection, so this times `connectionLimit` bounds
        /// the server's body memory (4 MiB × 64 = 256 MiB worst case).
        public static let defaultMaximumRequestBodyBytes = 4 << 20
        /// 1 MiB: a chunked body (no Content-Length) that outgrows the limit is read and thrown
        /// away up to this many further bytes so the client still gets a readable 413; past it
        /// the connection is dropped, so a client cannot make the server read forever.
        public static let defaultMaximumDiscardedBodyBytes = 1 << 20
        /// 64: URLSession and curl send fewer than 15; more is a mistake or an attack on the
        /// per-request header parsing.
        public static let defaultMaximumHeaderCount = 64
        /// 64: one thread per connection (see ``HTTPServer``), so this bounds threads and stacks;
        /// a store syncs with one connection at a time, so 64 devices may sync at once.
        public static let defaultConnectionLimit = 64
        /// 30 s: an idle or trickling client (slowloris) gives its thread back after this long;
        /// long enough for a 4 MiB upload on a slow mobile link.
        public static let defaultConnectionTimeoutSeconds = 30
        /// 64 KiB: libmicrohttpd's per-connection pool holds the request line, all headers and the
        /// read buffer, so it also bounds header bytes (too large → libmicrohttpd answers 431).
        public static let defaultConnectionMemoryLimitBytes = 64 << 10
        /// 10 s: `stop()` waits this long for in-flight requests before closing them, longer than
        /// any handler should take and short enough for a service manager's stop timeout.
        public static let defaultStopDrainTimeout = Duration.seconds(10)

        public var maximumRequestBodyBytes = defaultMaximumRequestBodyBytes
        public var maximumDiscardedBodyBytes = defaultMaximumDiscardedBodyBytes
        public var maximumHeaderCount = defaultMaximumHeaderCount
        public var connectionLimit = defaultConnectionLimit
        public var connectionTimeoutSeconds = defaultConnectionTimeoutSeconds
        public var connectionMemoryLimitBytes = defaultConnectionMemoryLimitBytes
        public var stopDrainTimeout = defaultStopDrainTimeout

        public init() {}

        /// Why these limits cannot be used, or nil when they can.
        func problem() -> String? {
            if maximumRequestBodyBytes < 0 { return "maximumRequestBodyBytes is negative" }
            if maximumDiscardedBodyBytes < 0 { return "maximumDiscardedBodyBytes is negative" }
            if maximumHeaderCount < 1 { return "maximumHeaderCount must be at least 1" }
            if !(1...Int(UInt16.max)).contains(connectionLimit) {
                return "connectionLimit must be in 1...\(UInt16.max) (each connection is a thread)"
            }
            if !(1...86_400).contains(connectionTimeoutSeconds) {
                return "connectionTimeoutSeconds must be in 1...86400"
            }
            // Below ~4 KiB libmicrohttpd cannot hold an ordinary request's headers.
            if !((4 << 10)...(64 << 20)).contains(connectionMemoryLimitBytes) {
                return "connectionMemoryLimitBytes must be in 4 KiB...64 MiB"
            }
            if stopDrainTimeout < .zero { return "stopDrainTimeout is negative" }
            return nil
        }
    }
}
