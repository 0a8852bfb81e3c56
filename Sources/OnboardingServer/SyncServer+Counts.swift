import Foundation
import OnboardingModel
import OnboardingProjections
import OnboardingStore

extension SyncServer {
    /// 100 buckets by default, at most 500: a chart's width in bars.
    static let defaultCountBuckets = 100
    static let maximumCountBuckets = 500
    /// The bucket sizes, smallest first (ms): 1 s, 10 s, 1 min, 5 min, 15 min, 1 h, 6 h, 1 day, 7 days.
    static let bucketSizes: [Int64] = [1_000, 10_000, 60_000, 300_000, 900_000, 3_600_000, 21_600_000, 86_400_000, 604_800_000]

    /// `GET /v1/users/{user}/counts` and `GET /v1/devices/{device}/counts?<filters>&buckets=N`:
    /// the matched attempts (all of them, not a page) counted by outcome in time buckets of the
    /// smallest size that makes at most N, starting at multiples of it since the epoch.
    func counts(_ request: SyncRequest, user: String?, device pathDevice: String?) throws -> SyncResponse {
        let (query, others): (HistoryQuery, [String: String])
        switch historyQuery(request, user: user, device: pathDevice, extra: ["buckets"], takesPages: false) {
        case .failure(let refusal): return refusal.response
        case .success(let parsed): (query, others) = parsed
        }
        let buckets: Int
        switch Self.boundedInteger(others["buckets"], name: "buckets", in: 1...Self.maximumCountBuckets, default: Self.defaultCountBuckets) {
        case .failure(let refusal): return refusal.response
        case .success(let value): buckets = value
        }
        if let device = query.device, pathDevice != nil, !(try storage.isEnrolled(device)) {
            return failure(.notFound, "device \(device) is not enrolled")
        }
        func forEachAttempt(_ body: (History.Attempt) -> Void) throws {
            try storage.forEachRecord(query, newestFirst: false) { record in
                if let attempt = History.attempt(of: record), query.admits(factor: attempt.factor, method: attempt.method.name, outcome: attempt.outcome) {
                    body(attempt)
                }
                return true
            }
        }
        // The range: as asked, or from the first to the last attempt matched (a first pass).
        var first = query.since
        var last = query.until
        if first == nil || last == nil {
            var earliest: Timestamp?
            var latest: Timestamp?
            try forEachAttempt { attempt in
                earliest = min(earliest ?? attempt.at, attempt.at)
                latest = max(latest ?? attempt.at, attempt.at)
            }
            first = first ?? earliest
            last = last ?? latest
        }
        guard let since = first, let until = last else {
            return json(200, Self.countsBody(since: query.since, until: query.until, bucketMilliseconds: nil, start: 0, counts: []))
        }
        // `until` as asked is exclusive; the last attempt's time is counted.
        let end = query.until?.millisecondsSince1970 ?? (until.millisecondsSince1970 + 1)
        let low = since.millisecondsSince1970
        guard end > low else { return json(200, Self.countsBody(since: since, until: until, bucketMilliseconds: Self.bucketSizes[0], start: low, counts: [])) }
        guard let size = Self.bucketSizes.first(where: { size in Self.bucketCount(from: low, to: end, size: size) <= buckets }) else {
            return failure(
                .malformed,
                "query parameters since, until, buckets: \(since.iso8601) to \(until.iso8601) needs more than \(buckets) buckets of 7 days, the largest size; narrow since and until, or ask for more buckets (at most \(Self.maximumCountBuckets))"
            )
        }
        let start = Self.floorDivide(low, size) * size
        var counts = [(succeeded: Int, failed: Int, throttled: Int)](repeating: (0, 0, 0), count: Self.bucketCount(from: low, to: end, size: size))
        try forEachAttempt { attempt in
            let at = attempt.at.millisecondsSince1970
            guard at >= low, at < end else { return }
            let index = Int((at - start) / size)
            switch attempt.outcome {
            case .succeeded: counts[index].succeeded += 1
            case .failed: counts[index].failed += 1
            case .throttled: counts[index].throttled += 1
            }
        }
        return json(200, Self.countsBody(since: since, until: until, bucketMilliseconds: size, start: start, counts: counts))
    }

    /// Buckets of `size` ms from the multiple of it at or before `low` to the one holding `end − 1`.
    static func bucketCount(from low: Int64, to end: Int64, size: Int64) -> Int {
        let start = floorDivide(low, size) * size
        return Int((end - start + size - 1) / size)
    }

    static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        let quotient = value / divisor
        return value % divisor < 0 ? quotient - 1 : quotient
    }

    static func countsBody(
        since: Timestamp?, until: Timestamp?, bucketMilliseconds: Int64?, start: Int64,
        counts: [(succeeded: Int, failed: Int, throttled: Int)]
    ) -> [UInt8] {
        SyncWire.encode(
            .object([
                .init("since", since.map { .string($0.iso8601) } ?? .null), .init("until", until.map { .string($0.iso8601) } ?? .null),
                .init("bucket_ms", bucketMilliseconds.map { .number(String($0)) } ?? .null),
                .init(
                    "buckets",
                    .array(
                        counts.enumerated().map { index, count in
                            .object([
                                .init("start", .string(Timestamp(millisecondsSince1970: start + Int64(index) * (bucketMilliseconds ?? 0)).iso8601)),
                                .init("succeeded", .number(String(count.succeeded))), .init("failed", .number(String(count.failed))),
                                .init("throttled", .number(String(count.throttled)))
                            ])
                        }))
            ]))
    }
}
