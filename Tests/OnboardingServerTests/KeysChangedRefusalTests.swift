import Foundation
import OnboardingModel
@testable import OnboardingServer
import OnboardingStore
import Testing
import TestSupport

/// Found by the fuzz target `FuzzUploadBody` (FuzzTesting/, docs/testing.md): the 409
/// `keys_changed` refusal passed the replica's error message on, which names its file path.
@Suite("Upload refusals: keys_changed names no server path")
struct KeysChangedRefusalTests {
    typealias Hardening = ServerHardeningTests

    @Test("an upload with another pseudonym key is refused 409 keys_changed, naming the device but no file path")
    func keysChangedNamesNoPath() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let server = try Hardening.server(in: directory, clock: .init(Hardening.start.adding(milliseconds: 3_600_000)))
        defer { server.close() }
        let token = try server.issueToken(role: .device, device: "kiosk-7")
        let device = try Hardening.openStore("kiosk-7", in: directory)
        defer { device.close() }
        _ = try await device.append([Hardening.event("kiosk-7", at: Hardening.start, user: "alice")])
        let first = Hardening.call(server, "POST", SyncPaths.events(device: "kiosk-7"), token: token, body: try Hardening.uploadBody(device, 1...1))
        #expect(first.status == 200, "\(Hardening.text(first))")

        // A replaced device store: another pseudonym key, so another user entry for alice.
        let replaced = try Hardening.openStore("kiosk-7", in: directory)
        defer { replaced.close() }
        _ = try await replaced.append([
            Hardening.event("kiosk-7", at: Hardening.start, user: "alice"),
            Hardening.event("kiosk-7", at: Hardening.start.adding(milliseconds: 1), user: "alice")
        ])
        let refused = Hardening.call(server, "POST", SyncPaths.events(device: "kiosk-7"), token: token, body: try Hardening.uploadBody(replaced, 2...2))
        let text = Hardening.text(refused)
        #expect(refused.status == 409 && SyncServerTests.errorCode(refused) == "keys_changed", "\(text)")
        #expect(!text.contains(directory.path) && !text.contains("/devices/"), "\(text)")
        #expect(text.contains("kiosk-7") && text.contains("enroll it as a new device"), "\(text)")
    }
}
