import Foundation
import OnboardingModel
import OnboardingProjections
@testable import OnboardingServer
import OnboardingStore
import OnboardingSync
import Testing
import TestSupport

/// The server's side of erasure: its replica holds the device's keys (sent with the records) and
/// destroys its copy when the device's `user_forgotten` syncs.
@Suite struct ErasureSyncTests {
    @Test func userForgottenSyncsAndTheReplicaForgetsToo() async throws {
        let fixture = try SyncServerTests.Fixture()
        defer { fixture.server.close() }
        let (store, token) = try await fixture.device("kiosk-7", events: 6, user: "alice")
        defer { store.close() }
        _ = try await store.append(Event(id: UUID(), device: "kiosk-7", at: SyncServerTests.start, user: "bob", session: nil,
                                         payload: .signInSucceeded(method: .passcode, secondFactor: false)))
        let client = SyncClient(store: store, transport: InMemoryTransport { fixture.server.handle($0) }, token: token)
        #expect(try await client.run().acknowledgedSeq == 7)

        // The replica reads the readable ids with the keys the device sent.
        let replica = try fixture.server.replicas.store(for: "kiosk-7")
        #expect(try replica.record(at: 1)?.event.user == "alice")
        #expect(try replica.records(in: 1...7) == (try store.records(in: 1...7)))
        #expect(!fixture.server.globalLockoutEntries(user: "alice", at: SyncServerTests.start.adding(milliseconds: 6_000)).isEmpty)

        let (pseudonym, _) = try store.forgetUser("alice", at: SyncServerTests.start.adding(milliseconds: 7_000))
        #expect(try await client.run().acknowledgedSeq == 8)

        // The replica's copy of the key is gone: same records as the device, erased, chain intact.
        #expect(try replica.isForgotten("alice"))
        #expect(try replica.records(in: 1...8) == (try store.records(in: 1...8)))
        #expect(try replica.record(at: 1)?.event.user == pseudonym)
        #expect(try replica.record(at: 7)?.event.user == "bob")
        #expect(try replica.verify().isValid)
        // The global lockout now knows the user by the pseudonym only.
        let at = SyncServerTests.start.adding(milliseconds: 7_000)
        #expect(fixture.server.globalLockoutEntries(user: "alice", at: at).isEmpty)
        #expect(!fixture.server.globalLockoutEntries(user: pseudonym, at: at).isEmpty)
    }

    @Test func anUploadWithoutKeysForANamedUserIsRefusedNotGuessed() async throws {
        let fixture = try SyncServerTests.Fixture()
        defer { fixture.server.close() }
        let (store, token) = try await fixture.device("kiosk-7", events: 2, user: "alice")
        defer { store.close() }
        let response = fixture.call("POST", SyncPaths.events(device: "kiosk-7"), token: token,
                                    body: SyncWire.uploadBody(device: "kiosk-7", records: try store.records(in: 1...2)))
        #expect(response.status == 409)
        #expect(SyncWire.error(from: response.body)?.code == "chain_broken")
        #expect(SyncWire.error(from: response.body)?.message.contains("body.keys") == true)
    }
}
