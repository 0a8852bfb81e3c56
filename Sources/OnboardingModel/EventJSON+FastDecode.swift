import Foundation

/// The JSON line decoder's fast path: one pass over a line's bytes straight to the typed `Event`,
/// without building a `JSONValue` tree, a `String` per key, a member dictionary or a copy of the
/// line (the reference decoder, ``EventJSON/decode(line:defaults:)``, does all four; import spent
/// most of its time there).
///
/// It accepts only lines the reference decoder accepts, and then decodes the same event: the
/// compact form `onboard export` and `onboard generate` write, with members in any order. On
/// anything else — whitespace, escapes in strings, numbers with a sign, fraction or exponent,
/// nested values (so every list of choices: `sign_in_options_shown`'s `options`), an unknown or
/// repeated member, a value of the wrong kind, a broken rule — it gives up (`nil`) and
/// ``decode(lineBytes:)`` runs the reference decoder, which names the problem, so every error
/// message stays exactly the reference decoder's. `EventJSONFastDecodeTests` checks
/// the two agree on every event type and on hundreds of thousands of mutated lines.
extension EventJSON {
    /// Parses and validates one JSONL line given as bytes (no newline). Not-UTF-8 bytes are
    /// refused ("is not valid UTF-8"); otherwise it behaves exactly as ``decode(line:defaults:)``
    /// without defaults.
    public static func decode(lineBytes line: UnsafeRawBufferPointer) throws(EventValidationError) -> Decoded {
        if let decoded = fastDecode(line) { return decoded }
        guard let text = String(validating: line, as: UTF8.self) else {
            throw EventValidationError(field: nil, "is not valid UTF-8")
        }
        return try decode(line: text)
    }

    /// The decoded line, or `nil` when the reference decoder must decide.
    static func fastDecode(_ line: UnsafeRawBufferPointer) -> Decoded? {
        guard line.count <= Limits.maximumJSONLineBytes, let members = FastLineScanner.scan(line) else { return nil }
        guard let typeToken = members.type, typeToken.kind == .string,
            let type = FastNames.eventType(line, typeToken)
        else { return nil }
        guard let idToken = members.id, let id = FastValues.uuid(line, idToken),
            let deviceToken = members.device, let device = FastValues.device(line, deviceToken),
            let atToken = members.at, atToken.kind == .string,
            let at = Timestamp(iso8601Bytes: atToken.slice(of: line))
        else { return nil }
        var seq: UInt64?
        if let seqToken = members.seq, seqToken.kind != .null {
            guard let value = FastValues.unsigned(line, seqToken), value >= 1 else { return nil }
            seq = value
        }
        var user: String?
        if let userToken = members.user, userToken.kind != .null {
            guard let value = FastValues.string(line, userToken) else { return nil }
            user = value
        }
        var session: UUID?
        if let sessionToken = members.session, sessionToken.kind != .null {
            guard let value = FastValues.uuid(line, sessionToken) else { return nil }
            session = value
        }

        // Each payload member must be one of the type's fields, once: every field takes at most
        // one member, and all of them must be taken.
        let specs = type.fields
        let typeCode = Int(type.wireCode)
        let names = FastNames.fieldNames[typeCode]
        var values: [FieldValue?] = []
        values.reserveCapacity(specs.count)
        var taken = 0
        for (index, spec) in specs.enumerated() {
            var token: FastToken?
            for member in 0..<members.payloadCount where FastNames.equal(line, members.payloadKey(member), names[index]) {
                guard token == nil else { return nil }
                token = members.payloadValue(member)
            }
            if token != nil { taken += 1 }
            guard let token, token.kind != .null else {
                guard spec.isOptional else { return nil }
                values.append(nil)
                continue
            }
            guard let value = FastValues.field(line, token, spec: spec, choices: FastNames.choiceNames[typeCode][index]) else { return nil }
            values.append(value)
        }
        guard taken == members.payloadCount else { return nil }
        let event = Event(
            id: id, device: device, at: at, user: user, flow: session,
            payload: Payload(type: type, fieldValues: values))
        do { try event.validate() } catch { return nil }
        return Decoded(event: event, seq: seq)
    }
}

/// One scalar value of a line: its kind and, for strings, the bytes between the quotes.
private struct FastToken {
    enum Kind: UInt8 { case string, number, trueLiteral, falseLiteral, null }
    var kind: Kind
    var start: Int
    var end: Int
    /// A string's bytes are all ASCII (no UTF-8 validation needed).
    var isASCII: Bool

