import Foundation
import OnboardingModel
import OnboardingStore
import Synchronization

/// The server's copy of every device's log: one ``OnboardingStore`` per device under
/// `DATA/devices/`, holding exactly the device's records at the same seqs with the same hashes.
/// The same storage code as the device, durable (`full`) before anything is acknowledged.
final class DeviceReplicas: Sendable {
    let directory: String
    private let stores = Mutex<[String: OnboardingStore]>([:])

    init(directory: String) throws {
        self.directory = directory
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
    }

    /// Directory names are the device id in hex: ids may contain `.` and `:`, and `..` must not
    /// become a path.
    func path(for device: String) -> String {
        (directory as NSString).appendingPathComponent(HexBytes.encode(Array(device.utf8)))
    }

    /// The device's replica, opened (and created) on first use and kept open.
    func store(for device: String) throws(StoreError) -> OnboardingStore {
        if let open = stores.withLock({ $0[device] }) { return open }
        var options = OnboardingStore.Options()
        options.deviceID = device
        options.maintainProjections = false
        // A replica keeps the heads its device signed; it has no key of its own.
        options.signsHeads = false
        let store = try OnboardingStore.open(at: path(for: device), options: options)
        return stores.withLock { stores in
            if let raced = stores[device] { return raced }
            stores[device] = store
            return store
        }
    }

    func closeAll() {
        let all = stores.withLock { stores in
            defer { stores.removeAll() }
            return Array(stores.values)
        }
        for store in all { store.close() }
    }
}

