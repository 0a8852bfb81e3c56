/// A deterministic test double that wraps any transport and, with seeded probabilities, behaves
/// like a bad network: it drops requests, drops answers, delivers requests twice, delays them, and
/// replays stale copies of earlier requests after later ones. Every decision is logged, so the
/// log of a failing seed tells the whole story (VOPR-style simulation).
///
/// ```swift
/// let faulty = FaultyTransport(wrapping: InMemoryTransport { server.handle($0) }, seed: 42,
///                              faults: .init(dropRequest: 0.1, dropResponse: 0.1), sleep: clock.sleep)
/// _ = try await SyncClient(store: store, transport: faulty, token: token).run()
/// print(await faulty.log.joined(separator: "\n"))
/// ```
public actor FaultyTransport: SyncTransport {
    /// Probabilities (0…1) of each fault, rolled per request.
    public struct Faults: Sendable {
        /// Throw before delivering: the server never sees the request.
        public var dropRequest: Double
        /// Deliver, then throw: the server acted but the client does not know.
        public var dropResponse: Double
        /// Deliver twice and return the second answer.
        public var duplicate: Double
        /// Wait up to ``maximumDelay`` before delivering.
        public var delay: Double
        /// Keep a copy to replay later, after subsequent requests (its answer is discarded).
        public var reorder: Double
        /// Chance per request that one held copy is replayed before the request itself.
        public var replayHeld: Double
        public var maximumDelay: Duration

        public init(
            dropRequest: Double = 0, dropResponse: Double = 0, duplicate: Double = 0, delay: Double = 0,
            reorder: Double = 0, replayHeld: Double = 0.5, maximumDelay: Duration = .seconds(2)
        ) {
            for probability in [dropRequest, dropResponse, duplicate, delay, reorder, replayHeld] {
                precondition((0...1).contains(probability), "a fault probability must lie in 0…1, got \(probability)")
            }
            self.dropRequest = dropRequest
            self.dropResponse = dropResponse
            self.duplicate = duplicate
            self.delay = delay
            self.reorder = reorder
            self.replayHeld = replayHeld
            self.maximumDelay = maximumDelay
        }
    }

    /// The failure this transport throws for a dropped request or answer.
    public struct Fault: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    /// Held copies awaiting replay; a small bound keeps a long run's memory flat, and a few stale
    /// requests in flight is already more than a real network produces.
    public static let maximumHeldRequests = 4
    /// Log lines kept (the oldest are dropped): enough for thousands of requests.
    public static let maximumLogLines = 100_000

    private let inner: any SyncTransport
    private let faults: Faults
    private let sleep: @Sendable (Duration) async throws -> Void
    private var random: SyncRandom
    private var held: [SyncRequest] = []
    private var requestNumber = 0
    public private(set) var log: [String] = []

    public init(
        wrapping inner: any SyncTransport, seed: UInt64, faults: Faults = Faults(),
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) {
        self.inner = inner
        self.faults = faults
        self.sleep = sleep
        self.random = SyncRandom(seed: seed)
        log.append("seed \(seed)")
    }

    /// How many copies are waiting to be replayed.
    public var heldCount: Int { held.count }

    public func send(_ request: SyncRequest) async throws -> SyncResponse {
        requestNumber += 1
        let number = requestNumber
        let name = "#\(number) \(request.method) \(request.path)\(Self.seqRange(of: request))"
        if !held.isEmpty && random.chance(faults.replayHeld) {
            try await replay(held.removeFirst(), before: number)
        }
        if random.chance(faults.dropRequest) {
            record("\(name): dropped the request")
            throw Fault(description: "simulated network failure: request \(number) was dropped before delivery")
        }
        if random.chance(faults.reorder) && held.count < Self.maximumHeldRequests {
            held.append(request)
            record("\(name): holding a copy to replay later")
        }
        if random.chance(faults.delay) {
            let milliseconds = Int64(random.next() % UInt64(max(1, faults.maximumDelay / .milliseconds(1))))
            record("\(name): delayed \(milliseconds) ms")
            try await sleep(.milliseconds(milliseconds))
        }
        var response = try await inner.send(request)
        record("\(name): delivered → \(response.status)")
        if random.chance(faults.duplicate) {
            response = try await inner.send(request)
            record("\(name): delivered again → \(response.status) (the client sees this answer)")
        }
        if random.chance(faults.dropResponse) {
            record("\(name): dropped the answer")
            throw Fault(description: "simulated network failure: the answer to request \(number) was lost")
        }
        return response
    }

    /// Delivers every held copy (its answer discarded), as a network finally flushing stale packets.
    public func replayHeld() async throws {
        while !held.isEmpty { try await replay(held.removeFirst(), before: nil) }
    }

    private func replay(_ stale: SyncRequest, before number: Int?) async throws {
        let response = try await inner.send(stale)
        let when = number.map { "before #\($0)" } ?? "at the end"
        record("replayed stale \(stale.method) \(stale.path)\(Self.seqRange(of: stale)) \(when) → \(response.status) (answer discarded)")
    }

    private func record(_ line: String) {
        if log.count >= Self.maximumLogLines { log.removeFirst(log.count / 2) }
        log.append(line)
    }

    /// ` [seq a…b]` for an upload, so the log shows what each request carried.
    private static func seqRange(of request: SyncRequest) -> String {
        guard request.method == "POST", let upload = try? SyncWire.upload(from: request.body),
            let first = upload.records.first, let last = upload.records.last
        else { return "" }
        return " [seq \(first.seq)…\(last.seq)]"
    }
}
