import Foundation
import OnboardingModel
import Synchronization

/// Drives a ``SyncClient`` from the log itself: a `sign_in_succeeded` starts a sync and periodic
/// re-syncs while signed in; `signed_out` stops them (the request in flight finishes, nothing is
/// sent after it). ``syncNow()`` syncs on demand at any time.
///
/// ```swift
/// let agent = SyncAgent(client: SyncClient(store: store, transport: transport, token: token))
/// await agent.start()
/// // … the app appends sign_in_succeeded: the agent syncs, then every 5 minutes until signed_out.
/// await agent.shutdown()
/// ```
public actor SyncAgent {
    /// Seconds between periodic syncs by default: new events reach the server within minutes
    /// without keeping a radio busy; a sign-in syncs at once anyway.
    public static let defaultInterval = Duration.seconds(300)
    /// Sign-in/out signals buffered between the store's writer and the agent; only the newest
    /// matter, so a burst beyond this drops the oldest.
    static let maximumPendingSignals = 64

    private enum Signal: Sendable { case signedIn, signedOut }

    private let client: SyncClient
    private let interval: Duration
    private let sleep: @Sendable (Duration) async throws -> Void
    private var observation: AppendObservation?
    private var signals: AsyncStream<Signal>.Continuation?
    private var listener: Task<Void, Never>?
    private var periodic: Task<Void, Never>?
    private var current: Task<Result<SyncSummary, SyncError>, Never>?

    /// What the agent does, as ``updates()`` reports it.
    public enum Update: Sendable, Equatable {
        /// A `sign_in_succeeded` was recorded: syncing starts, then repeats every interval.
        case signedIn
        /// A `signed_out` was recorded (or ``shutdown()`` ran): no request is sent after the one in flight.
        case signedOut
        /// A run began.
        case started
        /// A batch was acknowledged.
        case progress(SyncProgress)
        /// A run ended: what it did.
        case finished(SyncSummary)
        /// A run failed; the next period (or ``syncNow()``) tries again.
        case failed(SyncError)
    }

    /// Updates buffered per subscriber of ``updates()``: progress comes once per batch, so 256
    /// covers a long catch-up; a subscriber further behind loses the oldest updates first.
    public static let updateBuffer = 256

    /// The subscribers of ``updates()``; reached from the client's progress callback, off the actor.
    private let subscribers = Mutex<[UUID: AsyncStream<Update>.Continuation]>([:])

    /// Whether the last sign-in signal seen was `sign_in_succeeded`.
    public private(set) var isSignedIn = false
    /// Finished runs, and the outcome of the last one (a failed run is retried at the next period).
    public private(set) var completedRuns = 0
    public private(set) var lastResult: Result<SyncSummary, SyncError>?

    public init(
        client: SyncClient, interval: Duration = SyncAgent.defaultInterval,
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) {
        precondition(interval > .zero, "the sync interval must be positive")
        self.client = client
        self.interval = interval
        self.sleep = sleep
    }

    /// What the agent does from now on — sign-in and sign-out seen, runs started, each
    /// acknowledged batch, each run's summary or error — for a SwiftUI `.task` or an actor. It
    /// ends when the consuming task is cancelled or the agent shuts down; a subscriber more than
    /// ``updateBuffer`` updates behind loses the oldest.
    ///
    /// ```swift
    /// for await update in agent.updates() {
    ///     if case .finished(let summary) = update { lastSynced = summary.acknowledgedSeq }
    /// }
    /// ```
    public nonisolated func updates() -> AsyncStream<Update> {
        let (stream, continuation) = AsyncStream.makeStream(of: Update.self, bufferingPolicy: .bufferingNewest(Self.updateBuffer))
        let id = UUID()
        subscribers.withLock { $0[id] = continuation }
        continuation.onTermination = { [weak self] _ in self?.subscribers.withLock { _ = $0.removeValue(forKey: id) } }
        return stream
    }

    private nonisolated func publish(_ update: Update) {
        for continuation in subscribers.withLock({ Array($0.values) }) { continuation.yield(update) }
    }

    /// Starts watching the store's appends. Idempotent.
    public func start() {
        guard observation == nil else { return }
        let (stream, continuation) = AsyncStream.makeStream(
            of: Signal.self,
            bufferingPolicy: .bufferingNewest(Self.maximumPendingSignals))
        signals = continuation
        // The handler runs on the store's writer queue: only classify and hand over, in order.
        observation = client.store.observeAppends { records in
            for record in records {
                switch record.event.payload {
                case .signInSucceeded: continuation.yield(.signedIn)
                case .signedOut: continuation.yield(.signedOut)
                default: break
                }
            }
        }
        listener = Task { for await signal in stream { await self.handle(signal) } }
    }

    /// Syncs now (after a run in progress, if any) and returns what the run did.
    public func syncNow() async throws(SyncError) -> SyncSummary {
        if let current { _ = await current.value }
        return try await runOnce().get()
    }

    /// Stops watching and stops syncing (the request in flight finishes). Idempotent.
    public func shutdown() async {
        observation?.cancel()
        observation = nil
        signals?.finish()
        signals = nil
        listener?.cancel()
        listener = nil
        let inFlight = current
        await signOut()
        // The run in flight finishes (signOut stopped it after its request) and reports first.
        if let inFlight { _ = await inFlight.value }
        for continuation in subscribers.withLock({ subscribers in
            defer { subscribers = [:] }; return Array(subscribers.values)
        }) {
            continuation.finish()
        }
    }

    private func handle(_ signal: Signal) async {
        switch signal {
        case .signedIn:
            publish(.signedIn)
            isSignedIn = true
            guard periodic == nil else { return }
            periodic = Task { await self.syncWhileSignedIn() }
        case .signedOut:
            await signOut()
        }
    }

    private func signOut() async {
        if isSignedIn { publish(.signedOut) }
        isSignedIn = false
        periodic?.cancel()
        periodic = nil
        current?.cancel()
        await client.stop()
    }

    private func syncWhileSignedIn() async {
        while isSignedIn && !Task.isCancelled {
            // A run stopped by an earlier sign-out says nothing about this sign-in: run again.
            if case .success(let summary) = await runOnce(), summary.wasStopped { continue }
            guard isSignedIn && !Task.isCancelled else { return }
            do { try await sleep(interval) } catch { return }
        }
    }

    /// Runs the client once; concurrent callers share the run in progress.
    private func runOnce() async -> Result<SyncSummary, SyncError> {
        if let shared = current {
            let result = await shared.value
            if current == shared { current = nil }
            return result
        }
        let client = self.client
        publish(.started)
        // The outcome is published inside the task, before its value is ready: `shutdown()` waits
        // for the value, so a subscriber hears how the last run ended before the updates end.
        let task = Task { [self] () async -> Result<SyncSummary, SyncError> in
            do throws(SyncError) {
                let summary = try await client.run { self.publish(.progress($0)) }
                publish(.finished(summary))
                return .success(summary)
            } catch {
                publish(.failed(error))
                return .failure(error)
            }
        }
        current = task
        let result = await task.value
        if current == task { current = nil }
        completedRuns += 1
        lastResult = result
        return result
    }
}
