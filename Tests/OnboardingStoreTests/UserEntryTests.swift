import Foundation
import LMDB
import OnboardingModel
@testable import OnboardingStore
import Testing

/// Every pseudonym a record names has exactly one entry in `user_keys` (live, or a tombstone),
/// whichever way the group that wrote it went, and `verify` names every record that has none
/// (docs/format.md § User entries).
@Suite("User entries: one per pseudonym a record names")
struct UserEntryTests {
    static func added(_ index: Int, _ user: String) -> Event {
        Events.make(
            index, user: user,
            payload: .userAdded(
                displayName: "Display \(user)", subtitle: nil, imageRef: nil,
                passcodePolicy: .numeric, passcodeMinLength: 6))
    }

    /// Entries of `user_keys` by pseudonym: how many name it, and whether the last is a tombstone.
    static func entries(_ path: String) throws -> [UserRef: (count: Int, tombstone: Bool)] {
        try withRawStore(path) { raw in
            try raw.environment.read { transaction in
                var entries: [UserRef: (count: Int, tombstone: Bool)] = [:]
                try transaction.withCursor(try #require(raw.userKeysDatabase)) { cursor in
                    var entry = try cursor.first()
                    while let current = entry {
                        let ref = UserRef(bytes: Array(current.value.prefix(16)))
                        entries[ref] = ((entries[ref]?.count ?? 0) + 1, current.value.count == 16)
                        entry = try cursor.next()
                    }
                }
                return entries
            }
        }
    }

    @Test("a user first seen in the group that forgets them has one entry, a tombstone, and stays forgotten after reopen")
    func forgottenInFirstGroup() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try OnboardingStore.open(at: directory.store)
        let ref = store.userRef(of: "carol")
        _ = try store.appendBlocking([
            Self.added(0, "carol"), Events.make(1, user: "carol"),
            Events.make(2, user: ref.literal, payload: .userForgotten)
        ])
        #expect(try store.isForgotten("carol"))
        store.close()

        let entries = try Self.entries(directory.store)
        #expect(entries[ref]?.count == 1, "one entry for carol, not a tombstone and a live one")
        #expect(entries[ref]?.tombstone == true)
        let reopened = try OnboardingStore.open(at: directory.store)
        defer { reopened.close() }
        #expect(try reopened.isForgotten("carol"), "the erasure holds after reopen")
        #expect(try reopened.allRecords().allSatisfy { $0.event.user == ref.literal })
        #expect(try reopened.verify().isValid)
    }

    @Test("a pseudonym literal the store never saw gets a tombstone with its first record, once, and later events of it stay pseudonymous")
    func literalGetsTombstone() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let other = UserRef(user: "dave", pseudonymKey: .random()) // another store's pseudonym
        let store = try OnboardingStore.open(at: directory.store)
        _ = try store.appendBlocking([Self.added(0, other.literal), Events.make(1, user: other.literal)])
        _ = try store.appendBlocking([Events.make(2, user: other.literal)])
        #expect(try store.isForgotten(other.literal))
        store.close()

        let entries = try Self.entries(directory.store)
        #expect(entries[other]?.count == 1)
        #expect(entries[other]?.tombstone == true)
        let reopened = try OnboardingStore.open(at: directory.store)
        defer { reopened.close() }
        #expect(try reopened.allRecords().map(\.event.user) == Array(repeating: other.literal, count: 3))
        #expect(try reopened.verify().isValid)
    }

    @Test("verify names every record whose user has no entry in user_keys, with its seq and pseudonym")
    func missingEntryIsReported() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try OnboardingStore.open(at: directory.store)
        _ = try store.appendBlocking([
            Self.added(0, "erin"), Events.make(1, user: "frank"), Events.make(2, user: "erin"),
            Events.make(3, user: nil), Events.make(4, user: "erin")
        ])
        let erin = store.userRef(of: "erin")
        store.close()
        // The damage a lost entry leaves (what a retried group commit once wrote): the records
        // name erin's pseudonym, user_keys has no entry for it.
        try withRawStore(directory.store) { raw in
            try raw.environment.write { transaction in
                let entry = try #require(try raw.userEntry("erin", in: transaction))
                #expect(try transaction.delete(try #require(raw.userKeysDatabase), key: Keys.seq(entry.number)))
            }
        }

        let reopened = try OnboardingStore.open(at: directory.store, options: storeOptions { $0.readOnly = true })
        defer { reopened.close() }
        let report = try reopened.verify()
        let missing = report.problems.filter { $0.message.contains("no entry in user_keys") }
        #expect(missing.map(\.seq) == [1, 3, 5], "every record of erin, and only erin's")
        #expect(missing.allSatisfy { $0.message.contains(erin.literal) })
        #expect(report.firstProblem?.seq == 1)
    }
}
