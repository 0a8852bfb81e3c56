import Foundation
import OnboardingModel
@testable import OnboardingStore
import Testing

/// One commit that forgets one user and writes records of others (a sync batch on a replica, a
/// group of concurrent appends): the others stay who they were.
@Suite struct ForgetInGroupEntryTests {
    @Test func aGroupThatForgetsOneUserKeepsTheOtherUsersEntriesAndKeys() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var store = try OnboardingStore.open(at: directory.store, options: storeOptions { $0.deviceID = Events.device })
        _ = try await store.append([
            Events.make(0, user: "alice", payload: .signInFailed(method: .password, reason: .invalidPassword)),
            Events.make(
                1, user: "bob",
                payload: .userAdded(
                    displayName: "Bob Qwerty", subtitle: nil, imageRef: nil,
                    passcodePolicy: .numeric, passcodeMinLength: 6))
        ])
        // alice's user_forgotten and a record of bob with personal fields, in one commit.
        let alice = store.userRef(of: "alice").literal
        _ = try store.appendBlocking([
            Events.make(2, user: alice, payload: .userForgotten),
            Events.make(3, user: "bob", payload: .userProfileUpdated(displayName: "Bob Q.", subtitle: nil, imageRef: nil))
        ])
        // bob has one entry and one key: what he wrote before and after reads by name.
        #expect(try store.records(user: "bob").map(\.event.user) == ["bob", "bob"])
        #expect(try store.environment.read { try $0.count(store.databases.userKeys!) } == 2)
        store.close()

        store = try OnboardingStore.open(at: directory.store, options: storeOptions { $0.deviceID = Events.device })
        defer { store.close() }
        let reopened = try store.records(in: 1...4)
        #expect(
            reopened[1].event.payload
                == .userAdded(
                    displayName: "Bob Qwerty", subtitle: nil, imageRef: nil,
                    passcodePolicy: .numeric, passcodeMinLength: 6))
        #expect(reopened[3].event.payload == .userProfileUpdated(displayName: "Bob Q.", subtitle: nil, imageRef: nil))
        // Forgetting bob destroys his only key: after a restart he stays forgotten.
        _ = try await store.forgetUser("bob", at: Events.start.adding(milliseconds: 5_000))
        store.close()
        store = try OnboardingStore.open(at: directory.store, options: storeOptions { $0.deviceID = Events.device })
        #expect(try store.isForgotten("bob"))
        #expect(try store.records(in: 1...5).allSatisfy { $0.event.user.map(UserRef.isLiteral) ?? true })
        #expect(try store.verify().isValid)
    }
}
