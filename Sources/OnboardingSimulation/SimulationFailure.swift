/// A broken invariant (or an operation of the code under test that failed when it must not):
/// the seed and step replay it exactly.
///
/// ```swift
/// if let failure = report.failure { print(failure) }   // names the seed, the step and the replay command
/// ```
public struct SimulationFailure: Error, Sendable, CustomStringConvertible {
    public let seed: UInt64
    /// The step that broke it (from 1).
    public let step: Int
    /// Which invariant, in a few words.
    public let invariant: String
    public let message: String

    public init(seed: UInt64, step: Int, invariant: String, message: String) {
        self.seed = seed
        self.step = step
        self.invariant = invariant
        self.message = message
    }

    public var description: String {
        "seed \(seed) step \(step): \(invariant): \(message)\nreplay: onboard-sim --seed \(seed) --steps \(step)"
    }
}
