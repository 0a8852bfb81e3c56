import Foundation

/// The binary record: the value stored under a seq in the `events` sub-database.
///
/// ```
/// offset  size  field
///      0     1  record format version (1)
///      1    32  hash = BLAKE2b-256(bytes 33…end), i.e. of previous hash ‖ body
///     33    32  previous record's hash (zeros for seq 1)
///     65     …  body: the canonical record bytes (see docs/format.md)
/// ```
///
/// The hash covers the previous hash and the body, and the body contains the seq, so a record
/// cannot be changed, dropped, inserted or moved without breaking the chain.
///
/// ```swift
/// let bytes = RecordCodec.encode(event, seq: 7, previousHash: head)
/// let record = try RecordCodec.decode(bytes, expectedSeq: 7)
/// ```
public enum RecordCodec {
    /// Version of the record framing. A reader refuses versions it does not know.
    public static let formatVersion: UInt8 = 1
    public static let headerByteCount = 1 + Digest.byteCount * 2
    public static let hashOffset = 1
    static let previousHashOffset = 1 + Digest.byteCount
    static let bodyOffset = headerByteCount
    /// Bytes of the body before the payload without the variable parts; used to pre-size buffers.
    static let fixedBodyByteCount = 2 + 1 + 8 + 16 + 8 + 1 + 1 + 1

