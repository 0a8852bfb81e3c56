import Foundation
import CSodium

/// Sealing with a user's key (libsodium `crypto_secretbox`, XSalsa20-Poly1305): the personal
/// text fields of `user_added` / `user_profile_updated` inside a record body (before it is
/// hashed), and the readable user id in the user's entry in `by_user`. Destroying the key
/// erases both without touching the hash chain (docs/format.md § Format 2, docs/audit.md § Erasure).
///
/// The 24-byte nonce is stored in front of the ciphertext. For record fields it is derived, not
/// drawn: a keyed BLAKE2b-192 under the user's key of the event id, seq and plaintext, so the
/// same event encodes to the same bytes (an event appended again is recognised as a duplicate by
/// comparing bodies; the sync server re-encodes an upload to check its hash). Different
/// plaintexts or records under one key never share a nonce, which is what secretbox needs.
///
/// ```swift
/// let sealed = PersonalData.seal(plaintext, key: key, eventID: id, seq: 7)
/// PersonalData.open(sealed, key: key)   // plaintext
/// ```
public enum PersonalData {
    public static let nonceByteCount = 24
    public static let macByteCount = 16
    /// What an erased required text field reads as (`user_added.display_name`); erased optional
    /// text fields read as absent.
    public static let erasedText = "[erased]"

    /// `nonce ‖ secretbox(plaintext)` with the nonce derived from the record (see above).
    public static func seal(_ plaintext: [UInt8], key: SecretKey, eventID: UUID, seq: UInt64) -> [UInt8] {
        seal(plaintext, key: key, nonce: recordNonce(plaintext, key: key, eventID: eventID, seq: seq))
    }

    /// Whether an opened record section (`nonce ‖ …`) carries the nonce its record derives: a
    /// section sealed for another record (another id or seq) opens with the key as well, but
    /// would make the record's bytes other than the encoding of the event it reads as.
    public static func hasRecordNonce(
        _ sealed: UnsafeRawBufferPointer, plaintext: [UInt8], key: SecretKey,
        eventID: UUID, seq: UInt64
    ) -> Bool {
        sealed.count >= nonceByteCount
            && recordNonce(plaintext, key: key, eventID: eventID, seq: seq).elementsEqual(sealed.prefix(nonceByteCount))
    }

    /// Keyed BLAKE2b-192 of "onboarding-nonce-v2" ‖ event id ‖ seq (u64 BE) ‖ plaintext.
    private static func recordNonce(_ plaintext: [UInt8], key: SecretKey, eventID: UUID, seq: UInt64) -> [UInt8] {
        var nonceInput = Array("onboarding-nonce-v2".utf8)
        withUnsafeBytes(of: eventID.uuid) { nonceInput.append(contentsOf: $0) }
        withUnsafeBytes(of: seq.bigEndian) { nonceInput.append(contentsOf: $0) }
        nonceInput.append(contentsOf: plaintext)
        var nonce = [UInt8](repeating: 0, count: nonceByteCount)
        key.withUnsafeBytes { keyBytes in
            let rc = crypto_generichash(
                &nonce, nonceByteCount, nonceInput, UInt64(nonceInput.count),
                keyBytes.baseAddress!.assumingMemoryBound(to: UInt8.self), keyBytes.count)
            precondition(rc == 0, "crypto_generichash failed")
        }
        return nonce
    }

    /// `nonce ‖ secretbox(plaintext)` with a random nonce (values outside the hashed log).
    public static func sealRandom(_ plaintext: [UInt8], key: SecretKey) -> [UInt8] {
        Sodium.ensureInitialized()
        var nonce = [UInt8](repeating: 0, count: nonceByteCount)
        randombytes_buf(&nonce, nonceByteCount)
        return seal(plaintext, key: key, nonce: nonce)
    }

    /// `nonce ‖ secretbox(plaintext)` with a nonce the caller drew at random (in bulk).
    public static func seal(_ plaintext: [UInt8], key: SecretKey, randomNonce nonce: [UInt8]) -> [UInt8] {
        precondition(nonce.count == nonceByteCount, "a nonce is \(nonceByteCount) bytes")
        return seal(plaintext, key: key, nonce: nonce)
    }

    private static func seal(_ plaintext: [UInt8], key: SecretKey, nonce: [UInt8]) -> [UInt8] {
        Sodium.ensureInitialized()
        var sealed = nonce + [UInt8](repeating: 0, count: macByteCount + plaintext.count)
        key.withUnsafeBytes { keyBytes in
            sealed.withUnsafeMutableBufferPointer { output in
                let base = output.baseAddress!
                let rc = crypto_secretbox_easy(
                    base + nonceByteCount, plaintext, UInt64(plaintext.count), base,
                    keyBytes.baseAddress!.assumingMemoryBound(to: UInt8.self))
                precondition(rc == 0, "crypto_secretbox_easy failed")
            }
        }
        return sealed
    }

