import Foundation
import Synchronization
import Testing
import OnboardingModel
import OnboardingProjections
@testable import OnboardingStore

/// `store.record(payload, user:, flow:)`: what an app calls; the id, the device and the time are
/// filled in as `onboard record` fills them.
@Suite struct RecordPayloadTests {
    @Test func recordFillsTheIdTheDeviceAndTheStoresClock() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let clock = Mutex(Timestamp(millisecondsSince1970: 1_796_054_400_000))
        let store = try OnboardingStore.open(
            at: directory.store,
            options: storeOptions { options in
                options.deviceID = "ward-3-ipad"
                options.clock = { clock.withLock { $0 } }
            })
        defer { store.close() }
        let flow = UUID()
        let first = try await store.record(.signInFailed(method: .password, reason: .invalidPassword), user: "alice", flow: flow)
        clock.withLock { $0 = $0 + .seconds(2) }
        let second = try await store.record(.signInFailed(method: .password, reason: .invalidPassword), user: "alice", flow: flow)
        #expect(first.seq == 1 && second.seq == 2 && !second.isDuplicate)
        #expect(second.state.flow.fieldMessages == [FieldMessage(field: "password", "Invalid password", .error)])
        #expect(second.decision == .allowed(failures: 2))
        let records = try store.records(in: 1...2)
        #expect(records.map(\.event.device) == ["ward-3-ipad", "ward-3-ipad"])
        #expect(records.map(\.event.at.millisecondsSince1970) == [1_796_054_400_000, 1_796_054_402_000])
        #expect(records.map(\.event.flow) == [flow, flow])
        #expect(records[0].event.id != records[1].event.id, "a new id per call")
        // An explicit time, no user, no flow, and the payload's optional fields left out.
        let added = try await store.record(
            .userAdded(displayName: "Ann Lee", passcodePolicy: .numeric, passcodeMinLength: 6),
            user: "ann", at: Timestamp(millisecondsSince1970: 1_796_054_403_000))
        let started = try await store.record(.accountCreationStarted)
        #expect(
            try store.storedRecord(at: added.seq)?.event.payload
                == .userAdded(displayName: "Ann Lee", subtitle: nil, imageRef: nil, passcodePolicy: .numeric, passcodeMinLength: 6))
        let creation = try #require(try store.storedRecord(at: started.seq)?.event)
        #expect(creation.user == nil && creation.flow == nil && creation.at == clock.withLock { $0 })
    }

    @Test func aBadUserIsRefusedAndNothingIsAppended() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try OnboardingStore.open(at: directory.store, options: storeOptions())
        defer { store.close() }
        for user in ["", "a\u{0007}b", String(repeating: "é", count: 129)] {
            let error = await #expect(throws: StoreError.self) {
                try await store.record(.signInStarted(method: .passcode), user: user)
            }
            #expect(error?.code == .invalidEvent, "\(user.debugDescription)")
        }
        #expect(try store.head().seq == 0)
    }

    /// The catch pattern StoreError's documentation shows, compiled with `-warnings-as-errors`
    /// in CI: it must match without a cast.
    @Test func theDocumentedCatchPatternMatchesAConflict() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try OnboardingStore.open(at: directory.store, options: storeOptions())
        defer { store.close() }
        let event = Events.make(1)
        _ = try await store.append(event)
        var conflicting = event
        conflicting.payload = .signInSucceeded(method: .passcode, secondFactor: false)
        var matched = false
        do { _ = try await store.append(conflicting) } catch  where error.code == .conflict { matched = error.seq == 1 } catch {
            Issue.record("expected a conflict, got \(error)")
        }
        #expect(matched)
    }
}
