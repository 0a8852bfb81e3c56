import Foundation
import LMDB
import OnboardingModel
import Testing
@testable import OnboardingStore

/// The device's signing key and the heads it signs (docs/format.md, "Signing key", "Signed heads").
@Suite("signed heads")
struct SignedHeadTests {
    @Test("a new store has a 0600 signing.key whose public key is in meta; close signs the head")
    func newStoreSignsOnClose() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try OnboardingStore.open(at: directory.store, options: storeOptions())
        _ = try await store.append(Events.many(5))
        let keyFile = directory.store + "/signing.key"
        #expect(try permissions(keyFile) == 0o600)
        let key = try #require(SigningKeyPair(secretBytes: Array(try Data(contentsOf: URL(fileURLWithPath: keyFile)))))
        #expect(try store.signingPublicKey() == key.publicKey)
        #expect(try store.signedHeads().isEmpty, "appends alone sign nothing")
        let head = try #require(try store.signHead(through: 3))
        let third = try store.storedRecord(at: 3)
        #expect(head.seq == 3 && head.hash == third?.hash && head.isValid(for: key.publicKey))
        #expect(try store.signHead(through: 3) == head, "signing a seq again returns the kept head")
        store.close()

        let reader = try OnboardingStore.open(at: directory.store, options: storeOptions { $0.readOnly = true })
        defer { reader.close() }
        #expect(try reader.signedHeads().map(\.seq) == [3, 5])
        let report = try reader.verify()
        #expect(report.isValid, "problems: \(report.problems)")
        #expect(report.signedHeadCount == 2 && report.signedHeadSeq == 5 && report.signingPublicKey == key.publicKey)
    }

    @Test("a store made before signing gets a key on its first writable open, not on a read-only one")
    func olderStoreGetsAKey() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try OnboardingStore.open(at: directory.store, options: storeOptions { $0.signsHeads = false })
        _ = try await store.append(Events.many(3))
        store.close()
        #expect(!FileManager.default.fileExists(atPath: directory.store + "/signing.key"))

        let reader = try OnboardingStore.open(at: directory.store, options: storeOptions { $0.readOnly = true })
        let unsigned = try reader.verify()
        reader.close()
        #expect(unsigned.isValid && unsigned.signingPublicKey == nil && unsigned.signedHeadCount == 0)
        #expect(!FileManager.default.fileExists(atPath: directory.store + "/signing.key"))

        let writer = try OnboardingStore.open(at: directory.store, options: storeOptions())
        #expect(try writer.signingPublicKey() != nil)
        writer.close()
        let report = try OnboardingStore.open(at: directory.store, options: storeOptions { $0.readOnly = true }).verify()
        #expect(report.isValid && report.signedHeadSeq == 3, "problems: \(report.problems)")
    }

    @Test("a signing.key others may read, or one of another store, is refused on a writable open")
    func keyFileIsGuarded() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try OnboardingStore.open(at: directory.store, options: storeOptions()).close()
        let keyFile = directory.store + "/signing.key"
        chmod(keyFile, 0o644)
        let open = #expect(throws: StoreError.self) { try OnboardingStore.open(at: directory.store, options: storeOptions()) }
        #expect(open?.code == .signingKey)
        #expect(open?.message.contains("chmod 600") == true)

        unlink(keyFile)
        _ = try OnboardingStore.createSigningKey(at: keyFile)
        let foreign = #expect(throws: StoreError.self) { try OnboardingStore.open(at: directory.store, options: storeOptions()) }
        #expect(foreign?.code == .signingKey)
        #expect(foreign?.message.contains("does not belong to this store") == true)
    }

    @Test("a history rewritten with consistent hashes is caught by the head signed before it")
    func rechainedHistoryIsCaught() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try OnboardingStore.open(at: directory.store, options: storeOptions())
        let events = Events.many(6)
        _ = try await store.append(events)
        store.close() // signs seq 6

        // Re-encode seq 4…6 with seq 4 altered and every hash recomputed: the chain, the head and
        // the indexes stay consistent; only the signature over the old seq 6 tells.
        try withRawStore(directory.store) { raw in
            try raw.environment.write { transaction throws in
                let users = try raw.users(in: transaction)
                var previous = Digest(bytes: Array(try #require(try transaction.get(raw.events, key: Keys.seq(3)))[1...32]))
                for seq in UInt64(4)...6 {
                    var event = events[Int(seq) - 1]
                    if seq == 4 { event.at = Timestamp(millisecondsSince1970: event.at.millisecondsSince1970 + 1) }
                    let bytes = RecordCodec.encode(event, seq: seq, previousHash: previous, seal: users.seal(for: event.user))
                    try transaction.put(raw.events, key: Keys.seq(seq), value: bytes)
                    previous = Digest(bytes: Array(bytes[1...32]))
                }
                try transaction.put(raw.meta, key: Keys.head, value: Keys.seq(6) + previous.bytes)
            }
        }
        let reader = try OnboardingStore.open(at: directory.store, options: storeOptions { $0.readOnly = true })
        defer { reader.close() }
        let report = try reader.verify()
        #expect(report.problems.count == 1, "problems: \(report.problems)")
        #expect(report.firstProblem?.seq == 6)
        #expect(report.firstProblem?.kind == .modified)
        #expect(report.firstProblem?.message.contains("rewritten after it was signed") == true)
    }

    @Test("a public key replaced in meta no longer matches signing.key and is a bad signature")
    func replacedPublicKey() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try OnboardingStore.open(at: directory.store, options: storeOptions())
        _ = try await store.append(Events.many(2))
        store.close()
        let forger = SigningKeyPair.generate()
        try withRawStore(directory.store) { raw in
            try raw.environment.write { try $0.put(raw.meta, key: Array("signing_public_key".utf8), value: forger.publicKey.bytes) }
        }
        let reader = try OnboardingStore.open(at: directory.store, options: storeOptions { $0.readOnly = true })
        defer { reader.close() }
        let report = try reader.verify()
        #expect(report.problems.map(\.kind) == [.badSignature, .badSignature], "problems: \(report.problems)")
        #expect(report.problems.contains { $0.message.contains("the key was replaced") })
        #expect(report.problems.contains { $0.seq == 2 && $0.message.contains("does not verify") })
    }
}
