import Foundation
import OnboardingModel
@testable import OnboardingServer
import OnboardingStore
import Testing
import TestSupport

/// The refusal a replaced device store gets says what happened and what to do, and, like every
/// answer, names no path of the server's data directory.
@Suite struct KeysChangedAnswerTests {
    typealias Hardening = ServerHardeningTests

    @Test func aReplacedDeviceStoreIsRefusedWithoutTheReplicasPath() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let server = try Hardening.server(in: directory, clock: Hardening.ManualServerClock(Hardening.start.adding(milliseconds: 3_600_000)))
        defer { server.close() }
        let store = try Hardening.openStore("kiosk-7", in: directory)
        defer { store.close() }
        _ = try await store.append([Hardening.event("kiosk-7", at: Hardening.start, user: "alice")])
        let token = try server.issueToken(role: .device, device: "kiosk-7")
        #expect(
            Hardening.call(
                server, "POST", SyncPaths.events(device: "kiosk-7"), token: token,
                body: try Hardening.uploadBody(store, 1...1)
            ).status == 200)

        let other = try Hardening.openStore("kiosk-7", in: directory)
        defer { other.close() }
        _ = try await other.append([Hardening.event("kiosk-7", at: Hardening.start, user: "carol")])
        var records = try other.records(in: 1...1)
        records[0].seq = 2
        let replaced = SyncWire.uploadBody(device: "kiosk-7", records: records, keys: try other.syncKeys(for: other.records(in: 1...1)))
        let refused = Hardening.call(server, "POST", SyncPaths.events(device: "kiosk-7"), token: token, body: replaced)
        #expect(refused.status == 409 && SyncServerTests.errorCode(refused) == "keys_changed")
        let text = Hardening.text(refused)
        #expect(text.contains("enroll it as a new device"), "\(text)")
        #expect(!text.contains(directory.path) && !text.contains("/devices/"), "\(text)")
    }
}
