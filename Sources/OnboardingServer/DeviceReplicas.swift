import Foundation
import OnboardingModel
import OnboardingStore
import Synchronization

/// The server's copy of every device's log: one ``OnboardingStore`` per device under
/// `DATA/devices/`, holding exactly the device's records at the same seqs with the same hashes.
/// The same storage code as the device, durable (`full`) before anything is acknowledged.
///
/// At most ``maximumOpen`` replicas are open at once: each costs three file descriptors, two
/// memory maps and some memory, and a fleet has far more devices than a process has of those.
/// A request leases the replica it needs (``withReplica(_:_:)``); when a replica that is not
/// open is needed and the limit is reached, the least recently used one that no request holds is
/// closed first. When every open replica is leased, the request fails with
/// ``ReplicaLimitReached`` (the server answers 503 with Retry-After) rather than exceed it.
///
/// ```swift
/// let replicas = try DeviceReplicas(directory: data + "/devices", maximumOpen: 1024)
/// let head = try replicas.withReplica("kiosk-7") { try $0.head() }
/// ```
final class DeviceReplicas: Sendable {
    /// 1,024 open replicas: 3,072 descriptors and 2,048 maps, well inside the limits of a stock
    /// Linux (`ulimit -Hn` 1,048,576 or more, `vm.max_map_count` 65,530) and about 200 MB of
    /// resident memory; far more than the requests a server handles at once, so the least
    /// recently used replica is almost never one a request still needs. A replica opens in about
    /// a millisecond, so a device whose replica was closed pays that once per sync.
    static let defaultMaximumOpen = 1024

    let directory: String
    let maximumOpen: Int
    /// The map size a replica opens with (it grows by doubling when full).
    let initialMapSizeBytes: Int

    private struct Entry {
        let store: OnboardingStore
        var leases = 0
        var lastUse: UInt64
        /// Kept open until ``closeAll()`` (tests hold replicas across requests).
        var pinned = false
    }

    private struct State {
        var open: [String: Entry] = [:]
        var clock: UInt64 = 0
        var closed = false
        var opened = 0
        var evicted = 0
    }

    // Opening and closing happen under this lock too: two requests for one device must never
    // open its environment twice, nor reopen it while it is being closed. Both take about a
    // millisecond, so serialising them costs little next to the request's own commit.
    private let state = Mutex(State())

    init(
        directory: String, maximumOpen: Int = DeviceReplicas.defaultMaximumOpen,
        initialMapSizeBytes: Int = OnboardingStore.Options().initialMapSizeBytes
    ) throws {
        precondition(maximumOpen >= 1, "at least one replica must be allowed open")
        self.directory = directory
        self.maximumOpen = maximumOpen
        self.initialMapSizeBytes = initialMapSizeBytes
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
    }

    /// Directory names are the device id in hex: ids may contain `.` and `:`, and `..` must not
    /// become a path.
    func path(for device: String) -> String {
        (directory as NSString).appendingPathComponent(HexBytes.encode(Array(device.utf8)))
    }

    /// Runs `body` with the device's replica (opened, and created, if it is not open), which
    /// stays open at least until `body` returns.
    func withReplica<R>(_ device: String, _ body: (OnboardingStore) throws -> R) throws -> R {
        let store = try lease(device)
        defer { release(device) }
        return try body(store)
    }

    /// The device's replica, kept open until ``closeAll()``; for tests, which hold a replica
    /// across requests.
    func pinnedStore(for device: String) throws -> OnboardingStore {
        let store = try lease(device)
        state.withLock { state in
            state.open[device]?.pinned = true
            state.open[device]?.leases -= 1
        }
        return store
    }

    /// How many replicas are open now, were opened, and were closed to make room (for tests and
    /// the operator's figures).
    var counts: (open: Int, opened: Int, evicted: Int) {
        state.withLock { ($0.open.count, $0.opened, $0.evicted) }
    }

    /// ``lease(_:)`` for the audit, whose callback throws only store errors.
    func leaseForAudit(_ device: String) throws(StoreError) -> OnboardingStore {
        do { return try lease(device) } catch let error as StoreError { throw error } catch {
            throw StoreError(.storage, "the replica of \(device) cannot be opened now: \(error); retry the audit")
        }
    }

    /// The device's replica, leased: ``release(_:)`` must follow.
    func lease(_ device: String) throws -> OnboardingStore {
        try state.withLock { (state: inout State) throws -> OnboardingStore in
            guard !state.closed else { throw StoreError(.closed, "the server is shutting down") }
            state.clock += 1
            if var entry = state.open[device] {
                entry.leases += 1
                entry.lastUse = state.clock
                state.open[device] = entry
                return entry.store
            }
            if state.open.count >= maximumOpen {
                let idle = state.open.filter { $0.value.leases == 0 && !$0.value.pinned }
                guard let victim = idle.min(by: { $0.value.lastUse < $1.value.lastUse }) else {
                    throw ReplicaLimitReached(maximumOpen: maximumOpen)
                }
                state.open[victim.key] = nil
                victim.value.store.close()
                state.evicted += 1
            }
            var options = OnboardingStore.Options()
            options.deviceID = device
            options.maintainProjections = false
            // A replica keeps the heads its device signed; it has no key of its own.
            options.signsHeads = false
            options.initialMapSizeBytes = initialMapSizeBytes
            // The server checks uploaded times against its own clock (SyncServer.Options).
            options.maximumClockSkewMilliseconds = nil
            let store = try OnboardingStore.open(at: path(for: device), options: options)
            state.open[device] = Entry(store: store, leases: 1, lastUse: state.clock)
            state.opened += 1
            return store
        }
    }

    func release(_ device: String) {
        state.withLock { state in
            guard var entry = state.open[device] else { return }
            precondition(entry.leases > 0, "a replica released more often than leased")
            entry.leases -= 1
            state.open[device] = entry
        }
    }

    /// Closes every open replica that no request holds and no test pinned (they reopen on the
    /// next lease).
    func closeIdle() {
        state.withLock { state in
            for (device, entry) in state.open where entry.leases == 0 && !entry.pinned {
                entry.store.close()
                state.open[device] = nil
            }
        }
    }

    /// Closes every replica; later leases fail. Requests still holding one must have finished
    /// (the server stops its HTTP layer first).
    func closeAll() {
        state.withLock { state in
            state.closed = true
            for entry in state.open.values { entry.store.close() }
            state.open.removeAll()
        }
    }
}

/// Every replica the server may keep open is in use by a request: the server answers 503 with
/// Retry-After instead of opening more (which would run out of file descriptors or maps).
struct ReplicaLimitReached: Error, CustomStringConvertible {
    let maximumOpen: Int
    var description: String {
        "all \(maximumOpen) replicas the server may keep open are in use by requests"
    }
}
