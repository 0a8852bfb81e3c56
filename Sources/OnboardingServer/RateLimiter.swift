import Foundation
import OnboardingModel
import Synchronization

/// Token buckets, one per key: each holds at most `burst` tokens, refills at `perSecond`, and a
/// request takes one or is refused with the wait until the next (`Retry-After`). The server keeps
/// three kinds (``SyncServer/RateLimits``). Memory is bounded: at most ``maximumKeys`` buckets; a
/// bucket that has refilled completely says nothing a new one would not, so those go first.
///
/// ```swift
/// let buckets = RateLimiter(RequestRate(perSecond: 1, burst: 10))
/// if case .refused(let retryAfter) = buckets.take("203.0.113.7") { answer429(retryAfter) }
/// ```
final class RateLimiter: Sendable {
    typealias Rate = RequestRate

    enum Outcome: Equatable {
        case allowed
        /// Over the rate: whole seconds until a token is there (at least 1).
        case refused(retryAfterSeconds: Int)
    }

    /// 100,000 keys (a few MiB): more distinct addresses or tokens in one refill time than a
    /// fleet's server sees; past it the fullest buckets are dropped.
    static let maximumKeys = 100_000

    private struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    let rate: Rate
    private let clock: @Sendable () -> ContinuousClock.Instant
    private let buckets = Mutex<[String: Bucket]>([:])

    init(_ rate: Rate, clock: @escaping @Sendable () -> ContinuousClock.Instant = { .now }) {
        self.rate = rate
        self.clock = clock
    }

    /// Takes a token from `key`'s bucket, or says how long until one is there.
    func take(_ key: String) -> Outcome {
        let now = clock()
        return buckets.withLock { buckets in
            var bucket = refilled(buckets[key] ?? Bucket(tokens: rate.burst, updated: now), at: now)
            defer {
                buckets[key] = bucket
                if buckets.count > Self.maximumKeys { prune(&buckets, at: now) }
            }
            guard bucket.tokens >= 1 else {
                return .refused(retryAfterSeconds: max(1, Int(((1 - bucket.tokens) / rate.perSecond).rounded(.up))))
            }
            bucket.tokens -= 1
            return .allowed
        }
    }

    var keyCount: Int { buckets.withLock { $0.count } }

    private func refilled(_ bucket: Bucket, at now: ContinuousClock.Instant) -> Bucket {
        let elapsed = max(0, Double((now - bucket.updated) / .milliseconds(1)) / 1000)
        return Bucket(tokens: min(rate.burst, bucket.tokens + elapsed * rate.perSecond), updated: now)
    }

    /// Drops every full bucket, then — if still over — the fullest half.
    private func prune(_ buckets: inout [String: Bucket], at now: ContinuousClock.Instant) {
        buckets = buckets.filter { refilled($0.value, at: now).tokens < rate.burst }
        guard buckets.count > Self.maximumKeys else { return }
        let kept = buckets.sorted { refilled($0.value, at: now).tokens < refilled($1.value, at: now).tokens }.prefix(Self.maximumKeys / 2)
        buckets = Dictionary(uniqueKeysWithValues: kept.map { ($0.key, $0.value) })
    }
}

/// A token bucket's size: `perSecond` requests on average, `burst` at once after a quiet spell.
/// Written `RATE[/BURST]` (`5`, `0.5/20`) in options and the config; the burst is twice the rate
/// (at least 1) when absent.
public struct RequestRate: Sendable, Equatable, CustomStringConvertible {
    public var perSecond: Double
    public var burst: Double

    public init(perSecond: Double, burst: Double) {
        precondition(perSecond > 0 && burst >= 1, "a rate needs a positive refill and room for one request")
        self.perSecond = perSecond
        self.burst = burst
    }

