import Foundation
import OnboardingModel
import OnboardingProjections
@testable import OnboardingServer
import OnboardingStore
import Testing
import TestSupport

/// `GET /v1/users/{user}/counts` and `GET /v1/devices/{device}/counts`: every matched attempt
/// (not a page) counted by outcome in aligned buckets of the smallest fitting size.
@Suite struct CountsEndpointTests {
    /// Alice: 120 attempts over 2 minutes on two devices, every third succeeded, every fifth throttled.
    static func scenario(_ fixture: ConsoleFixture) async throws {
        for device in ["a", "b"] {
            try await fixture.record(
                (0..<60).map { index -> Event in
                    let second = index * 2 + (device == "a" ? 0 : 1)
                    let payload: Payload =
                        index % 3 == 0
                        ? .signInSucceeded(method: .password, secondFactor: false)
                        : index % 5 == 0
                            ? .signInThrottled(method: .password, retryAfter: ConsoleFixture.start) : .signInFailed(method: .password, reason: .invalidPassword)
                    return ConsoleFixture.event(device, second, payload)
                } + [ConsoleFixture.event(device, 0, .signedOut(reason: .user))])
        }
    }

    static func totals(_ buckets: [JSONValue]) -> (succeeded: Int, failed: Int, throttled: Int) {
        buckets.reduce((0, 0, 0)) { sum, bucket in
            (
                sum.0 + (ConsoleFixture.integer(bucket["succeeded"]) ?? 0), sum.1 + (ConsoleFixture.integer(bucket["failed"]) ?? 0),
                sum.2 + (ConsoleFixture.integer(bucket["throttled"]) ?? 0)
            )
        }
    }

