/// A broken invariant (or an operation of the code under test that failed when it must not):
/// the seed and step replay it exactly.
///
/// ```swift
/// if let failure = report.failure { print(failure) }   // names the seed, the step and the replay command
/// ```
public struct SimulationFailure: Error, Sendable, CustomStringConvertible {
    public let seed: UInt64
    /// The step that broke it (from 1; the run's step count + 1 for its final convergence).
    public let step: Int
    /// The `--steps` that replay it: `step`, or the run's step count when the final convergence
    /// broke it.
    public let replaySteps: Int
    /// The run's `--devices` (part of the replay when not the default).
    public let devices: Int
    /// The run's `--lie-rate` (0: an honest server) and `--undetectable-lies`.
    public let lieRatePerMille: Int
    public let undetectableLies: Bool
    /// Which invariant, in a few words.
    public let invariant: String
    public let message: String

    public init(
        seed: UInt64, step: Int, invariant: String, message: String, replaySteps: Int? = nil,
        devices: Int = SimulationOptions(seed: 0).devices, lieRatePerMille: Int = 0, undetectableLies: Bool = false
    ) {
        self.seed = seed
        self.devices = devices
        self.lieRatePerMille = lieRatePerMille
        self.undetectableLies = undetectableLies
        self.step = step
        self.replaySteps = replaySteps ?? step
        self.invariant = invariant
        self.message = message
    }

    public var description: String {
        "seed \(seed) step \(step): \(invariant): \(message)\nreplay: onboard-sim --seed \(seed) --steps \(replaySteps)\(replayOptions)"
    }

    /// The options beyond seed and steps that the replay needs.
    var replayOptions: String {
        var options = devices == SimulationOptions(seed: 0).devices ? "" : " --devices \(devices)"
        if lieRatePerMille > 0 { options += " --lie-rate \(lieRatePerMille)" }
        if undetectableLies { options += " --undetectable-lies" }
        return options
    }
}
