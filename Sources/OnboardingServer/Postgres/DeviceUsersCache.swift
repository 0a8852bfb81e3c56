import OnboardingModel
import Synchronization

/// The users of recently used device logs, as this node last read or wrote them, so an upload
/// does not read and unseal every user of its device again (docs/server-storage.md, Ingest).
///
/// The database stays the only truth: each entry is valid for one `devices.users_version`, a
/// random number every change to a device's `device_users` rows sets anew (on any node), and for
/// one pseudonym key. A reader takes an entry only when both equal what it just read from the
/// device's row; anything else reloads from the table. An entry is stored only after the
/// transaction that wrote or read it committed.
final class DeviceUsersCache: Sendable {
    struct Entry: Sendable {
        var version: Int64
        var directory: UserDirectory
        var nextNumber: Int64

        /// The users an entry holds, live and forgotten: what it costs in memory.
        var size: Int { directory.entries.count + directory.forgotten.count + 1 }
    }

    /// The most users (live and forgotten, over all cached devices) the cache holds: at ~250 B
    /// each, ~5 MB, whatever the fleet's size, so a node's memory does not grow with the number
    /// of devices. What the cache saves is a device's users read again for each batch of one
    /// sync (a catch-up of thousands of records is many batches in a row); a few thousand
    /// devices syncing at once fit. A fleet's devices come back minutes apart, long after any
    /// bound a node could afford, so a larger cache would buy little. A device with more users
    /// than this is never cached (it is read each time).
    static let defaultCapacity = 20_000

    private struct State: ~Copyable {
        var entries: [String: Entry] = [:]
        /// Devices in the order they were stored, oldest first: eviction order.
        var order: [String] = []
        var orderStart = 0
        var size = 0
    }

    private let capacity: Int
    private let state = Mutex(State())

    init(capacity: Int = DeviceUsersCache.defaultCapacity) { self.capacity = capacity }

    /// The entry of `device` if it is the one at `version` under `pseudonymKey`.
    func entry(of device: String, version: Int64, pseudonymKey: SecretKey) -> Entry? {
        state.withLock { state in
            guard let entry = state.entries[device], entry.version == version, entry.directory.pseudonymKey == pseudonymKey else { return nil }
            return entry
        }
    }

    func store(_ entry: Entry, of device: String) {
        guard entry.size <= capacity else { return remove(device) }
        state.withLock { state in
            if let old = state.entries.updateValue(entry, forKey: device) {
                state.size -= old.size
            } else {
                state.order.append(device)
            }
            state.size += entry.size
            while state.size > capacity, state.orderStart < state.order.count {
                let oldest = state.order[state.orderStart]
                state.orderStart += 1
                if oldest != device, let evicted = state.entries.removeValue(forKey: oldest) { state.size -= evicted.size }
                if oldest == device { state.order.append(device) }
            }
            // Compact the eviction order once half of it is spent.
            if state.orderStart > 1_024, state.orderStart * 2 > state.order.count {
                state.order.removeFirst(state.orderStart)
                state.orderStart = 0
            }
        }
    }

    func remove(_ device: String) {
        state.withLock { state in
            if let old = state.entries.removeValue(forKey: device) { state.size -= old.size }
        }
    }

    /// How many devices and users the cache holds now (for tests and the bench).
    var count: (devices: Int, users: Int) { state.withLock { ($0.entries.count, $0.size) } }
}
