/// SplitMix64 (Steele, Lea, Flood 2014): the same sequence on every platform, so a seed printed by
/// a failing simulation replays it exactly. Used for back-off jitter and ``FaultyTransport``.
struct SyncRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// `true` with probability `probability` (0 never, 1 always).
    mutating func chance(_ probability: Double) -> Bool {
        guard probability > 0 else { return false }
        return Double(next() >> 11) / Double(1 << 53) < probability
    }
}
