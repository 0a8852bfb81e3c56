import Foundation
import OnboardingModel
import OnboardingProjections
@testable import OnboardingServer
import OnboardingStore
import Testing
import TestSupport

/// `GET /v1/users/{user}/history` and `GET /v1/devices/{device}/history`: filters, paging across
/// two devices' replicas merged in time order, and 400 for bad parameters.
@Suite struct HistoryEndpointTests {
    typealias Fixture = SyncServerTests.Fixture

    /// Alice on devices a (even seconds) and b (odd seconds): failed, succeeded, signed out,
    /// repeated; bob fails once on b. Both logs uploaded; returns an auditor token.
    static func twoDevices(_ fixture: Fixture) async throws -> String {
        for (name, offset) in [("a", 0), ("b", 1)] {
            let (store, token) = try await fixture.device(name, events: 0)
            defer { store.close() }
            var events = (0..<12).map { index -> Event in
                let payload: Payload =
                    switch index % 3 {
                    case 0: .signInFailed(method: name == "a" ? .password : .passcode, reason: .invalidPassword)
                    case 1: .signInSucceeded(method: name == "a" ? .password : .passcode, secondFactor: false)
                    default: .signedOut(reason: .user)
                    }
                return Event(
                    id: UUID(), device: name, at: SyncServerTests.start.adding(milliseconds: Int64(index * 2 + offset) * 1000),
                    user: "alice", flow: nil, payload: payload)
            }
            if name == "b" {
                events.append(
                    Event(
                        id: UUID(), device: name, at: SyncServerTests.start.adding(milliseconds: 100_000), user: "bob",
                        flow: nil, payload: .signInThrottled(method: .password, retryAfter: SyncServerTests.start)))
            }
            _ = try await store.append(events)
            #expect(try fixture.upload(store, 1...UInt64(events.count), token: token).status == 200)
        }
        let auditor = fixture.call("POST", SyncPaths.auditorTokens, token: fixture.admin)
        return try SyncWire.token(from: auditor.body)
    }

    static func get(_ fixture: Fixture, _ path: String, token: String) throws -> (Int, JSONValue) {
        let response = fixture.call("GET", path, token: token)
        return (response.status, try JSONValue.parse(bytes: response.body))
    }

    static func attempts(_ value: JSONValue) -> [JSONValue] {
        if case .array(let attempts)? = value["attempts"] { return attempts }
        return []
    }

    @Test(arguments: TestDatabase.storages) func userHistoryMergesDevicesInTimeOrderAndPagesConcatenate(storage: String) async throws {
        let fixture = try Fixture(storage: storage)
        defer { fixture.close() }
        let auditor = try await Self.twoDevices(fixture)
        let path = SyncPaths.history(user: "alice")

        let (status, whole) = try Self.get(fixture, path, token: auditor)
        #expect(status == 200)
        let all = Self.attempts(whole)
        #expect(all.count == 16) // 8 per device: 4 failed + 4 succeeded
        #expect(all.prefix(4).map { $0["device"] } == [.string("a"), .string("b"), .string("a"), .string("b")])
        #expect(all.map { $0["at"] } == all.map { $0["at"] }.sorted { "\($0!)" < "\($1!)" })
        #expect(whole["devices"] == .array([.string("a"), .string("b")]))
        #expect(whole["next_cursor"] == .null)
        guard case .array(let sessions)? = whole["sessions"] else { Issue.record("no sessions"); return }
        #expect(sessions.count == 8)
        #expect(sessions.allSatisfy { $0["end_reason"] == .string("user") })

        for limit in [1, 3, 5, 16] {
            var collected: [JSONValue] = []
            var collectedSessions: [JSONValue] = []
            var cursor: String?
            repeat {
                let (status, page) = try Self.get(fixture, path + "?limit=\(limit)" + (cursor.map { "&cursor=\($0)" } ?? ""), token: auditor)
                #expect(status == 200)
                #expect(Self.attempts(page).count <= limit)
                collected += Self.attempts(page)
                if case .array(let more)? = page["sessions"] { collectedSessions += more }
                if case .string(let next)? = page["next_cursor"] { cursor = next } else { cursor = nil }
            } while cursor != nil
            #expect(collected == all, "limit \(limit)")
            #expect(collectedSessions == sessions, "limit \(limit)")
        }

        let (_, failed) = try Self.get(fixture, path + "?outcome=failed&method=passcode", token: auditor)
        #expect(Self.attempts(failed).count == 4)
        #expect(Self.attempts(failed).allSatisfy { $0["device"] == .string("b") && $0["outcome"] == .string("failed") })

        let (_, onA) = try Self.get(fixture, path + "?device=a&since=2026-11-30T16:00:06Z&until=2026-11-30T16:00:14Z", token: auditor)
        #expect(Self.attempts(onA).map { $0["seq"] } == [.number("4"), .number("5"), .number("7")])
    }

