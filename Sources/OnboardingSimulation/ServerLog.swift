import Synchronization

/// The lines the server writes to its operator's log (``SyncServer/Options/failureLog``): an
/// honest simulation should leave it empty, and a failure report shows its last lines.
final class ServerLog: Sendable {
    /// Lines kept: the last few explain a failure; a long run must not grow without bound.
    static let keptLines = 100
    private let storage = Mutex<[String]>([])

    func append(_ line: String) {
        storage.withLock { lines in
            if lines.count >= Self.keptLines { lines.removeFirst() }
            lines.append(line)
        }
    }

    var lines: [String] { storage.withLock { $0 } }
}
