import OnboardingModel

/// A pure fold over the log: state rebuilt by applying records in seq order.
///
/// Conformers must satisfy, for every log and every prefix of it:
/// - **pure and total**: `apply` reads nothing but its argument and the state (no clock, no I/O,
///   no randomness) and accepts every valid record, ignoring the types it does not use;
/// - **deterministic**: folding the same records from `init()` gives `==` states;
/// - **incremental = rebuild**: applying records one at a time, in batches, or after decoding a
///   snapshot taken at any seq gives the same state as folding the whole log from scratch.
///
/// ```swift
/// var lockout = LockoutEngine(policy: .mediawiki)
/// for record in records { lockout.apply(record) }
/// lockout.decide(LockoutKey(user: "alice", device: "kiosk-7", factor: .password), at: now)
/// ```
public protocol Projection: Sendable, Equatable {
    /// Version of the state layout; a snapshot written under another version is discarded and
    /// the state rebuilt from the log.
    static var stateVersion: Int { get }
    /// The last seq applied (0 before any).
    var seq: UInt64 { get }
    mutating func apply(_ record: Record)
}
