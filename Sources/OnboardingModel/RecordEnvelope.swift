import Foundation

/// The envelope of a record body (docs/format.md § The body): the fixed part, then the device,
/// the user and the session, after which come the sealed personal section (if any) and the
/// payload. Every reader that skips to a part of the envelope goes through this one parse: the
/// fast decoder, ``RecordCodec/userRef(of:)``, ``RecordCodec/sealedSection(of:)`` and the lockout
/// scan's `StoredRecordParts`. (The reference decoder reads the same fields in the same order,
/// naming whatever is wrong.)
@usableFromInline
struct RecordEnvelope {
    /// The fixed part of the body, each field's bytes computed from the sizes of those before it.
    @usableFromInline
    enum Layout {
        @inlinable @inline(__always) static var typeCode: Range<Int> { field(after: 0, size: 2) }
        @inlinable @inline(__always) static var schema: Range<Int> { field(after: typeCode.upperBound, size: 1) }
        @inlinable @inline(__always) static var seq: Range<Int> { field(after: schema.upperBound, size: 8) }
        @inlinable @inline(__always) static var id: Range<Int> { field(after: seq.upperBound, size: 16) }
        @inlinable @inline(__always) static var at: Range<Int> { field(after: id.upperBound, size: 8) }
        @inlinable @inline(__always) static var deviceLength: Range<Int> { field(after: at.upperBound, size: 1) }
        /// 36: the device follows.
        @inlinable @inline(__always) static var fixedByteCount: Int { deviceLength.upperBound }
        /// The envelope without its variable parts: the fixed part and the user and session
        /// presence bytes.
        @inlinable @inline(__always) static var minimumByteCount: Int { fixedByteCount + 2 }

        @inlinable @inline(__always)
        static func field(after offset: Int, size: Int) -> Range<Int> { offset..<offset + size }
    }

    @usableFromInline let typeCode: UInt16
    @usableFromInline let schema: UInt8
    /// The device id's bytes.
    @usableFromInline let device: Range<Int>
    /// Where the user's 16-byte pseudonym starts, `nil` when the record names no user.
    @usableFromInline let user: Int?
    /// Where the session's 16 bytes start, `nil` when absent.
    @usableFromInline let session: Int?
    /// Where the envelope ends: the sealed personal section or the payload starts here.
    @usableFromInline let end: Int

    /// `nil` when the body is too short for its envelope or a presence byte is neither 0 nor 1.
    @inlinable @inline(__always)
    init?(_ body: UnsafeRawBufferPointer) {
        guard body.count >= Layout.minimumByteCount else { return nil }
        typeCode = RecordEnvelope.load(body, at: Layout.typeCode.lowerBound, as: UInt16.self)
        schema = body[Layout.schema.lowerBound]
        let deviceEnd = Layout.fixedByteCount + Int(body[Layout.deviceLength.lowerBound])
        device = Layout.fixedByteCount..<deviceEnd
        var offset = deviceEnd
        guard offset < body.count, body[offset] <= 1 else { return nil }
        if body[offset] == 1 {
            user = offset + 1
            offset += 1 + UserRef.byteCount
        } else {
            user = nil
            offset += 1
        }
        guard offset < body.count, body[offset] <= 1 else { return nil }
        if body[offset] == 1 {
            session = offset + 1
            offset += 1 + 16
            guard offset <= body.count else { return nil }
        } else {
            session = nil
            offset += 1
        }
        end = offset
    }

    func seq(in body: UnsafeRawBufferPointer) -> UInt64 { RecordEnvelope.load(body, at: Layout.seq.lowerBound, as: UInt64.self) }

    func id(in body: UnsafeRawBufferPointer) -> UUID { RecordEnvelope.uuid(body, at: Layout.id.lowerBound) }

    @inlinable
    func at(in body: UnsafeRawBufferPointer) -> Timestamp {
        Timestamp(millisecondsSince1970: Int64(bitPattern: RecordEnvelope.load(body, at: Layout.at.lowerBound, as: UInt64.self)))
    }

    @inlinable @inline(__always)
    static func load<T: FixedWidthInteger>(_ body: UnsafeRawBufferPointer, at offset: Int, as type: T.Type) -> T {
        T(bigEndian: body.loadUnaligned(fromByteOffset: offset, as: T.self))
    }

    @inline(__always)
    static func uuid(_ body: UnsafeRawBufferPointer, at offset: Int) -> UUID {
        UUID(uuid: body.loadUnaligned(fromByteOffset: offset, as: uuid_t.self))
    }
}
