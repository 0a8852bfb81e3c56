import OnboardingModel

/// SplitMix64 (Steele, Lea, Flood 2014): the same sequence on every platform, so a seed printed by
/// a failing simulation replays it exactly. Used for back-off jitter and ``FaultyTransport``.
typealias SyncRandom = SplitMix64

extension SplitMix64 {
    /// `true` with probability `probability` (0 never, 1 always).
    mutating func chance(_ probability: Double) -> Bool {
        guard probability > 0 else { return false }
        return Double(next() >> 11) / Double(1 << 53) < probability
    }
}