    func slice(of line: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: line[start..<end])
    }
}

/// The members of one line: the seven envelope members by name, and up to
/// ``maximumPayloadMembers`` others (key and value) in the order written.
private struct FastLineMembers {
    /// The most payload fields any event type has (`log_imported`: 7); a line with more members
    /// than that has an unknown one, which the reference decoder reports.
    static let maximumPayloadMembers = 7

    var id: FastToken?
    var device: FastToken?
    var seq: FastToken?
    var at: FastToken?
    var user: FastToken?
    var session: FastToken?
    var type: FastToken?
    var payloadCount = 0
    var payload:
        (
            FastToken?, FastToken?, FastToken?, FastToken?, FastToken?, FastToken?, FastToken?, FastToken?, FastToken?, FastToken?,
            FastToken?, FastToken?, FastToken?, FastToken?
        ) = (nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil)

    func payloadKey(_ index: Int) -> FastToken { token(2 * index) }
    func payloadValue(_ index: Int) -> FastToken { token(2 * index + 1) }

    private func token(_ slot: Int) -> FastToken {
        switch slot {
        case 0: payload.0!
        case 1: payload.1!
        case 2: payload.2!
        case 3: payload.3!
        case 4: payload.4!
        case 5: payload.5!
        case 6: payload.6!
        case 7: payload.7!
        case 8: payload.8!
        case 9: payload.9!
        case 10: payload.10!
        case 11: payload.11!
        case 12: payload.12!
        default: payload.13!
        }
    }

    /// Adds a payload member; `false` when there are already ``maximumPayloadMembers``.
    mutating func appendPayload(key: FastToken, value: FastToken) -> Bool {
        switch payloadCount {
        case 0: payload.0 = key; payload.1 = value
        case 1: payload.2 = key; payload.3 = value
        case 2: payload.4 = key; payload.5 = value
        case 3: payload.6 = key; payload.7 = value
        case 4: payload.8 = key; payload.9 = value
        case 5: payload.10 = key; payload.11 = value
        case 6: payload.12 = key; payload.13 = value
        default: return false
        }
        payloadCount += 1
        return true
    }
}

