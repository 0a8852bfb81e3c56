import Foundation
import HTTPServer
import OnboardingModel
@testable import OnboardingServer
import OnboardingStore
import Synchronization
import Testing
import TestSupport

/// The server's token buckets (docs/sync-protocol.md § Rate limits): per token, and per client
/// address for failed authentications and for requests that need no token.
@Suite(.slow) struct RateLimitTests {
    final class ManualInstant: Sendable {
        private let instant = Mutex(ContinuousClock.now)
        var now: ContinuousClock.Instant { instant.withLock { $0 } }
        func advance(_ duration: Duration) { instant.withLock { $0 += duration } }
    }

    @Test func aBucketGivesItsBurstThenRefillsAtItsRate() {
        let clock = ManualInstant()
        let buckets = RateLimiter(RequestRate(perSecond: 2, burst: 3), clock: { clock.now })
        for _ in 0..<3 { #expect(buckets.take("a") == .allowed) }
        #expect(buckets.take("a") == .refused(retryAfterSeconds: 1))
        #expect(buckets.take("b") == .allowed, "each key has its own bucket")
        clock.advance(.milliseconds(500))
        #expect(buckets.take("a") == .allowed, "one more after half a second at 2/s")
        #expect(buckets.take("a") == .refused(retryAfterSeconds: 1))
        clock.advance(.seconds(3600))
        for _ in 0..<3 { #expect(buckets.take("a") == .allowed) }
        #expect(buckets.take("a") != .allowed, "a quiet hour refills to the burst, not beyond")
        let slow = RateLimiter(RequestRate(perSecond: 0.1, burst: 1), clock: { clock.now })
        #expect(slow.take("x") == .allowed)
        #expect(slow.take("x") == .refused(retryAfterSeconds: 10), "Retry-After is the wait for the next token")
    }

    @Test func theBucketsStayBoundedHoweverManyKeysCome() {
        let buckets = RateLimiter(RequestRate(perSecond: 1, burst: 2))
        for index in 0..<(RateLimiter.maximumKeys + 50_000) { _ = buckets.take("198.51.\(index >> 8).\(index & 255)#\(index)") }
        #expect(buckets.keyCount <= RateLimiter.maximumKeys)
    }

    @Test func ratesParseStrictly() {
        #expect(RequestRate("5") == RequestRate(perSecond: 5, burst: 10))
        #expect(RequestRate("0.5/20") == RequestRate(perSecond: 0.5, burst: 20))
        #expect(RequestRate("0.2") == RequestRate(perSecond: 0.2, burst: 1))
        #expect(RequestRate("100/400")?.description == "100/400")
        for bad in ["", "0", "-1", "nan", "inf", "1e309", "5/0", "5/-1", "5/x", "x", "5/10/20", "1000001", "18446744073709551615", "5 ", "/5"] {
            #expect(RequestRate(bad) == nil, "\(bad.debugDescription)")
        }
    }

    static func server(_ limits: SyncServer.RateLimits, in directory: TemporaryDirectory) throws -> SyncServer {
        var options = SyncServer.Options()
        options.rateLimits = limits
        return try SyncServer(dataDirectory: directory.appending("server"), options: options)
    }

    static func get(_ server: SyncServer, _ path: String, token: String?, from address: String?) -> SyncResponse {
        server.handle(SyncRequest(method: "GET", path: path, headers: token.map { ["authorization": "Bearer \($0)"] } ?? [:], clientAddress: address))
    }

    @Test func aTokenOverItsRateGets429WithRetryAfterAndOtherTokensDoNot() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let server = try Self.server(
            .init(
                perToken: RequestRate(perSecond: 0.5, burst: 5), failedAuthenticationPerAddress: nil,
                anonymousPerAddress: nil), in: directory)
        defer { server.close() }
        let auditor = try server.issueToken(role: .auditor)
        let admin = try #require(server.createdAdminToken)
        for _ in 0..<5 { #expect(Self.get(server, SyncPaths.devices, token: auditor, from: "198.51.100.7").status == 200) }
        let refused = Self.get(server, SyncPaths.devices, token: auditor, from: "203.0.113.9")
        #expect(refused.status == 429 && refused.retryAfterSeconds == 2, "per token, whatever the address: \(refused.status)")
        #expect(SyncWire.error(from: refused.body)?.code == .rateLimited)
        #expect(SyncWire.error(from: refused.body)?.message.contains(auditor) == false, "the token is never echoed")
        #expect(Self.get(server, SyncPaths.devices, token: admin, from: "198.51.100.7").status == 200, "another token has its own bucket")
        // In process, with no address, the per-token bucket still counts.
        #expect(Self.get(server, SyncPaths.devices, token: auditor, from: nil).status == 429)
    }

    @Test func failedAuthenticationsAndAnonymousRequestsArePerAddress() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let server = try Self.server(
            .init(
                perToken: nil, failedAuthenticationPerAddress: RequestRate(perSecond: 0.01, burst: 4),
                anonymousPerAddress: RequestRate(perSecond: 0.01, burst: 4)), in: directory)
        defer { server.close() }
        let auditor = try server.issueToken(role: .auditor)
        let bad = String(repeating: "f", count: 64)
        for token in [nil, bad, "obt_\u{7}", String(repeating: "x", count: 8192)] as [String?] {
            #expect(Self.get(server, SyncPaths.devices, token: token, from: "198.51.100.7").status == 401)
        }
        let over = Self.get(server, SyncPaths.devices, token: bad, from: "198.51.100.7")
        #expect(over.status == 429 && over.retryAfterSeconds == 100, "\(over.status) \(over.headers)")
        #expect(SyncWire.error(from: over.body)?.message.contains("missing, unknown or revoked token") == true)
        #expect(Self.get(server, SyncPaths.devices, token: bad, from: "203.0.113.9").status == 401, "another address is not held back")
        // A good token from the held-back address still gets through: every token is looked up.
        #expect(Self.get(server, SyncPaths.devices, token: auditor, from: "198.51.100.7").status == 200)
        #expect(Self.get(server, SyncPaths.devices, token: try server.issueToken(role: .auditor), from: "198.51.100.7").status == 200)
        // What needs no token: health and the console's files share the address's bucket.
        for path in [SyncPaths.health, "/console/", SyncPaths.health, "/console/app.js"] {
            #expect(Self.get(server, path, token: nil, from: "198.51.100.7").status != 429, "\(path)")
        }
        #expect(Self.get(server, SyncPaths.health, token: nil, from: "198.51.100.7").status == 429)
        #expect(Self.get(server, SyncPaths.health, token: nil, from: "203.0.113.9").status == 200)
        #expect(Self.get(server, SyncPaths.health, token: nil, from: nil).status == 200, "in process, no address: no address bucket")
    }

    @Test func offLimitsNothing() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let server = try Self.server(.off, in: directory)
        defer { server.close() }
        let statuses = Set((0..<500).map { _ in Self.get(server, SyncPaths.devices, token: "nope", from: "198.51.100.7").status })
        #expect(statuses == [401])
    }

