import Foundation

/// The parts of a stored record that a reader which decodes no event skips to: the lockout
/// lab's scan (`OnboardingStore.forEachLockoutInput`) reads its few fields from these. One parse
/// of the envelope (`RecordEnvelope`), the sealed section as ``RecordCodec/sealedSection(of:)``
/// finds it, and payload fields at offsets the schema table gives (`EventSchema.byteOffset(of:schema:)`).
/// It checks no hash and opens nothing.
package struct StoredRecordParts {
    package let type: EventType
    package let schema: UInt8
    package let at: Timestamp
    /// The device id's bytes.
    package let device: UnsafeRawBufferPointer
    /// The user's pseudonym, `nil` when the record names no user.
    package let user: UserRef?
    /// The sealed personal section (nonce ‖ ciphertext): a record naming a user, of a schema
    /// with personal fields, sealed when written. `nil` otherwise or when written empty.
    package let sealed: UnsafeRawBufferPointer?
    /// The payload's bytes (docs/format.md § Payload fields).
    package let payload: UnsafeRawBufferPointer

    /// The type of a stored record from its first body bytes alone, `nil` for a damaged header or
    /// an unknown code: a reader can skip a record of a type it does not want before parsing more.
    @inlinable
    package static func type(of bytes: UnsafeRawBufferPointer) -> EventType? {
        guard bytes.count > RecordCodec.bodyOffset + RecordEnvelope.Layout.typeCode.upperBound,
            bytes[0] == RecordCodec.formatVersion
        else { return nil }
        return EventType(code: RecordEnvelope.load(bytes, at: RecordCodec.bodyOffset + RecordEnvelope.Layout.typeCode.lowerBound, as: UInt16.self))
    }

    /// `nil` when the record is damaged: its header, envelope or sealed section cut short, a
    /// presence byte neither 0 nor 1, an unknown type or a schema the type does not have.
    @inlinable
    package init?(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > RecordCodec.headerByteCount, bytes[0] == RecordCodec.formatVersion else { return nil }
        let body = UnsafeRawBufferPointer(rebasing: bytes[RecordCodec.bodyOffset...])
        guard let envelope = RecordEnvelope(body), let type = EventType(code: envelope.typeCode),
            envelope.schema >= 1, envelope.schema <= type.schemaVersion, envelope.device.upperBound <= body.count
        else { return nil }
        self.type = type
        schema = envelope.schema
        at = envelope.at(in: body)
        device = UnsafeRawBufferPointer(rebasing: body[envelope.device])
        user = envelope.user.map { UserRef(bytes: UnsafeRawBufferPointer(rebasing: body[$0..<$0 + UserRef.byteCount])) }
        guard let (sealed, payloadStart) = envelope.sealedSection(in: body, type: type) else { return nil }
        self.sealed = sealed.map { UnsafeRawBufferPointer(rebasing: body[$0]) }
        payload = UnsafeRawBufferPointer(rebasing: body[payloadStart...])
    }
}

extension RecordEnvelope {
    /// Where the sealed personal section lies (`nil` when the record has none or it was written
    /// empty) and where the payload starts; `nil` when the section is cut short or its presence
    /// byte is neither 0 nor 1.
    @inlinable
    func sealedSection(in body: UnsafeRawBufferPointer, type: EventType) -> (Range<Int>?, payload: Int)? {
        guard user != nil, type.hasPersonalFields(schema: schema) else { return (nil, end) }
        guard end < body.count, body[end] <= 1 else { return nil }
        guard body[end] == 1 else { return (nil, end + 1) }
        guard end + 3 <= body.count else { return nil }
        let length = Int(RecordEnvelope.load(body, at: end + 1, as: UInt16.self))
        let start = end + 3
        guard start + length <= body.count else { return nil }
        return (start..<start + length, start + length)
    }
}

extension EventSchema {
    /// The byte offset in the payload of field `name` at `schema`, when every field before it is
    /// one byte (a required choice or flag), so that a reader may go straight to it; `nil`
    /// otherwise, or when the schema does not hold the field.
    package func byteOffset(of name: String, schema: UInt8) -> Int? {
        guard schema >= 1, Int(schema) <= schemas.count else { return nil }
        var offset = 0
        for spec in schemas[Int(schema) - 1] {
            if spec.name == name { return offset }
            switch spec.kind {
            case .choice, .flag:
                guard !spec.isOptional else { return nil }
                offset += 1
            default: return nil
            }
        }
        return nil
    }

    /// The schema table's row of `type`.
    package static func row(_ type: EventType) -> EventSchema { table[Int(type.code) - 1] }
}