    /// Encodes `event` as the record at `seq` following `previousHash`. The event must be valid.
    public static func encode(_ event: Event, seq: UInt64, previousHash: Digest) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(headerByteCount + fixedBodyByteCount + 64)
        _ = encode(event, seq: seq, previousHash: previousHash, appendingTo: &bytes)
        return bytes
    }

    /// Appends the record to `buffer` and returns where it is: a batch encodes all its records
    /// into one buffer instead of one array each.
    public static func encode(_ event: Event, seq: UInt64, previousHash: Digest,
                              appendingTo buffer: inout [UInt8]) -> Range<Int> {
        var writer = BinaryWriter(capacity: 0)
        swap(&writer.bytes, &buffer)
        defer { swap(&writer.bytes, &buffer) }
        let start = writer.bytes.count
        writer.append(formatVersion)
        Digest.zero.withUnsafeBytes { writer.append($0) } // hash, filled in below
        previousHash.withUnsafeBytes { writer.append($0) }
        encodeBody(event, seq: seq, into: &writer)
        writer.bytes.withUnsafeMutableBytes { raw in
            Digest.hash(UnsafeRawBufferPointer(rebasing: raw[(start + previousHashOffset)...]),
                        into: UnsafeMutableRawBufferPointer(rebasing: raw[(start + hashOffset)..<(start + hashOffset + Digest.byteCount)]))
        }
        return start..<writer.bytes.count
    }

    /// The canonical record bytes of `event` at `seq` (what the hash covers after the previous hash).
    public static func body(of event: Event, seq: UInt64) -> [UInt8] {
        var writer = BinaryWriter(capacity: fixedBodyByteCount + 64)
        encodeBody(event, seq: seq, into: &writer)
        return writer.bytes
    }

    static func encodeBody(_ event: Event, seq: UInt64, into writer: inout BinaryWriter) {
        let type = event.type
        writer.append(type.code)
        writer.append(type.schemaVersion)
        writer.append(seq)
        writer.append(event.id)
        writer.append(event.at.millisecondsSince1970)
        let device = event.device.utf8
        precondition(!device.isEmpty && device.count <= Limits.maximumDeviceBytes, "device id must be validated before encoding")
        writer.append(UInt8(device.count))
        writer.bytes.append(contentsOf: device)
        if let user = event.user {
            writer.append(UInt8(1))
            writer.appendShortString(user)
        } else {
            writer.append(UInt8(0))
        }
        if let session = event.session {
            writer.append(UInt8(1))
            writer.append(session)
        } else {
            writer.append(UInt8(0))
        }
        for (spec, value) in zip(type.fields, event.payload.fieldValues) {
            if spec.isOptional {
                writer.append(UInt8(value == nil ? 0 : 1))
            }
            switch value {
            case nil: precondition(spec.isOptional, "required field \(spec.name) missing")
            case .text(let text)?: writer.appendShortString(text)
            case .choice(let code)?: writer.append(code)
            case .flag(let flag)?: writer.append(UInt8(flag ? 1 : 0))
            case .instant(let instant)?: writer.append(instant.millisecondsSince1970)
            case .count(let count)?: writer.append(UInt32(count))
            }
        }
    }

    /// Decodes and checks a stored record: framing, body, hash, and (when given) that the body's
    /// seq is `expectedSeq`.
    public static func decode(_ bytes: UnsafeRawBufferPointer, expectedSeq: UInt64? = nil) throws(RecordDecodingError) -> Record {
        guard bytes.count > headerByteCount else {
            throw RecordDecodingError("record is \(bytes.count) bytes, shorter than its \(headerByteCount)-byte header")
        }
        guard bytes[0] == formatVersion else {
            throw RecordDecodingError("record format version \(bytes[0]) is not supported (this build reads \(formatVersion))")
        }
        let base = bytes.baseAddress!
        // Compared in place: the computed digest becomes the record's hash, no copy of the stored one.
        let hash = Digest.hash(UnsafeRawBufferPointer(start: base + previousHashOffset, count: bytes.count - previousHashOffset))
        guard hash == Digest(copying: UnsafeRawBufferPointer(start: base + hashOffset, count: Digest.byteCount)) else {
            throw RecordDecodingError("hash does not match the record's bytes (the record was modified)", reason: .modified)
        }
        let previousHash = Digest(copying: UnsafeRawBufferPointer(start: base + previousHashOffset, count: Digest.byteCount))
        let body = UnsafeRawBufferPointer(start: base + bodyOffset, count: bytes.count - bodyOffset)
        let seq: UInt64, event: Event
        if let decoded = fastDecodeBody(body) {
            (seq, event) = decoded
        } else {
            // The reference decoder decides, and names what is wrong.
            var reader = BinaryReader(bytes: body)
            (seq, event) = try decodeBody(&reader)
        }
        if let expectedSeq, seq != expectedSeq {
            throw RecordDecodingError("record says seq \(seq) but is stored at seq \(expectedSeq) (records were moved)",
                                      reason: .misplaced(storedSeq: seq))
        }
        return Record(seq: seq, event: event, previousHash: previousHash, hash: hash)
    }

    /// Decodes a body with the reference decoder only (no fast path): what the fast path is
    /// tested against.
    static func referenceDecodeBody(_ body: UnsafeRawBufferPointer) throws(RecordDecodingError) -> (UInt64, Event) {
        var reader = BinaryReader(bytes: body)
        return try decodeBody(&reader)
    }

    public static func decode(_ bytes: [UInt8], expectedSeq: UInt64? = nil) throws(RecordDecodingError) -> Record {
        // `withUnsafeBytes` cannot forward a typed throw, so carry the result out.
        let result: Result<Record, RecordDecodingError> = bytes.withUnsafeBytes { buffer in
            do throws(RecordDecodingError) { return .success(try decode(buffer, expectedSeq: expectedSeq)) }
            catch { return .failure(error) }
        }
        return try result.get()
    }

    /// The hash and previous hash of a stored record without decoding the body.
    public static func links(of bytes: UnsafeRawBufferPointer) throws(RecordDecodingError) -> (hash: Digest, previous: Digest) {
        guard bytes.count > headerByteCount, bytes[0] == formatVersion else {
            throw RecordDecodingError("record header is damaged")
        }
        return (Digest(copying: UnsafeRawBufferPointer(rebasing: bytes[hashOffset..<hashOffset + Digest.byteCount])),
                Digest(copying: UnsafeRawBufferPointer(rebasing: bytes[previousHashOffset..<bodyOffset])))
    }

    static func decodeBody(_ reader: inout BinaryReader) throws(RecordDecodingError) -> (UInt64, Event) {
        let code = try reader.readUInt16()
        guard let type = EventType(code: code) else { throw RecordDecodingError("unknown event type code \(code)") }
        let schema = try reader.readUInt8()
        guard schema == type.schemaVersion else {
            throw RecordDecodingError("\(type.rawValue) schema version \(schema) is not supported (this build reads \(type.schemaVersion))")
        }
        let seq = try reader.readUInt64()
        let id = try reader.readUUID()
        let at = Timestamp(millisecondsSince1970: try reader.readInt64())
        let deviceLength = Int(try reader.readUInt8())
        let device = try reader.readString(byteCount: deviceLength, field: "device")
        let user: String? = try reader.readPresence(field: "user") ? try reader.readShortString(field: "user") : nil
        let session: UUID? = try reader.readPresence(field: "session") ? try reader.readUUID() : nil
        var values: [FieldValue?] = []
        values.reserveCapacity(type.fields.count)
        for spec in type.fields {
            if spec.isOptional, !(try reader.readPresence(field: spec.name)) {
                values.append(nil)
                continue
            }
            switch spec.kind {
            case .text: values.append(.text(try reader.readShortString(field: spec.name)))
            case .choice(let names):
                let choice = try reader.readUInt8()
                guard Int(choice) < names.count else {
                    throw RecordDecodingError("\(type.rawValue).\(spec.name) has unknown code \(choice)")
                }
                values.append(.choice(choice))
            case .flag:
                let flag = try reader.readUInt8()
                guard flag <= 1 else { throw RecordDecodingError("\(type.rawValue).\(spec.name) flag byte is \(flag)") }
                values.append(.flag(flag == 1))
            case .instant: values.append(.instant(Timestamp(millisecondsSince1970: try reader.readInt64())))
            case .count(let range):
                let count = Int(try reader.readUInt32())
                guard range.contains(count) else {
                    throw RecordDecodingError("\(type.rawValue).\(spec.name) is \(count), outside \(range)")
                }
                values.append(.count(count))
            }
        }
        guard reader.isAtEnd else { throw RecordDecodingError("\(reader.remaining) unexpected bytes after the payload") }
        let event = Event(id: id, device: device, at: at, user: user, session: session,
                          payload: Payload(type: type, fieldValues: values))
        do { try event.validate() } catch { throw RecordDecodingError("stored event is invalid: \(error)") }
        return (seq, event)
    }
}

