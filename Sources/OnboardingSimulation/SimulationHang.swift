/// A sync client that neither parked nor finished in time: a hang or a spin in the code under
/// test, reported like a broken invariant.
struct SimulationHang: Error, CustomStringConvertible {
    let device: String
    let seconds: Int
    var description: String {
        "the sync client of \(device) neither parked nor finished within \(seconds) s of real time (a hang or a spin)"
    }
}
