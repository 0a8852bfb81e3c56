/// Which simulated party produced an event of a generated workload.
public enum WorkloadActor: String, Sendable, Hashable, CaseIterable {
    /// An honest user on a personal device (`device-…`).
    case honest
    /// An honest user of a shared kiosk (`kiosk-…`).
    case sharedDevice = "shared_device"
    /// The brute-force attacker (device `brute-1`).
    case bruteForce = "brute_force"
    /// The credential-stuffing bots (devices `stuffer-…`).
    case stuffing
    /// The password sprayer (devices `sprayer-…`).
    case spraying
    /// Someone creating an account on their own phone (`newcomer-…` on `signup-…`); there with
    /// honest traffic, one sign-up per ``SignUpTraffic/signInEventsPerSignUp`` planned sign-in events.
    case newcomer

    var isHonest: Bool { self == .honest || self == .sharedDevice || self == .newcomer }
}
