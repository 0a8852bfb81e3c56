import Foundation
import Testing
@testable import OnboardingModel

/// Record bytes that the fuzz target `FuzzRecordCodec` (FuzzTesting/, docs/testing.md) found
/// mishandled; each test is the minimal form of one finding.
@Suite("RecordCodec: hostile record bytes")
struct RecordCodecHostileBytesTests {
    static let event = Event(
        id: UUID(uuidString: "0f8fad5b-d9cb-469f-a165-70867728950e")!, device: "kiosk-7",
        at: Timestamp(millisecondsSince1970: 1_795_968_000_000), user: nil, flow: nil,
        payload: .secondFactorSucceeded(method: .totp))

    /// Both decoders on `body`: the fast one's answer and the reference one's error, if any.
    static func decodeBody(_ body: [UInt8]) -> (fast: (UInt64, Event)?, referenceError: RecordDecodingError?) {
        body.withUnsafeBytes { raw in
            let fast = RecordCodec.fastDecodeBody(raw, users: TestKeys.directory)
            do throws(RecordDecodingError) {
                _ = try RecordCodec.referenceDecodeBody(raw, users: TestKeys.directory)
                return (fast, nil)
            } catch {
                return (fast, error)
            }
        }
    }

    @Test("a record that says seq 0 is refused by both decoders: a log counts from 1, and its export would not import")
    func seqZeroIsRefused() throws {
        let bytes = RecordCodec.encode(Self.event, seq: 0, previousHash: .zero)
        #expect(throws: RecordDecodingError.self) { try RecordCodec.decode(bytes, users: TestKeys.directory) }
        #expect(throws: RecordDecodingError.self) { try RecordCodec.decode(bytes, expectedSeq: 0, users: TestKeys.directory) }
        let (fast, referenceError) = Self.decodeBody(Array(bytes[RecordCodec.headerByteCount...]))
        #expect(fast == nil)
        #expect(referenceError?.message == "record says seq 0; a log's seqs start at 1")
        // Seq 1 and the largest seq still read.
        for seq: UInt64 in [1, .max] {
            #expect(try RecordCodec.decode(RecordCodec.encode(Self.event, seq: seq, previousHash: .zero), users: TestKeys.directory).seq == seq)
        }
    }

    /// `bytes` with its hash field set to the hash of the rest, as a forger would.
    static func rehashed(_ bytes: [UInt8]) -> [UInt8] {
        var bytes = bytes
        bytes.replaceSubrange(1...Digest.byteCount, with: Digest.hash(Array(bytes[(1 + Digest.byteCount)...])).bytes)
        return bytes
    }

    @Test("a sealed personal section moved to another record (other id or seq) is refused, though it opens with the user's key")
    func sealedSectionOfAnotherRecordIsRefused() throws {
        let added = Event(
            id: Self.event.id, device: "kiosk-7", at: Self.event.at, user: "alice", flow: nil,
            payload: .userAdded(displayName: "Alice", subtitle: nil, imageRef: nil, passcodePolicy: .numeric, passcodeMinLength: 6))
        let original = RecordCodec.encode(added, seq: 5, previousHash: .zero)
        #expect(try RecordCodec.decode(original, users: TestKeys.directory).event == added)
        // The body: type (2) ‖ schema (1) ‖ seq (8) ‖ id (16) …; the section is left as it was.
        let seqOffset = RecordCodec.headerByteCount + 3, idOffset = seqOffset + 8
        var otherID = original
        otherID[idOffset + 15] ^= 0x01
        var otherSeq = original
        otherSeq[seqOffset + 7] = 6
        for forged in [otherID, otherSeq] {
            #expect {
                try RecordCodec.decode(Self.rehashed(forged), users: TestKeys.directory)
            } throws: { error in
                (error as? RecordDecodingError)?.message.contains("were sealed for another record") == true
            }
        }
    }

    @Test("a user_forgotten record naming a live user, or no user, is refused by both decoders (the fast one read it)")
    func userForgottenOfALiveUserIsRefused() throws {
        for user in ["alice", nil] {
            let forgotten = Event(id: Self.event.id, device: "kiosk-7", at: Self.event.at, user: user, flow: nil, payload: .userForgotten)
            let bytes = RecordCodec.encode(forgotten, seq: 3, previousHash: .zero)
            let (fast, referenceError) = Self.decodeBody(Array(bytes[RecordCodec.headerByteCount...]))
            #expect(fast == nil, "user \(user ?? "none")")
            #expect(referenceError?.message.contains("user_forgotten names the user by its pseudonym") == true, "user \(user ?? "none")")
            #expect(throws: RecordDecodingError.self) { try RecordCodec.decode(bytes, users: TestKeys.directory) }
        }
        // By its pseudonym literal (a user this directory does not hold): both read it.
        let literal = UserRef(bytes: [UInt8](repeating: 0xAB, count: UserRef.byteCount)).literal
        let forgotten = Event(id: Self.event.id, device: "kiosk-7", at: Self.event.at, user: literal, flow: nil, payload: .userForgotten)
        let bytes = RecordCodec.encode(forgotten, seq: 3, previousHash: .zero)
        let (fast, referenceError) = Self.decodeBody(Array(bytes[RecordCodec.headerByteCount...]))
        #expect(fast?.1 == forgotten && referenceError == nil)
    }

    @Test("a record of a live user whose sealed personal section was left out is refused: it would read as erased while the key is held")
    func liveUserWithoutSealedSectionIsRefused() throws {
        let added = Event(
            id: Self.event.id, device: "kiosk-7", at: Self.event.at, user: "alice", flow: nil,
            payload: .userAdded(displayName: "Alice", subtitle: nil, imageRef: nil, passcodePolicy: .numeric, passcodeMinLength: 6))
        guard let live = TestKeys.seal(for: "alice") else { Issue.record("alice has no seal"); return }
        // Written as for a forgotten user: presence 0, no section.
        let bytes = RecordCodec.encode(added, seq: 4, previousHash: .zero, seal: UserSeal(ref: live.ref, key: nil))
        #expect {
            try RecordCodec.decode(bytes, users: TestKeys.directory)
        } throws: { error in
            (error as? RecordDecodingError)?.message
                == "the sealed personal fields of seq 4 are missing, but its user's key is held (the record was written for a forgotten user)"
        }
        // For a user the directory does not hold, the same form reads as erased, by the pseudonym.
        let stranger = UserRef(bytes: [UInt8](repeating: 0xAB, count: UserRef.byteCount))
        let erased = try RecordCodec.decode(
            RecordCodec.encode(added, seq: 4, previousHash: .zero, seal: UserSeal(ref: stranger, key: nil)),
            users: TestKeys.directory)
        #expect(erased.event.user == stranger.literal)
        #expect(
            erased.event.payload
                == .userAdded(
                    displayName: PersonalData.erasedText, subtitle: nil, imageRef: nil,
                    passcodePolicy: .numeric, passcodeMinLength: 6))
    }
}
