import OnboardingModel
import OnboardingProjections

/// A grid of one-tier policies replayed on one log, its Pareto frontier of (guesses let
/// through, honest lockout minutes), and the policy it recommends (docs/lab.md § sweep).
///
/// ```swift
/// let sweep = LabSweep.run(log, grid: LabSweep.Grid(limits: 3...20, windowSeconds: 60...3600))
/// print(sweep.recommended.json)
/// ```
public struct LabSweep: Sendable {
    /// The policies tried: every limit of `limits` with each of `windowSteps` windows spaced
    /// geometrically over `windowSeconds` (both ends included), on the password factor, keyed by
    /// user and device, cleared by a success, with `base`'s second factor and clearing.
    public struct Grid: Sendable, Hashable {
        public var limits: ClosedRange<Int>
        public var windowSeconds: ClosedRange<Int>
        public var windowSteps: Int
        public var base: LockoutPolicy

        public init(limits: ClosedRange<Int>, windowSeconds: ClosedRange<Int>, windowSteps: Int = 8, base: LockoutPolicy = .mediawiki) {
            self.limits = limits
            self.windowSeconds = windowSeconds
            self.windowSteps = windowSteps
            self.base = base
        }

        public var windows: [Int] {
            let low = Double(windowSeconds.lowerBound), high = Double(windowSeconds.upperBound)
            guard windowSteps > 1, high > low else { return [windowSeconds.lowerBound] }
            var values: [Int] = []
            for step in 0..<windowSteps {
                let value = Int((low * pow(high / low, Double(step) / Double(windowSteps - 1))).rounded())
                if values.last != value { values.append(value) }
            }
            return values
        }

        public var policies: [LockoutPolicy] {
            limits.flatMap { limit in
                windows.map { window in
                    var policy = base
                    policy.name = "limit \(limit) per \(DurationWords.words(milliseconds: Int64(window) * 1000))"
                    policy.password = LockoutPolicy.FactorRule(tiers: [LockoutPolicy.Tier(limit: limit, windowSeconds: window)])
                    policy.address = nil
                    return policy
                }
            }
        }
    }

    public var results: [LabResult]
    public var policies: [LockoutPolicy]
    /// Indices into `results` of the frontier, by guesses let through (fewest last).
    public var frontier: [Int]
    /// Index into `results` of the recommended policy.
    public var recommended: Int
    /// Guesses one honest lockout minute is worth in the recommendation.
    public var honestMinuteWeight: Double

    public var recommendedPolicy: LockoutPolicy { policies[recommended] }

    /// Replays every policy of `grid` on `log`; `progress(done, total)` after each.
    public static func run(
        _ log: LabLog, grid: Grid, honestMinuteWeight: Double = 1, acrossDevices: Bool = false,
        progress: (Int, Int) -> Void = { _, _ in }
    ) -> LabSweep {
        let policies = grid.policies
        var results: [LabResult] = []
        for (index, policy) in policies.enumerated() {
            results.append(LabReplay.run(log, policy: policy, acrossDevices: acrossDevices))
            progress(index + 1, policies.count)
        }
        let frontier = paretoFrontier(results.map { (Double($0.guessesLetThrough), $0.honestLockoutMinutes) })
        // The frontier point of least cost = guesses + weight × honest minutes; ties: the
        // earlier policy of the grid (the smaller limit, then the shorter window).
        let recommended =
            frontier.min { a, b in
                let costA = cost(results[a], honestMinuteWeight), costB = cost(results[b], honestMinuteWeight)
                return costA != costB ? costA < costB : a < b
            } ?? 0
        return LabSweep(
            results: results, policies: policies, frontier: frontier, recommended: recommended,
            honestMinuteWeight: honestMinuteWeight)
    }

    static func cost(_ result: LabResult, _ weight: Double) -> Double {
        Double(result.guessesLetThrough) + weight * result.honestLockoutMinutes
    }

    /// The points no other point dominates (at most as large in both coordinates, smaller in
    /// one), by ascending first coordinate; among equal points, the first. O(n log n): sorted by
    /// (x, y), a point is on the frontier when its y is below every y before it.
    public static func paretoFrontier(_ points: [(Double, Double)]) -> [Int] {
        let order = points.indices.sorted { a, b in
            points[a] != points[b] ? (points[a].0, points[a].1) < (points[b].0, points[b].1) : a < b
        }
        var frontier: [Int] = []
        var lowest = Double.infinity
        for index in order where points[index].1 < lowest {
            frontier.append(index)
            lowest = points[index].1
        }
        return frontier
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