    /// Four threads flood the server over HTTP with bad tokens; a device syncing meanwhile from
    /// the same address (loopback) is neither refused nor slowed much: the flood is answered 429
    /// without token lookups once its address is over the failure limit.
    @Test(.timeLimit(.minutes(5))) func aFloodOfBadTokensLeavesAGoodDeviceSyncingAtFullSpeed() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let server = try Self.server(.default, in: directory)
        let http = HTTPServer(port: 0, limits: SyncHTTPHandler.limits, handler: SyncHTTPHandler(server: server))
        try http.start()
        defer {
            server.beginShutdown()
            http.stop()
            server.close()
        }
        let base = URL(string: "http://127.0.0.1:\(http.port)")!
        func device(_ name: String) async throws -> (OnboardingStore, String) {
            var options = OnboardingStore.Options()
            options.deviceID = name
            options.durability = .relaxed
            let store = try OnboardingStore.open(at: directory.appending(name), options: options)
            let start = Timestamp(millisecondsSince1970: 1_796_054_400_000)
            _ = try await store.append(
                (0..<3_000).map { index in
                    Event(
                        id: UUID(), device: name, at: start.adding(milliseconds: Int64(index) * 700), user: "user-\(index % 9)", flow: nil,
                        payload: index % 3 == 0 ? .signInStarted(method: .password) : .signInFailed(method: .password, reason: .invalidPassword))
                })
            return (store, try server.issueToken(role: .device, device: name))
        }
        func sync(_ store: OnboardingStore, _ token: String) async throws -> (Duration, SyncSummary) {
            let client = SyncClient(store: store, transport: try HTTPTransport(baseURL: base, timeout: .seconds(60)), token: token, batchEvents: 100)
            let started = ContinuousClock.now
            let summary = try await client.run()
            return (ContinuousClock.now - started, summary)
        }
        let (alone, aloneToken) = try await device("alone")
        defer { alone.close() }
        let (baseline, first) = try await sync(alone, aloneToken)
        #expect(first.appended == 3_000)

