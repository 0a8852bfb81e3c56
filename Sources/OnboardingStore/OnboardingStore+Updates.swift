import Dispatch
import Foundation
import OnboardingModel
import OnboardingProjections
import Synchronization

/// Watching a store from SwiftUI or an actor: `AsyncSequence`s of what changes.
///
/// ```swift
/// for await session in store.deviceStateUpdates() {          // the device's session, now and after each change
///     screen = session.flow.screen; canSubmit = session.flow.submitEnabled
/// }
/// for try await batch in store.appendedRecords() {       // every record appended from now on, in order
///     for record in batch { print(record.seq, record.event.type) }
/// }
/// ```
///
/// Both end when the consuming task is cancelled (the registration goes with it) or the store
/// closes. Neither blocks an append: a slow consumer costs memory only up to a bound, and what
/// happens past it is documented on each.
extension OnboardingStore {
    /// The default bound of ``appendedRecords(bufferingBatches:)``: 256 commits in flight is far
    /// more than a consumer keeping up ever holds, and at most a few MiB of records.
    public static let defaultUpdateBufferBatches = 256

    /// The records appended from the moment of the call, one element per commit, in seq order,
    /// each once it is durable and applied to the projections.
    ///
    /// A consumer that falls more than `bufferingBatches` commits behind does not lose records
    /// silently: it still receives the commits buffered so far, then the sequence throws
    /// ``UpdatesOverflow``, whose `resumeSeq` is the first seq it did not get. Read the rest with
    /// `records(in:)` and subscribe again.
    public func appendedRecords(bufferingBatches: Int = OnboardingStore.defaultUpdateBufferBatches)
        -> AsyncThrowingStream<[Record], any Error>
    {
        precondition(bufferingBatches > 0, "appendedRecords needs room for at least one commit (got \(bufferingBatches))")
        let (stream, continuation) = AsyncThrowingStream<[Record], any Error>.makeStream(
            bufferingPolicy: .bufferingOldest(bufferingBatches))
        let overflowed = Atomic<Bool>(false)
        let observation = observeAppends { records in
            guard !overflowed.load(ordering: .acquiring) else { return }
            if case .dropped = continuation.yield(records) {
                overflowed.store(true, ordering: .releasing)
                continuation.finish(throwing: UpdatesOverflow(resumeSeq: records[0].seq, bufferedBatches: bufferingBatches))
            }
        }
        let closing = observeClose { continuation.finish() }
        continuation.onTermination = { _ in
            observation.cancel()
            closing.cancel()
        }
        // Registered first, checked after: a store closing meanwhile ends the sequence either way.
        if isClosed { continuation.finish() }
        return stream
    }

    /// The session of `device` (default: this store's device): first as it is now, then after
    /// every commit that changes it, and whenever the clock changes what it shows with no event
    /// at all — a lock ends (the screen returns to the form), its message names a minute less,
    /// a resend timer ends. So an app's screen unlocks by itself, with no polling: the sequence
    /// sleeps on the store's time source (``Options/timeSource``) until the state's next
    /// change (``DeviceState/nextChange(after:)``). Each value is the state at the time source's
    /// time when it was read (``deviceState(device:at:)``).
    ///
    /// Sessions are states, not events: a consumer slower than the appends gets the newest one
    /// (the buffer holds one, the latest), never a stale one after a newer. The values come in
    /// the order the commits were made.
    public func deviceStateUpdates(device: String? = nil) -> AsyncStream<DeviceState> {
        let device = device ?? deviceID
        let (stream, continuation) = AsyncStream<DeviceState>.makeStream(bufferingPolicy: .bufferingNewest(1))
        // One serial queue per subscription: each read sees at least the commit that asked for
        // it, and the reads reach the consumer in order.
        let queue = DispatchQueue(label: "OnboardingStore.deviceStateUpdates")
        let last = Mutex<DeviceState?>(nil)
        let clock = options.timeSource
        // The one pending wake-up: replaced by every read, so at most one sleeps per subscription.
        let wake = Mutex<Task<Void, Never>?>(nil)
        let publish: @Sendable (OnboardingStore, @escaping @Sendable () -> Void) -> Void = { store, again in
            let now = clock.now()
            guard let session = try? store.deviceState(device: device, at: now) else { return }
            let changed = last.withLock { previous -> Bool in
                defer { previous = session }
                return previous != session
            }
            if changed { continuation.yield(session) }
            let next = session.nextChange(after: now)
            let timer = next.map { deadline in
                Task {
                    do { try await clock.sleep(until: deadline) } catch { return }
                    queue.async(execute: again)
                }
            }
            wake.withLock { pending in
                pending?.cancel()
                pending = timer
            }
        }
        // `read` schedules itself again when the state's next change comes.
        let read = Mutex<(@Sendable () -> Void)?>(nil)
        let readNow: @Sendable () -> Void = { [weak self] in
            guard let self else { return continuation.finish() }
            publish(self) { read.withLock { $0 }?() }
        }
        read.withLock { $0 = readNow }
        queue.async(execute: readNow)
        let observation = observeAppends { records in
            guard records.contains(where: { $0.event.device == device }) else { return }
            queue.async(execute: readNow)
        }
        let closing = observeClose { queue.async { continuation.finish() } }
        continuation.onTermination = { _ in
            observation.cancel()
            closing.cancel()
            wake.withLock { pending in
                pending?.cancel()
                pending = nil
            }
            read.withLock { $0 = nil }
        }
        if isClosed { queue.async { continuation.finish() } }
        return stream
    }

    /// Calls `handler` once when the store closes (after its last commit).
    func observeClose(_ handler: @escaping @Sendable () -> Void) -> AppendObservation {
        let id = UUID()
        closeObservers.withLock { $0[id] = handler }
        return AppendObservation { [weak self] in self?.closeObservers.withLock { _ = $0.removeValue(forKey: id) } }
    }
}

/// ``OnboardingStore/appendedRecords(bufferingBatches:)`` ended because its consumer fell behind.
public struct UpdatesOverflow: Error, Sendable, CustomStringConvertible {
    /// The first seq the consumer did not receive: read from here with `records(in:)`.
    public let resumeSeq: UInt64
    /// The bound it passed.
    public let bufferedBatches: Int

    public var description: String {
        "the consumer of appendedRecords fell more than \(bufferedBatches) commits behind; read from seq \(resumeSeq) with records(in:) and subscribe again"
    }
}