    @Test(arguments: TestDatabase.storages) func everyMatchedAttemptIsCountedInTheSmallestFittingBuckets(storage: String) async throws {
        let fixture = try ConsoleFixture(storage: storage)
        defer { fixture.close() }
        try await Self.scenario(fixture)
        let history = ConsoleFixture.array(try fixture.get(SyncPaths.history(user: "alice") + "?limit=10000").body["attempts"])
        #expect(history.count == 120)
        for (buckets, size, count) in [(500, 1_000, 120), (100, 10_000, 12), (12, 10_000, 12), (11, 60_000, 2), (2, 60_000, 2), (1, 300_000, 1)] {
            let (status, counts) = try fixture.get("/v1/users/alice/counts?buckets=\(buckets)")
            #expect(status == 200, "\(counts)")
            #expect(ConsoleFixture.integer(counts["bucket_ms"]) == size, "buckets \(buckets)")
            let list = ConsoleFixture.array(counts["buckets"])
            #expect(list.count == count, "buckets \(buckets)")
            #expect(counts["since"] == .string("2026-11-30T16:00:00.000Z") && counts["until"] == .string("2026-11-30T16:01:59.000Z"))
            let total = Self.totals(list)
            #expect(total.succeeded == history.filter { $0["outcome"] == .string("succeeded") }.count)
            #expect(total.failed == history.filter { $0["outcome"] == .string("failed") }.count)
            #expect(total.throttled == history.filter { $0["outcome"] == .string("throttled") }.count)
            let starts = list.compactMap { $0["start"]?.stringValue }.compactMap { try? Timestamp(iso8601: $0).millisecondsSince1970 }
            #expect(starts.allSatisfy { $0 % Int64(size) == 0 }, "multiples of the size since the epoch")
            #expect(zip(starts, starts.dropFirst()).allSatisfy { $1 - $0 == Int64(size) }, "every bucket, zeros included")
        }
        // Per-bucket against the history itself: the bucket of each attempt.
        let (_, fine) = try fixture.get("/v1/users/alice/counts?buckets=500&outcome=succeeded")
        for bucket in ConsoleFixture.array(fine["buckets"]) {
            let start = try #require(bucket["start"]?.stringValue)
            let expected = history.filter { $0["outcome"] == .string("succeeded") && $0["at"]?.stringValue?.prefix(19) == start.prefix(19) }.count
            #expect(ConsoleFixture.integer(bucket["succeeded"]) == expected && ConsoleFixture.integer(bucket["failed"]) == 0, "\(start)")
        }
        // The device variant and filters.
        let (_, onA) = try fixture.get("/v1/devices/a/counts?buckets=1&since=2026-11-30T16:00:00Z&until=2026-11-30T16:05:00Z")
        #expect(ConsoleFixture.integer(onA["bucket_ms"]) == 300_000)
        #expect(Self.totals(ConsoleFixture.array(onA["buckets"])).succeeded == 20)
        let (_, onlyB) = try fixture.get("/v1/users/alice/counts?device=b&outcome=throttled")
        #expect(
            Self.totals(ConsoleFixture.array(onlyB["buckets"])).throttled
                == history.filter { $0["device"] == .string("b") && $0["outcome"] == .string("throttled") }.count)
    }

    @Test(arguments: TestDatabase.storages) func noAttemptsIsNoBucketsAndAGivenRangeIsZeros(storage: String) async throws {
        let fixture = try ConsoleFixture(storage: storage)
        defer { fixture.close() }
        try await Self.scenario(fixture)
        let (status, none) = try fixture.get("/v1/users/nobody/counts")
        #expect(status == 200)
        #expect(none["buckets"] == .array([]) && none["since"] == .null && none["until"] == .null && none["bucket_ms"] == .null)
        let (_, zeros) = try fixture.get("/v1/users/nobody/counts?since=2026-11-30T00:00:00Z&until=2026-12-01T00:00:00Z&buckets=24")
        #expect(ConsoleFixture.integer(zeros["bucket_ms"]) == 3_600_000)
        let list = ConsoleFixture.array(zeros["buckets"])
        #expect(list.count == 24 && Self.totals(list) == (0, 0, 0))
        #expect(list.first?["start"] == .string("2026-11-30T00:00:00.000Z"))
        let (_, empty) = try fixture.get("/v1/users/alice/counts?since=2026-11-30T16:00:00Z&until=2026-11-30T16:00:00Z")
        #expect(empty["buckets"] == .array([]))
    }

    @Test(arguments: TestDatabase.storages) func hostileCountsParametersAre400(storage: String) async throws {
        let fixture = try ConsoleFixture(storage: storage)
        defer { fixture.close() }
        try await Self.scenario(fixture)
        for (query, message) in [
            ("buckets=", "query parameter buckets: buckets \"\" must be a whole number from 1 to 500"),
            ("buckets=0", "query parameter buckets: buckets \"0\" must be a whole number from 1 to 500"),
            ("buckets=-1", "query parameter buckets: buckets \"-1\" must be a whole number from 1 to 500"),
            ("buckets=501", "query parameter buckets: buckets \"501\" must be a whole number from 1 to 500"),
            ("buckets=18446744073709551615", "query parameter buckets: buckets \"18446744073709551615\" must be a whole number from 1 to 500"),
            ("buckets=%0A", "query parameter buckets: buckets \"\\n\" must be a whole number from 1 to 500"),
            ("limit=5", "unknown query parameter limit; this endpoint takes device, since, until, outcome, factor, method, buckets"),
            ("cursor=x", "unknown query parameter cursor; this endpoint takes device, since, until, outcome, factor, method, buckets"),
            (
                "since=0001-01-01T00:00:00Z&until=9999-12-31T23:59:59.999Z",
                "query parameters since, until, buckets: 0001-01-01T00:00:00.000Z to 9999-12-31T23:59:59.999Z needs more than 100 buckets of 7 days, the largest size; narrow since and until, or ask for more buckets (at most 500)"
            ),
            (
                "since=2026-12-01T00:00:00Z&until=2026-11-01T00:00:00Z",
                "query parameter until: until (2026-11-01T00:00:00.000Z) is before since (2026-12-01T00:00:00.000Z)"
            ),
            ("outcome=won", "query parameter outcome: unknown outcome \"won\"; expected one of succeeded, failed, throttled")
        ] {
            let (status, text) = fixture.refusal("/v1/users/alice/counts?" + query)
            #expect(status == 400, "\(query)")
            #expect(text == message, "\(query)")
        }
        // The far past and the far future are times like others: an attempt dated year 1 makes a
        // span no bucket size fits — said so, not trapped.
        try await fixture.record([
            ConsoleFixture.event("a", 0, user: "ancient"),
            Event(
                id: UUID(), device: "a", at: .minimum, user: "ancient", flow: nil,
                payload: .signInFailed(method: .password, reason: .invalidPassword))
        ])
        let (status, _) = fixture.refusal("/v1/users/ancient/counts?buckets=500")
        #expect(status == 400)
        let (_, recent) = try fixture.get("/v1/users/ancient/counts?since=2026-11-30T00:00:00Z")
        #expect(Self.totals(ConsoleFixture.array(recent["buckets"])).failed == 1)
        #expect(fixture.call("GET", "/v1/devices/nobody/counts", token: fixture.auditor).status == 404)
        let (_, device) = try fixture.device("a")
        #expect(fixture.call("GET", "/v1/users/alice/counts", token: device).status == 403)
    }
}