        let (flooded, floodedToken) = try await device("flooded")
        defer { flooded.close() }
        let done = Atomic<Bool>(false)
        let statuses = Mutex<[Int: Int]>([:])
        let group = DispatchGroup()
        for thread in 0..<4 {
            group.enter()
            detachThread {
                defer { group.leave() }
                let transport = try? HTTPTransport(baseURL: base, timeout: .seconds(30))
                let deadline = ContinuousClock.now + .seconds(120)
                var sent = 0
                // Bounded in count and in time.
                while !done.load(ordering: .relaxed), sent < 5_000, ContinuousClock.now < deadline {
                    sent += 1
                    let request = SyncRequest(
                        method: "POST", path: SyncPaths.events(device: "flooded"),
                        headers: ["authorization": "Bearer obt_guess_\(thread)_\(sent)", "content-type": SyncWire.contentType],
                        body: Array(#"{"device":"flooded","records":[]}"#.utf8))
                    let status = runBlockingForTest { (try? await transport?.send(request))?.status ?? 0 }
                    statuses.withLock { $0[status, default: 0] += 1 }
                }
            }
        }
        // The flood is under way before the device starts.
        try await onOwnThread { while statuses.withLock({ $0.values.reduce(0, +) }) < 100 { usleep(1_000) } }
        let (during, second) = try await sync(flooded, floodedToken)
        done.store(true, ordering: .relaxed)
        _ = try await onOwnThread { group.wait(timeout: .now() + 60) }
        let seen = statuses.withLock { $0 }
        let total = seen.values.reduce(0, +)
        #expect(second.appended == 3_000 && second.retries == 0, "the good device was refused or retried: \(second)")
        #expect(Set(seen.keys).isSubset(of: [401, 429]), "\(seen)")
        #expect((seen[401] ?? 0) <= 40, "past the burst of 20 (and its refill), bad tokens get 429: \(seen)")
        #expect(Double(seen[429] ?? 0) >= 0.9 * Double(total), "\(seen)")
        // On two cores the flood's own threads take CPU: the sync may slow, but by little.
        #expect(during <= max(baseline * 4, baseline + .seconds(3)), "alone \(baseline), during the flood \(during) (\(total) flood requests)")
        print("rate limits: 3,000 events alone in \(baseline), during a flood of \(total) bad-token requests (\(seen)) in \(during)")
    }
}

/// Runs async work from a plain thread and waits for it (the flood threads are not tasks).
func runBlockingForTest<T: Sendable>(_ work: @escaping @Sendable () async -> T) -> T {
    let result = Mutex<T?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        let value = await work()
        result.withLock { $0 = value }
        done.signal()
    }
    done.wait()
    return result.withLock { $0 }!
}
