import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A crowd of connections held open from chosen loopback addresses: idle ones (connect, send
/// nothing) or slowloris ones (send a request one byte at a time, never finishing it).
///
/// Not thread-safe: one thread opens, trickles, inspects and closes (`@unchecked Sendable` only
/// so a test can create it on one thread and hand it to another).
public final class SlowClients: @unchecked Sendable {
    /// A request line and headers long enough that one byte every few seconds never completes it.
    public static let endlessRequest = Array(("GET /health HTTP/1.1\r\nHost: slow\r\nX-Slow: " + String(repeating: "a", count: 4096)).utf8)

    public private(set) var connections: [(socket: Int32, source: String)] = []
    /// Connections that could not be established at all.
    public private(set) var failedToConnect = 0
    private var bytesSent = 0

    /// Opens `count` connections to 127.0.0.1:`port`, spread evenly over `sources`.
    public init(port: UInt16, count: Int, sources: [String], connectTimeout: Duration = .seconds(5)) {
        precondition(!sources.isEmpty)
        for index in 0..<count {
            let source = sources[index % sources.count]
            if let socket = LoopbackClient.connect(port: port, from: source, timeout: connectTimeout) {
                connections.append((socket, source))
            } else {
                failedToConnect += 1
            }
        }
    }

    deinit { closeAll() }

    /// Sends the next byte of ``endlessRequest`` on every connection the server has neither
    /// answered nor closed; returns how many of those sends failed.
    @discardableResult
    public func sendNextByte() -> Int {
        guard bytesSent < Self.endlessRequest.count else { return 0 }
        let byte = [Self.endlessRequest[bytesSent]]
        bytesSent += 1
        var failed = 0
        for (index, state) in states().enumerated() where state == .open {
            if !LoopbackClient.send(connections[index].socket, byte) { failed += 1 }
        }
        return failed
    }

    /// What the server answered on each connection it answered (read to its end once, then kept).
    private var answered: [Int: [UInt8]] = [:]
    private var closedUnanswered: Set<Int> = []

    /// What the server has done to each connection so far.
    public func states() -> [LoopbackClient.PeerState] {
        connections.indices.map { index in
            if answered[index] != nil { return .sentData }
            if closedUnanswered.contains(index) { return .closed }
            switch LoopbackClient.peerState(connections[index].socket) {
            case .open: return .open
            case .sentData:
                answered[index] = LoopbackClient.readToEnd(connections[index].socket, limit: 64 << 10)
                return .sentData
            case .closed:
                closedUnanswered.insert(index)
                return .closed
            }
        }
    }

    /// Connections the server still holds open without having answered.
    public var openCount: Int { states().filter { $0 == .open }.count }

    /// What the server sent on the connections it answered (and closed).
    public func answers() -> [[UInt8]] {
        _ = states()
        return answered.keys.sorted().compactMap { answered[$0] }
    }

    public func closeAll() {
        for connection in connections { close(connection.socket) }
        connections = []
    }
}
