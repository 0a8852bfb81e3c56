import Foundation
import OnboardingModel
@testable import OnboardingServer
import OnboardingStore
import Testing
import TestSupport

/// Found by `SyncAgainstHostileServerTests.enrollingWhileTheServerRunsNeverBreaksAReplicaInUse`
/// (two `onboard sync` runs of one fresh device at once): a cursor read of a replica ended its
/// lease by dropping the keys an upload of the same device had just given it, so the upload's
/// append could not seal its user and the device was told 409 `chain_broken`.
@Suite("Upload keys: a cursor read during an upload leaves the upload its keys")
struct UploadKeysLeaseTests {
    typealias Hardening = ServerHardeningTests

    @Test("a cursor GET between an upload's adoption of its keys and its append leaves the keys; the upload's end drops them")
    func aCursorReadDuringAnUploadLeavesItsKeys() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let server = try Hardening.server(in: directory, clock: .init(Hardening.start.adding(milliseconds: 3_600_000)))
        defer { server.close() }
        let token = try server.issueToken(role: .device, device: "kiosk-7")
        let device = try Hardening.openStore("kiosk-7", in: directory)
        defer { device.close() }
        _ = try await device.append([Hardening.event("kiosk-7", at: Hardening.start, user: "alice")])
        let records = try device.records(in: 1...1)
        let keys = try device.syncKeys(for: records)
        #expect(!keys.users.isEmpty)

        try server.withDeviceLog(of: "kiosk-7") { log in
            try log.adoptKeys(pseudonymKey: keys.pseudonymKey, userKeys: keys.users)
            #expect(log.checkingSeal(for: records[0].event) != nil)
            // The other sync run asks where the server stands, on the same replica.
            let cursor = Hardening.call(server, "GET", SyncPaths.cursor(device: "kiosk-7"), token: token)
            #expect(cursor.status == 200, "\(Hardening.text(cursor))")
            #expect(log.checkingSeal(for: records[0].event) != nil, "the cursor read took the upload's user keys")
        }
        // The upload's lease is over: alice's key was never stored, and is gone from memory.
        try server.withDeviceLog(of: "kiosk-7") { log in
            #expect(log.checkingSeal(for: records[0].event) == nil)
        }
        // And the real upload, with a cursor read before it, goes through.
        #expect(Hardening.call(server, "GET", SyncPaths.cursor(device: "kiosk-7"), token: token).status == 200)
        let upload = Hardening.call(server, "POST", SyncPaths.events(device: "kiosk-7"), token: token, body: try Hardening.uploadBody(device, 1...1))
        #expect(upload.status == 200, "\(Hardening.text(upload))")
        #expect(try server.heldHead(of: "kiosk-7").hash == (try device.head().hash))
    }
}
