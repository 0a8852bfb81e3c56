import Foundation
import LMDB
import OnboardingModel
import OnboardingProjections
@testable import OnboardingStore
import Testing

/// The client address of sign-in events (docs/events.md § Client address): personal data,
/// sealed with the user's key, erased by a forget without changing a stored byte.
@Suite("Client address: sealed in the record, erased by a forget")
struct ClientAddressTests {
    static let address = "203.0.113.77"
    static let v6 = "2001:db8:ffff::4d"

    static func populated(_ directory: TemporaryDirectory) async throws -> OnboardingStore {
        let store = try OnboardingStore.open(at: directory.store, options: storeOptions { $0.deviceID = "kiosk-7" })
        _ = try await store.append([
            Events.make(0, user: "alice", payload: .signInFailed(method: .password, reason: .invalidPassword, clientAddress: address)),
            Events.make(1, user: "alice", payload: .secondFactorFailed(method: .totp, clientAddress: v6)),
            Events.make(2, user: "alice", payload: .signInSucceeded(method: .password, secondFactor: true, clientAddress: address)),
            Events.make(3, user: "alice", payload: .signInThrottled(method: .password, retryAfter: Events.start, clientAddress: address)),
            // Without an address: schema 1, as before.
            Events.make(4, user: "alice", payload: .signInFailed(method: .password, reason: .invalidPassword))
        ])
        return store
    }

    @Test("the address reads back, is nowhere in a record's bytes, and only address events are at schema 2")
    func sealedAndReadBack() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try await Self.populated(directory)
        let records = try store.allRecords()
        #expect(records.map(\.event.payload.clientAddress) == [Self.address, Self.v6, Self.address, Self.address, nil])
        #expect(try store.verify().isValid)
        store.close()
        try withRawStore(directory.store) { raw in
            try raw.environment.read { transaction throws in
                try transaction.withCursor(raw.events) { cursor in
                    var schemas: [UInt8] = []
                    var entry = try cursor.first()
                    while let current = entry {
                        let value = Data(current.value)
                        for secret in [Self.address, Self.v6, "203.0.113"] {
                            #expect(value.range(of: Data(secret.utf8)) == nil, "\(secret) in a record")
                        }
                        schemas.append(value[RecordCodec.headerByteCount + 2])
                        entry = try cursor.next()
                    }
                    #expect(schemas == [2, 2, 2, 2, 1])
                }
            }
        }
    }

    @Test("after a forget the address reads as [erased], the hashes are unchanged and compaction leaves no trace")
    func forgetErasesTheAddress() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try await Self.populated(directory)
        let before = try store.allRecords()
        _ = try await store.forgetUser("alice", at: Events.start.adding(milliseconds: 60_000))
        let after = try store.allRecords()
        #expect(after.prefix(5).map(\.hash) == before.map(\.hash))
        #expect(
            after.prefix(5).map(\.event.payload.clientAddress) == [
                ClientAddress.erased, ClientAddress.erased, ClientAddress.erased,
                ClientAddress.erased, nil
            ])
        // The erased event with its sealed section (what sync sends) encodes to the bytes it was
        // stored as: a replica can re-check its hash.
        let sections = try store.sealedSections(for: Array(after.prefix(5)))
        #expect(sections.keys.sorted() == [1, 2, 3, 4])
        for record in after.prefix(5) {
            let ref = try #require(record.event.user.flatMap(UserRef.init(literal:)))
            let body = RecordCodec.body(of: record.event, seq: record.seq, seal: UserSeal(ref: ref, key: nil, sealed: sections[record.seq]))
            #expect(Digest.hash(record.previousHash.bytes + body) == record.hash, "seq \(record.seq)")
        }
        #expect(try store.verify().isValid)
        store.close()
        try OnboardingStore.compact(at: directory.store)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: directory.store + "/data.mdb"))
        #expect(bytes.range(of: Data(Self.address.utf8)) == nil && bytes.range(of: Data(Self.v6.utf8)) == nil)
    }

    @Test("the lockout-only scan reads what the full decoder reads, addresses sealed or not, and none once forgotten")
    func lockoutScanAgreesWithTheDecoder() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try await Self.populated(directory)
        defer { store.close() }
        _ = try await store.append([
            Events.make(5, user: nil, payload: .signInFailed(method: .password, reason: .unknownUser, clientAddress: "198.51.100.1")),
            Events.make(6, user: "bob", payload: .signInFailed(method: .password, reason: .networkUnavailable, clientAddress: Self.address)),
            Events.make(7, user: "bob", payload: .passwordChanged(forced: false))
        ])
        let expected = try store.allRecords().compactMap { LockoutInput($0.event) }
        var scanned: [LockoutInput] = []
        let scan = try store.forEachLockoutInput(addresses: true) { scanned.append($0) }
        #expect(scanned == expected && scan.records == 8 && scan.damaged == 0)
        #expect(scanned.map(\.address) == [Self.address, nil, Self.address, nil, "198.51.100.1", nil])
        var withoutAddresses: [LockoutInput] = []
        _ = try store.forEachLockoutInput(addresses: false) { withoutAddresses.append($0) }
        #expect(withoutAddresses.allSatisfy { $0.address == nil } && withoutAddresses.count == expected.count)
        _ = try await store.forgetUser("alice", at: Events.start.adding(milliseconds: 60_000))
        var afterForget: [LockoutInput] = []
        let forgotten = try store.forEachLockoutInput(addresses: true) { afterForget.append($0) }
        #expect(forgotten.sealedUnopened == 2 && afterForget.prefix(4).allSatisfy { $0.address == nil })
    }

    @Test(
        "hostile addresses are refused with the field named",
        arguments: [
            "", "1.2.3", "1.2.3.4.5", "256.1.1.1", "01.2.3.4", "1.2.3.4:22", "[2001:db8::1]", "2001:DB8::1", "2001:db8:0::1",
            "fe80::1%eth0", "10.0.0.0/8", " 1.2.3.4", "1.2.3.4\n", "1.2.3.4\u{0}", "::ffff:1.2.3.4", "localhost", "18446744073709551615", "-1"
        ])
    func hostileAddressesAreRefused(text: String) {
        let event = Events.make(0, user: "alice", payload: .signInFailed(method: .password, reason: .invalidPassword, clientAddress: text))
        #expect(throws: EventValidationError.self) { try event.validate() }
    }

    @Test("the canonical form: RFC 5952 for IPv6, mapped IPv4 unwrapped")
    func canonicalForms() {
        #expect(ClientAddress.canonical("2001:DB8:0:0:0:0:0:1") == "2001:db8::1")
        #expect(ClientAddress.canonical("::ffff:192.0.2.1") == "192.0.2.1")
        #expect(ClientAddress.canonical("192.0.2.1") == "192.0.2.1")
        #expect(ClientAddress.canonical("::") == "::")
        #expect(ClientAddress.canonical("192.0.2.1 ") == nil)
        #expect(ClientAddress.canonical(String(repeating: "1", count: 100_000)) == nil)
    }
}
