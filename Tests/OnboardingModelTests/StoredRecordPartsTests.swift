import Foundation
import Testing
@testable import OnboardingModel

/// `StoredRecordParts`, the reader the lockout scan goes through (docs/lab.md § How a replay
/// works): every cut of a record and every flipped presence byte is refused or read in bounds,
/// never a trap; the payload offsets it uses come from the schema table.
@Suite("Stored record parts: the lockout scan's reader, on hostile bytes")
struct StoredRecordPartsTests {
    static let failed = Event(
        id: UUID(uuidString: "0f8fad5b-d9cb-469f-a165-70867728950e")!, device: "kiosk-7",
        at: Timestamp(millisecondsSince1970: 1_795_968_000_000), user: nil, flow: UUID(uuidString: "1f8fad5b-d9cb-469f-a165-70867728950e"),
        payload: .signInFailed(method: .passcode, reason: .invalidPassword, clientAddress: "198.51.100.7"))

    @Test("the sign-in payload offsets come from the schema table: method, reason, then the address from schema 2")
    func offsetsFromTheTable() {
        let failed = EventSchema.row(.signInFailed), succeeded = EventSchema.row(.signInSucceeded)
        #expect(failed.byteOffset(of: "method", schema: 1) == 0 && failed.byteOffset(of: "reason", schema: 1) == 1)
        #expect(failed.byteOffset(of: ClientAddress.fieldName, schema: 1) == nil)
        #expect(failed.byteOffset(of: ClientAddress.fieldName, schema: 2) == 2)
        #expect(succeeded.byteOffset(of: "method", schema: 1) == 0 && succeeded.byteOffset(of: ClientAddress.fieldName, schema: 2) == 2)
        // A field after a text field has no fixed offset; unknown names and schemas have none.
        #expect(EventSchema.row(.userAdded).byteOffset(of: "subtitle", schema: 1) == nil)
        #expect(failed.byteOffset(of: "no_such_field", schema: 1) == nil)
        #expect(failed.byteOffset(of: "method", schema: 0) == nil && failed.byteOffset(of: "method", schema: 255) == nil)
    }

    @Test("a whole record reads: type, schema, time, device, no user, the payload with its clear address")
    func wholeRecord() throws {
        let bytes = RecordCodec.encode(Self.failed, seq: 9, previousHash: .zero, seal: nil)
        try bytes.withUnsafeBytes { raw in
            let parts = try #require(StoredRecordParts(raw))
            #expect(parts.type == .signInFailed && parts.schema == 2 && parts.at == Self.failed.at)
            #expect(String(decoding: parts.device, as: UTF8.self) == "kiosk-7" && parts.user == nil && parts.sealed == nil)
            // method passcode, reason invalid_password, then presence, length, the address.
            #expect(parts.payload[0] == UInt8(SignInMethod.allCases.firstIndex(of: .passcode)!))
            #expect(parts.payload[1] == UInt8(SignInFailureReason.allCases.firstIndex(of: .invalidPassword)!))
            #expect(Array(parts.payload[2...]) == [1, 0, 12] + Array("198.51.100.7".utf8))
        }
    }

    @Test("every cut of a record is refused or read within its bytes, and a flipped presence byte is refused")
    func cutsAndFlips() {
        let bytes = RecordCodec.encode(Self.failed, seq: 9, previousHash: .zero, seal: nil)
        let payloadCount = bytes.withUnsafeBytes { StoredRecordParts($0)?.payload.count } ?? -1
        for length in 0..<bytes.count {
            let cut = Array(bytes.prefix(length))
            cut.withUnsafeBytes { raw in
                if let parts = StoredRecordParts(raw) {
                    // Only a cut inside the payload still has a whole envelope, and its payload
                    // is what is left of it.
                    #expect(length >= bytes.count - payloadCount, "cut at \(length)")
                    #expect(parts.payload.count == payloadCount - (bytes.count - length), "cut at \(length)")
                }
                _ = StoredRecordParts.type(of: raw)
            }
        }
        // The user and session presence bytes: 2 and 255 are neither absent nor present.
        let body = RecordCodec.headerByteCount
        let userPresence = body + RecordEnvelope.Layout.fixedByteCount + "kiosk-7".utf8.count
        for (offset, value) in [(userPresence, UInt8(2)), (userPresence, 255), (userPresence + 1, 2)] {
            var hostile = bytes
            hostile[offset] = value
            #expect(hostile.withUnsafeBytes { StoredRecordParts($0) } == nil, "byte \(offset) = \(value)")
        }
        // An unknown type code, type code 0 and 2^16−1, a schema of 0 or past the type's newest.
        for (offset, value) in [(body, UInt8(0xFF)), (body + 1, 0xFF), (body + 2, 0), (body + 2, 3), (body + 2, 255)] {
            var hostile = bytes
            hostile[offset] = value
            if offset == body + 1 { hostile[body] = 0xFF }
            #expect(hostile.withUnsafeBytes { StoredRecordParts($0) } == nil, "byte \(offset) = \(value)")
        }
        var zeroType = bytes
        zeroType[body] = 0
        zeroType[body + 1] = 0
        #expect(zeroType.withUnsafeBytes { StoredRecordParts($0) == nil && StoredRecordParts.type(of: $0) == nil })
    }
}
