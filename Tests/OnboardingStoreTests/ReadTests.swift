import Foundation
import OnboardingModel
import OnboardingProjections
import Testing
@testable import OnboardingStore

@Suite("Reading the log and its indexes")
struct ReadTests {
    /// Users whose ids are prefixes of each other, a non-ASCII one, and events without a user.
    static let users: [String?] = ["al", "alice", nil, "alice2", "Al", "zoë 🦊", "bob"]
    static let sessions: [UUID?] = [UUID(), nil, UUID(), UUID()]

    /// 60 events interleaving every user and session, appended in batches of varied sizes.
    private static func filledStore(_ path: String) async throws -> (OnboardingStore, [Event]) {
        let store = try OnboardingStore.open(at: path)
        let events = (0..<60).map { index in
            Events.make(
                index, user: users[index % users.count], session: sessions[index % sessions.count],
                payload: index % 3 == 0 ? .userSelected : .signInFailed(method: .passcode, reason: .invalidPasscode))
        }
        var next = 0
        for size in [1, 5, 2, 13, 1, 1, 20, 17] {
            _ = try await store.append(Array(events[next..<next + size]))
            next += size
        }
        precondition(next == events.count)
        return (store, events)
    }

    @Test("records(user:) returns exactly that user's events in log order, never a prefix-sharing user's")
    func recordsByUser() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (store, events) = try await Self.filledStore(directory.store)
        defer { store.close() }
        for case let user? in Self.users {
            let expected = events.enumerated().filter { $0.element.user == user }
            let records = try store.records(user: user)
            #expect(records.map(\.event) == expected.map(\.element), "user \(user)")
            #expect(records.map(\.seq) == expected.map { UInt64($0.offset + 1) }, "user \(user)")
            #expect(!records.isEmpty)
        }
        #expect(try store.records(user: "a").isEmpty)
        #expect(try store.records(user: "ali").isEmpty)
        #expect(try store.records(user: "alice2x").isEmpty)
        #expect(try store.records(user: "nobody").isEmpty)
        let alice = events.filter { $0.user == "alice" }
        #expect(try store.records(user: "alice", limit: 3).map(\.event) == Array(alice.prefix(3)))
        #expect(try store.records(user: "alice", limit: 0).isEmpty)
    }

    @Test("records(session:) returns exactly that session's events in log order")
    func recordsBySession() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (store, events) = try await Self.filledStore(directory.store)
        defer { store.close() }
        for case let session? in Self.sessions {
            let expected = events.enumerated().filter { $0.element.flow == session }
            let records = try store.records(flow: session)
            #expect(records.map(\.event) == expected.map(\.element))
            #expect(records.map(\.seq) == expected.map { UInt64($0.offset + 1) })
        }
        #expect(try store.records(flow: UUID()).isEmpty)
        let first = try #require(Self.sessions[0])
        #expect(try store.records(flow: first, limit: 2).map(\.seq) == [1, 5])
    }

    @Test("records(in:), record(at:) and forEachRecord return the log in order, clipped to what exists")
    func recordsBySeq() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (store, events) = try await Self.filledStore(directory.store)
        defer { store.close() }
        #expect(try store.records(in: 1...60).map(\.event) == events)
        #expect(try store.records(in: 7...9).map(\.event) == Array(events[6...8]))
        #expect(try store.records(in: 60...60).map(\.seq) == [60])
        #expect(try store.records(in: 0...2).map(\.seq) == [1, 2])
        #expect(try store.records(in: 55...1000).map(\.seq) == Array(55...60))
        #expect(try store.records(in: 61...70).isEmpty)

        #expect(try store.storedRecord(at: 1)?.event == events[0])
        #expect(try store.storedRecord(at: 42)?.event == events[41])
        #expect(try store.storedRecord(at: 42)?.seq == 42)
        #expect(try store.storedRecord(at: 0) == nil)
        #expect(try store.storedRecord(at: 61) == nil)

        var seen: [UInt64] = []
        try store.forEachRecord(from: 58) { record in
            seen.append(record.seq)
            return true
        }
        #expect(seen == [58, 59, 60])
        seen = []
        try store.forEachRecord { record in
            seen.append(record.seq)
            return record.seq < 3
        }
        #expect(seen == [1, 2, 3], "returning false stops the walk")
    }

    @Test("seq(of:) finds every stored id and nothing else")
    func seqOfID() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (store, events) = try await Self.filledStore(directory.store)
        defer { store.close() }
        for (index, event) in events.enumerated() {
            #expect(try store.seq(of: event.id) == UInt64(index + 1))
        }
        #expect(try store.seq(of: UUID()) == nil)
    }

    @Test("an empty store reads as empty")
    func emptyStore() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try OnboardingStore.open(at: directory.store)
        defer { store.close() }
        #expect(try store.records(in: 1...10).isEmpty)
        #expect(try store.storedRecord(at: 1) == nil)
        #expect(try store.records(user: "alice").isEmpty)
        #expect(try store.records(flow: UUID()).isEmpty)
        let report = try store.verify()
        #expect(report.isValid)
        #expect(report.recordsChecked == 0)
        #expect(report.headSeq == 0)
    }

    @Test("a by_user entry under a user's key prefix that leads to another user's record is skipped by a read of that user")
    func userIndexPrefixSharedByAnotherUser() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let events = [Events.make(0, user: "alice", session: nil), Events.make(1, user: "bob", session: nil)]
        var store = try OnboardingStore.open(at: directory.store)
        _ = try await store.append(events)
        store.close()
        // What two users whose pseudonyms share their first 8 bytes look like: bob's prefix at alice's seq.
        try withRawStore(directory.store) { raw in
            try raw.environment.write { transaction throws in
                try transaction.put(raw.byUser, key: try raw.userKey("bob", 1), value: [])
            }
        }
        store = try OnboardingStore.open(at: directory.store)
        defer { store.close() }
        #expect(try store.records(user: "bob").map(\.seq) == [2])
        #expect(try store.records(user: "alice").map(\.seq) == [1])
        #expect(try store.history(HistoryQuery(user: "bob")).attempts.allSatisfy { $0.seq == 2 })
    }

    @Test("the on-disk layout is the documented one (docs/format.md)")
    func documentedLayout() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let session = UUID()
        let events = [Events.make(0, user: "alice", session: session), Events.make(1, user: nil, session: nil)]
        let store = try OnboardingStore.open(at: directory.store, options: storeOptions { $0.deviceID = "kiosk-7" })
        _ = try await store.append(events)
        let head = try store.head()
        store.close()

        try withRawStore(directory.store) { raw in
            try raw.environment.read { transaction throws in
                #expect(try transaction.get(raw.meta, key: Keys.formatVersion) == [0, 0, 0, 2])
                #expect(try transaction.get(raw.meta, key: Keys.deviceID) == Array("kiosk-7".utf8))
                #expect(try transaction.get(raw.meta, key: Keys.head) == Keys.seq(2) + head.hash.bytes)
                #expect(try transaction.count(raw.events) == 2)
                let value = try #require(try transaction.get(raw.events, key: Keys.seq(1)))
                #expect(try RecordCodec.decode(value, expectedSeq: 1, users: try raw.users(in: transaction)).event == events[0])
                #expect(try transaction.get(raw.byID, key: Keys.uuid(events[0].id)) == Keys.seq(1))
                #expect(try transaction.get(raw.byID, key: Keys.uuid(events[1].id)) == Keys.seq(2))
                #expect(try transaction.get(raw.byUser, key: try raw.userKey("alice", 1)) == [])
                #expect(try transaction.count(raw.byUser) == 1, "an event without user has no by_user entry")
                // Alice's entry, user number 1: pseudonym ‖ key ‖ nonce ‖ her id sealed with the key.
                let entry = try #require(try raw.userEntry("alice", in: transaction))
                #expect(entry.number == 1)
                #expect(entry.value.withUnsafeBytes { OnboardingStore.userEntry(from: $0) }?.name == "alice")
                #expect(try transaction.count(try #require(raw.userKeysDatabase)) == 1)
                #expect(try transaction.get(raw.bySession, key: Keys.session(session, 1)) == [])
                #expect(try transaction.count(raw.bySession) == 1)
            }
        }
    }
}
