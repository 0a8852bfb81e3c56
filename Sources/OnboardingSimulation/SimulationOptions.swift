/// How to run one simulation: the seed decides everything else.
///
/// ```swift
/// var options = SimulationOptions(seed: 42)
/// options.steps = 2_000
/// let report = Simulator.run(options)
/// ```
public struct SimulationOptions: Sendable {
    public var seed: UInt64
    /// Steps to run (each is one action: events recorded, a request delivered, a crash, …).
    public var steps = 1_000
    /// Devices over the run: a few at the start, the rest enrol later.
    public var devices = 6
    /// Where the stores live; `nil`: a fresh directory under /dev/shm when it is usable (the
    /// stores' fsyncs cost nothing there), else under the system's temporary directory.
    public var directory: String?
    /// Print every trace line as it happens.
    public var verbose = false
    /// Keep the stores after the run (they are removed otherwise).
    public var keepFiles = false

    /// At most this many devices: the invariants read every replica after every step.
    public static let maximumDevices = 64

    public init(seed: UInt64) {
        self.seed = seed
    }
}