    /// The plaintext of `nonce ‖ secretbox(…)`, or `nil` when it does not open with `key`.
    public static func open(_ sealed: UnsafeRawBufferPointer, key: SecretKey) -> [UInt8]? {
        guard sealed.count >= nonceByteCount + macByteCount else { return nil }
        Sodium.ensureInitialized()
        var plaintext = [UInt8](repeating: 0, count: sealed.count - nonceByteCount - macByteCount)
        let base = sealed.baseAddress!.assumingMemoryBound(to: UInt8.self)
        let rc = key.withUnsafeBytes { keyBytes in
            crypto_secretbox_open_easy(
                &plaintext, base + nonceByteCount, UInt64(sealed.count - nonceByteCount), base,
                keyBytes.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        return rc == 0 ? plaintext : nil
    }
}

/// Random bytes drawn from libsodium's CSPRNG 4 KiB at a time: a new user's key and nonce cost
/// a copy instead of a `getrandom` call each.
public struct RandomPool {
    private var buffer: [UInt8] = []
    private var offset = 0

    public init() {}

    public mutating func take(_ count: Int) -> [UInt8] {
        if offset + count > buffer.count {
            Sodium.ensureInitialized()
            buffer = [UInt8](repeating: 0, count: max(4096, count))
            randombytes_buf(&buffer, buffer.count)
            offset = 0
        }
        defer {
            // Used bytes are wiped: the pool never holds a key that was handed out.
            for index in offset..<offset + count { buffer[index] = 0 }
            offset += count
        }
        return Array(buffer[offset..<offset + count])
    }
}

/// What the encoder needs to write an event's user: the pseudonym, and the user's key when the
/// event has personal text fields to seal (`nil` once the user is forgotten: the fields are then
/// not written at all).
public struct UserSeal: Sendable, Equatable {
    public var ref: UserRef
    public var key: SecretKey?
    /// Without a key: the sealed personal section as another store wrote it (nonce ‖
    /// ciphertext), written unchanged so the record hashes as it did there. A device that forgot
    /// a user before its records synced sends these; the server cannot open them either.
    public var sealed: [UInt8]?

    public init(ref: UserRef, key: SecretKey?, sealed: [UInt8]? = nil) {
        self.ref = ref
        self.key = key
        self.sealed = sealed
    }
}

extension EventType {
    /// Whether some schema of this type carries personal text fields (`user_added`,
    /// `user_profile_updated`, and the sign-in types from schema 2): a cheap first test; whether a
    /// record holds ciphertext depends on its schema (``hasPersonalFields(schema:)``).
    /// One array load by type code (the append path asks for every event; a `Set` would hash).
    @inline(__always)
    public var hasPersonalFields: Bool { EventType.personalByCode[Int(code)] }

    /// Whether a record of this type at `schema` holds a sealed personal section.
    @inline(__always)
    public func hasPersonalFields(schema: UInt8) -> Bool {
        guard hasPersonalFields else { return false }
        return EventType.personalSchemas[Int(code)] & (1 << UInt32(schema & 31)) != 0
    }

    /// Indexed by type code (index 0 unused).
    static let personalByCode: [Bool] = personalSchemas.map { $0 != 0 }

    /// Per type code (index 0 unused), bit `s` set when schema `s` has personal fields: the
    /// schema table's column, by code for one load on the append path.
    static let personalSchemas: [UInt32] = [0] + EventSchema.table.map(\.personalSchemaMask)

    /// Whether an erased `spec` reads as ``PersonalData/erasedText`` rather than absent: required
    /// text, and optional fields a later schema added (their presence is what puts the record at
    /// that schema, so the erased event must keep them to re-encode to the bytes it was written as).
    func erasedValue(_ spec: FieldSpec, present: Bool) -> FieldValue? {
        if !spec.isOptional { return .text(PersonalData.erasedText) }
        guard present, !fields(schema: 1)!.contains(where: { $0.name == spec.name }) else { return nil }
        return .text(PersonalData.erasedText)
    }
}

extension Event {
    /// Whether this event's record holds a sealed personal section when it names a user.
    public var hasPersonalFields: Bool {
        guard type.hasPersonalFields else { return false }
        // Every schema has them (a schema only appends fields), or only the sign-in types' schema
        // 2 does, whose one personal field is the client address: answered without building the
        // field values, since the append path asks for every event (`PersonalDataTests` checks
        // this against the schema of every type).
        if type.hasPersonalFields(schema: 1) { return true }
        return payload.clientAddress != nil
    }

    /// The event as it reads back once its user is forgotten: the user as the pseudonym literal
    /// of `ref`, required personal fields as ``PersonalData/erasedText``, optional ones absent
    /// (but for a client address, which reads as ``ClientAddress/erased``).
    public func erasingPersonalData(ref: UserRef) -> Event {
        var erased = self
        erased.user = ref.literal
        guard hasPersonalFields else { return erased }
        let values = zip(type.fields, payload.fieldValues).map { spec, value -> FieldValue? in
            guard spec.isPersonal else { return value }
            return type.erasedValue(spec, present: value != nil)
        }
        erased.payload = Payload(type: type, fieldValues: values)
        return erased
    }
}
