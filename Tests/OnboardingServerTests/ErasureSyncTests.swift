import Foundation
import OnboardingModel
import OnboardingProjections
@testable import OnboardingServer
import OnboardingStore
import Testing
import TestSupport

/// The server's side of erasure: its copy of a device's log (a replica, or the device's rows in
/// PostgreSQL) holds the device's keys (sent with the records) and destroys its copy when the
/// device's `user_forgotten` syncs — or first, when the server's own forget
/// (`POST /v1/users/{user}/forget`) asks, and then the device follows at its next sync. On
/// either storage.
@Suite struct ErasureSyncTests {
    @Test(arguments: TestDatabase.storages) func userForgottenSyncsAndTheReplicaForgetsToo(storage: String) async throws {
        let fixture = try SyncServerTests.Fixture(storage: storage)
        defer { fixture.close() }
        let server = fixture.server
        let (store, token) = try await fixture.device("kiosk-7", events: 6, user: "alice")
        defer { store.close() }
        _ = try await store.append(
            Event(
                id: UUID(), device: "kiosk-7", at: SyncServerTests.start, user: "bob", flow: nil,
                payload: .signInSucceeded(method: .passcode, secondFactor: false)))
        let client = SyncClient(
            store: store, transport: InMemoryTransport { server.handle($0) }, token: token,
            serverKey: server.signingKey.publicKey)
        #expect(try await client.run().acknowledgedSeq == 7)

        // The server's log reads the readable ids with the keys the device sent.
        #expect(try server.heldRecord(of: "kiosk-7", at: 1)?.event.user == "alice")
        #expect(try server.heldRecords(of: "kiosk-7", in: 1...7) == (try store.records(in: 1...7)))
        #expect(try !server.globalLockoutEntries(user: "alice", at: SyncServerTests.start.adding(milliseconds: 6_000)).isEmpty)

        let (pseudonym, _) = try await store.forgetUser("alice", at: SyncServerTests.start.adding(milliseconds: 7_000))
        #expect(try await client.run().acknowledgedSeq == 8)

        // The server's copy of the key is gone: same records as the device, erased, chain intact.
        #expect(try server.holdsForgotten("alice", on: "kiosk-7"))
        #expect(try server.heldRecords(of: "kiosk-7", in: 1...8) == (try store.records(in: 1...8)))
        #expect(try server.heldRecord(of: "kiosk-7", at: 1)?.event.user == pseudonym)
        #expect(try server.heldRecord(of: "kiosk-7", at: 7)?.event.user == "bob")
        #expect(try server.audit(of: "kiosk-7").isValid)
        // The global lockout now knows the user by the pseudonym only.
        let at = SyncServerTests.start.adding(milliseconds: 7_000)
        #expect(try server.globalLockoutEntries(user: "alice", at: at).isEmpty)
        #expect(try !server.globalLockoutEntries(user: pseudonym, at: at).isEmpty)
    }

