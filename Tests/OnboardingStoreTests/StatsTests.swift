import Foundation
import OnboardingModel
import Testing
@testable import OnboardingStore

@Suite("Store statistics")
struct StatsTests {
    @Test("stats count events per type, users, and report the head and time span")
    func countsPerType() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try OnboardingStore.open(at: directory.store, options: storeOptions { $0.deviceID = "kiosk-7" })
        defer { store.close() }

        let empty = try store.stats()
        #expect(empty.eventCount == 0)
        #expect(empty.headSeq == 0)
        #expect(empty.countsByType.isEmpty)
        #expect(empty.userCount == 0)
        #expect(empty.firstAt == nil)
        #expect(empty.lastAt == nil)

        let payloads: [(Payload, String?)] = [
            (.signInStarted(method: .passcode), "alice"),
            (.signInFailed(method: .passcode, reason: .invalidPasscode), "alice"),
            (.signInStarted(method: .password), "bob"),
            (.signInFailed(method: .password, reason: .invalidPassword), "bob"),
            (.signInStarted(method: .biometric), "al"),
            (.signInSucceeded(method: .biometric, secondFactor: false), "al"),
            (.accountCreationStarted, nil),
            (.lockoutCleared(reason: .admin), "alice"),
            (.signInFailed(method: .passcode, reason: .invalidPasscode), "alice")
        ]
        let events = payloads.enumerated().map { Events.make($0.offset, user: $0.element.1, payload: $0.element.0) }
        _ = try await store.append(Array(events[0..<4]))
        for event in events[4...] { _ = try await store.append(event) }
        _ = try await store.append(events[2]) // a duplicate counts once

        let stats = try store.stats()
        #expect(stats.deviceID == "kiosk-7")
        #expect(stats.formatVersion == 2)
        #expect(stats.eventCount == 9)
        #expect(stats.headSeq == 9)
        #expect(stats.headHash == (try store.head().hash))
        #expect(stats.userCount == 3)
        #expect(stats.firstAt == events[0].at)
        #expect(stats.lastAt == events[8].at)
        #expect(stats.fileSizeBytes > 0)
        #expect(stats.usedBytes > 0)
        #expect(stats.usedBytes <= stats.mapSizeBytes)
        let counts = stats.countsByType.map { "\($0.type.rawValue)=\($0.count)" }
        #expect(
            counts == [
                "sign_in_started=3", "sign_in_failed=3", "sign_in_succeeded=1",
                "account_creation_started=1", "lockout_cleared=1"
            ])
    }
}