/// Splits one line into members; `nil` for anything but a flat object in compact form.
private enum FastLineScanner {
    static func scan(_ line: UnsafeRawBufferPointer) -> FastLineMembers? {
        let count = line.count
        guard count >= 2, line[0] == UInt8(ascii: "{") else { return nil }
        var members = FastLineMembers()
        var index = 1
        while true {
            // "key":
            guard index < count, line[index] == UInt8(ascii: "\"") else { return nil }
            let keyStart = index + 1
            index = keyStart
            while index < count {
                let byte = line[index]
                if byte == UInt8(ascii: "\"") { break }
                // Keys the vocabulary knows are plain ASCII: anything else is for the reference decoder.
                guard byte >= 0x20, byte < 0x7F, byte != UInt8(ascii: "\\") else { return nil }
                index += 1
            }
            guard index < count else { return nil }
            let key = FastToken(kind: .string, start: keyStart, end: index, isASCII: true)
            index += 1
            guard index < count, line[index] == UInt8(ascii: ":") else { return nil }
            index += 1
            guard let value = scanValue(line, &index) else { return nil }
            guard place(key: key, value: value, in: &members, line) else { return nil }
            guard index < count else { return nil }
            if line[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            guard line[index] == UInt8(ascii: "}"), index + 1 == count else { return nil }
            return members
        }
    }

    /// A string, a whole number without sign, or a literal, starting at `index`.
    private static func scanValue(_ line: UnsafeRawBufferPointer, _ index: inout Int) -> FastToken? {
        let count = line.count
        guard index < count else { return nil }
        let first = line[index]
        switch first {
        case UInt8(ascii: "\""):
            let start = index + 1
            var cursor = start
            var isASCII = true
            while cursor < count {
                let byte = line[cursor]
                if byte == UInt8(ascii: "\"") { break }
                // Escapes and raw control characters are for the reference decoder.
                if byte == UInt8(ascii: "\\") || byte < 0x20 { return nil }
                if byte >= 0x80 { isASCII = false }
                cursor += 1
            }
            guard cursor < count else { return nil }
            index = cursor + 1
            return FastToken(kind: .string, start: start, end: cursor, isASCII: isASCII)
        case UInt8(ascii: "0")...UInt8(ascii: "9"):
            let start = index
            var cursor = index + 1
            while cursor < count, line[cursor] &- 0x30 <= 9 { cursor += 1 }
            // A leading zero before more digits is not JSON; a fraction or exponent is no whole number.
            if first == UInt8(ascii: "0") && cursor - start > 1 { return nil }
            if cursor < count, line[cursor] == UInt8(ascii: ".") || line[cursor] | 0x20 == UInt8(ascii: "e") { return nil }
            index = cursor
            return FastToken(kind: .number, start: start, end: cursor, isASCII: true)
        case UInt8(ascii: "t"):
            return literal("true", .trueLiteral, line, &index)
        case UInt8(ascii: "f"):
            return literal("false", .falseLiteral, line, &index)
        case UInt8(ascii: "n"):
            return literal("null", .null, line, &index)
        default:
            return nil
        }
    }

    private static func literal(
        _ text: StaticString, _ kind: FastToken.Kind, _ line: UnsafeRawBufferPointer,
        _ index: inout Int
    ) -> FastToken? {
        let length = text.utf8CodeUnitCount
        guard line.count - index >= length else { return nil }
        let expected = UnsafeRawBufferPointer(start: text.utf8Start, count: length)
        for offset in 0..<length where line[index + offset] != expected[offset] { return nil }
        let token = FastToken(kind: kind, start: index, end: index + length, isASCII: true)
        index += length
        return token
    }

    /// Files the member under its envelope name, or as a payload member; `false` for a repeated
    /// envelope member or one payload member too many.
    private static func place(
        key: FastToken, value: FastToken, in members: inout FastLineMembers,
        _ line: UnsafeRawBufferPointer
    ) -> Bool {
        @inline(__always) func set(_ slot: inout FastToken?) -> Bool {
            guard slot == nil else { return false }
            slot = value
            return true
        }
        let length = key.end - key.start
        let first = line[key.start]
        switch (length, first) {
        case (2, UInt8(ascii: "i")) where line[key.start + 1] == UInt8(ascii: "d"): return set(&members.id)
        case (2, UInt8(ascii: "a")) where line[key.start + 1] == UInt8(ascii: "t"): return set(&members.at)
        case (3, UInt8(ascii: "s")) where FastNames.equal(line, key, FastNames.seq): return set(&members.seq)
        case (4, UInt8(ascii: "t")) where FastNames.equal(line, key, FastNames.type): return set(&members.type)
        case (4, UInt8(ascii: "u")) where FastNames.equal(line, key, FastNames.user): return set(&members.user)
        case (6, UInt8(ascii: "d")) where FastNames.equal(line, key, FastNames.device): return set(&members.device)
        case (7, UInt8(ascii: "s")) where FastNames.equal(line, key, FastNames.session): return set(&members.session)
        default: return members.appendPayload(key: key, value: value)
        }
    }
}

/// Names as bytes, built once, and byte comparison against a token.
private enum FastNames {
    static let seq = Array("seq".utf8)
    static let type = Array("type".utf8)
    static let user = Array("user".utf8)
    static let device = Array("device".utf8)
    static let session = Array("session".utf8)

    static let eventTypes = EventType.allCases
    static let eventTypeNames: [[UInt8]] = EventType.allCases.map { Array($0.rawValue.utf8) }
    /// Per event type (by wire code), its fields' names in field order.
    static let fieldNames: [[[UInt8]]] = EventType.allCases.map { $0.fields.map { Array($0.name.utf8) } }
    /// Per event type and field, a choice field's names (empty for other kinds).
    static let choiceNames: [[[[UInt8]]]] = EventType.allCases.map { type in
        type.fields.map { spec in
            if case .choice(let names) = spec.kind { return names.map { Array($0.utf8) } }
            return []
        }
    }

    @inline(__always)
    static func equal(_ line: UnsafeRawBufferPointer, _ token: FastToken, _ name: [UInt8]) -> Bool {
        guard token.end - token.start == name.count else { return false }
        return name.withUnsafeBytes { expected in
            memcmp(line.baseAddress! + token.start, expected.baseAddress!, name.count) == 0
        }
    }

    static func eventType(_ line: UnsafeRawBufferPointer, _ token: FastToken) -> EventType? {
        guard token.end > token.start else { return nil }
        for (index, name) in eventTypeNames.enumerated() where equal(line, token, name) { return eventTypes[index] }
        return nil
    }
}

/// Values of the kinds the vocabulary uses, each `nil` where the reference decoder would refuse
/// (or decide otherwise).
private enum FastValues {
    static func string(_ line: UnsafeRawBufferPointer, _ token: FastToken) -> String? {
        guard token.kind == .string else { return nil }
        let slice = token.slice(of: line)
        if token.isASCII { return String(decoding: slice, as: UTF8.self) }
        return String(validating: slice, as: UTF8.self)
    }

