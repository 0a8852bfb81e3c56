import Foundation
import Synchronization

/// Health probes sent at a steady pace on a thread of their own (never the cooperative pool),
/// each one bounded by a timeout, for asserting "the server kept answering under load".
public final class ProbeSeries: Sendable {
    public struct Probe: Sendable {
        /// When it was sent, from the start of the series.
        public let at: Duration
        /// The status answered within the timeout, or nil.
        public let status: Int?
        public let elapsed: Duration
        public var succeeded: Bool { status == 200 }
    }

    private let probes = Mutex<[Probe]>([])
    private let done = DispatchSemaphore(value: 0)
    private let duration: Duration

    /// Starts probing `GET path` from `source` every `interval` for `duration`.
    public init(
        port: UInt16, from source: String, path: String = "/health", every interval: Duration,
        timeout: Duration, for duration: Duration
    ) {
        self.duration = duration
        let thread = Thread { [self] in
            let clock = ContinuousClock()
            let start = clock.now
            var next = start
            // Bounded: at most duration / interval probes, each at most `timeout` long.
            while clock.now - start < duration {
                let sent = clock.now
                let status = LoopbackClient.status(port: port, from: source, path: path, timeout: timeout)
                let probe = Probe(at: sent - start, status: status, elapsed: clock.now - sent)
                probes.withLock { $0.append(probe) }
                next = next + interval
                if next > clock.now { Thread.sleep(forTimeInterval: Double((next - clock.now) / .milliseconds(1)) / 1000) }
            }
            done.signal()
        }
        thread.start()
    }

    /// Waits for the series to end (bounded by its duration plus a minute) and returns it.
    public func results() -> [Probe] {
        _ = done.wait(timeout: .now() + .milliseconds(Int(duration / .milliseconds(1)) + 60_000))
        return probes.withLock { $0 }
    }

    /// The probes sent so far.
    public var soFar: [Probe] { probes.withLock { $0 } }

    /// The share of `probes` sent in `window` that succeeded (1 when none were sent there).
    public static func successRate(_ probes: [Probe], in window: Range<Duration>) -> Double {
        let inWindow = probes.filter { window.contains($0.at) }
        guard !inWindow.isEmpty else { return 1 }
        return Double(inWindow.filter(\.succeeded).count) / Double(inWindow.count)
    }
}
