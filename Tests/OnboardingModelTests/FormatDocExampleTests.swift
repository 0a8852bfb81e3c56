import Foundation
import Testing
@testable import OnboardingModel

/// The worked example of docs/format.md, encoded by the codec: the bytes printed there are the
/// bytes the store writes, and the test fails if either the document or the encoder changes.
@Suite("docs/format.md: the worked example")
struct FormatDocExampleTests {
    /// The example's pseudonym key as the document states it (a real store draws its own at random).
    static let pseudonymKey = SecretKey(bytes: [UInt8](repeating: 0x07, count: SecretKey.byteCount))
    static let json =
        #"{"id":"0f8fad5b-d9cb-469f-a165-70867728950e","device":"kiosk-7","seq":1,"at":"2026-11-29T16:00:00.123Z","user":"alice","session":"7c9e6679-7425-40de-944b-e07fc1f90ae7","type":"sign_in_failed","method":"passcode","reason":"invalid_passcode"}"#
    static let pseudonymHex = "dd68f9b943459565a5ffcd95e0033790"
    static let hashHex = "c0b741c4ae68daaa17a95ca5e28ed4d6140e8bfdb29dea4a6730f39c39e29473"
    static let recordHex =
        "02" + hashHex + String(repeating: "00", count: 32)
        + "000c010000000000000001" + "0f8fad5bd9cb469fa16570867728950e" + "000001a22808e07b" + "076b696f736b2d37"
        + "01" + pseudonymHex + "01" + "7c9e6679742540de944be07fc1f90ae7" + "0101"

    static func document() throws -> String {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/format.md")
        return try String(contentsOf: url, encoding: .utf8)
    }

    /// `xxd`-like lines: offset in 4 hex digits, two spaces, 16 bytes each.
    static func hexDump(_ bytes: [UInt8]) -> String {
        stride(from: 0, to: bytes.count, by: 16).map { start in
            let offset = String(start, radix: 16)
            let line = bytes[start..<min(start + 16, bytes.count)].map { HexBytes.encode([$0]) }.joined(separator: " ")
            return String(repeating: "0", count: 4 - offset.count) + offset + "  " + line
        }.joined(separator: "\n")
    }

    @Test("the example event encodes to the record bytes the document prints, and decodes back")
    func exampleRecordMatchesTheDocument() throws {
        let event = try EventJSON.decode(line: Self.json).event
        let ref = UserRef(user: "alice", pseudonymKey: Self.pseudonymKey)
        #expect(ref.hex == Self.pseudonymHex)
        // A sign_in_failed has no personal fields: the store seals it with no user key.
        let bytes = RecordCodec.encode(event, seq: 1, previousHash: .zero, seal: UserSeal(ref: ref, key: nil))
        #expect(bytes.count == 144)
        #expect(HexBytes.encode(bytes) == Self.recordHex)
        #expect(HexBytes.encode(Digest.hash(Array(bytes[33...])).bytes) == Self.hashHex)

        var users = UserDirectory(pseudonymKey: Self.pseudonymKey)
        users.add(ref, name: "alice", key: SecretKey(bytes: [UInt8](repeating: 0x11, count: SecretKey.byteCount)))
        let record = try RecordCodec.decode(bytes, expectedSeq: 1, users: users)
        #expect(record.event == event)
        #expect(EventJSON.encode(record.event, seq: 1) == Self.json)

        // The JSON line, the mdb_dump value line, the hex dump, the pseudonym and the hash.
        let document = try Self.document()
        let printed = [
            Self.json, " " + Self.recordHex + "\n", Self.hexDump(bytes) + "\n```",
            "`" + Self.pseudonymHex + "`", "`" + Self.hashHex + "`"
        ]
        let missing = printed.filter { !document.contains($0) }
        #expect(missing.isEmpty, "docs/format.md does not print: \(missing)")
    }

    @Test("docs/sync-protocol.md's upload example carries the hashes the encoder gives its two records")
    func syncProtocolExampleHashes() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/sync-protocol.md")
        let document = try String(contentsOf: url, encoding: .utf8)
        let ref = UserRef(user: "alice", pseudonymKey: Self.pseudonymKey)
        let first = try EventJSON.decode(line: Self.json).event
        let second = try EventJSON.decode(
            line:
                #"{"id":"3f2b8c4e-1a6d-4e2f-9b7a-5c8d9e0f1a2b","device":"kiosk-7","seq":2,"at":"2026-11-29T16:00:09.456Z","user":"alice","session":"7c9e6679-7425-40de-944b-e07fc1f90ae7","type":"sign_in_succeeded","method":"passcode","second_factor":false}"#
        ).event
        let one = RecordCodec.encode(first, seq: 1, previousHash: .zero, seal: UserSeal(ref: ref, key: nil))
        let hash1 = Digest.hash(Array(one[33...]))
        let two = RecordCodec.encode(second, seq: 2, previousHash: hash1, seal: UserSeal(ref: ref, key: nil))
        let hash2 = Digest.hash(Array(two[33...]))
        #expect(document.contains(#""prev":"\#(hash1.hex)","#))
        #expect(document.contains(#""hash":"\#(hash2.hex)"}]"#))
        #expect(document.contains(#""head_hash":"\#(hash2.hex)","results""#))
    }
}
