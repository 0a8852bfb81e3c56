import Foundation

/// The decoder's fast path: one pass over the body straight from the mapped bytes to the typed
/// `Event`, without the per-field `[FieldValue?]` array, `allCases` arrays or the generic
/// UTF-8 validation of the reference decoder (`decodeBody`), which it mirrors field for field.
///
/// It accepts only what the reference decoder accepts, and then decodes the same event: it
/// performs every check the reference decoder and `Event.validate` perform (seq ≥ 1, lengths,
/// presence and flag bytes, choice codes, count ranges, UTF-8, device characters, control
/// characters, time range, the user of `user_forgotten`). On anything unusual it gives up (`nil`) and the caller runs the reference
/// decoder, which names the problem — so error messages stay exactly those of `decodeBody`.
/// `RecordCodecTests` checks the two agree on valid events of every type and on forged bodies.
///
/// It knows no event type by name: the envelope comes from ``RecordEnvelope``, the payload from
/// ``Payload/init(type:reading:)`` checked against the schema table's layouts (``EventSchema``).
extension RecordCodec {
    /// `(seq, event)` of a body, or `nil` when the reference decoder must decide.
    static func fastDecodeBody(_ body: UnsafeRawBufferPointer, users: UserDirectory) -> (UInt64, Event)? {
        guard let envelope = RecordEnvelope(body), envelope.typeCode >= 1, Int(envelope.typeCode) <= EventSchema.table.count else { return nil }
        let type = EventSchema.types[Int(envelope.typeCode) - 1]
        let schema = envelope.schema
        // Most records are at schema 1: only a higher one needs the type's newest.
        guard schema == 1 || (schema > 1 && schema <= type.schemaVersion) else { return nil }
        let seq = envelope.seq(in: body)
        guard seq >= 1 else { return nil }
        let at = envelope.at(in: body)
        guard at >= Timestamp.minimum, at <= Timestamp.maximum,
            let device = FastBodyReader.device(UnsafeRawBufferPointer(rebasing: body[envelope.device]))
        else { return nil }
        var user: String?
        if let userOffset = envelope.user {
            // Events with sealed personal fields (user_added, user_profile_updated, sign-in events
            // with a client address) are rare: the reference decoder opens them.
            guard !type.hasPersonalFields(schema: schema) else { return nil }
            user = users.displayName(of: UserRef(bytes: UnsafeRawBufferPointer(start: body.baseAddress! + userOffset, count: UserRef.byteCount)))
        }
        // `user_forgotten` names its user by the pseudonym literal (`Event.validate`): with no
        // user, or one this directory still holds by name, the reference decoder refuses it.
        if type == .userForgotten, !(user.map(UserRef.isLiteral) ?? false) { return nil }
        let session = envelope.session.map { RecordEnvelope.uuid(body, at: $0) }
        var source = FastFieldSource(
            body: FastBodyReader(bytes: body, offset: envelope.end), schema: schema,
            slots: EventSchema.fastSlots.slots(code: envelope.typeCode, schema: schema))
        guard let payload = try? Payload(type: type, reading: &source), source.isComplete else { return nil }
        return (seq, Event(id: envelope.id(in: body), device: device, at: at, user: user, flow: session, payload: payload))
    }
}

/// The payload fields of a body read straight into ``Payload/init(type:reading:)``, checked
/// against the schema table's layout of the record's schema (``EventSchema/Layout``): choice
/// codes the schema knows, count ranges, presence and flag bytes, text rules. A field the schema
/// does not have reads as absent. It declines a client address (the reference decoder checks its
/// form), and a record at a newer schema than its values need (the reference decoder refuses it).
private struct FastFieldSource: PayloadFieldSource {
    var body: FastBodyReader
    /// The layout of the record's schema (``EventSchema/fastSlots``).
    let slots: UnsafeBufferPointer<EventSchema.Layout.Slot>
    var index = 0
    /// Some value needs the record's schema (always true at schema 1).
    var needsSchema: Bool

    init(body: FastBodyReader, schema: UInt8, slots: UnsafeBufferPointer<EventSchema.Layout.Slot>) {
        self.body = body
        self.slots = slots
        needsSchema = schema == 1
    }

    /// Every byte read, and the record's schema is the lowest that holds its values.
    var isComplete: Bool { body.isAtEnd && needsSchema }

    @inline(__always)
    private mutating func nextSlot() -> EventSchema.Layout.Slot {
        // The Payload mapping reads exactly the table's fields (EventSchemaTests), so in bounds.
        defer { index += 1 }
        return slots[index]
    }

    /// Whether an optional field is present (`nil`: absent from the schema or marked absent).
    @inline(__always)
    private mutating func present(_ slot: EventSchema.Layout.Slot) throws(FieldDeclined) -> Bool {
        guard slot.isPresent else { return false }
        guard let present = body.presence() else { throw FieldDeclined() }
        if present {
            if slot.declinesWhenPresent { throw FieldDeclined() }
            if slot.isNew { needsSchema = true }
        }
        return present
    }

    mutating func text() throws(FieldDeclined) -> String {
        _ = nextSlot()
        guard let text = body.text() else { throw FieldDeclined() }
        return text
    }

    mutating func optionalText() throws(FieldDeclined) -> String? {
        guard try present(nextSlot()) else { return nil }
        guard let text = body.text() else { throw FieldDeclined() }
        return text
    }

