import Foundation
import OnboardingModel
import OnboardingProjections
@testable import OnboardingServer
import OnboardingStore
import Testing
import TestSupport

/// The server's side of erasure: its replica holds the device's keys (sent with the records) and
/// destroys its copy when the device's `user_forgotten` syncs — or first, when the server's own
/// forget (`POST /v1/users/{user}/forget`) asks, and then the device follows at its next sync.
@Suite struct ErasureSyncTests {
    @Test func userForgottenSyncsAndTheReplicaForgetsToo() async throws {
        let fixture = try SyncServerTests.Fixture()
        defer { fixture.server.close() }
        let (store, token) = try await fixture.device("kiosk-7", events: 6, user: "alice")
        defer { store.close() }
        _ = try await store.append(Event(id: UUID(), device: "kiosk-7", at: SyncServerTests.start, user: "bob", flow: nil,
                                         payload: .signInSucceeded(method: .passcode, secondFactor: false)))
        let client = SyncClient(store: store, transport: InMemoryTransport { fixture.server.handle($0) }, token: token,
                                serverKey: fixture.server.signingKey.publicKey)
        #expect(try await client.run().acknowledgedSeq == 7)

        // The replica reads the readable ids with the keys the device sent.
        let replica = try fixture.server.replicas.pinnedStore(for: "kiosk-7")
        #expect(try replica.storedRecord(at: 1)?.event.user == "alice")
        #expect(try replica.records(in: 1...7) == (try store.records(in: 1...7)))
        #expect(try !fixture.server.globalLockoutEntries(user: "alice", at: SyncServerTests.start.adding(milliseconds: 6_000)).isEmpty)

        let (pseudonym, _) = try await store.forgetUser("alice", at: SyncServerTests.start.adding(milliseconds: 7_000))
        #expect(try await client.run().acknowledgedSeq == 8)

        // The replica's copy of the key is gone: same records as the device, erased, chain intact.
        #expect(try replica.isForgotten("alice"))
        #expect(try replica.records(in: 1...8) == (try store.records(in: 1...8)))
        #expect(try replica.storedRecord(at: 1)?.event.user == pseudonym)
        #expect(try replica.storedRecord(at: 7)?.event.user == "bob")
        #expect(try replica.verify().isValid)
        // The global lockout now knows the user by the pseudonym only.
        let at = SyncServerTests.start.adding(milliseconds: 7_000)
        #expect(try fixture.server.globalLockoutEntries(user: "alice", at: at).isEmpty)
        #expect(try !fixture.server.globalLockoutEntries(user: pseudonym, at: at).isEmpty)
    }

