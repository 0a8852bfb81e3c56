import Foundation
import OnboardingModel
import OnboardingProjections
@testable import OnboardingServer
import OnboardingStore
import Testing
import TestSupport

/// Records of vocabulary schema 2 (form events, identifier kinds, email results) sync like any
/// other: the replica checks and stores the device's exact bytes, and the server's global lockout
/// counts none of the form events.
@Suite struct SchemaTwoSyncTests {
    @Test func schemaTwoRecordsSyncByteForByteAndCountForNothing() async throws {
        let fixture = try SyncServerTests.Fixture()
        defer { fixture.server.close() }
        let (store, token) = try await fixture.device("kiosk-7", events: 0)
        defer { store.close() }
        let flow = UUID()
        let payloads: [(String?, Payload)] = [
            (nil, .fieldEdited(field: .email, filled: true, valid: nil)),
            ("ann@example.org", .fieldEdited(field: .password, filled: true, valid: true)),
            ("ann@example.org", .signInStarted(method: .password, identifierKind: .email)),
            ("ann@example.org", .signInFailed(method: .password, reason: .invalidPassword)),
            ("ann@example.org", .passwordResetStarted),
            ("ann@example.org", .passwordResetFailed(reason: .rateLimited)),
            (nil, .accountCreationStarted), (nil, .fieldValidated(field: .phone, result: .phoneInvalid)),
            (nil, .accountCreationSubmitted), (nil, .accountCreationFailed(field: nil, reason: .emailInUse)),
            // And the old form of a type with a schema 2, next to the new one.
            ("ann@example.org", .signInStarted(method: .passcode))
        ]
        _ = try await store.append(
            payloads.enumerated().map { index, pair in
                Event(
                    id: UUID(), device: "kiosk-7", at: SyncServerTests.start.adding(milliseconds: Int64(index) * 1000),
                    user: pair.0, flow: flow, payload: pair.1)
            })
        let client = SyncClient(
            store: store, transport: InMemoryTransport { fixture.server.handle($0) }, token: token,
            serverKey: fixture.server.signingKey.publicKey)
        #expect(try await client.run().acknowledgedSeq == UInt64(payloads.count))

        let replica = try fixture.server.replicas.pinnedStore(for: "kiosk-7")
        let count = UInt64(payloads.count)
        #expect(try replica.records(in: 1...count) == (try store.records(in: 1...count)))
        #expect(try replica.verify().isValid)
        // One counted failure, whatever the form events around it.
        let entries = try fixture.server.globalLockoutEntries(user: "ann@example.org", at: SyncServerTests.start.adding(milliseconds: 20_000))
        #expect(entries.map(\.failures) == [1])
    }
}
