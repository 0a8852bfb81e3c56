/// How to run one simulation: the seed decides everything else.
///
/// ```swift
/// var options = SimulationOptions(seed: 42)
/// options.steps = 2_000
/// let report = Simulator.run(options)
/// ```
public struct SimulationOptions: Sendable {
    public var seed: UInt64
    /// The server's storage: LMDB replicas in the run's directory (`nil`), or a PostgreSQL
    /// database (`postgres://…`; the run creates its tables there, so give it an empty one).
    /// The server then restarts without a crash image (the database survives a crash by itself).
    public var databaseURL: String?
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

    /// Per mille of the requests that reach the server's side of the network on which a lying
    /// server answers instead of the real one (docs/testing.md § The hostile server): it
    /// forwards the request, then alters the real answer, or answers without forwarding. 0: every
    /// answer is the real server's, and the run's random stream is the one it was before the
    /// hostile mode existed.
    public var lieRatePerMille = 0
    /// Also tell the lies no client can catch on its own: a cursor naming a seq the path saw in
    /// an upload the server did not keep, with its real hash, and a 200 that acknowledges
    /// exactly a batch the server refused. Only signed (or TLS-authenticated) answers stop
    /// those; the option shows what they cost.
    public var undetectableLies = false

    /// At most this many devices: the invariants read every replica after every step.
    public static let maximumDevices = 64
    /// The rate of `onboard-sim --hostile-server`: one request in ten meets the liar, so most
    /// sync runs of a few requests meet none and the logs still reach the server, while every
    /// kind of lie is told many times over a run of a thousand steps.
    public static let defaultLieRatePerMille = 100

    public init(seed: UInt64) {
        self.seed = seed
    }
}
