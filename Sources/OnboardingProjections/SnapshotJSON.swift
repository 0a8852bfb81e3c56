import Foundation
import OnboardingModel

// The JSON form of projection snapshots (`snapshots.onboarding_state` and `pruned_base`,
// docs/format.md § `snapshots`): written by the canonical `JSONWriter` with every key spelled out
// here, read back through the strict members reader. The keys are the ones the state's Swift
// property names gave the snapshots before they had a codec of their own, so stores written then
// still open; renaming a property changes nothing on disk.

/// A snapshot that cannot be read: `path` names the member (`state.lockout.keys[3].failures`).
public struct SnapshotDecodingError: Error, Sendable, CustomStringConvertible {
    public let path: String
    public let message: String
    public init(_ path: String, _ message: String) {
        self.path = path
        self.message = message
    }
    public var description: String { "\(path) \(message)" }
}

extension JSONValue {
    /// A time of a snapshot: milliseconds since 1970.
    static func milliseconds(_ time: Timestamp) -> JSONValue { .number(String(time.millisecondsSince1970)) }
}

extension [JSONValue.Member] {
    /// Appends `key` when `value` is present: an absent optional is left out, as snapshots always did.
    mutating func append(_ key: String, _ value: JSONValue?) {
        if let value { append(JSONValue.Member(key, value)) }
    }
}

/// One object of a snapshot being read: its members (only `allowed` keys), and its path for errors.
struct SnapshotObject {
    let members: JSONValue.Members
    let path: String

    init(_ value: JSONValue, _ path: String, allowed: [String]) throws(SnapshotDecodingError) {
        switch value.strictObject(allowed: allowed) {
        case .members(let members): self.members = members
        case .notAnObject(let kind): throw SnapshotDecodingError(path, "must be an object, got \(kind)")
        case .unknownKey(let key): throw SnapshotDecodingError(path, "has unknown member \"\(key)\"")
        }
        self.path = path
    }

    func path(_ key: String) -> String { "\(path).\(key)" }

    /// The member `key`, `nil` when absent or `null`.
    func optional(_ key: String) -> JSONValue? {
        guard let value = members[key], value != .null else { return nil }
        return value
    }

    func required(_ key: String) throws(SnapshotDecodingError) -> JSONValue {
        guard let value = optional(key) else { throw SnapshotDecodingError(path(key), "is required") }
        return value
    }

    func object(_ key: String, allowed: [String]) throws(SnapshotDecodingError) -> SnapshotObject {
        try SnapshotObject(try required(key), path(key), allowed: allowed)
    }

    func optionalObject(_ key: String, allowed: [String]) throws(SnapshotDecodingError) -> SnapshotObject? {
        guard let value = optional(key) else { return nil }
        return try SnapshotObject(value, path(key), allowed: allowed)
    }

    func array(_ key: String) throws(SnapshotDecodingError) -> [JSONValue] { try SnapshotJSON.array(try required(key), path(key)) }
    func optionalArray(_ key: String) throws(SnapshotDecodingError) -> [JSONValue]? {
        try optional(key).map { (value) throws(SnapshotDecodingError) in try SnapshotJSON.array(value, path(key)) }
    }

    /// An object used as a dictionary (device name → value): its members, any keys.
    func dictionary(_ key: String) throws(SnapshotDecodingError) -> [JSONValue.Member] {
        try SnapshotJSON.dictionary(try required(key), path(key))
    }
    func optionalDictionary(_ key: String) throws(SnapshotDecodingError) -> [JSONValue.Member]? {
        try optional(key).map { (value) throws(SnapshotDecodingError) in try SnapshotJSON.dictionary(value, path(key)) }
    }

    func integer<T: FixedWidthInteger>(_ key: String, _ type: T.Type = T.self) throws(SnapshotDecodingError) -> T {
        try SnapshotJSON.integer(try required(key), path(key))
    }
    func optionalInteger<T: FixedWidthInteger>(_ key: String, _ type: T.Type = T.self) throws(SnapshotDecodingError) -> T? {
        try optional(key).map { (value) throws(SnapshotDecodingError) in try SnapshotJSON.integer(value, path(key)) }
    }

    func string(_ key: String) throws(SnapshotDecodingError) -> String { try SnapshotJSON.string(try required(key), path(key)) }
    func optionalString(_ key: String) throws(SnapshotDecodingError) -> String? {
        try optional(key).map { (value) throws(SnapshotDecodingError) in try SnapshotJSON.string(value, path(key)) }
    }

    func bool(_ key: String) throws(SnapshotDecodingError) -> Bool {
        guard case .bool(let flag) = try required(key) else { throw SnapshotDecodingError(path(key), "must be a boolean") }
        return flag
    }
    func optionalBool(_ key: String) throws(SnapshotDecodingError) -> Bool? {
        guard let value = optional(key) else { return nil }
        guard case .bool(let flag) = value else { throw SnapshotDecodingError(path(key), "must be a boolean") }
        return flag
    }

