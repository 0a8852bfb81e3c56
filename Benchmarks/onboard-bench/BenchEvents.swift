import CBaseline
import Foundation
import OnboardingModel

/// SplitMix64: small, seeded, deterministic (the same events on every run and machine).
struct SplitMix64 {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func next(below bound: Int) -> Int { Int(next() % UInt64(bound)) }
}

/// The benchmark's own simple workload: sign-in attempts of many users on one device, in sessions
/// of four events, with one user (`historyUser`) having exactly `historyEvents` events spread
/// evenly through the log. Ids are time-ordered (UUIDv7 layout) as the issue recommends.
enum BenchEvents {
    static let device = "bench-device"
    static let historyUser = "history-user"
    static let startMilliseconds: Int64 = 1_767_225_600_000 // 2026-01-01T00:00:00Z

    static func make(count: Int, users: Int = 10_000, historyEvents: Int = 0, seed: UInt64 = 5) -> [Event] {
        var random = SplitMix64(state: seed)
        let stride = historyEvents > 0 ? max(1, count / historyEvents) : Int.max
        var historyLeft = historyEvents
        var session = uuid(&random, milliseconds: startMilliseconds)
        var events: [Event] = []
        events.reserveCapacity(count)
        for index in 0..<count {
            let milliseconds = startMilliseconds + Int64(index) * 50
            if index % 4 == 0 { session = uuid(&random, milliseconds: milliseconds) }
            let user: String
            if historyLeft > 0 && index % stride == 0 {
                user = historyUser
                historyLeft -= 1
            } else {
                user = "user-\(random.next(below: users))"
            }
            let payload: Payload
            switch random.next(below: 4) {
            case 0: payload = .signInStarted(method: .passcode)
            case 1: payload = .signInSucceeded(method: .passcode, secondFactor: false)
            default: payload = .signInFailed(method: .passcode, reason: .invalidPasscode)
            }
            events.append(
                Event(
                    id: uuid(&random, milliseconds: milliseconds), device: device,
                    at: Timestamp(millisecondsSince1970: milliseconds), user: user, flow: session,
                    payload: payload))
        }
        precondition(historyLeft == 0, "the log is too short for \(historyEvents) history events")
        return events
    }

    /// UUIDv7 layout: 48-bit milliseconds, version 7, variant 10, the rest random.
    static func uuid(_ random: inout SplitMix64, milliseconds: Int64) -> UUID {
        var bytes = [UInt8](repeating: 0, count: 16)
        for index in 0..<6 { bytes[index] = UInt8(truncatingIfNeeded: milliseconds >> (8 * (5 - index))) }
        let low = random.next(), high = random.next()
        for index in 6..<16 { bytes[index] = UInt8(truncatingIfNeeded: (index < 11 ? low : high) >> (8 * (index % 8))) }
        bytes[6] = 0x70 | (bytes[6] & 0x0F)
        bytes[8] = 0x80 | (bytes[8] & 0x3F)
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
    }
}

/// The events pre-encoded as the store would write them at seqs 1…n of a new log, in one arena,
/// with `cb_event` descriptors pointing into it for the C baselines and record arrays for SQLite.
final class EncodedEvents {
    let events: [Event]
    let descriptors: UnsafeMutableBufferPointer<cb_event>
    private let arena: UnsafeMutableRawBufferPointer

    init(_ events: [Event]) {
        self.events = events
        var records: [[UInt8]] = []
        records.reserveCapacity(events.count)
        var previous = Digest.zero
        // Users by pseudonym, as a store writes them (these events have no personal fields to seal),
        // and each user's entry (pseudonym ‖ key ‖ nonce ‖ sealed id) with the user's first record.
        let directory = UserDirectory(pseudonymKey: EncodedEvents.pseudonymKey)
        var refs: [String: UserRef] = [:]
        var entries: [Int: [UInt8]] = [:]
        for (index, event) in events.enumerated() {
            let seal = event.user.map { user in
                if let ref = refs[user] { return UserSeal(ref: ref, key: nil) }
                let ref = directory.ref(of: user)
                refs[user] = ref
                let key = SecretKey.random()
                entries[index] = ref.bytes + key.bytes + PersonalData.sealRandom(Array(user.utf8), key: key)
                return UserSeal(ref: ref, key: nil)
            }
            let bytes = RecordCodec.encode(event, seq: UInt64(index + 1), previousHash: previous, seal: seal)
            previous = Digest(bytes: Array(bytes[1...Digest.byteCount]))
            records.append(bytes)
        }
        let users = events.map { $0.user.map { EncodedEvents.indexPrefix(refs[$0]!) } }
        let total =
            records.reduce(0) { $0 + $1.count + 32 } + users.reduce(0) { $0 + ($1?.count ?? 0) }
            + entries.values.reduce(0) { $0 + $1.count }
        arena = .allocate(byteCount: max(total, 1), alignment: 16)
        descriptors = .allocate(capacity: events.count)
        var offset = 0
        func place(_ bytes: [UInt8]) -> UnsafePointer<UInt8> {
            let start = arena.baseAddress!.advanced(by: offset)
            bytes.withUnsafeBytes { start.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            offset += bytes.count
            return UnsafePointer(start.assumingMemoryBound(to: UInt8.self))
        }
        for (index, event) in events.enumerated() {
            let record = place(records[index])
            let id = place(withUnsafeBytes(of: event.id.uuid) { Array($0) })
            let session = event.flow.map { session in place(withUnsafeBytes(of: session.uuid) { Array($0) }) }
            let user = users[index].map(place)
            let entry = entries[index]
            descriptors[index] = cb_event(
                seq: UInt64(index + 1), record: record, record_length: records[index].count,
                id: id, user: user, user_length: users[index]?.count ?? 0,
                entry: entry.map(place), entry_length: entry?.count ?? 0,
                session: session)
        }
        precondition(offset <= total, "arena overrun")
    }

    /// The pseudonym key the C baselines' records are written under.
    static let pseudonymKey = SecretKey(bytes: [UInt8](repeating: 7, count: SecretKey.byteCount))

    /// The prefix of a user's `by_user` keys in format 2: the pseudonym's first 8 bytes.
    static func indexPrefix(_ ref: UserRef) -> [UInt8] { Array(ref.bytes.prefix(8)) }

    static func indexPrefix(of user: String) -> [UInt8] {
        indexPrefix(UserDirectory(pseudonymKey: pseudonymKey).ref(of: user))
    }

    deinit {
        arena.deallocate()
        descriptors.deallocate()
    }

    var count: Int { events.count }

    /// The descriptors of events `range`, for one C transaction.
    func slice(_ range: Range<Int>) -> UnsafePointer<cb_event> {
        UnsafePointer(descriptors.baseAddress!.advanced(by: range.lowerBound))
    }

    /// The batches of `size` events covering the whole log, in order.
    func batches(of size: Int) -> [Range<Int>] {
        Swift.stride(from: 0, to: count, by: size).map { $0..<min($0 + size, count) }
    }
}
