import Foundation
import LMDB
import OnboardingModel
import Testing
@testable import OnboardingStore

/// A group commit's write closure runs again when the map fills, also when the commit itself
/// fills it (LMDB saves its free list then): the retried group must write exactly what a first
/// run would, including the `user_keys` entries of the users it sees first.
@Suite("Group commits retried after the map filled")
struct WriteRetryTests {
    /// `count` new users, each added (personal fields, sealed with the user's key) and then
    /// signing in (no personal fields).
    static func newUsers(_ count: Int, from first: Int = 0) -> [Event] {
        (first..<first + count).flatMap { index -> [Event] in
            let name = "new-user-\(index)"
            return [
                Events.make(
                    index * 2, user: name,
                    payload: .userAdded(
                        displayName: "Name \(index)", subtitle: "subtitle \(index)",
                        imageRef: nil, passcodePolicy: .numeric, passcodeMinLength: 6)),
                Events.make(index * 2 + 1, user: name)
            ]
        }
    }

    /// Every record of the users in `events` reads with its readable id and its personal fields.
    static func expectReadable(_ store: OnboardingStore, _ events: [Event], _ context: String) throws {
        for name in Set(events.compactMap(\.user)) {
            let records = try store.records(user: name)
            #expect(records.map(\.event) == events.filter { $0.user == name }, "\(context): \(name) reads as written")
            #expect(try !store.isForgotten(name), "\(context): \(name)")
        }
        let names = try store.allRecords().compactMap(\.event.user)
        #expect(!names.contains { $0.hasPrefix("~") }, "\(context): no record reads as a pseudonym")
    }

    @Test("users first seen in a group whose commit fills the map read by their readable id, before and after reopen")
    func commitFillsMap() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let faults = FaultPlan()
        let store = try OnboardingStore.open(at: directory.store, options: storeOptions { $0.storageFaults = faults.injector })
        _ = try store.appendBlocking(Events.many(3, from: 10_000))
        let events = Self.newUsers(40)
        faults.arm(.commit, failWith: LMDBError.mapFull.code)
        let results = try store.appendBlocking(events)
        #expect(results.map(\.seq) == Array(4...UInt64(3 + events.count)))
        #expect(faults.injected(at: .commit) == 1)
        #expect(store.mapGrowthCount == 1, "the group ran again after the map grew")
        try Self.expectReadable(store, events, "open")
        #expect(try store.verify().isValid)
        store.close()

        let reopened = try OnboardingStore.open(at: directory.store)
        defer { reopened.close() }
        try Self.expectReadable(reopened, events, "reopened")
        let report = try reopened.verify()
        #expect(report.isValid, "\(report.problems)")
        let entries = try reopened.stats().userCount
        #expect(entries == 41, "one user_keys entry per user: alice and the 40 new ones")
    }

    @Test("concurrent appenders of new users whose shared commit fills the map all read by their readable id after reopen")
    func groupOfAppendersFillsMap() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let faults = FaultPlan()
        let store = try OnboardingStore.open(at: directory.store, options: storeOptions { $0.storageFaults = faults.injector })
        let events = Self.newUsers(60)
        // The first commits fill the map (some groups run three times); the retries commit.
        faults.arm(.commit, failWith: LMDBError.mapFull.code, times: 3)
        let pairs = stride(from: 0, to: events.count, by: 2).map { Array(events[$0..<$0 + 2]) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for pair in pairs {
                group.addTask { _ = try await store.append(pair) }
            }
            try await group.waitForAll()
        }
        store.close()
        #expect(faults.injected(at: .commit) == 3)
        let reopened = try OnboardingStore.open(at: directory.store)
        defer { reopened.close() }
        for pair in pairs {
            let name = pair[0].user!
            #expect(try reopened.records(user: name).map(\.event) == pair, "\(name) reads as written")
        }
        #expect(try reopened.verify().isValid)
    }

    @Test("a group whose commit fails for good leaves no user behind; appending it again writes the entries")
    func commitFails() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let faults = FaultPlan()
        let store = try OnboardingStore.open(at: directory.store, options: storeOptions { $0.storageFaults = faults.injector })
        let events = Self.newUsers(5)
        faults.arm(.commit, failWith: EIO)
        #expect(throws: StoreError.self) { try store.appendBlocking(events) }
        let refs = Set(events.compactMap(\.user).map(store.userRef(of:)))
        #expect(store.liveKeys(for: refs).isEmpty, "the failed group's users are not in the directory")
        _ = try store.appendBlocking(events)
        store.close()

        let reopened = try OnboardingStore.open(at: directory.store)
        defer { reopened.close() }
        try Self.expectReadable(reopened, events, "reopened")
    }

    @Test("a forget in a group whose commit fills the map forgets the user once, before and after reopen")
    func forgetInRetriedGroup() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let faults = FaultPlan()
        let store = try OnboardingStore.open(at: directory.store, options: storeOptions { $0.storageFaults = faults.injector })
        _ = try store.appendBlocking(Self.newUsers(2))
        faults.arm(.commit, failWith: LMDBError.mapFull.code)
        let (pseudonym, _) = try store.forgetUser("new-user-0", at: Events.start.adding(milliseconds: 60_000))
        #expect(faults.injected(at: .commit) == 1)
        #expect(try store.isForgotten("new-user-0"))
        #expect(try store.records(user: "new-user-1").allSatisfy { $0.event.user == "new-user-1" })
        store.close()

        let reopened = try OnboardingStore.open(at: directory.store)
        defer { reopened.close() }
        #expect(try reopened.isForgotten("new-user-0"))
        #expect(try reopened.records(user: "new-user-0").allSatisfy { $0.event.user == pseudonym })
        #expect(try reopened.verify().isValid)
    }

    /// Found by the simulator (seed 53, step 100): the server forgot a user on its replica, then
    /// the device's own `user_forgotten` arrived in a group that was retried after MAP_FULL. The
    /// undo "unforgot" a user forgotten before the group, so the retry wrote a second tombstone.
    @Test("a user_forgotten of a user forgotten before its group, retried after the map filled, leaves one tombstone")
    func forgetOfAnAlreadyForgottenUserInRetriedGroup() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let faults = FaultPlan()
        let store = try OnboardingStore.open(at: directory.store, options: storeOptions { $0.storageFaults = faults.injector })
        _ = try store.appendBlocking(Self.newUsers(2))
        let (pseudonym, outcome) = try store.forgetUserKey("new-user-0", requestedAt: Events.start.adding(milliseconds: 30_000))
        #expect(outcome == .erased)
        let entriesBefore = try store.stats().userCount
        faults.arm(.commit, failWith: LMDBError.mapFull.code)
        let forgotten = Event(
            id: UUID(), device: Events.device, at: Events.start.adding(milliseconds: 60_000), user: pseudonym,
            flow: nil, payload: .userForgotten)
        _ = try store.appendBlocking([forgotten, Events.make(900, user: "new-user-1")])
        #expect(faults.injected(at: .commit) == 1)
        #expect(try store.isForgotten(pseudonym))
        #expect(try store.stats().userCount == entriesBefore, "no second entry for the forgotten user")
        #expect(try store.forgetRequests().isEmpty, "the device's user_forgotten ended the server's request")
        store.close()

        let reopened = try OnboardingStore.open(at: directory.store)
        defer { reopened.close() }
        #expect(try reopened.isForgotten(pseudonym))
        let report = try reopened.verify()
        #expect(report.isValid, "\(report.problems)")
        #expect(try reopened.stats().userCount == entriesBefore)
    }
}