    @Test func aRecordSealedBeforeTheDeviceForgotItsUserStillSyncs() async throws {
        let fixture = try SyncServerTests.Fixture()
        defer { fixture.server.close() }
        let (store, token) = try await fixture.device("kiosk-7", events: 0)
        defer { store.close() }
        _ = try await store.append(Event(id: UUID(), device: "kiosk-7", at: SyncServerTests.start, user: "alice", flow: nil,
                                         payload: .userAdded(displayName: "Alice Liddell", subtitle: "Night nurse", imageRef: nil,
                                                             passcodePolicy: .numeric, passcodeMinLength: 4)))
        // Forgotten before its first sync: the record's sealed section can no longer be opened
        // by anyone, so the upload carries it as it is.
        let (pseudonym, _) = try await store.forgetUser("alice", at: SyncServerTests.start.adding(milliseconds: 1_000))
        let keys = try store.syncKeys(for: try store.records(in: 1...2))
        #expect(keys.users.isEmpty)
        #expect(keys.sealed.keys.sorted() == [1])
        // A changed section does not hash to the record's hash: refused, nothing stored.
        var forged = keys
        forged.sealed[1]![30] ^= 1
        let refused = fixture.call("POST", SyncPaths.events(device: "kiosk-7"), token: token,
                                   body: SyncWire.uploadBody(device: "kiosk-7", records: try store.records(in: 1...2), keys: forged))
        #expect(refused.status == 409)
        #expect(SyncServerTests.errorCode(refused) == "chain_broken")
        let client = SyncClient(store: store, transport: InMemoryTransport { fixture.server.handle($0) }, token: token,
                                serverKey: fixture.server.signingKey.publicKey)
        #expect(try await client.run().acknowledgedSeq == 2)
        let replica = try fixture.server.replicas.pinnedStore(for: "kiosk-7")
        #expect(try replica.records(in: 1...2) == (try store.records(in: 1...2)))
        #expect(try replica.storedRecord(at: 1)?.event.user == pseudonym)
        #expect(try replica.verify().isValid)
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

    @Test func theServersForgetErasesEveryReplicaAndEachDeviceFollowsAtItsNextSync() async throws {
        let fixture = try SyncServerTests.Fixture()
        defer { fixture.server.close() }
        let (kiosk, kioskToken) = try await fixture.device("kiosk-7", events: 4, user: "alice")
        defer { kiosk.close() }
        let (tablet, tabletToken) = try await fixture.device("tablet-2", events: 3, user: "alice")
        defer { tablet.close() }
        let bob = Event(id: UUID(), device: "kiosk-7", at: SyncServerTests.start, user: "bob", flow: nil,
                        payload: .userAdded(displayName: "Bob Porter", subtitle: nil, imageRef: nil, passcodePolicy: .numeric, passcodeMinLength: 4))
        _ = try await kiosk.append(bob)
        let kioskClient = SyncClient(store: kiosk, transport: InMemoryTransport { fixture.server.handle($0) }, token: kioskToken,
                                     serverKey: fixture.server.signingKey.publicKey)
        let tabletClient = SyncClient(store: tablet, transport: InMemoryTransport { fixture.server.handle($0) }, token: tabletToken,
                                      serverKey: fixture.server.signingKey.publicKey)
        #expect(try await kioskClient.run().acknowledgedSeq == 5)
        #expect(try await tabletClient.run().acknowledgedSeq == 3)

        // Only an admin may forget.
        #expect(fixture.call("POST", "/v1/users/alice/forget", token: kioskToken).status == 403)
        let response = fixture.call("POST", "/v1/users/alice/forget", token: fixture.admin)
        #expect(response.status == 200)
        let body = String(decoding: response.body, as: UTF8.self)
        #expect(!body.contains("alice"), "the answer names pseudonyms only")
        let kioskPseudonym = kiosk.userRef(of: "alice").literal
        let tabletPseudonym = tablet.userRef(of: "alice").literal
        #expect(kioskPseudonym != tabletPseudonym, "each device has its own pseudonyms")
        #expect(body.contains(#"{"device":"kiosk-7","pseudonym":"\#(kioskPseudonym)","outcome":"erased"}"#))
        #expect(body.contains(#"{"device":"tablet-2","pseudonym":"\#(tabletPseudonym)","outcome":"erased"}"#))

        // Every replica reads alice erased now, before any device synced; bob is intact; the
        // chains still verify and the audit passes.
        let kioskReplica = try fixture.server.replicas.pinnedStore(for: "kiosk-7")
        #expect(try kioskReplica.isForgotten("alice"))
        #expect(try kioskReplica.storedRecord(at: 1)?.event.user == kioskPseudonym)
        #expect(try kioskReplica.storedRecord(at: 5)?.event.payload == bob.payload)
        #expect(try kioskReplica.verify().isValid)
        #expect(try fixture.server.audit().allSatisfy(\.isValid))
        let at = SyncServerTests.start.adding(milliseconds: 9_000)
        #expect(try fixture.server.globalLockoutEntries(user: "alice", at: at).isEmpty)
        #expect(try kioskReplica.forgetRequests().map(\.literal) == [kioskPseudonym])

        // The device, not told yet, records a profile change for alice (sealed with the key it
        // still holds). The server stores it as the device sealed it, and it reads as erased.
        let profile = Event(id: UUID(), device: "kiosk-7", at: at, user: "alice", flow: nil,
                            payload: .userProfileUpdated(displayName: "Alice Liddell", subtitle: "Night nurse", imageRef: nil))
        _ = try await kiosk.append(profile)
        let summary = try await kioskClient.run()
        #expect(summary.forgottenOnRequest == [kioskPseudonym])
        #expect(summary.forgetFailures.isEmpty)
        #expect(summary.acknowledgedSeq == 7, "the profile change and the device's own user_forgotten")
        #expect(try kiosk.isForgotten("alice"))
        #expect(try kiosk.storedRecord(at: 7)?.event.type == .userForgotten)
        #expect(try kioskReplica.forgetRequests().isEmpty, "the device's user_forgotten ends the request")
        #expect(try kioskReplica.records(in: 1...7) == (try kiosk.records(in: 1...7)))
        #expect(try kioskReplica.storedRecord(at: 6)?.event.payload == .userProfileUpdated(displayName: nil, subtitle: nil, imageRef: nil))
        #expect(try kioskReplica.verify().isValid)
        #expect(try kiosk.verify().isValid)
        // The other device is still asked until it syncs.
        let tabletReplica = try fixture.server.replicas.pinnedStore(for: "tablet-2")
        #expect(try tabletReplica.forgetRequests().map(\.literal) == [tabletPseudonym])
        let cursor = fixture.call("GET", SyncPaths.cursor(device: "tablet-2"), token: tabletToken)
        #expect(try SyncWire.cursor(from: cursor.body).forgetUsers == [tabletPseudonym])
        // A device that uploads before it heard (it still holds alice's key and sends it): the
        // server seals with the key for this upload only and keeps nothing readable.
        _ = try await tablet.append(Event(id: UUID(), device: "tablet-2", at: at, user: "alice", flow: nil,
                                          payload: .userProfileUpdated(displayName: "Alice L.", subtitle: nil, imageRef: "img/a")))
        let early = try fixture.upload(tablet, 4...4, token: tabletToken)
        #expect(early.status == 200, "\(String(decoding: early.body, as: UTF8.self))")
        #expect(try SyncWire.cursor(from: early.body).forgetUsers == [tabletPseudonym])
        #expect(try tabletReplica.storedRecord(at: 4)?.event == Event(id: try #require(try tablet.storedRecord(at: 4)).event.id, device: "tablet-2", at: at,
                                                                 user: tabletPseudonym, flow: nil,
                                                                 payload: .userProfileUpdated(displayName: nil, subtitle: nil, imageRef: nil)))
        #expect(try tabletReplica.isForgotten("alice"))
        #expect(try tabletReplica.verify().isValid)
        #expect(try await tabletClient.run().forgottenOnRequest == [tabletPseudonym])
        #expect(try tabletReplica.records(in: 1...5) == (try tablet.records(in: 1...5)))
        #expect(try fixture.server.audit().allSatisfy(\.isValid))
        // A second forget finds alice already forgotten.
        let again = String(decoding: fixture.call("POST", "/v1/users/alice/forget", token: fixture.admin).body, as: UTF8.self)
        #expect(again.contains(#""outcome":"already_forgotten""#))
    }

    /// A server forget asks only the devices whose records name the user; a device whose records
    /// of the user reach the server only after the forget is asked then, in the answer to that
    /// upload, and forgets in the same run. A device that never had the user gets no request and
    /// appends nothing.
    @Test func theServersForgetAsksOnlyDevicesThatHoldTheUserAlsoWhenTheirRecordsArriveLater() async throws {
        let fixture = try SyncServerTests.Fixture()
        defer { fixture.server.close() }
        let serverKey = fixture.server.signingKey.publicKey
        let (kiosk, kioskToken) = try await fixture.device("kiosk-7", events: 3, user: "alice")
        defer { kiosk.close() }
        let (tablet, tabletToken) = try await fixture.device("tablet-2", events: 2, user: "bob")
        defer { tablet.close() }
        let (phone, phoneToken) = try await fixture.device("phone-3", events: 2, user: "carol")
        defer { phone.close() }
        func client(_ store: OnboardingStore, _ token: String) -> SyncClient {
            SyncClient(store: store, transport: InMemoryTransport { fixture.server.handle($0) }, token: token, serverKey: serverKey)
        }
        for (store, token) in [(kiosk, kioskToken), (tablet, tabletToken), (phone, phoneToken)] { _ = try await client(store, token).run() }
        // The tablet records alice offline; the server forgets her before that syncs.
        _ = try await tablet.append(Event(id: UUID(), device: "tablet-2", at: SyncServerTests.start.adding(milliseconds: 9_000),
                                          user: "alice", flow: nil, payload: .signInFailed(method: .password, reason: .invalidPassword)))
        _ = try fixture.server.forgetUser("alice")
        #expect(try fixture.server.replicas.withReplica("kiosk-7") { try $0.forgetRequests().count } == 1)
        #expect(try fixture.server.replicas.withReplica("tablet-2") { try $0.forgetRequests().count } == 0)
        #expect(try fixture.server.replicas.withReplica("phone-3") { try $0.forgetRequests().count } == 0)

        let kioskRun = try await client(kiosk, kioskToken).run()
        #expect(try kioskRun.forgottenOnRequest.count == 1 && kiosk.isForgotten("alice"))
        let tabletRun = try await client(tablet, tabletToken).run()
        #expect(tabletRun.forgottenOnRequest == [tablet.userRef(of: "alice").literal], "\(tabletRun)")
        #expect(try tablet.isForgotten("alice") && !tablet.isForgotten("bob"))
        #expect(tabletRun.acknowledgedSeq == 4, "the tablet's user_forgotten (seq 4) went up in the same run")
        let phoneRun = try await client(phone, phoneToken).run()
        #expect(phoneRun.forgottenOnRequest.isEmpty && phoneRun.unknownForgetRequests == 0)
        #expect(try phone.head().seq == 2, "a device that never had alice appends nothing")
        for device in ["kiosk-7", "tablet-2", "phone-3"] {
            #expect(try fixture.server.replicas.withReplica(device) { try $0.forgetRequests().isEmpty }, "\(device)")
        }
    }
}
