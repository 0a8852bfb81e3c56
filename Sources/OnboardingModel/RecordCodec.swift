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
    /// Version 2 names the user by its pseudonym and seals the personal text fields
    /// (docs/format.md § Format 2, docs/audit.md § Erasure); version 1 records are read only by a store's migration
    /// (``decodeLegacy(_:expectedSeq:)``).
    public static let formatVersion: UInt8 = 2
    /// The format before pseudonyms: readable user ids and personal fields in the clear.
    public static let legacyFormatVersion: UInt8 = 1
    public static let headerByteCount = 1 + Digest.byteCount * 2
    public static let hashOffset = 1
    static let previousHashOffset = 1 + Digest.byteCount
    @usableFromInline static let bodyOffset = headerByteCount
    /// Bytes of the body before the payload without the variable parts; used to pre-size buffers.
    static let fixedBodyByteCount = RecordEnvelope.Layout.minimumByteCount

    /// Encodes `event` as the record at `seq` following `previousHash`. The event must be valid.
    /// `seal` is required exactly when the event names a user.
    public static func encode(_ event: Event, seq: UInt64, previousHash: Digest, seal: UserSeal?) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(headerByteCount + fixedBodyByteCount + 64)
        _ = encode(event, seq: seq, previousHash: previousHash, seal: seal, appendingTo: &bytes)
        return bytes
    }

    /// Appends the record to `buffer` and returns where it is: a batch encodes all its records
    /// into one buffer instead of one array each.
    public static func encode(
        _ event: Event, seq: UInt64, previousHash: Digest, seal: UserSeal?,
        appendingTo buffer: inout [UInt8]
    ) -> Range<Int> {
        var writer = BinaryWriter(capacity: 0)
        swap(&writer.bytes, &buffer)
        defer { swap(&writer.bytes, &buffer) }
        let start = writer.bytes.count
        writer.append(formatVersion)
        Digest.zero.withUnsafeBytes { writer.append($0) } // hash, filled in below
        previousHash.withUnsafeBytes { writer.append($0) }
        encodeBody(event, seq: seq, seal: seal, into: &writer)
        writer.bytes.withUnsafeMutableBytes { raw in
            Digest.hash(
                UnsafeRawBufferPointer(rebasing: raw[(start + previousHashOffset)...]),
                into: UnsafeMutableRawBufferPointer(rebasing: raw[(start + hashOffset)..<(start + hashOffset + Digest.byteCount)]))
        }
        return start..<writer.bytes.count
    }

    /// The canonical record bytes of `event` at `seq` (what the hash covers after the previous hash).
    public static func body(of event: Event, seq: UInt64, seal: UserSeal?) -> [UInt8] {
        var writer = BinaryWriter(capacity: fixedBodyByteCount + 64)
        encodeBody(event, seq: seq, seal: seal, into: &writer)
        return writer.bytes
    }

    static func encodeBody(_ event: Event, seq: UInt64, seal: UserSeal?, into writer: inout BinaryWriter) {
        let type = event.type
        let values = event.payload.fieldValues
        let schema = type.schemaVersion(holding: values)
        writer.append(type.code)
        writer.append(schema)
        writer.append(seq)
        writer.append(event.id)
        writer.append(event.at.millisecondsSince1970)
        let device = event.device.utf8
        precondition(!device.isEmpty && device.count <= Limits.maximumDeviceBytes, "device id must be validated before encoding")
        writer.append(UInt8(device.count))
        writer.bytes.append(contentsOf: device)
        precondition((event.user == nil) == (seal == nil), "an event names a user exactly when it has a seal")
        if let seal {
            writer.append(UInt8(1))
            seal.ref.withUnsafeBytes { writer.append($0) }
        } else {
            writer.append(UInt8(0))
        }
        if let session = event.flow {
            writer.append(UInt8(1))
            writer.append(session)
        } else {
            writer.append(UInt8(0))
        }
        // With a user, the personal text fields go sealed with the user's key (or, once the user
        // is forgotten, not at all); without one there is no key and they stay in the clear.
        let sealsPersonal = seal != nil && type.hasPersonalFields(schema: schema)
        // An older schema has a prefix of the fields (the values of the others are absent).
        let specs = schema == type.schemaVersion ? type.fields : type.fields(schema: schema)!
        if let seal, sealsPersonal {
            if let key = seal.key {
                var plaintext = BinaryWriter(capacity: 64)
                for (spec, value) in zip(specs, values) where spec.isPersonal {
                    if spec.isOptional { plaintext.append(UInt8(value == nil ? 0 : 1)) }
                    if case .text(let text)? = value { plaintext.appendShortString(text) }
                }
                let sealed = PersonalData.seal(plaintext.bytes, key: key, eventID: event.id, seq: seq)
                writer.append(UInt8(1))
                writer.append(UInt16(sealed.count))
                writer.append(sealed)
            } else if let sealed = seal.sealed {
                writer.append(UInt8(1))
                writer.append(UInt16(sealed.count))
                writer.append(sealed)
            } else {
                writer.append(UInt8(0))
            }
        }
        for (spec, value) in zip(specs, values) {
            if sealsPersonal && spec.isPersonal { continue }
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
            case .choices(let codes)?:
                // A count byte, then one code each (docs/format.md § Payload fields).
                precondition(!codes.isEmpty && codes.count <= Int(UInt8.max), "a list of choices must be validated before encoding")
                writer.append(UInt8(codes.count))
                writer.append(codes)
            }
        }
    }

    /// Decodes and checks a stored record: framing, body, hash, and (when given) that the body's
    /// seq is `expectedSeq`.
    /// `users` turns the record's pseudonym into the readable id and opens sealed personal
    /// fields; a user it does not know (forgotten) reads as the pseudonym literal, erased.
    public static func decode(
        _ bytes: UnsafeRawBufferPointer, expectedSeq: UInt64? = nil,
        users: UserDirectory
    ) throws(RecordDecodingError) -> Record {
        try decode(bytes, expectedSeq: expectedSeq, version: formatVersion, users: users)
    }

    /// Decodes a record of format 1 (readable user ids, personal fields in the clear): what a
    /// store's migration reads.
    public static func decodeLegacy(_ bytes: UnsafeRawBufferPointer, expectedSeq: UInt64? = nil) throws(RecordDecodingError) -> Record {
        try decode(bytes, expectedSeq: expectedSeq, version: legacyFormatVersion, users: nil)
    }

    private static func decode(
        _ bytes: UnsafeRawBufferPointer, expectedSeq: UInt64?, version: UInt8,
        users: UserDirectory?
    ) throws(RecordDecodingError) -> Record {
        guard bytes.count > headerByteCount else {
            throw RecordDecodingError("record is \(bytes.count) bytes, shorter than its \(headerByteCount)-byte header")
        }
        guard bytes[0] == version else {
            throw RecordDecodingError("record format version \(bytes[0]) is not supported (this build reads \(version))")
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
        if let users, let decoded = fastDecodeBody(body, users: users) {
            (seq, event) = decoded
        } else {
            // The reference decoder decides, and names what is wrong.
            var reader = BinaryReader(bytes: body)
            (seq, event) = try decodeBody(&reader, users: users)
        }
        if let expectedSeq, seq != expectedSeq {
            throw RecordDecodingError(
                "record says seq \(seq) but is stored at seq \(expectedSeq) (records were moved)",
                reason: .misplaced(storedSeq: seq))
        }
        return Record(seq: seq, event: event, previousHash: previousHash, hash: hash)
    }

    /// Decodes a body with the reference decoder only (no fast path): what the fast path is
    /// tested against.
    static func referenceDecodeBody(_ body: UnsafeRawBufferPointer, users: UserDirectory) throws(RecordDecodingError) -> (UInt64, Event) {
        var reader = BinaryReader(bytes: body)
        return try decodeBody(&reader, users: users)
    }

    public static func decode(_ bytes: [UInt8], expectedSeq: UInt64? = nil, users: UserDirectory) throws(RecordDecodingError) -> Record {
        // `withUnsafeBytes` cannot forward a typed throw, so carry the result out.
        let result: Result<Record, RecordDecodingError> = bytes.withUnsafeBytes { buffer in
            do throws(RecordDecodingError) { return .success(try decode(buffer, expectedSeq: expectedSeq, users: users)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// The pseudonym a record names, without decoding the rest; `nil` when it names no user.
    public static func userRef(of bytes: UnsafeRawBufferPointer) throws(RecordDecodingError) -> UserRef? {
        let (body, envelope) = try envelope(of: bytes)
        return envelope.user.map { UserRef(bytes: UnsafeRawBufferPointer(rebasing: body[$0..<$0 + UserRef.byteCount])) }
    }

    /// The sealed personal section of a stored record (nonce ‖ ciphertext) when it has one: a
    /// record that names a user, of a type with personal fields, sealed when it was written.
    /// `nil` otherwise, also when the section was written empty (the user already forgotten).
    public static func sealedSection(of bytes: UnsafeRawBufferPointer) throws(RecordDecodingError) -> [UInt8]? {
        let (body, envelope) = try envelope(of: bytes)
        guard let type = EventType(code: envelope.typeCode) else { throw RecordDecodingError("unknown event type code \(envelope.typeCode)") }
        guard let (sealed, _) = envelope.sealedSection(in: body, type: type) else {
            throw RecordDecodingError("sealed personal fields: truncated, or a presence byte that is neither 0 nor 1")
        }
        return sealed.map { Array(body[$0]) }
    }

    /// The body of a stored record of this format and its envelope (``RecordEnvelope``).
    private static func envelope(of bytes: UnsafeRawBufferPointer) throws(RecordDecodingError) -> (UnsafeRawBufferPointer, RecordEnvelope) {
        guard bytes.count > headerByteCount, bytes[0] == formatVersion else { throw RecordDecodingError("record header is damaged") }
        let body = UnsafeRawBufferPointer(rebasing: bytes[bodyOffset...])
        guard let envelope = RecordEnvelope(body) else {
            throw RecordDecodingError("the record's envelope (type, seq, id, time, device, user, session) is truncated or damaged")
        }
        return (body, envelope)
    }

    /// The hash and previous hash of a stored record without decoding the body.
    public static func links(of bytes: UnsafeRawBufferPointer) throws(RecordDecodingError) -> (hash: Digest, previous: Digest) {
        guard bytes.count > headerByteCount, bytes[0] == formatVersion else {
            throw RecordDecodingError("record header is damaged")
        }
        return (
            Digest(copying: UnsafeRawBufferPointer(rebasing: bytes[hashOffset..<hashOffset + Digest.byteCount])),
            Digest(copying: UnsafeRawBufferPointer(rebasing: bytes[previousHashOffset..<bodyOffset]))
        )
    }

    /// `users` is `nil` for a format 1 body (readable user, no sealed section).
    static func decodeBody(_ reader: inout BinaryReader, users: UserDirectory?) throws(RecordDecodingError) -> (UInt64, Event) {
        let code = try reader.readUInt16()
        guard let type = EventType(code: code) else { throw RecordDecodingError("unknown event type code \(code)") }
        let schema = try reader.readUInt8()
        guard let specs = type.fields(schema: schema) else {
            let known = type.schemaVersion == 1 ? "1" : "1…\(type.schemaVersion)"
            throw RecordDecodingError("\(type.rawValue) schema version \(schema) is not supported (this build reads \(known))")
        }
        let seq = try reader.readUInt64()
        guard seq >= 1 else { throw RecordDecodingError("record says seq 0; a log's seqs start at 1") }
        let id = try reader.readUUID()
        let at = Timestamp(millisecondsSince1970: try reader.readInt64())
        let deviceLength = Int(try reader.readUInt8())
        let device = try reader.readString(byteCount: deviceLength, field: "device")
        var user: String?
        var ref: UserRef?
        if let users {
            if try reader.readPresence(field: "user") {
                let decoded = UserRef(bytes: try reader.take(UserRef.byteCount, field: "user"))
                ref = decoded
                user = users.displayName(of: decoded)
            }
        } else {
            user = try reader.readPresence(field: "user") ? try reader.readShortString(field: "user") : nil
        }
        let session: UUID? = try reader.readPresence(field: "session") ? try reader.readUUID() : nil
        // The sealed personal fields (format 2, with a user): in field order, or `nil` when erased.
        var personal: [FieldValue?]?
        let sealsPersonal = ref != nil && type.hasPersonalFields(schema: schema)
        if let ref, let users, sealsPersonal {
            if try reader.readPresence(field: "sealed personal fields") {
                let length = Int(try reader.readUInt16())
                let sealed = try reader.take(length, field: "sealed personal fields")
                if let key = users.key(of: ref) {
                    guard let plaintext = PersonalData.open(sealed, key: key) else {
                        throw RecordDecodingError("the sealed personal fields of seq \(seq) do not open with their user's key")
                    }
                    guard PersonalData.hasRecordNonce(sealed, plaintext: plaintext, key: key, eventID: id, seq: seq) else {
                        throw RecordDecodingError("the sealed personal fields of seq \(seq) were sealed for another record (their nonce is not this record's)")
                    }
                    personal = try decodePersonal(plaintext, type: type, specs: specs)
                }
            } else if users.key(of: ref) != nil {
                // Left out only for a user forgotten when it was written, who never has a key again.
                throw RecordDecodingError(
                    "the sealed personal fields of seq \(seq) are missing, but its user's key is held (the record was written for a forgotten user)")
            }
        }
        var values: [FieldValue?] = []
        values.reserveCapacity(type.fields.count)
        var personalIndex = 0
        for spec in specs {
            if sealsPersonal && spec.isPersonal {
                if let personal {
                    values.append(personal[personalIndex])
                    personalIndex += 1
                } else {
                    // Erased: a field this schema adds was there (else the record would be at an older schema).
                    values.append(type.erasedValue(spec, present: true))
                }
                continue
            }
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
            case .choices(let names, let maximumCount):
                values.append(.choices(try reader.readChoices(names: names, maximumCount: maximumCount, field: "\(type.rawValue).\(spec.name)")))
            }
        }
        guard reader.isAtEnd else { throw RecordDecodingError("\(reader.remaining) unexpected bytes after the payload") }
        // Fields an older schema does not have are absent.
        while values.count < type.fields.count { values.append(nil) }
        guard type.schemaVersion(holding: values) == schema else {
            throw RecordDecodingError(
                "\(type.rawValue) is written at schema version \(schema) but holds nothing an older schema cannot; a record is written at the lowest schema that holds its values"
            )
        }
        let event = Event(
            id: id, device: device, at: at, user: user, flow: session,
            payload: Payload(type: type, fieldValues: values))
        do { try event.validate() } catch { throw RecordDecodingError("stored event is invalid: \(error)") }
        return (seq, event)
    }
}

extension RecordCodec {
    /// The personal field values (in field order) of an opened sealed section.
    static func decodePersonal(_ plaintext: [UInt8], type: EventType, specs: [FieldSpec]) throws(RecordDecodingError) -> [FieldValue?] {
        let result: Result<[FieldValue?], RecordDecodingError> = plaintext.withUnsafeBytes { raw in
            do throws(RecordDecodingError) {
                var reader = BinaryReader(bytes: raw)
                var values: [FieldValue?] = []
                for spec in specs where spec.isPersonal {
                    if spec.isOptional, !(try reader.readPresence(field: spec.name)) {
                        values.append(nil)
                    } else {
                        values.append(.text(try reader.readShortString(field: spec.name)))
                    }
                }
                guard reader.isAtEnd else { throw RecordDecodingError("\(reader.remaining) unexpected bytes after the sealed personal fields") }
                return .success(values)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
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

    /// A list of choices: a count byte (1…`maximumCount`), then that many distinct codes, each
    /// below `names.count`.
    mutating func readChoices(names: [String], maximumCount: Int, field: String) throws(RecordDecodingError) -> [UInt8] {
        let count = Int(try readUInt8())
        guard count >= 1, count <= maximumCount else {
            throw RecordDecodingError("\(field) holds \(count) values, outside 1…\(maximumCount)")
        }
        let codes = Array(try take(count, field: field))
        for (index, code) in codes.enumerated() {
            guard Int(code) < names.count else { throw RecordDecodingError("\(field) has unknown code \(code)") }
            guard !codes[..<index].contains(code) else {
                throw RecordDecodingError("\(field) holds \(names[Int(code)]) twice (each value at most once)")
            }
        }
        return codes
    }
}
