import CMicroHTTPD
import Synchronization
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Every open connection, keyed by its socket: the acceptor adds one before handing the socket to
/// libmicrohttpd (so it can refuse one over the total or per-address limit), MHD's STARTED
/// notification attaches it, its CLOSED notification removes it. Each has a deadline, which the
/// reaper enforces by shutting the socket down.
///
/// Why shutting down by number is safe: MHD sends CLOSED before it closes the socket, and CLOSED
/// takes this table's lock; so while an attached entry is in the table (checked under the lock),
/// its descriptor is still that connection's socket and cannot have been reused for anything
/// else. An entry that was never attached (MHD dropped the socket before STARTED, which it does
/// without a notification when it runs out of memory) is never shut down, only forgotten.
final class ConnectionTable: Sendable {
    private struct Entry {
        let serial: UInt64
        let address: UInt32
        let accepted: ContinuousClock.Instant
        /// Set by STARTED: from then on MHD reports CLOSED before it closes the socket.
        var attached = false
        /// When the reaper shuts the connection down; nil while a handler works on its request
        /// (the server's time, not the client's).
        var deadline: ContinuousClock.Instant?
        /// A handler's response is being sent: the client may have half-closed and still be
        /// reading it.
        var responding = false
        /// The client's end was seen shut (POLLRDHUP) at the last tick, with no request in reach
        /// of a handler and no response going out.
        var hangUpSeen = false
        var reaped = false

        /// Waiting for (more of) a request: the only state in which a client that has shut its
        /// end can never be answered.
        var awaitingRequest: Bool { attached && !reaped && deadline != nil && !responding }
    }

    private struct State {
        var entries: [Int32: Entry] = [:]
        var perAddress: [UInt32: Int] = [:]
        var nextSerial: UInt64 = 1

        mutating func forget(_ descriptor: Int32) {
            guard let entry = entries.removeValue(forKey: descriptor) else { return }
            let remaining = (perAddress[entry.address] ?? 1) - 1
            perAddress[entry.address] = remaining > 0 ? remaining : nil
        }
    }

    enum Admission: Equatable {
        case admitted(serial: UInt64)
        case overConnectionLimit
        case overAddressLimit
    }

    /// 60 s (or the deadline, if longer): STARTED follows MHD_add_connection within one poll
    /// cycle, so an entry unattached for this long was dropped by MHD without a word. Only its
    /// place is given back; its number is never shut down, so being late here costs nothing.
    static let minimumUnattachedGrace = Duration.seconds(60)

    private let state = Mutex(State())
    private let deadline: Duration
    private let unattachedGrace: Duration

    init(requestDeadline: Duration) {
        self.deadline = requestDeadline
        self.unattachedGrace = max(requestDeadline, Self.minimumUnattachedGrace)
    }

    /// Records a just-accepted socket, unless its address or the server is at its limit.
    func admit(_ descriptor: Int32, address: UInt32, connectionLimit: Int, perAddressLimit: Int) -> Admission {
        let now = ContinuousClock.now
        return state.withLock { state in
            // A leftover entry under this number is one MHD dropped unannounced; the number has
            // been reused since, so the old entry is gone for good.
            state.forget(descriptor)
            if state.entries.count >= connectionLimit { return .overConnectionLimit }
            if state.perAddress[address, default: 0] >= perAddressLimit { return .overAddressLimit }
            let serial = state.nextSerial
            state.nextSerial += 1
            state.entries[descriptor] = Entry(serial: serial, address: address, accepted: now, deadline: now + deadline)
            state.perAddress[address, default: 0] += 1
            return .admitted(serial: serial)
        }
    }

    /// MHD_add_connection refused the socket (and closed it): forget the entry made for it.
    func abandon(_ descriptor: Int32, serial: UInt64) {
        state.withLock { state in
            if state.entries[descriptor]?.serial == serial { state.forget(descriptor) }
        }
    }