    @inline(__always)
    private mutating func choice<E: WireEnum>(_ slot: EventSchema.Layout.Slot) throws(FieldDeclined) -> E {
        guard let code = body.uint8(), Int(code) < slot.knownValueCount else { throw FieldDeclined() }
        if Int(code) >= slot.firstNewCode { needsSchema = true }
        // A payload-free enum is stored as its declaration index (`WireEnum.wireCode`).
        if MemoryLayout<E>.size == 1 { return unsafeBitCast(code, to: E.self) }
        return E.allCases[Int(code)]
    }

    mutating func choice<E: WireEnum>() throws(FieldDeclined) -> E { try choice(nextSlot()) }

    mutating func optionalChoice<E: WireEnum>() throws(FieldDeclined) -> E? {
        let slot = nextSlot()
        guard try present(slot) else { return nil }
        return try choice(slot) as E
    }

    mutating func flag() throws(FieldDeclined) -> Bool {
        _ = nextSlot()
        guard let flag = body.flag() else { throw FieldDeclined() }
        return flag
    }

    mutating func optionalFlag() throws(FieldDeclined) -> Bool? {
        guard try present(nextSlot()) else { return nil }
        guard let flag = body.flag() else { throw FieldDeclined() }
        return flag
    }

    mutating func instant() throws(FieldDeclined) -> Timestamp {
        _ = nextSlot()
        guard let instant = body.instant() else { throw FieldDeclined() }
        return instant
    }

    mutating func optionalInstant() throws(FieldDeclined) -> Timestamp? {
        guard try present(nextSlot()) else { return nil }
        guard let instant = body.instant() else { throw FieldDeclined() }
        return instant
    }

    mutating func count() throws(FieldDeclined) -> Int {
        let slot = nextSlot()
        guard let raw = body.uint32(), slot.range.contains(Int(raw)) else { throw FieldDeclined() }
        return Int(raw)
    }

    /// A count byte within the slot's range, then that many known codes, none twice.
    mutating func choices<E: WireEnum>() throws(FieldDeclined) -> [E] {
        let slot = nextSlot()
        guard let count = body.uint8(), slot.range.contains(Int(count)) else { throw FieldDeclined() }
        var values: [E] = []
        values.reserveCapacity(Int(count))
        for _ in 0..<count {
            let value: E = try choice(slot)
            guard !values.contains(value) else { throw FieldDeclined() }
            values.append(value)
        }
        return values
    }
}

/// Reads a record body; every read returns `nil` on anything the reference decoder would refuse.
private struct FastBodyReader {
    let bytes: UnsafeRawBufferPointer
    var offset = 0

    init(bytes: UnsafeRawBufferPointer, offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    var isAtEnd: Bool { offset == bytes.count }

    private mutating func take(_ count: Int) -> UnsafeRawBufferPointer? {
        guard count <= bytes.count - offset else { return nil }
        defer { offset += count }
        return UnsafeRawBufferPointer(start: bytes.baseAddress! + offset, count: count)
    }

    mutating func uint8() -> UInt8? {
        guard offset < bytes.count else { return nil }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func uint16() -> UInt16? {
        take(2).map { UInt16(bigEndian: $0.loadUnaligned(as: UInt16.self)) }
    }

    mutating func uint32() -> UInt32? {
        take(4).map { UInt32(bigEndian: $0.loadUnaligned(as: UInt32.self)) }
    }

    mutating func uint64() -> UInt64? {
        take(8).map { UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)) }
    }

    /// A time within the years 0001…9999 (`Event.validate`'s rule for `at` and instants).
    mutating func instant() -> Timestamp? {
        guard let raw = uint64() else { return nil }
        let instant = Timestamp(millisecondsSince1970: Int64(bitPattern: raw))
        guard instant >= Timestamp.minimum, instant <= Timestamp.maximum else { return nil }
        return instant
    }

    mutating func presence() -> Bool? {
        guard let flag = uint8(), flag <= 1 else { return nil }
        return flag == 1
    }

    mutating func flag() -> Bool? { presence() }

    /// A device id: 1…64 bytes of `Event.validateDevice`'s characters (all ASCII).
    static func device(_ slice: UnsafeRawBufferPointer) -> String? {
        guard slice.count >= 1, slice.count <= Limits.maximumDeviceBytes, slice.allSatisfy(Event.isDeviceByte) else { return nil }
        return string(ascii: slice)
    }

    /// A u16-length-prefixed text of 1…`maximumBytes` bytes of valid UTF-8 without control
    /// characters (the rule for `user` and for every text field).
    mutating func shortText(maximumBytes: Int) -> String? {
        guard let length = uint16(), length >= 1, Int(length) <= maximumBytes, let slice = take(Int(length)) else { return nil }
        var isASCII = true
        for byte in slice {
            if byte < 0x20 || byte == 0x7F { return nil }
            if byte >= 0x80 { isASCII = false }
        }
        if isASCII { return Self.string(ascii: slice) }
        guard let text = String(validating: slice, as: UTF8.self), !Event.containsControlCharacter(text) else { return nil }
        return text
    }

    mutating func text() -> String? { shortText(maximumBytes: Limits.maximumTextBytes) }

    /// ASCII bytes are valid UTF-8 as they are: no validation pass needed.
    private static func string(ascii slice: UnsafeRawBufferPointer) -> String {
        slice.withMemoryRebound(to: UInt8.self) { String(decoding: $0, as: UTF8.self) }
    }
}
