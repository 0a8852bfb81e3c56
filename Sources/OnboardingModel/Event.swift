import Foundation

/// One onboarding or authentication action: the envelope (docs/events.md) around a typed payload.
///
/// ```swift
/// let event = Event(id: UUID(), device: "kiosk-7", at: .now, user: "alice", flow: flow,
///                   payload: .signInFailed(method: .passcode, reason: .invalidPasscode))
/// try event.validate()
/// ```
public struct Event: Sendable, Hashable {
    /// Idempotency key: appending the same id twice stores the event once.
    public var id: UUID
    /// The device the action happened on.
    public var device: String
    /// When it happened, UTC, millisecond precision.
    public var at: Timestamp
    /// The account, when known (not before account creation).
    public var user: String?
    /// The onboarding flow instance: one pass through the screens, from the first screen to
    /// signed in or given up (spelled `session` in the JSON form and the stored body, whose
    /// names never change; docs/events.md).
    public var flow: UUID?
    public var payload: Payload

    public init(id: UUID, device: String, at: Timestamp, user: String?, flow: UUID?, payload: Payload) {
        self.id = id
        self.device = device
        self.at = at
        self.user = user
        self.flow = flow
        self.payload = payload
    }

    /// The flow id's old name: "session" also named a device's sign-in state and a sign-in's
    /// span, so the flow id is now ``flow``.
    @available(*, deprecated, renamed: "flow")
    public var session: UUID? {
        get { flow }
        set { flow = newValue }
    }

    @available(*, deprecated, renamed: "init(id:device:at:user:flow:payload:)")
    public init(id: UUID, device: String, at: Timestamp, user: String?, session: UUID?, payload: Payload) {
        self.init(id: id, device: device, at: at, user: user, flow: session, payload: payload)
    }

    public var type: EventType { payload.type }
}

/// An event at its place in a store's log, with its link in the hash chain.
public struct Record: Sendable, Hashable {
    /// Position in the store's log, from 1, without gaps.
    public var seq: UInt64
    public var event: Event
    /// Hash of the previous record (all zero for seq 1).
    public var previousHash: Digest
    /// BLAKE2b-256 of `previousHash ‖ canonical body bytes`.
    public var hash: Digest

    public init(seq: UInt64, event: Event, previousHash: Digest, hash: Digest) {
        self.seq = seq
        self.event = event
        self.previousHash = previousHash
        self.hash = hash
    }
}

/// Bounds on every variable-size part of an event (TigerBeetle: put a limit on everything).
public enum Limits {
    /// A device id names a device in logs and keys; 64 bytes fits a UUID, a hostname or a
    /// vendor serial with room to spare and keeps index keys short.
    public static let maximumDeviceBytes = 64
    /// A user id may be an email address or a directory DN; 256 bytes covers both, and an
    /// LMDB key (≤ 511 bytes) still has room for the seq suffix.
    public static let maximumUserBytes = 256
    /// Display names, subtitles and image references: far more than any screen shows, small
    /// enough that a record stays within a couple of pages.
    public static let maximumTextBytes = 4096
    /// One JSON line of import or `record`: the largest valid event is well under this.
    public static let maximumJSONLineBytes = 64 * 1024
}

/// An event that breaks a rule of the vocabulary; names the field and how to fix it.
public struct EventValidationError: Error, Sendable, CustomStringConvertible {
    /// The JSON name of the offending field, when there is one.
    public let field: String?
    public let message: String

    public init(field: String?, _ message: String) {
        self.field = field
        self.message = message
    }

    public var description: String {
        if let field { return "field \(ErrorEcho.quoted(field)): \(message)" }
        return message
    }
}