    @Test(arguments: TestDatabase.storages) func aRecordSealedBeforeTheDeviceForgotItsUserStillSyncs(storage: String) async throws {
        let fixture = try SyncServerTests.Fixture(storage: storage)
        defer { fixture.close() }
        let server = fixture.server
        let (store, token) = try await fixture.device("kiosk-7", events: 0)
        defer { store.close() }
        _ = try await store.append(
            Event(
                id: UUID(), device: "kiosk-7", at: SyncServerTests.start, user: "alice", flow: nil,
                payload: .userAdded(
                    displayName: "Alice Liddell", subtitle: "Night nurse", imageRef: nil,
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
        let refused = fixture.call(
            "POST", SyncPaths.events(device: "kiosk-7"), token: token,
            body: SyncWire.uploadBody(device: "kiosk-7", records: try store.records(in: 1...2), keys: forged))
        #expect(refused.status == 409)
        #expect(SyncServerTests.errorCode(refused) == "chain_broken")
        let client = SyncClient(
            store: store, transport: InMemoryTransport { server.handle($0) }, token: token,
            serverKey: server.signingKey.publicKey)
        #expect(try await client.run().acknowledgedSeq == 2)
        #expect(try server.heldRecords(of: "kiosk-7", in: 1...2) == (try store.records(in: 1...2)))
        #expect(try server.heldRecord(of: "kiosk-7", at: 1)?.event.user == pseudonym)
        #expect(try server.audit(of: "kiosk-7").isValid)
    }

    @Test(arguments: TestDatabase.storages) func anUploadWithoutKeysForANamedUserIsRefusedNotGuessed(storage: String) async throws {
        let fixture = try SyncServerTests.Fixture(storage: storage)
        defer { fixture.close() }
        let server = fixture.server
        let (store, token) = try await fixture.device("kiosk-7", events: 2, user: "alice")
        defer { store.close() }
        let response = fixture.call(
            "POST", SyncPaths.events(device: "kiosk-7"), token: token,
            body: SyncWire.uploadBody(device: "kiosk-7", records: try store.records(in: 1...2)))
        #expect(response.status == 409)
        #expect(SyncWire.error(from: response.body)?.code == .chainBroken)
        #expect(SyncWire.error(from: response.body)?.message.contains("body.keys") == true)
        #expect(try server.heldHead(of: "kiosk-7").seq == 0, "nothing was stored")
    }

    @Test(arguments: TestDatabase.storages) func theServersForgetErasesEveryReplicaAndEachDeviceFollowsAtItsNextSync(storage: String) async throws {
        let fixture = try SyncServerTests.Fixture(storage: storage)
        defer { fixture.close() }
        let server = fixture.server
        let (kiosk, kioskToken) = try await fixture.device("kiosk-7", events: 4, user: "alice")
        defer { kiosk.close() }
        let (tablet, tabletToken) = try await fixture.device("tablet-2", events: 3, user: "alice")
        defer { tablet.close() }
        let bob = Event(
            id: UUID(), device: "kiosk-7", at: SyncServerTests.start, user: "bob", flow: nil,
            payload: .userAdded(displayName: "Bob Porter", subtitle: nil, imageRef: nil, passcodePolicy: .numeric, passcodeMinLength: 4))
        _ = try await kiosk.append(bob)
        let kioskClient = SyncClient(
            store: kiosk, transport: InMemoryTransport { server.handle($0) }, token: kioskToken,
            serverKey: server.signingKey.publicKey)
        let tabletClient = SyncClient(
            store: tablet, transport: InMemoryTransport { server.handle($0) }, token: tabletToken,
            serverKey: server.signingKey.publicKey)
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

        // Every device's log on the server reads alice erased now, before any device synced; bob
        // is intact; the chains still verify and the audit passes.
        #expect(try server.holdsForgotten("alice", on: "kiosk-7"))
        #expect(try server.heldRecord(of: "kiosk-7", at: 1)?.event.user == kioskPseudonym)
        #expect(try server.heldRecord(of: "kiosk-7", at: 5)?.event.payload == bob.payload)
        #expect(try server.audit().allSatisfy(\.isValid))
        let at = SyncServerTests.start.adding(milliseconds: 9_000)
        #expect(try server.globalLockoutEntries(user: "alice", at: at).isEmpty)
        #expect(try server.heldForgetRequests(of: "kiosk-7").map(\.literal) == [kioskPseudonym])

        // The device, not told yet, records a profile change for alice (sealed with the key it
        // still holds). The server stores it as the device sealed it, and it reads as erased.
        let profile = Event(
            id: UUID(), device: "kiosk-7", at: at, user: "alice", flow: nil,
            payload: .userProfileUpdated(displayName: "Alice Liddell", subtitle: "Night nurse", imageRef: nil))
        _ = try await kiosk.append(profile)
        let summary = try await kioskClient.run()
        #expect(summary.forgottenOnRequest == [kioskPseudonym])
        #expect(summary.forgetFailures.isEmpty)
        #expect(summary.acknowledgedSeq == 7, "the profile change and the device's own user_forgotten")
        #expect(try kiosk.isForgotten("alice"))
        #expect(try kiosk.storedRecord(at: 7)?.event.type == .userForgotten)
        #expect(try server.heldForgetRequests(of: "kiosk-7").isEmpty, "the device's user_forgotten ends the request")
        #expect(try server.heldRecords(of: "kiosk-7", in: 1...7) == (try kiosk.records(in: 1...7)))
        #expect(try server.heldRecord(of: "kiosk-7", at: 6)?.event.payload == .userProfileUpdated(displayName: nil, subtitle: nil, imageRef: nil))
        #expect(try server.audit(of: "kiosk-7").isValid)
        #expect(try kiosk.verify().isValid)
        // The other device is still asked until it syncs.
        #expect(try server.heldForgetRequests(of: "tablet-2").map(\.literal) == [tabletPseudonym])
        let cursor = fixture.call("GET", SyncPaths.cursor(device: "tablet-2"), token: tabletToken)
        #expect(try SyncWire.cursor(from: cursor.body).forgetUsers == [tabletPseudonym])
        // A device that uploads before it heard (it still holds alice's key and sends it): the
        // server seals with the key for this upload only and keeps nothing readable.
        _ = try await tablet.append(
            Event(
                id: UUID(), device: "tablet-2", at: at, user: "alice", flow: nil,
                payload: .userProfileUpdated(displayName: "Alice L.", subtitle: nil, imageRef: "img/a")))
        let early = try fixture.upload(tablet, 4...4, token: tabletToken)
        #expect(early.status == 200, "\(String(decoding: early.body, as: UTF8.self))")
        #expect(try SyncWire.cursor(from: early.body).forgetUsers == [tabletPseudonym])
        #expect(
            try server.heldRecord(of: "tablet-2", at: 4)?.event
                == Event(
                    id: try #require(try tablet.storedRecord(at: 4)).event.id, device: "tablet-2",
                    at: at, user: tabletPseudonym, flow: nil,
                    payload: .userProfileUpdated(displayName: nil, subtitle: nil, imageRef: nil)))
        #expect(try server.holdsForgotten("alice", on: "tablet-2"))
        #expect(try server.audit(of: "tablet-2").isValid)
        #expect(try await tabletClient.run().forgottenOnRequest == [tabletPseudonym])
        #expect(try server.heldRecords(of: "tablet-2", in: 1...5) == (try tablet.records(in: 1...5)))
        #expect(try server.audit().allSatisfy(\.isValid))
        // A second forget finds alice already forgotten.
        let again = String(decoding: fixture.call("POST", "/v1/users/alice/forget", token: fixture.admin).body, as: UTF8.self)
        #expect(again.contains(#""outcome":"already_forgotten""#))
    }

    /// A server forget asks only the devices whose records name the user; a device whose records
    /// of the user reach the server only after the forget is asked then, in the answer to that
    /// upload, and forgets in the same run. A device that never had the user gets no request and
    /// appends nothing.
    @Test(arguments: TestDatabase.storages) func theServersForgetAsksOnlyDevicesThatHoldTheUserAlsoWhenTheirRecordsArriveLater(storage: String) async throws {
        let fixture = try SyncServerTests.Fixture(storage: storage)
        defer { fixture.close() }
        let server = fixture.server
        let serverKey = server.signingKey.publicKey
        let (kiosk, kioskToken) = try await fixture.device("kiosk-7", events: 3, user: "alice")
        defer { kiosk.close() }
        let (tablet, tabletToken) = try await fixture.device("tablet-2", events: 2, user: "bob")
        defer { tablet.close() }
        let (phone, phoneToken) = try await fixture.device("phone-3", events: 2, user: "carol")
        defer { phone.close() }
        func client(_ store: OnboardingStore, _ token: String) -> SyncClient {
            SyncClient(store: store, transport: InMemoryTransport { server.handle($0) }, token: token, serverKey: serverKey)
        }
        for (store, token) in [(kiosk, kioskToken), (tablet, tabletToken), (phone, phoneToken)] { _ = try await client(store, token).run() }
        // The tablet records alice offline; the server forgets her before that syncs.
        _ = try await tablet.append(
            Event(
                id: UUID(), device: "tablet-2", at: SyncServerTests.start.adding(milliseconds: 9_000),
                user: "alice", flow: nil, payload: .signInFailed(method: .password, reason: .invalidPassword)))
        _ = try server.forgetUser("alice")
        #expect(try server.heldForgetRequests(of: "kiosk-7").count == 1)
        #expect(try server.heldForgetRequests(of: "tablet-2").isEmpty)
        #expect(try server.heldForgetRequests(of: "phone-3").isEmpty)

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
            #expect(try server.heldForgetRequests(of: device).isEmpty, "\(device)")
        }
    }
}