/// A stored record that cannot be read: truncated, modified or of an unknown version.
public struct RecordDecodingError: Error, Sendable, CustomStringConvertible {
    /// What kind of damage, as far as the decoder can tell (`verify` names it).
    public enum Reason: Sendable, Hashable {
        /// The bytes no longer hash to the stored hash.
        case modified
        /// A whole, intact record sits under another seq's key (records swapped or moved).
        case misplaced(storedSeq: UInt64)
        /// Anything else: truncated, unknown version, an invalid field.
        case damaged
    }

    public let message: String
    public let reason: Reason
    init(_ message: String, reason: Reason = .damaged) {
        self.message = message
        self.reason = reason
    }
    public var description: String { message }
}

/// Appends big-endian integers and length-prefixed strings.
struct BinaryWriter {
    var bytes: [UInt8]

    init(capacity: Int) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    mutating func append(_ value: UInt8) { bytes.append(value) }
    mutating func append(_ value: [UInt8]) { bytes.append(contentsOf: value) }
    mutating func append(_ value: UnsafeRawBufferPointer) { bytes.append(contentsOf: value) }
    // Integers go in byte by byte, big-endian: single-element appends inline to a store, where
    // appending a 2–8 byte buffer costs a call into memmove.
    mutating func append(_ value: UInt16) { appendBigEndian(UInt64(value), count: 2) }
    mutating func append(_ value: UInt32) { appendBigEndian(UInt64(value), count: 4) }
    mutating func append(_ value: UInt64) { appendBigEndian(value, count: 8) }
    mutating func append(_ value: Int64) { appendBigEndian(UInt64(bitPattern: value), count: 8) }

    @inline(__always)
    private mutating func appendBigEndian(_ value: UInt64, count: Int) {
        var shift = (count - 1) * 8
        while shift >= 0 {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
            shift -= 8
        }
    }
    mutating func append(_ value: UUID) { withUnsafeBytes(of: value.uuid) { bytes.append(contentsOf: $0) } }

    /// A u16 big-endian length and the UTF-8 bytes; callers validated the length.
    mutating func appendShortString(_ text: String) {
        let utf8 = text.utf8
        precondition(utf8.count <= Int(UInt16.max), "string must be validated before encoding")
        append(UInt16(utf8.count))
        bytes.append(contentsOf: utf8)
    }
}

/// Reads what `BinaryWriter` wrote, refusing to run past the end.
struct BinaryReader {
    let bytes: UnsafeRawBufferPointer
    var offset = 0

    init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    var isAtEnd: Bool { offset == bytes.count }
    var remaining: Int { bytes.count - offset }

    mutating func take(_ count: Int, field: String) throws(RecordDecodingError) -> UnsafeRawBufferPointer {
        guard count <= remaining else {
            throw RecordDecodingError("record is truncated in \(field) (needs \(count) bytes, \(remaining) left)")
        }
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count])
    }

    mutating func readInteger<T: FixedWidthInteger>(_ type: T.Type, field: String) throws(RecordDecodingError) -> T {
        let slice = try take(MemoryLayout<T>.size, field: field)
        var value: T = 0
        for byte in slice { value = value << 8 | T(byte) }
        return value
    }

    mutating func readUInt8() throws(RecordDecodingError) -> UInt8 { try readInteger(UInt8.self, field: "a byte field") }
    mutating func readUInt16() throws(RecordDecodingError) -> UInt16 { try readInteger(UInt16.self, field: "a u16 field") }
    mutating func readUInt32() throws(RecordDecodingError) -> UInt32 { try readInteger(UInt32.self, field: "a u32 field") }
    mutating func readUInt64() throws(RecordDecodingError) -> UInt64 { try readInteger(UInt64.self, field: "a u64 field") }
    mutating func readInt64() throws(RecordDecodingError) -> Int64 { Int64(bitPattern: try readUInt64()) }

    mutating func readUUID() throws(RecordDecodingError) -> UUID {
        let slice = try take(16, field: "a UUID")
        var tuple: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &tuple) { $0.copyMemory(from: slice) }
        return UUID(uuid: tuple)
    }

    mutating func readPresence(field: String) throws(RecordDecodingError) -> Bool {
        let flag = try readUInt8()
        guard flag <= 1 else { throw RecordDecodingError("presence byte of \(field) is \(flag), expected 0 or 1") }
        return flag == 1
    }

    mutating func readString(byteCount: Int, field: String) throws(RecordDecodingError) -> String {
        let slice = try take(byteCount, field: field)
        guard let text = String(validating: slice, as: UTF8.self) else {
            throw RecordDecodingError("\(field) is not valid UTF-8")
        }
        return text
    }

    mutating func readShortString(field: String) throws(RecordDecodingError) -> String {
        let length = Int(try readInteger(UInt16.self, field: field))
        return try readString(byteCount: length, field: field)
    }
}
