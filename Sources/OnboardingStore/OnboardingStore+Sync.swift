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
    package func syncCursor() throws(StoreError) -> UInt64 {
        try reading { transaction in try readSyncCursor(transaction) }
    }

    /// Records the server's acknowledgement durably (its own commit). The cursor may move back:
    /// a server that lost data answers with an earlier seq, and the client resends from there.
    package func setSyncCursor(_ seq: UInt64) throws(StoreError) {
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
    package func observeAppends(_ handler: @escaping @Sendable ([Record]) -> Void) -> AppendObservation {
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
package final class AppendObservation: Sendable {
    private let cancellation: Mutex<(@Sendable () -> Void)?>

    init(_ cancel: @escaping @Sendable () -> Void) { cancellation = Mutex(cancel) }

    package func cancel() {
        let cancel = cancellation.withLock { current -> (@Sendable () -> Void)? in
            defer { current = nil }
            return current
        }
        cancel?()
    }
}

extension StoreLayout.MetaKey {
    /// 32 bytes: the sync server's Ed25519 public key, pinned at the store's first sync with a
    /// key; the server's forget requests must be signed with it.
    static let serverKey = Array("server_key".utf8)
}

extension OnboardingStore {
    /// The sync server key this store pinned (``pinServerKey(_:)``), or nil before any.
    package func pinnedServerKey() throws(StoreError) -> SigningPublicKey? {
        let bytes = try reading { try $0.get(databases.meta, key: StoreLayout.MetaKey.serverKey) }
        guard let bytes else { return nil }
        guard let key = SigningPublicKey(bytes: bytes) else {
            throw StoreError(
                .corrupted, "the pinned server key in \(path) is \(bytes.count) bytes, not an Ed25519 public key; the store is damaged (onboard verify)")
        }
        return key
    }

    /// Pins the sync server's public key, durably: from then on only forget requests signed with
    /// it are carried out. Pinning the key already pinned does nothing; another key is refused
    /// (``StoreError/Code/conflict``), since a server whose key changes is not the one enrolled.
    package func pinServerKey(_ key: SigningPublicKey) throws(StoreError) {
        try ensureOpen()
        guard !options.readOnly else { throw StoreError(.notWritable, "store at \(path) is open read-only") }
        if let pinned = try pinnedServerKey() {
            guard pinned == key else {
                throw StoreError(
                    .conflict,
                    "\(path) is pinned to the sync server key \(pinned.hex), not \(key.hex): this is not the server the device enrolled with (or the server's key was replaced); check the address, or enrol the device anew"
                )
            }
            return
        }
        do {
            try environment.write { try $0.put(databases.meta, key: StoreLayout.MetaKey.serverKey, value: key.bytes) }
        } catch {
            throw StoreError(.storage, "cannot pin the server key in \(path): \(error)")
        }
    }
}
