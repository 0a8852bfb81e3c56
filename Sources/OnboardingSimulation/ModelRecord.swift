import OnboardingModel

/// One record of a device's log as the simulator wrote it: what every copy of it must hash to
/// and how every copy must read.
struct ModelRecord {
    let seq: UInt64
    let hash: Digest
    /// The event as recorded: the readable user (or, for `user_forgotten`, the pseudonym literal).
    let event: Event
    /// For `user_forgotten`: the readable user it forgot.
    let forgets: String?
}
