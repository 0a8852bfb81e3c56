import Foundation
import LMDB
import OnboardingModel
import Synchronization

extension StoreLayout.MetaKey {
    /// `u64` BE: the highest seq the sync server acknowledged (0: none).
    static let syncCursor = Array("sync_cursor".utf8)
}

extension OnboardingStore {
    /// The highest seq the sync server has acknowledged as durably stored (0 before any sync).
    public func syncCursor() throws(StoreError) -> UInt64 {
        try reading { transaction in try readSyncCursor(transaction) }
    }

    /// Records the server's acknowledgement durably (its own commit). The cursor may move back:
    /// a server that lost data answers with an earlier seq, and the client resends from there.
    public func setSyncCursor(_ seq: UInt64) throws(StoreError) {
        try ensureOpen()
        guard !options.readOnly else { throw StoreError(.notWritable, "store at \(path) is open read-only") }
        do {
            try environment.write { try $0.put(databases.meta, key: StoreLayout.MetaKey.syncCursor, value: StoreLayout.seqKey(seq)) }
        } catch {
            throw StoreError(.storage, "cannot write the sync cursor of \(path): \(error)")
        }
    }

    /// Calls `handler` with every batch of newly appended records, on the writer queue, after
    /// they are durable and applied to the projections. Keep it short: hand work to a task.
    ///
    /// ```swift
    /// let observation = store.observeAppends { records in agent.noticed(records) }
    /// // … observation.cancel()
    /// ```
    public func observeAppends(_ handler: @escaping @Sendable ([Record]) -> Void) -> AppendObservation {
        let id = UUID()
        observers.withLock { $0[id] = handler }
        return AppendObservation { [weak self] in self?.observers.withLock { _ = $0.removeValue(forKey: id) } }
    }

    func notifyObservers(_ records: [Record]) {
        guard !records.isEmpty else { return }
        for handler in observers.withLock({ Array($0.values) }) { handler(records) }
    }
}

/// Stops an ``OnboardingStore/observeAppends(_:)`` registration when cancelled.
public final class AppendObservation: Sendable {
    private let cancellation: Mutex<(@Sendable () -> Void)?>

    init(_ cancel: @escaping @Sendable () -> Void) { cancellation = Mutex(cancel) }

    public func cancel() {
        let cancel = cancellation.withLock { current -> (@Sendable () -> Void)? in
            defer { current = nil }
            return current
        }
        cancel?()
    }
}