    /// A device id: 1…64 bytes of `Event.validateDevice`'s characters (all ASCII).
    static func device(_ line: UnsafeRawBufferPointer, _ token: FastToken) -> String? {
        guard token.kind == .string, token.isASCII else { return nil }
        let slice = token.slice(of: line)
        guard slice.count >= 1, slice.count <= Limits.maximumDeviceBytes, slice.allSatisfy(Event.isDeviceByte) else { return nil }
        return String(decoding: slice, as: UTF8.self)
    }

    /// A UUID in its 8-4-4-4-12 hex form, either case (a subset of what `UUID(uuidString:)` reads).
    static func uuid(_ line: UnsafeRawBufferPointer, _ token: FastToken) -> UUID? {
        guard token.kind == .string, token.end - token.start == 36 else { return nil }
        let text = line.baseAddress! + token.start
        guard text.load(fromByteOffset: 8, as: UInt8.self) == UInt8(ascii: "-"),
            text.load(fromByteOffset: 13, as: UInt8.self) == UInt8(ascii: "-"),
            text.load(fromByteOffset: 18, as: UInt8.self) == UInt8(ascii: "-"),
            text.load(fromByteOffset: 23, as: UInt8.self) == UInt8(ascii: "-")
        else { return nil }
        return hexDigitValues.withUnsafeBufferPointer { table -> UUID? in
            // Any byte that is not a hex digit has 0x10 set in the table: OR them all, test once.
            var invalid: UInt8 = 0
            @inline(__always) func digits(_ offset: Int, _ count: Int, into value: inout UInt64) {
                for index in offset..<offset + count {
                    let digit = table[Int(text.load(fromByteOffset: index, as: UInt8.self))]
                    invalid |= digit
                    value = value << 4 | UInt64(digit & 0x0F)
                }
            }
            var high: UInt64 = 0
            var low: UInt64 = 0
            digits(0, 8, into: &high)
            digits(9, 4, into: &high)
            digits(14, 4, into: &high)
            digits(19, 4, into: &low)
            digits(24, 12, into: &low)
            guard invalid & 0x10 == 0 else { return nil }
            return UUID(uuid: unsafeBitCast((high.bigEndian, low.bigEndian), to: uuid_t.self))
        }
    }

    /// Per byte, its value as a hex digit, or 0x10 for a byte that is not one.
    static let hexDigitValues: [UInt8] = (0...255).map { byte in
        switch UInt8(byte) {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt8(byte) - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt8(byte) - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt8(byte) - UInt8(ascii: "A") + 10
        default: 0x10
        }
    }

    /// A whole number without sign (the scanner let only digits through) that fits in 64 bits.
    static func unsigned(_ line: UnsafeRawBufferPointer, _ token: FastToken) -> UInt64? {
        guard token.kind == .number else { return nil }
        var value: UInt64 = 0
        for index in token.start..<token.end {
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(UInt64(line[index] &- UInt8(ascii: "0")))
            guard !overflow1, !overflow2 else { return nil }
            value = sum
        }
        return value
    }

    /// A payload field's value; `choices` are a choice field's names as bytes.
    static func field(_ line: UnsafeRawBufferPointer, _ token: FastToken, spec: FieldSpec, choices: [[UInt8]]) -> FieldValue? {
        switch spec.kind {
        case .text:
            return string(line, token).map(FieldValue.text)
        case .choice:
            guard token.kind == .string else { return nil }
            for (index, name) in choices.enumerated() where FastNames.equal(line, token, name) { return .choice(UInt8(index)) }
            return nil
        case .flag:
            switch token.kind {
            case .trueLiteral: return .flag(true)
            case .falseLiteral: return .flag(false)
            default: return nil
            }
        case .instant:
            guard token.kind == .string, let instant = Timestamp(iso8601Bytes: token.slice(of: line)) else { return nil }
            return .instant(instant)
        case .count(let range):
            guard let value = unsigned(line, token), value <= UInt64(Int.max), range.contains(Int(value)) else { return nil }
            return .count(Int(value))
        case .choices:
            // An array: the scanner never gets here (it declines nested values); for the
            // reference decoder, which names what is wrong with a list.
            return nil
        }
    }
}
