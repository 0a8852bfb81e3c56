import OnboardingModel

/// The lockout engine's keys and their states, laid out for memory (one entry per attacked
/// account and device; the benchmark's `lockout_bytes_per_key`):
///
/// - `entries`: one contiguous array of 96-byte entries (the user, the ``LockoutEngine/KeyState``,
///   the factor, the device as an index into `devices`, and the key's hash);
/// - `slots`: an open-addressing index over them, 4 bytes a slot, at most half full, so a lookup
///   is one hash of the key and usually one probe;
/// - `devices`: each device name once (a log names few devices), instead of one copy per key.
///
/// Removing an entry moves the last one into its place, so the order of `entries` depends on the
/// history; `==` compares the keys and states, never the layout.
///
/// ```swift
/// var table = LockoutKeyTable()
/// table[key] = state          // insert or replace
/// table[key]?.failures        // O(1)
/// table[key] = nil            // remove, with the key's extra windows
/// ```
struct LockoutKeyTable: Sendable, Equatable {
    typealias KeyState = LockoutEngine.KeyState

    /// Fields ordered so the key's small parts fill the state's tail: 16 + 70 + 1 (+1) + 4 + 4 = 96 bytes.
    struct Entry: Sendable {
        var user: String?
        var state: KeyState
        var factor: LockoutFactor
        /// Index into `devices`.
        var device: UInt32
        /// The low 32 bits of the key's hash: probes compare it before the strings, and growing or
        /// deleting re-slots entries without hashing their strings again.
        var hash: UInt32
    }

    private(set) var entries: [Entry] = []
    /// 0: empty; else an index into `entries` + 1. A power of two in size, with linear probing.
    private var slots: [UInt32]
    private var devices: [String?] = []
    private var deviceIDs: [String?: UInt32] = [:]
    /// Windows of tiers 3 and up (custom policies only), for the keys that have one.
    private var extraWindows: [LockoutKey: [KeyState.Window?]] = [:]

    /// The index starts this small: an engine that sees no failure costs next to nothing.
    static let minimumSlotCount = 16
    /// Slot values are `UInt32` indices + 1 and the slots stay at most half full; a billion keys
    /// is far beyond any log this store holds.
    static let maximumEntryCount = 1 << 30

    init() {
        slots = Array(repeating: 0, count: LockoutKeyTable.minimumSlotCount)
    }

    var count: Int { entries.count }

    /// The key of `entry`.
    func key(of entry: Entry) -> LockoutKey {
        LockoutKey(user: entry.user, device: devices[Int(entry.device)], factor: entry.factor)
    }

    /// Every key with its state, in no particular order.
    var keysAndStates: [(key: LockoutKey, state: KeyState)] {
        entries.map { (key(of: $0), $0.state) }
    }

    subscript(key: LockoutKey) -> KeyState? {
        get {
            let index = probe(key, hash: LockoutKeyTable.hash(key)).index
            return index.map { entries[$0].state }
        }
        set {
            if let newValue { insertOrReplace(newValue, for: key) } else { remove(key) }
        }
    }

    /// The windows of tiers 3 and up of `key` (all absent when it has none).
    func extraWindows(for key: LockoutKey, tierCount: Int) -> [KeyState.Window?] {
        let count = max(tierCount - KeyState.inlineWindows, 0)
        return extraWindows[key] ?? Array(repeating: nil, count: count)
    }

    /// Keeps `windows` for `key`; no window at all keeps nothing, so equal states compare equal.
    mutating func setExtraWindows(_ windows: [KeyState.Window?], for key: LockoutKey) {
        extraWindows[key] = windows.contains { $0 != nil } ? windows : nil
    }

    static func == (lhs: LockoutKeyTable, rhs: LockoutKeyTable) -> Bool {
        guard lhs.count == rhs.count, lhs.extraWindows == rhs.extraWindows else { return false }
        // Keys are unique on both sides and the counts match, so one direction suffices.
        return lhs.entries.allSatisfy { rhs[lhs.key(of: $0)] == $0.state }
    }

    // MARK: Index

    private static func hash(_ key: LockoutKey) -> UInt32 {
        var hasher = Hasher()
        hasher.combine(key.user)
        hasher.combine(key.device)
        hasher.combine(key.factor)
        return UInt32(truncatingIfNeeded: hasher.finalize())
    }

    /// The slot holding `key`'s entry and the entry's index, or the empty slot where it would go.
    private func probe(_ key: LockoutKey, hash: UInt32) -> (slot: Int, index: Int?) {
        let mask = slots.count - 1
        var slot = Int(hash) & mask
        while true {
            let stored = slots[slot]
            if stored == 0 { return (slot, nil) }
            let index = Int(stored) - 1
            if entries[index].hash == hash, entries[index].factor == key.factor, entries[index].user == key.user,
               devices[Int(entries[index].device)] == key.device {
                return (slot, index)
            }
            slot = (slot + 1) & mask
        }
    }

    private mutating func insertOrReplace(_ state: KeyState, for key: LockoutKey) {
        let hash = LockoutKeyTable.hash(key)
        var (slot, index) = probe(key, hash: hash)
        if let index {
            entries[index].state = state
            return
        }
        precondition(entries.count < LockoutKeyTable.maximumEntryCount, "the lockout table holds \(entries.count) keys, its limit")
        if (entries.count + 1) * 2 > slots.count {
            resizeSlots(to: slots.count * 2)
            slot = probe(key, hash: hash).slot
        }
        entries.append(Entry(user: key.user, state: state, factor: key.factor, device: deviceID(key.device), hash: hash))
        slots[slot] = UInt32(entries.count)
    }

    private mutating func remove(_ key: LockoutKey) {
        let (slot, found) = probe(key, hash: LockoutKeyTable.hash(key))
        guard let index = found else { return }
        extraWindows[key] = nil
        emptySlot(slot)
        let last = entries.count - 1
        if index != last {
            slots[slotHolding(entry: last)] = UInt32(index + 1)
            entries[index] = entries[last]
        }
        entries.removeLast()
    }

    /// Empties `slot` and moves later entries of its probe run back, so no lookup ever stops
    /// early at the hole (no tombstones).
    private mutating func emptySlot(_ slot: Int) {
        let mask = slots.count - 1
        var hole = slot
        var next = (slot + 1) & mask
        while slots[next] != 0 {
            let home = Int(entries[Int(slots[next]) - 1].hash) & mask
            // The entry at `next` may fill the hole unless its home lies after the hole, up to `next`.
            if (next - home) & mask >= (next - hole) & mask {
                slots[hole] = slots[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        slots[hole] = 0
    }

    /// The slot that points at `entries[index]`.
    private func slotHolding(entry index: Int) -> Int {
        let mask = slots.count - 1
        var slot = Int(entries[index].hash) & mask
        while Int(slots[slot]) != index + 1 {
            precondition(slots[slot] != 0, "lockout table entry \(index) has no slot")
            slot = (slot + 1) & mask
        }
        return slot
    }

    private mutating func resizeSlots(to count: Int) {
        var resized = [UInt32](repeating: 0, count: count)
        let mask = count - 1
        for (index, entry) in entries.enumerated() {
            var slot = Int(entry.hash) & mask
            while resized[slot] != 0 { slot = (slot + 1) & mask }
            resized[slot] = UInt32(index + 1)
        }
        slots = resized
    }

    private mutating func deviceID(_ device: String?) -> UInt32 {
        if let id = deviceIDs[device] { return id }
        let id = UInt32(devices.count)
        devices.append(device)
        deviceIDs[device] = id
        return id
    }
}
