/// SplitMix64 (Steele, Lea, Flood 2014): a tiny seeded generator with the same sequence on every
/// platform and toolchain, so a printed seed replays a simulation, a generated workload or a
/// failing test exactly. Not for secrets: tokens use the system's CSPRNG.
///
/// ```swift
/// var random = SplitMix64(seed: 42)
/// let pick = Int.random(in: 0..<10, using: &random)
/// ```
public struct SplitMix64: RandomNumberGenerator, Sendable {
    public private(set) var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