    func time(_ key: String) throws(SnapshotDecodingError) -> Timestamp { try SnapshotJSON.time(try required(key), path(key)) }
    func optionalTime(_ key: String) throws(SnapshotDecodingError) -> Timestamp? {
        try optional(key).map { (value) throws(SnapshotDecodingError) in try SnapshotJSON.time(value, path(key)) }
    }

    func name<E: RawRepresentable>(_ key: String, _ type: E.Type = E.self) throws(SnapshotDecodingError) -> E where E.RawValue == String {
        try SnapshotJSON.name(try required(key), path(key))
    }
    func optionalName<E: RawRepresentable>(_ key: String, _ type: E.Type = E.self) throws(SnapshotDecodingError) -> E? where E.RawValue == String {
        try optional(key).map { (value) throws(SnapshotDecodingError) in try SnapshotJSON.name(value, path(key)) }
    }
}

/// The value readers of ``SnapshotObject``, for array elements and dictionary values too.
enum SnapshotJSON {
    static func array(_ value: JSONValue, _ path: String) throws(SnapshotDecodingError) -> [JSONValue] {
        guard case .array(let elements) = value else { throw SnapshotDecodingError(path, "must be an array, got \(value.kindName)") }
        return elements
    }

    static func dictionary(_ value: JSONValue, _ path: String) throws(SnapshotDecodingError) -> [JSONValue.Member] {
        guard case .object(let members) = value else { throw SnapshotDecodingError(path, "must be an object, got \(value.kindName)") }
        return members
    }

    static func integer<T: FixedWidthInteger>(_ value: JSONValue, _ path: String) throws(SnapshotDecodingError) -> T {
        guard case .number(let text) = value, let number = T(text) else {
            throw SnapshotDecodingError(path, "must be an integer from \(T.min) to \(T.max)")
        }
        return number
    }

    static func string(_ value: JSONValue, _ path: String) throws(SnapshotDecodingError) -> String {
        guard case .string(let text) = value else { throw SnapshotDecodingError(path, "must be a string, got \(value.kindName)") }
        return text
    }

    /// Milliseconds since 1970, within ±``Timestamp/maximumDecodedMagnitudeMilliseconds`` so the
    /// projections' time arithmetic cannot overflow on a hostile file.
    static func time(_ value: JSONValue, _ path: String) throws(SnapshotDecodingError) -> Timestamp {
        let milliseconds: Int64 = try integer(value, path)
        let bound = Timestamp.maximumDecodedMagnitudeMilliseconds
        guard milliseconds >= -bound && milliseconds <= bound else {
            throw SnapshotDecodingError(path, "is a time of \(milliseconds) ms since 1970, beyond ±2^53 ms")
        }
        return Timestamp(millisecondsSince1970: milliseconds)
    }

    static func name<E: RawRepresentable>(_ value: JSONValue, _ path: String) throws(SnapshotDecodingError) -> E where E.RawValue == String {
        guard let name = E(rawValue: try string(value, path)) else { throw SnapshotDecodingError(path, "is not a known \(E.self) name") }
        return name
    }

    static func uuid(_ value: JSONValue, _ path: String) throws(SnapshotDecodingError) -> UUID {
        guard let id = UUID(uuidString: try string(value, path)) else { throw SnapshotDecodingError(path, "must be a UUID") }
        return id
    }

    /// `members` of a dictionary member sorted by key, so equal states write equal bytes.
    static func sorted<Value>(_ dictionary: [String: Value], _ transform: (Value) -> JSONValue) -> JSONValue {
        .object(dictionary.sorted { $0.key < $1.key }.map { JSONValue.Member($0.key, transform($0.value)) })
    }
}

extension OnboardingState {
    private static let keys = ["seq", "lockout", "session", "users"]

    /// The state as snapshot JSON: `{"seq", "lockout", "session", "users"}` (docs/format.md
    /// § `snapshots` names every member), written canonically with dictionaries sorted by key,
    /// so equal states give equal bytes.
    public var snapshotJSON: [UInt8] {
        var writer = JSONWriter()
        writer.append(
            .object([
                .init("seq", .number(String(seq))), .init("lockout", lockout.snapshotValue),
                .init("session", session.snapshotValue), .init("users", users.snapshotValue)
            ]))
        return writer.bytes
    }

    /// Reads ``snapshotJSON``, or what the store wrote before it (the same members, in any order,
    /// any dictionary order). A state version 5 snapshot reads too (its flows without `fields`,
    /// `identifierKind` and `biometric`, the session without `biometrics`): call
    /// ``upgradeFromStateVersion5()`` after.
    public init(snapshotJSON bytes: [UInt8]) throws(SnapshotDecodingError) {
        let value: JSONValue
        do { value = try JSONValue.parse(bytes: bytes) } catch { throw SnapshotDecodingError("state", "is not JSON: \(error)") }
        let root = try SnapshotObject(value, "state", allowed: Self.keys)
        self.init(
            seq: try root.integer("seq"),
            lockout: try LockoutEngine(snapshotValue: try root.required("lockout"), path: root.path("lockout")),
            session: try SessionProjection(snapshotValue: try root.required("session"), path: root.path("session")),
            users: try MultiUserProjection(snapshotValue: try root.required("users"), path: root.path("users")))
    }
}
