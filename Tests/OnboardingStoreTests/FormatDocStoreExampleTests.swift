import Foundation
import Testing
import LMDB
import OnboardingModel
@testable import OnboardingStore

/// The `mdb_dump` listing of docs/format.md's worked example: what a store holds besides the
/// record after appending it (the record bytes themselves: OnboardingModelTests' FormatDocExampleTests).
@Suite("docs/format.md: the worked example's store")
struct FormatDocStoreExampleTests {
    static let json =
        #"{"id":"0f8fad5b-d9cb-469f-a165-70867728950e","device":"kiosk-7","seq":1,"at":"2026-11-29T16:00:00.123Z","user":"alice","session":"7c9e6679-7425-40de-944b-e07fc1f90ae7","type":"sign_in_failed","method":"passcode","reason":"invalid_passcode"}"#

    @Test("by_user holds the record key, user_keys the user's entry, meta the format version and pseudonym key, as listed")
    func exampleStoreMatchesTheListing() throws {
        let event = try EventJSON.decode(line: Self.json).event
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try OnboardingStore.open(at: directory.store, options: storeOptions { $0.deviceID = "kiosk-7" })
        #expect(try store.appendBlocking([event]).map(\.seq) == [1])
        store.close()

        try withRawStore(directory.store) { raw in
            let ref = UserRef(user: "alice", pseudonymKey: try raw.pseudonymKey())
            try raw.environment.read { transaction throws in
                // The record is the codec's encoding under this store's (random) pseudonym key.
                let record = try #require(try transaction.get(raw.events, key: Keys.seq(1)))
                #expect(record == RecordCodec.encode(event, seq: 1, previousHash: .zero, seal: UserSeal(ref: ref, key: nil)))

                let byUser = try Self.entries(raw.byUser, in: transaction)
                #expect(byUser.map(\.key) == [StoreLayout.userKey(ref, 1)])
                #expect(byUser.first?.value == [])
                // User number 1: pseudonym (16) ‖ key (32) ‖ nonce (24) ‖ Poly1305 tag (16) ‖ "alice" encrypted (5).
                let userKeys = try Self.entries(try #require(raw.userKeysDatabase), in: transaction)
                #expect(userKeys.map(\.key) == [Keys.seq(1)])
                let entry = try #require(userKeys.first?.value)
                #expect(entry.count == 16 + 32 + 24 + 16 + 5)
                #expect(Array(entry.prefix(16)) == ref.bytes)
                #expect(entry.withUnsafeBytes { OnboardingStore.userEntry(from: $0)?.name } == "alice")

                let meta = try Self.entries(raw.meta, in: transaction)
                #expect(
                    meta.map { String(decoding: $0.key, as: UTF8.self) }
                        == ["created_at", "device_id", "format_version", "head", "pseudonym_key", "signing_public_key"])
                #expect(try transaction.get(raw.meta, key: Keys.formatVersion) == [0, 0, 0, 2])
                #expect(try transaction.get(raw.meta, key: Keys.deviceID) == Array("kiosk-7".utf8))
                #expect(try transaction.get(raw.meta, key: Keys.head) == Keys.seq(1) + Array(record[1..<33]))
            }
        }

        // The listing's keys for the document's example pseudonym key (32 × 0x07), spaced as printed.
        let example = UserRef(user: "alice", pseudonymKey: SecretKey(bytes: [UInt8](repeating: 0x07, count: 32)))
        let recordKey = StoreLayout.userKey(example, 1)
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/format.md")
        let document = try String(contentsOf: url, encoding: .utf8)
        let printed = [
            "key   " + HexBytes.encode(Array(recordKey[..<8])) + " " + HexBytes.encode(Array(recordKey[8...])),
            "user_keys   key   0000000000000001",
            "value " + example.hex + " ",
            "key   " + HexBytes.encode(StoreLayout.MetaKey.pseudonymKey),
            "value " + HexBytes.encode(StoreLayout.uint32Value(StoreLayout.formatVersion)) + "\n"
        ]
        let missing = printed.filter { !document.contains($0) }
        #expect(missing.isEmpty, "docs/format.md's mdb_dump listing does not print: \(missing)")
    }

    static func entries(_ database: Database, in transaction: Transaction) throws -> [(key: [UInt8], value: [UInt8])] {
        try transaction.withCursor(database) { cursor in
            var entries: [(key: [UInt8], value: [UInt8])] = []
            var entry = try cursor.first()
            while let current = entry {
                entries.append((Array(current.key), Array(current.value)))
                entry = try cursor.next()
            }
            return entries
        }
    }
}