    /// MHD's STARTED notification.
    func attach(_ descriptor: Int32) {
        state.withLock { $0.entries[descriptor]?.attached = true }
    }

    /// MHD's CLOSED notification: the socket is still open, and is closed right after this returns.
    func remove(_ descriptor: Int32) {
        state.withLock { $0.forget(descriptor) }
    }

    /// The request has been handed to a handler: its time is the server's.
    func pauseDeadline(_ descriptor: Int32) {
        state.withLock { state in
            state.entries[descriptor]?.deadline = nil
            state.entries[descriptor]?.hangUpSeen = false
        }
    }

    /// A new phase starts — sending a handler's response (`responding`), or waiting for the next
    /// request — and the client gets a whole deadline for it.
    func restartDeadline(_ descriptor: Int32, responding: Bool) {
        let next = ContinuousClock.now + deadline
        state.withLock { state in
            guard state.entries[descriptor]?.reaped == false else { return }
            state.entries[descriptor]?.deadline = next
            state.entries[descriptor]?.responding = responding
            state.entries[descriptor]?.hangUpSeen = false
        }
    }

    /// What one reaper pass did.
    struct Reaped: Equatable {
        /// Connections past their deadline, shut down.
        var overdue = 0
        /// Connections whose client had shut its end while a request was still to come, shut down.
        var hungUp = 0
    }

    /// Shuts down every attached connection past its deadline, and every one whose client shut
    /// its end (POLLRDHUP) at two ticks in a row while the server waited for a request (MHD then
    /// sees the socket fail and closes it the usual way: completion callback, CLOSED, close); and
    /// forgets entries MHD never attached.
    ///
    /// The hang-up sweep exists because libmicrohttpd 0.9.75's edge-triggered epoll misses a FIN
    /// that arrives together with data (a client that sends half a request, or a whole one, and
    /// closes): such a connection would keep its place until the idle timeout. Two ticks, because
    /// a complete request is in reach of a handler a moment after its last byte arrives, and a
    /// client may half-close after sending it.
    func reap(now: ContinuousClock.Instant = .now) -> Reaped {
        state.withLock { state in
            var reaped = Reaped()
            var dropped: [Int32] = []
            var watched: [pollfd] = []
            for (descriptor, entry) in state.entries {
                if !entry.attached {
                    if now - entry.accepted > unattachedGrace { dropped.append(descriptor) }
                    continue
                }
                guard entry.awaitingRequest, let due = entry.deadline else { continue }
                if due <= now {
                    _ = shutdown(descriptor, Int32(SHUT_RDWR))
                    state.entries[descriptor]?.reaped = true
                    reaped.overdue += 1
                } else {
                    watched.append(pollfd(fd: descriptor, events: Self.hangUpEvents, revents: 0))
                }
            }
            for descriptor in dropped { state.forget(descriptor) }
            // Every descriptor polled is an attached connection's socket (checked under the lock
            // CLOSED takes), so none can be another file's.
            if !watched.isEmpty, poll(&watched, nfds_t(watched.count), 0) > 0 {
                for polled in watched where polled.revents & (Self.hangUpEvents | Int16(POLLHUP) | Int16(POLLERR)) != 0 {
                    if state.entries[polled.fd]?.hangUpSeen == true {
                        _ = shutdown(polled.fd, Int32(SHUT_RDWR))
                        state.entries[polled.fd]?.reaped = true
                        reaped.hungUp += 1
                    } else {
                        state.entries[polled.fd]?.hangUpSeen = true
                    }
                }
            }
            return reaped
        }
    }

    #if os(Linux)
        /// POLLRDHUP: the peer shut down its writing end. (Linux; elsewhere only a full hang-up shows.)
        private static let hangUpEvents = Int16(0x2000)
    #else
        private static let hangUpEvents = Int16(POLLHUP)
    #endif

    var count: Int { state.withLock { $0.entries.count } }

    func count(from address: UInt32) -> Int { state.withLock { $0.perAddress[address, default: 0] } }
}
