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
        var reaped = false
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
        state.withLock { $0.entries[descriptor]?.deadline = nil }
    }

    /// A new phase starts (sending a response, waiting for the next request): the client gets a
    /// whole deadline for it.
    func restartDeadline(_ descriptor: Int32) {
        let next = ContinuousClock.now + deadline
        state.withLock { state in
            guard state.entries[descriptor]?.reaped == false else { return }
            state.entries[descriptor]?.deadline = next
        }
    }

    /// Shuts down every attached connection past its deadline (MHD then sees the socket fail and
    /// closes it the usual way: completion callback, CLOSED, close) and forgets entries MHD never
    /// attached. Returns how many connections were cut.
    func reap(now: ContinuousClock.Instant = .now) -> Int {
        state.withLock { state in
            var cut = 0
            var dropped: [Int32] = []
            for (descriptor, entry) in state.entries {
                if !entry.attached {
                    if now - entry.accepted > unattachedGrace { dropped.append(descriptor) }
                    continue
                }
                guard !entry.reaped, let due = entry.deadline, due <= now else { continue }
                _ = shutdown(descriptor, Int32(SHUT_RDWR))
                state.entries[descriptor]?.reaped = true
                cut += 1
            }
            for descriptor in dropped { state.forget(descriptor) }
            return cut
        }
    }

    var count: Int { state.withLock { $0.entries.count } }

    func count(from address: UInt32) -> Int { state.withLock { $0.perAddress[address, default: 0] } }
}