    /// `RATE[/BURST]`: nil unless both are numbers with 0 < RATE ≤ 10^6 and 1 ≤ BURST ≤ 10^6.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let rate = Double(parts[0]), rate.isFinite, rate > 0, rate <= 1_000_000 else { return nil }
        let burst = parts.count == 2 ? Double(parts[1]) : max(1, (rate * 2).rounded(.up))
        guard let burst, burst.isFinite, burst >= 1, burst <= 1_000_000 else { return nil }
        self.init(perSecond: rate, burst: burst)
    }

    public var description: String { "\(Self.format(perSecond))/\(Self.format(burst))" }

    private static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}

extension SyncServer {
    /// The server's rate limits (docs/sync-protocol.md § Rate limits): token buckets per token,
    /// and per client address for requests that fail to authenticate and for those that need no
    /// token. Over a limit the answer is 429 `rate_limited` with `Retry-After`, which the sync
    /// client honours. `nil` turns a kind off.
    public struct RateLimits: Sendable, Equatable {
        /// Every request with a valid token, per token.
        public var perToken: RequestRate?
        /// Requests from one address whose token is missing, unknown or revoked.
        public var failedAuthenticationPerAddress: RequestRate?
        /// Requests from one address to what needs no token (`/v1/health`, the console's files).
        public var anonymousPerAddress: RequestRate?

        public init(perToken: RequestRate?, failedAuthenticationPerAddress: RequestRate?, anonymousPerAddress: RequestRate?) {
            self.perToken = perToken
            self.failedAuthenticationPerAddress = failedAuthenticationPerAddress
            self.anonymousPerAddress = anonymousPerAddress
        }

        /// 100 requests/s per token, 400 at once. The fastest honest client, a device syncing
        /// over loopback, sends one batch per round trip: about 30 a second (docs/benchmarks.md,
        /// sync over HTTP); an auditor's console opens about 10 requests at once. Four times the
        /// former and forty the latter leaves honest use far below the limit, while one stolen
        /// token cannot take more than a bounded share of a node.
        public static let defaultPerToken = RequestRate(perSecond: 100, burst: 400)
        /// 1 failed authentication a second per address, 20 at once. An honest client with a bad
        /// token stops at its first 401 (the sync client never retries one), so a handful of
        /// misconfigured devices behind one NAT stay well inside 20; a scanner or a token guesser
        /// gets 429 with `Retry-After` from then on, and a client that honours it slows to one
        /// try a second. Every token is still looked up (a hash and one index read), so a good
        /// device behind the same address is never held back by another's failures.
        public static let defaultFailedAuthenticationPerAddress = RequestRate(perSecond: 1, burst: 20)
        /// 20 requests/s per address, 100 at once, for what needs no token: a console page load
        /// fetches about 12 files, a load balancer checks health once a second or so.
        public static let defaultAnonymousPerAddress = RequestRate(perSecond: 20, burst: 100)

        /// What `onboard serve` runs with unless told otherwise.
        public static let `default` = RateLimits(
            perToken: defaultPerToken, failedAuthenticationPerAddress: defaultFailedAuthenticationPerAddress,
            anonymousPerAddress: defaultAnonymousPerAddress)
        /// No limit at all (a fuzzer's or a benchmark's server).
        public static let off = RateLimits(perToken: nil, failedAuthenticationPerAddress: nil, anonymousPerAddress: nil)
    }

    /// The buckets of a server's ``RateLimits``.
    final class RateBuckets: Sendable {
        let perToken: RateLimiter?
        let failedAuthentication: RateLimiter?
        let anonymous: RateLimiter?

        init(_ limits: RateLimits) {
            perToken = limits.perToken.map { RateLimiter($0) }
            failedAuthentication = limits.failedAuthenticationPerAddress.map { RateLimiter($0) }
            anonymous = limits.anonymousPerAddress.map { RateLimiter($0) }
        }

        /// A token's key in the per-token buckets: its hash, never the token.
        static func key(of hash: [UInt8]) -> String { HexBytes.encode(hash) }
    }
}
