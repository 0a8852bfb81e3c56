import Synchronization

/// Tells the operator when a resource runs out, without flooding the log: events are counted
/// where they happen (any thread, no I/O) and reported by the acceptor thread at most once per
/// ``interval`` per kind, with the count. A process out of descriptors refuses thousands of
/// connections a second; it should say so in one line every ten seconds, not thousands.
final class ServerWarnings: Sendable {
    enum Kind: Int, CaseIterable {
        case outOfDescriptors, outOfSocketMemory, connectionLimit, addressLimit, handlerQueue, bodyMemory, deadline
    }

    /// 10 s: often enough to see an incident as it happens, rarely enough that a flood of
    /// refusals costs a few lines a minute.
    static let interval = Duration.seconds(10)

    /// What the messages quote; set by `start()`.
    struct Context: Sendable {
        var connectionLimit = 0
        var descriptorLimit = 0
    }

    private struct State {
        var pending = [Int](repeating: 0, count: Kind.allCases.count)
        var lastReport = [ContinuousClock.Instant?](repeating: nil, count: Kind.allCases.count)
        var context = Context()
    }

    private let state = Mutex(State())
    private let limits: HTTPServer.Limits
    private let sink: (@Sendable (String) -> Void)?

    init(limits: HTTPServer.Limits, sink: (@Sendable (String) -> Void)?) {
        self.limits = limits
        self.sink = sink
    }

    func configure(_ context: Context) { state.withLock { $0.context = context } }

    func note(_ kind: Kind, count: Int = 1) {
        guard count > 0 else { return }
        state.withLock { $0.pending[kind.rawValue] += count }
    }

    /// Reports every kind with events whose last report is at least ``interval`` old.
    func flush(now: ContinuousClock.Instant = .now) {
        let lines: [String] = state.withLock { state in
            var lines: [String] = []
            for kind in Kind.allCases where state.pending[kind.rawValue] > 0 {
                if let last = state.lastReport[kind.rawValue], now - last < Self.interval { continue }
                lines.append(message(kind, count: state.pending[kind.rawValue], context: state.context))
                state.pending[kind.rawValue] = 0
                state.lastReport[kind.rawValue] = now
            }
            return lines
        }
        guard let sink else { return }
        for line in lines { sink(line) }
    }

    private func message(_ kind: Kind, count: Int, context: Context) -> String {
        let connections = count == 1 ? "1 connection" : "\(count) connections"
        let requests = count == 1 ? "1 request" : "\(count) requests"
        switch kind {
        case .outOfDescriptors:
            return
                "refused \(connections) with 503: the process is out of file descriptors (RLIMIT_NOFILE \(context.descriptorLimit)); raise it (ulimit -n, LimitNOFILE=) or lower the connection limit"
        case .outOfSocketMemory:
            return "refused \(connections): the system is out of socket memory (accept failed with ENOBUFS/ENOMEM)"
        case .connectionLimit:
            return "refused \(connections) with 503: all \(context.connectionLimit) connections are in use"
        case .addressLimit:
            return
                "refused \(connections) with 503: their address already had \(limits.perAddressConnectionLimit) open (the per-address limit; behind a reverse proxy, raise it)"
        case .handlerQueue:
            return
                "answered \(requests) with 503: all \(limits.handlerThreadCount) handler threads were busy and \(limits.maximumQueuedRequests) requests waiting"
        case .bodyMemory:
            return "answered \(requests) with 503: \(limits.maximumBufferedBodyBytes >> 20) MiB of request bodies were already held"
        case .deadline:
            return "closed \(connections) that took longer than \(limits.requestDeadlineSeconds) s to send a request or read a response"
        }
    }
}
