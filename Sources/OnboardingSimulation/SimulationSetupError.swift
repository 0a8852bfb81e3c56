/// The simulation could not start (no writable directory, a store that cannot be created): not a
/// finding about the code under test.
public struct SimulationSetupError: Error, Sendable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
