/// The outcome of one simulation.
public struct SimulationReport: Sendable {
    public var seed: UInt64
    public var stepsRun: Int
    /// FNV-1a 64 of the whole trace: two runs of one seed and step count must agree.
    public var traceDigest: UInt64
    public var traceLineCount: Int
    public var statistics: SimulationStatistics
    /// `nil` when every invariant held after every step.
    public var failure: SimulationFailure?
    /// The last trace lines (the story before a failure).
    public var traceTail: [String]
    /// Where the stores were (kept only with ``SimulationOptions/keepFiles``).
    public var directory: String
}
