import Foundation
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension HTTPServer {
    /// Raises this process's soft limit on open files (`RLIMIT_NOFILE`) as far as the hard limit
    /// allows, and returns the soft limit now in force. Call it once at process start, before
    /// opening data files: every connection is a descriptor, and the usual soft limit (1,024) is
    /// far below what a fleet needs while the hard limit is commonly 500,000 or more. It cannot
    /// raise the hard limit (that needs privileges: `ulimit -Hn`, systemd's `LimitNOFILE=`).
    ///
    /// ```swift
    /// let descriptors = HTTPServer.raiseFileDescriptorLimit()
    /// ```
    @discardableResult
    public static func raiseFileDescriptorLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Self.noFileResource, &limit) == 0 else { return -1 }
        let current = limit.rlim_cur
        // An infinite hard limit is not a valid soft limit for descriptors (Linux caps it at
        // fs.nr_open, macOS at OPEN_MAX): try the hard limit, then smaller ceilings.
        let candidates = [limit.rlim_max, rlim_t(Limits.maximumConnectionLimit), rlim_t(1 << 16), rlim_t(10_240)]
        for candidate in candidates where candidate > current && candidate <= limit.rlim_max {
            var raised = limit
            raised.rlim_cur = candidate
            if setrlimit(Self.noFileResource, &raised) == 0 { return Int(clamping: candidate) }
        }
        return Int(clamping: current)
    }

    /// The soft `RLIMIT_NOFILE`: descriptor numbers this process may use (0 ..< limit).
    static func fileDescriptorLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Self.noFileResource, &limit) == 0 else { return 0 }
        return limit.rlim_cur == Self.infinity ? Limits.maximumConnectionLimit : Int(clamping: limit.rlim_cur)
    }

    /// Descriptors open in this process right now.
    static func fileDescriptorsInUse() -> Int {
        // The kernel's own list is exact and cheap; probing every number is the fallback.
        for directory in ["/proc/self/fd", "/dev/fd"] {
            if let names = try? FileManager.default.contentsOfDirectory(atPath: directory) {
                return max(0, names.count - 1) // minus the descriptor listing the directory
            }
        }
        let limit = min(fileDescriptorLimit(), Limits.maximumConnectionLimit)
        return (0..<Int32(limit)).reduce(0) { $0 + (fcntl($1, F_GETFD) >= 0 ? 1 : 0) }
    }

    /// Descriptors the HTTP layer opens besides connections: the listening socket, the spare
    /// kept for refusing when descriptors run out, and per polling thread an epoll descriptor and
    /// an inter-thread channel (an eventfd, or a pipe's two ends), plus the master daemon's own.
    static func ownDescriptorCount(_ limits: Limits) -> Int {
        4 + 3 * limits.pollingThreadCount
    }

    /// How many connections the descriptor budget allows, and the numbers behind it.
    struct DescriptorBudget: Equatable {
        var softLimit: Int
        var inUse: Int
        var reserved: Int
        var own: Int
        var forConnections: Int { softLimit - inUse - reserved - own }

        init(softLimit: Int, inUse: Int, limits: Limits) {
            self.softLimit = softLimit
            self.inUse = inUse
            reserved = limits.reservedFileDescriptors
            own = HTTPServer.ownDescriptorCount(limits)
        }

        /// The connection limit to use: ``Limits/connectionLimit`` when the budget allows it,
        /// otherwise the budget; an error when that is below the minimum a server can work with.
        func connectionLimit(for limits: Limits) throws(HTTPServerError) -> Int {
            let needed = min(limits.connectionLimit, Limits.minimumConnectionLimit)
            guard forConnections >= needed else {
                let suggested = inUse + reserved + own + limits.connectionLimit
                throw HTTPServerError(
                    .outOfFileDescriptors,
                    "only \(max(0, forConnections)) file descriptors are left for connections (RLIMIT_NOFILE is \(softLimit), \(inUse) are open, \(reserved + own) are kept for the server's own files) but at least \(needed) are needed; raise the limit to at least \(suggested) (ulimit -n \(suggested), or LimitNOFILE=\(suggested) for a systemd service)"
                )
            }
            return min(limits.connectionLimit, forConnections)
        }
    }

    #if canImport(Glibc)
        // RLIM_INFINITY is all ones, which Swift cannot import as a constant.
        private static var infinity: rlim_t { rlim_t.max }
        private static var noFileResource: __rlimit_resource_t { __rlimit_resource_t(RLIMIT_NOFILE.rawValue) }
    #else
        private static var infinity: rlim_t { RLIM_INFINITY }
        private static var noFileResource: Int32 { RLIMIT_NOFILE }
    #endif
}
