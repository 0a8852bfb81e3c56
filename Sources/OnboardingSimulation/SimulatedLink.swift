import Dispatch
import OnboardingStore
import Synchronization

/// Where one device's sync client meets the simulated world: every request it sends and every
/// wait it makes parks here until the simulator decides what happens. The client runs only
/// between a resume and its next park (or the end of its run), while the simulator waits, so at
/// most one party acts at a time and the seed alone chooses the interleaving.
///
/// The simulator's side is synchronous (it runs on a thread of its own, never on Swift
/// concurrency's pool); the client's side is async. Every activation of the client — starting a
/// run, answering a request, ending a wait — is followed by exactly one signal: the client parked
/// again or its run finished.
///
/// ```swift
/// link.beginRun { try await client.run() }   // returns once the client parked or finished
/// if case .request(let request) = link.parked { link.answer(.success(server.handle(request))) }
/// ```
final class SimulatedLink: Sendable {
    /// Where the client stands, as the simulator sees it.
    enum Parked: Sendable {
        /// No run in progress.
        case idle
        /// Between a resume and the next park (the simulator never sees it: it waits meanwhile).
        case running
        case request(SyncRequest)
        /// Waiting until the simulation's time reaches `untilMilliseconds`.
        case sleep(untilMilliseconds: Int64)
        /// The run ended; the simulator collects the result with ``collect()``.
        case finished(Result<SyncSummary, SyncError>)
    }

    /// The failure a request gets when the simulated network does not carry it.
    struct NetworkFault: Error, CustomStringConvertible {
        let description: String
    }

    /// A client that neither parks nor finishes within this much real time is hung. A simulated
    /// run does no real waiting and parks within milliseconds, but the client runs on Swift
    /// concurrency's shared threads, which other blocking work in the process may hold: in a full
    /// `swift test` on 2 cores they were held for over a minute. Ten minutes is a hang anywhere.
    static let hangTimeoutSeconds = 600

    private struct State {
        var parked: Parked = .idle
        var request: CheckedContinuation<SyncResponse, any Error>?
        var sleep: CheckedContinuation<Void, Never>?
        /// The device crashed: nothing parks any more, requests fail and waits end at once.
        var crashed = false
    }

    let device: String
    private let clock: SimulationClock
    private let state = Mutex(State())
    private let signal = DispatchSemaphore(value: 0)

    init(device: String, clock: SimulationClock) {
        self.device = device
        self.clock = clock
    }

    var parked: Parked { state.withLock { $0.parked } }

    var isIdle: Bool {
        if case .idle = parked { return true }
        return false
    }

    // MARK: The client's side

    /// The transport's send: parks until the simulator answers or fails the request.
    func send(_ request: SyncRequest) async throws -> SyncResponse {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<SyncResponse, any Error>) in
            let parked = state.withLock { state -> Bool in
                guard !state.crashed else { return false }
                state.request = continuation
                state.parked = .request(request)
                return true
            }
            if parked {
                signal.signal()
            } else {
                continuation.resume(throwing: NetworkFault(description: "simulated crash: the device is going down"))
            }
        }
    }

    /// The client's sleep: parks until the simulator's time passes the wake-up time.
    func sleep(_ duration: Duration) async {
        let milliseconds = max(0, duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
        let until = clock.nowMilliseconds + milliseconds
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let parked = state.withLock { state -> Bool in
                guard !state.crashed else { return false }
                state.sleep = continuation
                state.parked = .sleep(untilMilliseconds: until)
                return true
            }
            if parked { signal.signal() } else { continuation.resume() }
        }
    }

    // MARK: The simulator's side

    /// Starts a run of `body` (the client's `run()`) and returns once it parked or finished.
    func beginRun(_ body: @escaping @Sendable () async throws(SyncError) -> SyncSummary) throws(SimulationHang) -> Task<Void, Never> {
        state.withLock { state in
            precondition(isIdleState(state), "a run of \(device) began while another was in progress")
            state.parked = .running
            state.crashed = false
        }
        let task = Task.detached { [self] in
            let result: Result<SyncSummary, SyncError>
            do throws(SyncError) { result = .success(try await body()) } catch { result = .failure(error) }
            state.withLock { state in
                state.request = nil
                state.sleep = nil
                state.parked = .finished(result)
            }
            signal.signal()
        }
        try waitForPark()
        return task
    }

    /// Answers the parked request (a response, or a failure the transport throws) and returns
    /// once the client parked again or finished.
    func answer(_ result: Result<SyncResponse, any Error>) throws(SimulationHang) {
        let continuation = state.withLock { state -> CheckedContinuation<SyncResponse, any Error>? in
            defer { state.request = nil }
            return state.request
        }
        precondition(continuation != nil, "answered \(device) while it had no request in flight")
        state.withLock { $0.parked = .running }
        continuation!.resume(with: result)
        try waitForPark()
    }

    /// Ends the parked wait and returns once the client parked again or finished.
    func wake() throws(SimulationHang) {
        let continuation = state.withLock { state -> CheckedContinuation<Void, Never>? in
            defer { state.sleep = nil }
            return state.sleep
        }
        precondition(continuation != nil, "woke \(device) while it was not waiting")
        state.withLock { $0.parked = .running }
        continuation!.resume()
        try waitForPark()
    }

    /// Takes the result of a finished run and makes the link idle.
    func collect() -> Result<SyncSummary, SyncError>? {
        state.withLock { state in
            guard case .finished(let result) = state.parked else { return nil }
            state.parked = .idle
            return result
        }
    }

    /// The device crashes: the parked request fails (it may or may not have reached the server —
    /// the caller decided that before) or the wait ends, every later request fails and every later
    /// wait returns at once, and this returns when the run has finished.
    func crash(cancelling task: Task<Void, Never>?) throws(SimulationHang) {
        let (request, sleep, running) = state.withLock { state in
            state.crashed = true
            defer {
                state.request = nil
                state.sleep = nil
            }
            let running: Bool
            switch state.parked {
            case .idle, .finished: running = false
            case .request, .sleep, .running: running = true
            }
            return (state.request, state.sleep, running)
        }
        guard running else { return }
        state.withLock { $0.parked = .running }
        task?.cancel()
        request?.resume(throwing: NetworkFault(description: "simulated crash: the device went down with the request in flight"))
        sleep?.resume()
        try waitForPark()
        precondition(
            { if case .finished = parked { return true } else { return false } }(),
            "a crashed client of \(device) parked again")
    }

    private func waitForPark() throws(SimulationHang) {
        guard signal.wait(timeout: .now() + .seconds(Self.hangTimeoutSeconds)) == .success else {
            throw SimulationHang(device: device, seconds: Self.hangTimeoutSeconds)
        }
    }

    private func isIdleState(_ state: State) -> Bool {
        if case .idle = state.parked { return true }
        return false
    }
}
