import OnboardingModel

/// The lockout engine's keys and their states, laid out for memory and for one cache miss per
/// decision (one entry per attacked account and device; the benchmark's `lockout_bytes_per_key`
/// and `lockout_decision_p99`):
///
/// - `slots`: a power-of-two array of 96-byte entries (the user, the ``LockoutEngine/KeyState``,
///   the factor, the device as an index into `devices`, and the key's hash), up to 4/5 full. A
///   lookup hashes the key once and reads its home slot and, rarely, the few after it: Robin Hood
///   linear probing keeps every entry close to its home, and removals shift the run back (no
///   tombstones). No separate index, so no second dependent memory access.
/// - `devices`: each device name once (a log names few devices), instead of one copy per key.
///
/// Where an entry sits depends on the hash seed and the history; `==` compares the keys and
/// states, never the layout.
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
        /// The key's hash, never 0; 0 marks an empty slot. Probes compare it before the strings,
        /// and growing re-slots entries without hashing their strings again.
        var hash: UInt32

        static let empty = Entry(user: nil, state: KeyState(), factor: .password, device: 0, hash: 0)

        var isEmpty: Bool { hash == 0 }
    }

    /// The table itself: a power of two in size.
    private var slots: [Entry]
    private(set) var count = 0
    var isEmpty: Bool { count == 0 }
    private var devices: [String?] = []
    private var deviceIDs: [String?: UInt32] = [:]
    /// Windows of tiers 3 and up (custom policies only), for the keys that have one.
    private var extraWindows: [LockoutKey: [KeyState.Window?]] = [:]

    /// The table starts this small: an engine that sees no failure costs next to nothing.
    static let minimumSlotCount = 8
    /// At most 4/5 full: Robin Hood probing keeps lookups short at that load, and 100,000 keys
    /// fit in 2^17 slots (126 bytes a key) instead of 2^18.
    static let maximumLoadNumerator = 4, maximumLoadDenominator = 5
    /// Device indices are `UInt32`; a billion keys is far beyond any log this store holds.
    static let maximumEntryCount = 1 << 30

    init() {
        slots = Array(repeating: .empty, count: LockoutKeyTable.minimumSlotCount)
    }

    /// The entries in use, in no particular order.
    private var entries: [Entry] { slots.filter { !$0.isEmpty } }

    /// The key of `entry`.
    func key(of entry: Entry) -> LockoutKey {
        LockoutKey(user: entry.user, device: devices[Int(entry.device)], factor: entry.factor)
    }

    /// The keys of `user` (on every device, for every factor).
    func keys(ofUser user: String?) -> [LockoutKey] {
        slots.compactMap { !$0.isEmpty && $0.user == user ? key(of: $0) : nil }
    }

    /// Every key with its state, in no particular order.
    var keysAndStates: [(key: LockoutKey, state: KeyState)] {
        entries.map { (key(of: $0), $0.state) }
    }

    subscript(key: LockoutKey) -> KeyState? {
        get {
            let slot = find(key, hash: LockoutKeyTable.hash(key))
            return slot.map { slots[$0].state }
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
        return lhs.slots.allSatisfy { $0.isEmpty || rhs[lhs.key(of: $0)] == $0.state }
    }

    // MARK: Slots

    private static func hash(_ key: LockoutKey) -> UInt32 {
        var hasher = Hasher()
        hasher.combine(key.user)
        hasher.combine(key.device)
        hasher.combine(key.factor)
        let hash = UInt32(truncatingIfNeeded: hasher.finalize())
        return hash == 0 ? 1 : hash
    }

    /// How far the entry in `slot` sits from its home slot.
    private func displacement(_ slot: Int, mask: Int) -> Int {
        (slot - Int(slots[slot].hash) & mask) & mask
    }

    /// The slot holding `key`, or `nil`. A probe stops at an empty slot or at an entry closer to
    /// its home than the probe is to the key's: Robin Hood order means the key is not further on.
    private func find(_ key: LockoutKey, hash: UInt32) -> Int? {
        let mask = slots.count - 1
        var slot = Int(hash) & mask
        var distance = 0
        while true {
            let stored = slots[slot].hash
            if stored == 0 || (slot - Int(stored) & mask) & mask < distance { return nil }
            if stored == hash, slots[slot].factor == key.factor, slots[slot].user == key.user,
                devices[Int(slots[slot].device)] == key.device
            {
                return slot
            }
            slot = (slot + 1) & mask
            distance += 1
        }
    }

    private mutating func insertOrReplace(_ state: KeyState, for key: LockoutKey) {
        let hash = LockoutKeyTable.hash(key)
        if let slot = find(key, hash: hash) {
            slots[slot].state = state
            return
        }
        precondition(count < LockoutKeyTable.maximumEntryCount, "the lockout table holds \(count) keys, its limit")
        if (count + 1) * LockoutKeyTable.maximumLoadDenominator > slots.count * LockoutKeyTable.maximumLoadNumerator {
            grow()
        }
        place(Entry(user: key.user, state: state, factor: key.factor, device: deviceID(key.device), hash: hash))
        count += 1
    }

    /// Puts a new entry in the first empty slot from its home, passing it ahead of every entry
    /// closer to its own home (Robin Hood): probe lengths stay even.
    private mutating func place(_ entry: Entry) {
        let mask = slots.count - 1
        var carried = entry
        var slot = Int(carried.hash) & mask
        var distance = 0
        while !slots[slot].isEmpty {
            let resident = displacement(slot, mask: mask)
            if resident < distance {
                swap(&carried, &slots[slot])
                distance = resident
            }
            slot = (slot + 1) & mask
            distance += 1
        }
        slots[slot] = carried
    }

    private mutating func remove(_ key: LockoutKey) {
        guard var slot = find(key, hash: LockoutKeyTable.hash(key)) else { return }
        if !extraWindows.isEmpty { extraWindows[key] = nil } // only policies of 3+ tiers keep any
        // Shift the rest of the run back one slot, up to an empty slot or an entry at home.
        let mask = slots.count - 1
        var next = (slot + 1) & mask
        while !slots[next].isEmpty && displacement(next, mask: mask) > 0 {
            slots[slot] = slots[next]
            slot = next
            next = (next + 1) & mask
        }
        slots[slot] = .empty
        count -= 1
    }

    private mutating func grow() {
        let old = slots
        slots = Array(repeating: .empty, count: old.count * 2)
        for entry in old where !entry.isEmpty { place(entry) }
    }

    private mutating func deviceID(_ device: String?) -> UInt32 {
        if let id = deviceIDs[device] { return id }
        let id = UInt32(devices.count)
        devices.append(device)
        deviceIDs[device] = id
        return id
    }
}
