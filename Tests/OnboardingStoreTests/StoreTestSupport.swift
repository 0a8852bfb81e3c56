import Foundation
@_exported import TestSupport
import LMDB
import OnboardingModel
@testable import OnboardingStore

// Helpers for the store tests: temporary directories, events, and raw LMDB access to a closed
// store (to damage it the way a disk or a careless tool would). Nothing here asserts.

extension TemporaryDirectory {
    /// The store path used by most tests: a not yet existing directory inside this one.
    var store: String { appending("store") }
}

/// Options for a test store. Its clock stands at the end of time: tests date events on fixed
/// timelines (some running past the day they run), and only ``ClockSkewTests`` are about the
/// store's refusal of events from the future.
func storeOptions(_ configure: (inout OnboardingStore.Options) -> Void = { _ in }) -> OnboardingStore.Options {
    var options = OnboardingStore.Options()
    options.clock = { Timestamp.maximum }
    configure(&options)
    return options
}

/// Valid events with deterministic times, so two built the same way are equal.
enum Events {
    static let device = "kiosk-7"
    static let start = Timestamp(millisecondsSince1970: 1_796_054_400_123)

    static func make(
        _ index: Int = 0, id: UUID = UUID(), user: String? = "alice", session: UUID? = nil,
        payload: Payload = .signInStarted(method: .passcode), device: String = Events.device
    ) -> Event {
        Event(
            id: id, device: device, at: start.adding(milliseconds: Int64(index) * 1000), user: user,
            flow: session, payload: payload)
    }

    /// `count` distinct events, the n-th at `start + n s`.
    static func many(_ count: Int, from first: Int = 0, user: String? = "alice") -> [Event] {
        (first..<first + count).map { make($0, user: user) }
    }

    /// A user-added event whose texts are `bytes` long, to fill pages fast.
    static func long(_ index: Int, bytes: Int, user: String? = "alice") -> Event {
        let name = String(repeating: Character(UnicodeScalar(UInt8(97 + index % 26))), count: bytes)
        return make(
            index, user: user,
            payload: .userAdded(
                displayName: name, subtitle: "subtitle \(index)",
                imageRef: nil, passcodePolicy: .numeric,
                passcodeMinLength: 6))
    }
}

extension Event {
    /// The same event with different content under the same id.
    func altered() -> Event {
        var copy = self
        copy.at = copy.at.adding(milliseconds: 1)
        return copy
    }
}

/// The documented key layouts (docs/format.md), built by hand so the tests pin the format.
enum Keys {
    static func seq(_ seq: UInt64) -> [UInt8] { withUnsafeBytes(of: seq.bigEndian) { Array($0) } }
    static func uuid(_ id: UUID) -> [UInt8] { withUnsafeBytes(of: id.uuid) { Array($0) } }
    static func session(_ session: UUID, _ seq: UInt64) -> [UInt8] { uuid(session) + Keys.seq(seq) }
    static let formatVersion = Array("format_version".utf8)
    static let deviceID = Array("device_id".utf8)
    static let head = Array("head".utf8)
}

func number(_ bytes: some Collection<UInt8>) -> UInt64 {
    bytes.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
}

/// The sub-databases of a closed store, opened with the plain LMDB wrapper.
struct RawStore {
    let environment: Environment
    let events: Database
    let byID: Database
    let byUser: Database
    let bySession: Database
    let meta: Database
    /// `nil` for a store of format 1, which has none.
    let userKeysDatabase: Database?

    /// The store's pseudonym key (read from `meta`).
    func pseudonymKey() throws -> SecretKey {
        guard let bytes = try environment.read({ try $0.get(meta, key: Array("pseudonym_key".utf8)) }), bytes.count == 32 else {
            throw TestFailure("store has no pseudonym key")
        }
        return SecretKey(bytes: bytes)
    }

    /// The `by_user` key of `user` at `seq`: the pseudonym's first 8 bytes ‖ seq.
    func userKey(_ user: String, _ seq: UInt64) throws -> [UInt8] {
        Array(UserRef(user: user, pseudonymKey: try pseudonymKey()).bytes.prefix(8)) + Keys.seq(seq)
    }

    /// The value of `user`'s entry in `user_keys` (pseudonym ‖ key ‖ nonce ‖ sealed id, or the
    /// pseudonym alone once forgotten) and its number, found by scanning.
    func userEntry(_ user: String, in transaction: Transaction) throws -> (number: UInt64, value: [UInt8])? {
        let ref = UserRef(user: user, pseudonymKey: try pseudonymKey())
        guard let userKeys = userKeysDatabase else { return nil }
        return try transaction.withCursor(userKeys) { cursor in
            var entry = try cursor.first()
            while let current = entry {
                if current.value.count >= 16, Array(current.value.prefix(16)) == ref.bytes {
                    return (number(current.key), Array(current.value))
                }
                entry = try cursor.next()
            }
            return nil
        }
    }

    /// The store's users as `user_keys` holds them, for decoding records.
    func users(in transaction: Transaction) throws -> UserDirectory {
        var directory = UserDirectory(pseudonymKey: try pseudonymKey())
        guard let userKeys = userKeysDatabase else { return directory }
        try transaction.withCursor(userKeys) { cursor in
            var entry = try cursor.first()
            while let current = entry {
                let ref = UserRef(bytes: Array(current.value.prefix(16)))
                if let user = OnboardingStore.userEntry(from: current.value) {
                    directory.add(ref, name: user.name, key: user.key)
                } else {
                    directory.forget(ref)
                }
                entry = try cursor.next()
            }
        }
        return directory
    }
}

/// Opens the closed store at `path` with the LMDB wrapper, runs `body`, and closes it again.
func withRawStore<R>(_ path: String, _ body: (RawStore) throws -> R) throws -> R {
    let environment = try Environment.open(path: path)
    defer { environment.close() }
    func database(_ name: String) throws -> Database {
        guard let database = try environment.openDatabase(name, create: false) else {
            throw TestFailure("store at \(path) has no \(name) database")
        }
        return database
    }
    let raw = RawStore(
        environment: environment, events: try database("events"), byID: try database("by_id"),
        byUser: try database("by_user"), bySession: try database("by_session"),
        meta: try database("meta"), userKeysDatabase: try environment.openDatabase("user_keys", create: false))
    return try body(raw)
}

/// The POSIX permission bits of `path`.
func permissions(_ path: String) throws -> Int {
    let attributes = try FileManager.default.attributesOfItem(atPath: path)
    guard let mode = attributes[.posixPermissions] as? Int else { throw TestFailure("no permissions for \(path)") }
    return mode & 0o777
}

extension OnboardingStore {
    /// Every record of the log, in order.
    func allRecords() throws -> [Record] {
        let head = try head().seq
        return head == 0 ? [] : try records(in: 1...head)
    }
}