extension Event {
    /// Checks the envelope and payload against the limits and character rules.
    public func validate() throws(EventValidationError) {
        try Event.validateDevice(device)
        if let user { try Event.validateUser(user) }
        if type == .userForgotten, !(user.map(UserRef.isLiteral) ?? false) {
            throw EventValidationError(field: "user", "user_forgotten names the user by its pseudonym (~ and 32 hex digits), never by the readable id")
        }
        // Its skipped kinds are text, which a record that names a user would seal with that
        // user's key and a forget would erase: an import's summary is no user's, so it names none.
        if type == .logImported, user != nil {
            throw EventValidationError(field: "user", "log_imported summarizes an import and names no user; give null")
        }
        guard at >= Timestamp.minimum, at <= Timestamp.maximum else {
            throw EventValidationError(field: "at", "time must lie between years 0001 and 9999")
        }
        for (spec, value) in zip(type.fields, payload.fieldValues) {
            switch value {
            case .text(let text)?:
                try Event.validateText(text, field: spec.name)
                if spec.name == ClientAddress.fieldName, !ClientAddress.isValid(text) {
                    throw EventValidationError(
                        field: spec.name, "must be an IPv4 or IPv6 address in canonical form, such as 192.0.2.7 or 2001:db8::1 (got \(ErrorEcho.quoted(text)))")
                }
            case .count(let count)?:
                if case .count(let range) = spec.kind, !range.contains(count) {
                    throw EventValidationError(field: spec.name, "must be between \(range.lowerBound) and \(range.upperBound), got \(count)")
                }
            case .instant(let instant)?:
                guard instant >= Timestamp.minimum, instant <= Timestamp.maximum else {
                    throw EventValidationError(field: spec.name, "time must lie between years 0001 and 9999")
                }
            case .choices(let codes)?:
                if case .choices(let names, let maximumCount) = spec.kind {
                    try Event.validateChoices(codes, names: names, maximumCount: maximumCount, field: spec.name)
                }
            default: break
            }
        }
    }

    /// Checks a device id by the rules of the envelope's `device` field.
    public static func validate(deviceID: String) throws(EventValidationError) {
        try validateDevice(deviceID)
    }

    /// Checks a user id by the rules of the envelope's `user` field.
    public static func validate(userID: String) throws(EventValidationError) {
        try validateUser(userID)
    }

    /// The bytes a device id may hold: ASCII letters, digits and `- _ . :`.
    @inline(__always)
    static func isDeviceByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"),
            UInt8(ascii: "."), UInt8(ascii: ":"):
            true
        default:
            false
        }
    }

    static func validateDevice(_ device: String) throws(EventValidationError) {
        let bytes = device.utf8
        guard !bytes.isEmpty, bytes.count <= Limits.maximumDeviceBytes else {
            throw EventValidationError(field: "device", "must be 1 to \(Limits.maximumDeviceBytes) bytes long")
        }
        guard bytes.allSatisfy(isDeviceByte) else {
            throw EventValidationError(field: "device", "may only contain letters, digits and - _ . : (got \(ErrorEcho.quoted(device)))")
        }
    }

    static func validateUser(_ user: String) throws(EventValidationError) {
        let bytes = user.utf8
        guard !bytes.isEmpty, bytes.count <= Limits.maximumUserBytes else {
            throw EventValidationError(field: "user", "must be 1 to \(Limits.maximumUserBytes) bytes long (use null when unknown)")
        }
        guard !Event.containsControlCharacter(user) else {
            throw EventValidationError(field: "user", "must not contain control characters")
        }
    }

    /// Whether `text` holds a control character (Unicode category Cc: U+0000–U+001F and
    /// U+007F–U+009F). Checked on the UTF-8 bytes: this runs for every text of every append, and
    /// Unicode property lookups per scalar cost more than the rest of validation together.
    static func containsControlCharacter(_ text: String) -> Bool {
        var previousWasC2 = false
        for byte in text.utf8 {
            if byte < 0x20 || byte == 0x7F { return true }
            if previousWasC2 && (0x80...0x9F).contains(byte) { return true }
            previousWasC2 = byte == 0xC2
        }
        return false
    }

    /// A list of choices holds 1…`maximumCount` known values, none twice (an app can build any
    /// array; the codecs check the same when they read one).
    static func validateChoices(_ codes: [UInt8], names: [String], maximumCount: Int, field: String) throws(EventValidationError) {
        guard !codes.isEmpty, codes.count <= maximumCount else {
            throw EventValidationError(field: field, "must list 1 to \(maximumCount) values, got \(codes.count)")
        }
        for (index, code) in codes.enumerated() {
            guard Int(code) < names.count else { throw EventValidationError(field: field, "holds unknown code \(code)") }
            guard !codes[..<index].contains(code) else {
                throw EventValidationError(field: field, "lists \(names[Int(code)]) twice; list each value at most once")
            }
        }
    }

    static func validateText(_ text: String, field: String) throws(EventValidationError) {
        let count = text.utf8.count
        guard count >= 1, count <= Limits.maximumTextBytes else {
            throw EventValidationError(field: field, "must be 1 to \(Limits.maximumTextBytes) bytes of UTF-8, got \(count)")
        }
        guard !Event.containsControlCharacter(text) else {
            throw EventValidationError(field: field, "must not contain control characters")
        }
    }
}