    @Test(arguments: TestDatabase.storages) func deviceHistoryListsEveryUserOfThatDevice(storage: String) async throws {
        let fixture = try Fixture(storage: storage)
        defer { fixture.close() }
        let auditor = try await Self.twoDevices(fixture)
        let (status, onB) = try Self.get(fixture, SyncPaths.history(device: "b") + "?outcome=throttled", token: auditor)
        #expect(status == 200)
        #expect(onB["user"] == .null)
        #expect(Self.attempts(onB).map { $0["user"] } == [.string("bob")])
        #expect(onB["devices"] == .array([.string("b")]))
        #expect(fixture.call("GET", SyncPaths.history(device: "nowhere"), token: auditor).status == 404)
        let (_, token) = try await fixture.device("c", events: 0)
        #expect(fixture.call("GET", SyncPaths.history(device: "c"), token: token).status == 403)
    }

    @Test(arguments: TestDatabase.storages) func badParametersGet400WithOneLine(storage: String) async throws {
        let fixture = try Fixture(storage: storage)
        defer { fixture.close() }
        let auditor = try await Self.twoDevices(fixture)
        let path = SyncPaths.history(user: "alice")
        for (query, message) in [
            ("outcome=won", "query parameter outcome: unknown outcome \"won\"; expected one of succeeded, failed, throttled"),
            (
                "method=retina",
                "query parameter method: unknown method \"retina\"; expected one of password, passcode, biometric, apple, google, other, totp, sms, email, recovery_code"
            ),
            (
                "since=2026-12-01T00:00:00Z&until=2026-11-01T00:00:00Z",
                "query parameter until: until (2026-11-01T00:00:00.000Z) is before since (2026-12-01T00:00:00.000Z)"
            ),
            (
                "cursor=nonsense",
                "query parameter cursor: cursor \"nonsense\" is not a cursor this server or CLI issued; pass next_cursor from the previous page unchanged"
            ),
            // The server's own maximum, whatever the number (the query type alone allows more).
            ("limit=20000", "query parameter limit: limit \"20000\" must be a whole number from 1 to 10000"),
            ("limit=200000", "query parameter limit: limit \"200000\" must be a whole number from 1 to 10000"),
            ("limit=0", "query parameter limit: limit \"0\" must be a whole number from 1 to 10000"),
            ("limit=-1", "query parameter limit: limit \"-1\" must be a whole number from 1 to 10000"),
            ("limit=18446744073709551615", "query parameter limit: limit \"18446744073709551615\" must be a whole number from 1 to 10000"),
            (
                "outcomes=failed",
                "unknown query parameter outcomes; this endpoint takes device, since, until, outcome, factor, method, limit, cursor, order, wait"
            )
        ] {
            let response = fixture.call("GET", path + "?" + query, token: auditor)
            #expect(response.status == 400, "\(query)")
            #expect(SyncWire.error(from: response.body)?.message == message)
        }
    }
}
