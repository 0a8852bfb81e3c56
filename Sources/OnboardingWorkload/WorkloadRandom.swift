import Foundation
import OnboardingModel

/// The workload's own seeded generator (SplitMix64), so a seed means the same stream on every
/// platform and Swift version: the standard library's `random(in:using:)` algorithms may change,
/// so this type draws integers itself (multiply-high, no floating point, no libm).
///
/// ```swift
/// var random = WorkloadRandom(seed: 42)
/// let die = random.below(6) + 1
/// ```
public typealias WorkloadRandom = SplitMix64

extension SplitMix64 {
    /// A whole number in `0..<bound` (`bound` > 0), by Lemire's multiply-high (bias < 2^-40 here).
    public mutating func below(_ bound: Int) -> Int {
        precondition(bound > 0, "below(_:) needs a positive bound")
        return Int(next().multipliedFullWidth(by: UInt64(bound)).high)
    }

    /// A whole number in `range`.
    public mutating func between(_ range: ClosedRange<Int64>) -> Int64 {
        range.lowerBound + Int64(below(Int(range.upperBound - range.lowerBound) + 1))
    }

    /// The generator of stream `stream` of `seed`: the workload's parts that must not shift one
    /// another's draws (the sign-in traffic, its form events, the sign-ups) each draw from their
    /// own. Stream 0 is `SplitMix64(seed: seed)` itself, so the sign-in traffic keeps its numbers.
    public init(seed: UInt64, stream: UInt64) {
        guard stream != 0 else {
            self.init(seed: seed)
            return
        }
        // Seeds a gamma apart give the same sequence shifted by one draw: scramble the pair first.
        var scrambler = SplitMix64(seed: seed ^ (stream &* 0xD1B5_4A32_D192_ED03))
        self.init(seed: scrambler.next())
    }

    /// `true` with probability `perMille` / 1000.
    public mutating func chance(perMille: Int) -> Bool { below(1000) < perMille }

    /// A random-looking, seed-determined UUID with the version 4 and variant bits set.
    public mutating func uuid() -> UUID {
        let high = next(), low = next()
        var bytes = [UInt8](repeating: 0, count: 16)
        for index in 0..<8 {
            bytes[index] = UInt8(truncatingIfNeeded: high >> (56 - 8 * UInt64(index)))
            bytes[8 + index] = UInt8(truncatingIfNeeded: low >> (56 - 8 * UInt64(index)))
        }
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
    }
}
