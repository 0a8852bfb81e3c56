import Foundation

/// The JSON form of an event (docs/events.md § The JSON form), the contract for import, export and sync.
///
/// Members are written in one fixed order (`id, device, seq, at, user, session, type`, then the
/// payload fields in vocabulary order, absent optional payload fields omitted), so export is
/// deterministic and `import` → `export` gives back the same bytes.
///
/// ```swift
/// let line = EventJSON.encode(record.event, seq: record.seq)
/// let parsed = try EventJSON.decode(line: line)
/// ```
public enum EventJSON {
    static let envelopeKeys = ["id", "device", "seq", "at", "user", "session", "type"]

    /// By type code: the members an event of that type may have (the envelope's and its payload
    /// fields), for the strict members reader (``JSONValue/strictObject(allowed:)``).
    static let jsonKeys: [[String]] = EventType.allCases.map { type in
        envelopeKeys + type.fields.map(\.name)
    }

    /// One canonical JSON object, without a trailing newline.
    public static func encode(_ event: Event, seq: UInt64?) -> String {
        var bytes: [UInt8] = []
        encode(event, seq: seq, into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends one canonical JSON object to `bytes` (no newline).
    public static func encode(_ event: Event, seq: UInt64?, into bytes: inout [UInt8]) {
        func key(_ name: String) {
            bytes.append(UInt8(ascii: "\""))
            bytes.append(contentsOf: name.utf8)
            bytes.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
        }
        bytes.append(UInt8(ascii: "{"))
        key("id"); JSONWriter.appendQuoted(event.id.uuidString.lowercased(), to: &bytes)
        bytes.append(UInt8(ascii: ",")); key("device"); JSONWriter.appendQuoted(event.device, to: &bytes)
        if let seq {
            bytes.append(UInt8(ascii: ",")); key("seq"); bytes.append(contentsOf: String(seq).utf8)
        }
        bytes.append(UInt8(ascii: ",")); key("at"); JSONWriter.appendQuoted(event.at.iso8601, to: &bytes)
        bytes.append(UInt8(ascii: ",")); key("user")
        if let user = event.user { JSONWriter.appendQuoted(user, to: &bytes) } else { bytes.append(contentsOf: "null".utf8) }
        bytes.append(UInt8(ascii: ",")); key("session")
        if let session = event.flow {
            JSONWriter.appendQuoted(session.uuidString.lowercased(), to: &bytes)
        } else {
            bytes.append(contentsOf: "null".utf8)
        }
        bytes.append(UInt8(ascii: ",")); key("type"); JSONWriter.appendQuoted(event.type.rawValue, to: &bytes)
        appendPayloadMembers(event.payload, leadingComma: true, to: &bytes)
        bytes.append(UInt8(ascii: "}"))
    }

    /// Appends `"name":value` for every present payload field, comma-separated.
    static func appendPayloadMembers(_ payload: Payload, leadingComma: Bool, to bytes: inout [UInt8]) {
        var needsComma = leadingComma
        for (spec, value) in zip(payload.type.fields, payload.fieldValues) {
            guard let value else { continue }
            if needsComma { bytes.append(UInt8(ascii: ",")) }
            needsComma = true
            JSONWriter.appendQuoted(spec.name, to: &bytes)
            bytes.append(UInt8(ascii: ":"))
            appendValue(value, spec: spec, to: &bytes)
        }
    }

    static func appendValue(_ value: FieldValue, spec: FieldSpec, to bytes: inout [UInt8]) {
        switch value {
        case .text(let text): JSONWriter.appendQuoted(text, to: &bytes)
        case .choice(let code):
            guard case .choice(let names) = spec.kind else { preconditionFailure("\(spec.name) is not a choice") }
            JSONWriter.appendQuoted(names[Int(code)], to: &bytes)
        case .flag(let flag): bytes.append(contentsOf: (flag ? "true" : "false").utf8)
        case .instant(let instant): JSONWriter.appendQuoted(instant.iso8601, to: &bytes)
        case .count(let count): bytes.append(contentsOf: String(count).utf8)
        case .choices(let codes):
            guard case .choices(let names, _) = spec.kind else { preconditionFailure("\(spec.name) is not a list of choices") }
            bytes.append(UInt8(ascii: "["))
            for (index, code) in codes.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                JSONWriter.appendQuoted(names[Int(code)], to: &bytes)
            }
            bytes.append(UInt8(ascii: "]"))
        }
    }

    /// The payload alone as a canonical JSON object (used by the CSV export's `details` column).
    public static func encodePayload(_ payload: Payload) -> String {
        var bytes: [UInt8] = [UInt8(ascii: "{")]
        appendPayloadMembers(payload, leadingComma: false, to: &bytes)
        bytes.append(UInt8(ascii: "}"))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Values used for envelope members a caller may leave out (`onboard record`).
    public struct Defaults: Sendable {
        public var id: UUID
        public var device: String
        public var at: Timestamp
        public init(id: UUID, device: String, at: Timestamp) {
            self.id = id
            self.device = device
            self.at = at
        }
    }

    /// An event parsed from JSON, with the seq it claims (if any).
    public struct Decoded: Sendable {
        public var event: Event
        public var seq: UInt64?

        public init(event: Event, seq: UInt64?) {
            self.event = event
            self.seq = seq
        }
    }

    /// Parses and validates one JSON event. Without `defaults`, `id`, `device`, `at` and `type`
    /// are required; `seq`, `user` and `session` may be omitted.
    public static func decode(line: String, defaults: Defaults? = nil) throws(EventValidationError) -> Decoded {
        guard line.utf8.count <= Limits.maximumJSONLineBytes else {
            throw EventValidationError(field: nil, "line is longer than \(Limits.maximumJSONLineBytes) bytes")
        }
        let value: JSONValue
        do { value = try JSONValue.parse(line) } catch { throw EventValidationError(field: nil, error.description) }
        return try decode(value, defaults: defaults)
    }

    public static func decode(_ value: JSONValue, defaults: Defaults? = nil) throws(EventValidationError) -> Decoded {
        guard case .object(let members) = value else {
            throw EventValidationError(field: nil, "expected a JSON object, got \(value.kindName)")
        }
        let byName = JSONValue.Members(members)

        guard let typeValue = byName["type"] else {
            throw EventValidationError(field: "type", "is required (one of: \(EventType.wireNames.joined(separator: ", ")))")
        }
        guard case .string(let typeName) = typeValue else {
            throw EventValidationError(field: "type", "must be a string, got \(typeValue.kindName)")
        }
        guard let type = EventType(rawValue: typeName) else {
            throw EventValidationError(field: "type", "unknown event type \(ErrorEcho.quoted(typeName)); see docs/events.md for the vocabulary")
        }
        let specs = type.fields
        if case .unknownKey(let key) = value.strictObject(allowed: jsonKeys[Int(type.wireCode)]) {
            if SecretFieldNames.looksSecret(key) {
                throw EventValidationError(
                    field: key,
                    "looks like a secret; OnboardingStore never stores passwords, codes, tokens or answers — remove the field")
            }
            let allowed = specs.isEmpty ? "none" : specs.map(\.name).joined(separator: ", ")
            throw EventValidationError(field: key, "is not a field of \(typeName) (its payload fields: \(allowed))")
        }

        let id: UUID
        if let idValue = byName["id"] {
            id = try uuid(idValue, field: "id")
        } else if let defaults {
            id = defaults.id
        } else {
            throw EventValidationError(field: "id", "is required (a UUID; it makes re-imports idempotent)")
        }
        let device: String
        if let deviceValue = byName["device"] {
            device = try string(deviceValue, field: "device")
        } else if let defaults {
            device = defaults.device
        } else {
            throw EventValidationError(field: "device", "is required")
        }
        var seq: UInt64?
        if let seqValue = byName["seq"], seqValue != .null {
            guard case .number(let text) = seqValue, let parsed = UInt64(text), parsed >= 1 else {
                throw EventValidationError(field: "seq", "must be a whole number ≥ 1, or omitted so the store assigns it")
            }
            seq = parsed
        }
        let at: Timestamp
        if let atValue = byName["at"] {
            at = try instant(atValue, field: "at")
        } else if let defaults {
            at = defaults.at
        } else {
            throw EventValidationError(field: "at", "is required (ISO-8601 UTC, e.g. 2026-11-29T16:00:00.123Z)")
        }
        var user: String?
        if let userValue = byName["user"], userValue != .null { user = try string(userValue, field: "user") }
        var session: UUID?
        if let sessionValue = byName["session"], sessionValue != .null { session = try uuid(sessionValue, field: "session") }

        var values: [FieldValue?] = []
        values.reserveCapacity(specs.count)
        for spec in specs {
            guard let raw = byName[spec.name], raw != .null else {
                if spec.isOptional {
                    values.append(nil)
                    continue
                }
                throw EventValidationError(field: spec.name, "is required for \(typeName)\(hint(for: spec))")
            }
            values.append(try fieldValue(raw, spec: spec))
        }
        let event = Event(
            id: id, device: device, at: at, user: user, flow: session,
            payload: Payload(type: type, fieldValues: values))
        try event.validate()
        return Decoded(event: event, seq: seq)
    }

    static func hint(for spec: FieldSpec) -> String {
        switch spec.kind {
        case .choice(let names): " (one of: \(names.joined(separator: ", ")))"
        case .flag: " (true or false)"
        case .instant: " (ISO-8601 UTC time)"
        case .count(let range): " (a whole number \(range.lowerBound)…\(range.upperBound))"
        case .text: " (text)"
        case .choices(let names, let maximumCount): " (an array of 1–\(maximumCount) of: \(names.joined(separator: ", ")), each at most once)"
        }
    }

    static func fieldValue(_ raw: JSONValue, spec: FieldSpec) throws(EventValidationError) -> FieldValue {
        switch spec.kind {
        case .text:
            return .text(try string(raw, field: spec.name))
        case .choice(let names):
            let name = try string(raw, field: spec.name)
            guard let index = names.firstIndex(of: name) else {
                throw EventValidationError(field: spec.name, "\(ErrorEcho.quoted(name)) is not one of: \(names.joined(separator: ", "))")
            }
            return .choice(UInt8(index))
        case .flag:
            guard case .bool(let flag) = raw else {
                throw EventValidationError(field: spec.name, "must be true or false, got \(raw.kindName)")
            }
            return .flag(flag)
        case .instant:
            return .instant(try instant(raw, field: spec.name))
        case .count(let range):
            guard case .number(let text) = raw, let count = Int(text) else {
                throw EventValidationError(field: spec.name, "must be a whole number, got \(raw.kindName)")
            }
            guard range.contains(count) else {
                throw EventValidationError(field: spec.name, "must be between \(range.lowerBound) and \(range.upperBound), got \(count)")
            }
            return .count(count)
        case .choices(let names, let maximumCount):
            return .choices(try choices(raw, names: names, maximumCount: maximumCount, field: spec.name))
        }
    }

    /// The codes of a list of choices: a JSON array of 1…`maximumCount` distinct names.
    static func choices(_ raw: JSONValue, names: [String], maximumCount: Int, field: String) throws(EventValidationError) -> [UInt8] {
        let allowed = names.joined(separator: ", ")
        guard case .array(let elements) = raw else {
            throw EventValidationError(field: field, "must be an array of names (1–\(maximumCount) of: \(allowed)), got \(raw.kindName)")
        }
        guard !elements.isEmpty else {
            throw EventValidationError(field: field, "must list at least one of: \(allowed)")
        }
        guard elements.count <= maximumCount else {
            throw EventValidationError(field: field, "lists \(elements.count) values; at most \(maximumCount), each of: \(allowed) at most once")
        }
        var codes: [UInt8] = []
        codes.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            guard case .string(let name) = element else {
                throw EventValidationError(field: field, "element \(index) must be a string (one of: \(allowed)), got \(element.kindName)")
            }
            guard let code = names.firstIndex(of: name) else {
                throw EventValidationError(field: field, "\(ErrorEcho.quoted(name)) is not one of: \(allowed)")
            }
            guard !codes.contains(UInt8(code)) else {
                throw EventValidationError(field: field, "lists \(ErrorEcho.quoted(name)) twice; list each option at most once")
            }
            codes.append(UInt8(code))
        }
        return codes
    }

    static func string(_ raw: JSONValue, field: String) throws(EventValidationError) -> String {
        guard case .string(let text) = raw else {
            throw EventValidationError(field: field, "must be a string, got \(raw.kindName)")
        }
        return text
    }

    static func uuid(_ raw: JSONValue, field: String) throws(EventValidationError) -> UUID {
        let text = try string(raw, field: field)
        // Foundation's parser on Linux reads each byte pair with sscanf("%2hhx"), so it also takes
        // " f", "+f", "0x" or "-e" and misreads them; only 8-4-4-4-12 hex digits reach it.
        guard isUUIDShaped(text), let uuid = UUID(uuidString: text) else {
            throw EventValidationError(field: field, "\(ErrorEcho.quoted(text)) is not a UUID like 0f8fad5b-d9cb-469f-a165-70867728950e")
        }
        return uuid
    }

    /// 36 bytes: hex digits (either case) with `-` at offsets 8, 13, 18 and 23.
    static func isUUIDShaped(_ text: String) -> Bool {
        let bytes = text.utf8
        guard bytes.count == 36 else { return false }
        return bytes.enumerated().allSatisfy { offset, byte in
            switch offset {
            case 8, 13, 18, 23: byte == UInt8(ascii: "-")
            default: (0x30...0x39).contains(byte) || (0x61...0x66).contains(byte) || (0x41...0x46).contains(byte)
            }
        }
    }

    static func instant(_ raw: JSONValue, field: String) throws(EventValidationError) -> Timestamp {
        let text = try string(raw, field: field)
        do { return try Timestamp(iso8601: text) } catch { throw EventValidationError(field: field, error.description) }
    }
}
