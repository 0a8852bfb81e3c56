import Foundation
import OnboardingModel

/// One simulated party: its clock, its pace, and the steps of its current session.
struct WorkloadAgent {
    /// A planned step; an attempt is only resolved (allowed or throttled) when it happens.
    enum Step {
        case emit(Payload)
        /// A first-factor attempt; a success with `secondFactor` asks for a code next.
        case attempt(SignInMethod, succeeds: Bool, secondFactor: Bool)
        /// A TOTP code.
        case code(succeeds: Bool)
    }

    let actor: WorkloadActor
    /// When this agent's next event happens (milliseconds since 1970).
    var nextAt: Int64
    /// The mean time between this agent's events, milliseconds.
    let gapMilliseconds: Int64
    var plan: [Step] = []
    var planIndex = 0
    var user: String?
    var device = ""
    var session: UUID?
    /// The session already went through a reset after meeting a lock; a second lock ends it.
    var hasRecovered = false
    /// When the current session began, so the pause after it keeps the lane's planned rate.
    var sessionStartedAt: Int64 = 0

    init(actor: WorkloadActor, nextAt: Int64, gapMilliseconds: Int64) {
        self.actor = actor
        self.nextAt = nextAt
        self.gapMilliseconds = max(1, gapMilliseconds)
    }

    var isBetweenSessions: Bool { planIndex >= plan.count }
}
