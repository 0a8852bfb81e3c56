import Foundation
import LMDB
import OnboardingModel
import OnboardingProjections
@testable import OnboardingStore
import Testing

/// `sign_in_aborted` in the store: its client address sealed like the other sign-in types', and
/// read by the lockout's fast scan (`forEachLockoutInput`) exactly as the event-by-event fold
/// reads it (docs/lab.md § How a replay works).
@Suite("sign_in_aborted: the fast lockout scan and the fold agree")
struct SignInAbortedScanTests {
    static let sealed = "192.0.2.200"
    static let clear = "198.51.100.77"
    static let v6 = "2001:db8::a:b"

    /// A server's log: aborted attempts by a named user (address sealed), by nobody (address in
    /// the clear), without an address, over IPv6, every reason; failures and a success between.
    static func populated(_ directory: TemporaryDirectory) async throws -> OnboardingStore {
        let store = try OnboardingStore.open(at: directory.store, options: storeOptions { $0.deviceID = "bastion-1" })
        var events: [Event] = []
        for (index, reason) in SignInAbortReason.allCases.enumerated() {
            let base = index * 4
            events.append(Events.make(base, user: "alice", payload: .signInAborted(reason: reason, clientAddress: sealed), device: "bastion-1"))
            events.append(Events.make(base + 1, user: nil, payload: .signInAborted(reason: reason, clientAddress: clear), device: "bastion-1"))
            events.append(Events.make(base + 2, user: "bob", payload: .signInAborted(reason: reason), device: "bastion-1"))
            events.append(Events.make(base + 3, user: nil, payload: .signInAborted(reason: reason, clientAddress: v6), device: "bastion-1"))
        }
        events.append(Events.make(100, user: "alice", payload: .signInFailed(method: .password, reason: .invalidPassword, clientAddress: sealed)))
        events.append(Events.make(101, user: "carol", payload: .signInSucceeded(method: .password, secondFactor: false, clientAddress: clear)))
        _ = try await store.append(events)
        return store
    }

    /// The engine after the fold of every record, and after the scanned inputs.
    static func engines(_ store: OnboardingStore, policy: LockoutPolicy) throws -> (folded: LockoutEngine, scanned: LockoutEngine) {
        var folded = LockoutEngine(policy: policy)
        for record in try store.allRecords() { folded.apply(record) }
        var scanned = LockoutEngine(policy: policy)
        _ = try store.forEachLockoutInput(addresses: true) { scanned.apply($0) }
        return (folded, scanned)
    }

    @Test("the scan reads every aborted attempt as the decoder does, and both engines hold the same keys under every preset")
    func scanAgreesWithTheFold() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try await Self.populated(directory)
        defer { store.close() }
        let expected = try store.allRecords().compactMap { LockoutInput($0.event) }
        var scanned: [LockoutInput] = []
        let scan = try store.forEachLockoutInput(addresses: true) { scanned.append($0) }
        #expect(scan.records == 46 && scan.damaged == 0 && scan.sealedUnopened == 0)
        #expect(scanned == expected)
        #expect(scanned.filter { $0.kind == .abortedAttempt }.count == 44)
        #expect(scanned.prefix(4).map(\.address) == [Self.sealed, Self.clear, nil, Self.v6])
        for policy in LockoutPolicy.presets {
            let (folded, fromScan) = try Self.engines(store, policy: policy)
            #expect(folded.hasSameKeys(as: fromScan), "\(policy.name)")
        }
        // fail2ban: each address with 11 aborted attempts 4 s apart is banned; bob's, without an address, count nowhere.
        let (folded, _) = try Self.engines(store, policy: .fail2ban)
        let end = Events.start.adding(milliseconds: 101_000)
        #expect(folded.addressEntries(at: end).map(\.key.device) == [Self.sealed, Self.clear, Self.v6])
        #expect(folded.addressEntries(at: end).allSatisfy { $0.failures == 5 && $0.lockedUntil != nil })
    }

    @Test("the sealed address is in no record's bytes; after a forget the scan reads none and the fold reads it as erased")
    func forgetErasesTheAbortedAddress() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try await Self.populated(directory)
        let before = try store.allRecords()
        _ = try await store.forgetUser("alice", at: Events.start.adding(milliseconds: 200_000))
        let after = try store.allRecords()
        #expect(after.prefix(before.count).map(\.hash) == before.map(\.hash))
        #expect(after[0].event.payload == .signInAborted(reason: .tooManyFailures, clientAddress: ClientAddress.erased))
        #expect(after[1].event.payload.clientAddress == Self.clear, "nobody's address is not alice's to erase")
        var scanned: [LockoutInput] = []
        let scan = try store.forEachLockoutInput(addresses: true) { scanned.append($0) }
        #expect(scan.sealedUnopened == 12, "alice's 11 aborted attempts and her failure")
        #expect(scanned.filter { $0.address == Self.sealed }.isEmpty)
        for policy in LockoutPolicy.presets {
            let (folded, fromScan) = try Self.engines(store, policy: policy)
            #expect(folded.hasSameKeys(as: fromScan), "\(policy.name)")
        }
        #expect(try store.verify().isValid)
        store.close()
        try withRawStore(directory.store) { raw in
            try raw.environment.read { transaction throws in
                try transaction.withCursor(raw.events) { cursor in
                    var entry = try cursor.first()
                    while let current = entry {
                        #expect(Data(current.value).range(of: Data(Self.sealed.utf8)) == nil)
                        entry = try cursor.next()
                    }
                }
            }
        }
    }

    @Test("an aborted record whose reason code is past the enum is damaged to the scan, not a guess", arguments: [UInt8(11), 0x7F, 0xFF])
    func unknownReasonIsDamage(code: UInt8) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try OnboardingStore.open(at: directory.store, options: storeOptions { $0.deviceID = "bastion-1" })
        _ = try await store.append([
            Events.make(0, user: nil, payload: .signInAborted(reason: .timeout), device: "bastion-1"),
            Events.make(1, user: nil, payload: .signInAborted(reason: .refused), device: "bastion-1"),
            Events.make(2, user: nil, payload: .signInAborted(reason: .bannerError), device: "bastion-1")
        ])
        store.close()
        // The payload of an anonymous aborted record without an address is its last byte: the reason.
        try withRawStore(directory.store) { raw in
            try raw.environment.write { transaction in
                var value = try #require(try transaction.get(raw.events, key: Keys.seq(2)))
                #expect(value[value.count - 1] == SignInAbortReason.refused.wireCode)
                value[value.count - 1] = code
                try transaction.put(raw.events, key: Keys.seq(2), value: value)
            }
        }
        let reopened = try OnboardingStore.open(at: directory.store, options: storeOptions { $0.deviceID = "bastion-1" })
        defer { reopened.close() }
        var scanned: [LockoutInput] = []
        let scan = try reopened.forEachLockoutInput(addresses: true) { scanned.append($0) }
        #expect(scan.records == 3 && scan.damaged == 1)
        #expect(scanned.map(\.kind) == [.abortedAttempt, .abortedAttempt])
    }
}
