import Foundation
import OnboardingModel
import OnboardingProjections
@testable import OnboardingServer
import OnboardingStore
import PostgreSQL
import Testing
import TestSupport

/// `onboard migrate-server` carries what the console shows: the server actions (and so the
/// cleared lockouts), the user search, when devices enrolled and last uploaded, when tokens were issued.
@Suite(.enabled(if: TestDatabase.isEnabled, TestDatabase.skipNote)) struct ConsoleMigrationTests {
    @Test func theConsolesViewsSurviveAMoveToPostgreSQL() async throws {
        let fixture = try ConsoleFixture(storage: "lmdb")
        defer { fixture.close() }
        try await fixture.record(
            (0..<5).map {
                ConsoleFixture.event(
                    "a", $0, user: "josé",
                    $0 == 0
                        ? .userAdded(displayName: "José Ávila", passcodePolicy: .numeric, passcodeMinLength: 6)
                        : .signInFailed(method: .password, reason: .invalidPassword))
            })
        try await fixture.record([ConsoleFixture.event("b", 10, user: "josé")])
        #expect(ServerActionTests.clear(fixture, "josé", factor: "password", reason: "ticket 1").status == 200)
        let (_, token) = try fixture.device("a")
        let spare = try fixture.server.issueToken(role: .device, device: "a")
        #expect(fixture.call("DELETE", "/v1/devices/a/tokens/" + TokenStore.tokenID(of: spare), token: fixture.admin).status == 204)
        let actions = ConsoleFixture.array(try fixture.get("/v1/actions").body["actions"])
        let devices = ConsoleFixture.array(try fixture.get("/v1/devices").body["devices"])
        let lockout = try ServerActionTests.lockout(fixture, "josé")
        #expect(lockout.isEmpty && actions.count == 2)
        let data = fixture.directory.appending("server-data")
        fixture.server.close()

        try await onOwnThread {
            try withFreshDatabase { url in
                let storage = try PostgresStorage(url: url, policy: .mediawiki, createsAdminToken: false)
                let results = try PostgresMigration.run(dataDirectory: data, into: storage)
                #expect(results.allSatisfy { $0.audit.isValid })
                // Twice: nothing is copied again.
                _ = try PostgresMigration.run(dataDirectory: data, into: storage)
                storage.close()
                let server = try SyncServer(
                    databaseURL: try TestDatabase.url(database: url.parameters["dbname"]!), options: SyncServer.Options(),
                    createsAdminToken: false)
                defer { server.close() }
                func get(_ path: String) throws -> JSONValue {
                    try JSONValue.parse(
                        bytes: server.handle(SyncRequest(method: "GET", path: path, headers: ["authorization": "Bearer \(fixture.auditor)"])).body)
                }
                #expect(ConsoleFixture.array(try get("/v1/actions")["actions"]) == actions, "the same actions, ids and order")
                #expect(try server.globalLockoutEntries(user: "josé", at: ConsoleFixture.start.adding(milliseconds: 600_000)).isEmpty, "the clear still holds")
                let migrated = ConsoleFixture.array(try get("/v1/devices")["devices"])
                #expect(migrated.map { $0["device"] } == devices.map { $0["device"] })
                for (before, after) in zip(devices, migrated) {
                    #expect(after["last_upload_at"] == before["last_upload_at"] && after["acknowledged_seq"] == before["acknowledged_seq"])
                    #expect(after["tokens"] == before["tokens"], "the same tokens, issued when they were")
                    // The database keeps enrolment times in microseconds: the same millisecond.
                    #expect(after["enrolled_at"] == before["enrolled_at"])
                }
                #expect(ConsoleFixture.array(try get("/v1/users?search=avila")["users"]).first?["devices"] == .number("2"))
                #expect(
                    server.handle(SyncRequest(method: "GET", path: SyncPaths.cursor(device: "a"), headers: ["authorization": "Bearer \(token)"])).status == 200)
            }
        }
    }
}
