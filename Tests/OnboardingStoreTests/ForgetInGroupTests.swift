import Foundation
import OnboardingModel
@testable import OnboardingStore
import Testing

/// One append (one group commit) that forgets a user and then names other live users: an import
/// of an exported log with a `user_forgotten` in it, or a replica storing such a batch.
@Suite("Forget in a group: the other users keep their keys")
struct ForgetInGroupTests {
    @Test("a user_forgotten followed, in the same append, by events of other live users leaves their sealed records readable")
    func forgetThenOthersInOneAppend() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try OnboardingStore.open(at: directory.store, options: storeOptions { $0.deviceID = "kiosk-7" })
        _ = try store.appendBlocking([
            Events.make(
                0, user: "alice",
                payload: .userAdded(
                    displayName: "Alice Sealed", subtitle: "Ward 3", imageRef: nil,
                    passcodePolicy: .numeric, passcodeMinLength: 6)),
            Events.make(
                1, user: "bob",
                payload: .userAdded(
                    displayName: "Bob Sealed", subtitle: nil, imageRef: nil,
                    passcodePolicy: .numeric, passcodeMinLength: 6)),
            Events.make(
                2, user: "carol",
                payload: .userAdded(
                    displayName: "Carol Forgotten", subtitle: nil, imageRef: nil,
                    passcodePolicy: .alphanumeric, passcodeMinLength: 8))
        ])
        let carol = store.userRef(of: "carol").literal
        _ = try store.appendBlocking([
            Events.make(3, user: carol, payload: .userForgotten),
            Events.make(4, user: "alice", payload: .userProfileUpdated(displayName: "Alice Renamed", subtitle: nil, imageRef: nil)),
            Events.make(5, user: "bob", payload: .signInFailed(method: .passcode, reason: .invalidPasscode))
        ])

        func expectReadable(_ store: OnboardingStore, _ when: String) throws {
            let records = try store.allRecords()
            #expect(records.map(\.event.user) == ["alice", "bob", carol, carol, "alice", "bob"], "\(when)")
            guard records.count == 6 else { return }
            #expect(
                records[0].event.payload
                    == .userAdded(
                        displayName: "Alice Sealed", subtitle: "Ward 3", imageRef: nil,
                        passcodePolicy: .numeric, passcodeMinLength: 6), "\(when)")
            #expect(
                records[1].event.payload
                    == .userAdded(
                        displayName: "Bob Sealed", subtitle: nil, imageRef: nil,
                        passcodePolicy: .numeric, passcodeMinLength: 6), "\(when)")
            #expect(records[4].event.payload == .userProfileUpdated(displayName: "Alice Renamed", subtitle: nil, imageRef: nil), "\(when)")
            #expect(try store.verify().isValid, "\(when)")
        }
        try expectReadable(store, "in the writing process")
        store.close()
        let reopened = try OnboardingStore.open(at: directory.store, options: storeOptions { $0.deviceID = "kiosk-7" })
        defer { reopened.close() }
        try expectReadable(reopened, "after reopening")
    }
}
