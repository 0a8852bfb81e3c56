import Foundation
import OnboardingModel

// SKELETON — the API the store and CLI use. Bodies to be implemented (helper), keep signatures.

/// A user's sign-in history, built from that user's records (read through the `by_user` index,
/// never a full scan): every attempt with its outcome, and the sessions it opened.
public struct History: Sendable, Hashable {
    public var user: String
    public var attempts: [Attempt]
    public var sessions: [SignInSession]

    public init(user: String, attempts: [Attempt] = [], sessions: [SignInSession] = []) {
        self.user = user
        self.attempts = attempts
        self.sessions = sessions
    }

    /// Folds `records` (all of one user, in seq order), keeping those on `device` (all when nil)
    /// with `at` in `since..<until`.
    public static func build(user: String, records: [Record], device: String? = nil,
                             since: Timestamp? = nil, until: Timestamp? = nil) -> History {
        History(user: user)
    }

    public struct Attempt: Sendable, Hashable {
        public enum Outcome: String, Sendable, Hashable, Codable {
            case succeeded, failed, throttled
        }
        public var seq: UInt64
        public var at: Timestamp
        public var device: String
        public var factor: LockoutFactor
        /// `password`, `passcode`, … for the first factor; `totp`, `sms`, … for the second.
        public var method: String
        public var outcome: Outcome
        /// The failure reason (`invalid_password`, …) or, for a throttled attempt, `locked`.
        public var reason: String?
        public init(seq: UInt64, at: Timestamp, device: String, factor: LockoutFactor, method: String,
                    outcome: Outcome, reason: String?) {
            self.seq = seq
            self.at = at
            self.device = device
            self.factor = factor
            self.method = method
            self.outcome = outcome
            self.reason = reason
        }
    }

    /// From `sign_in_succeeded` to `signed_out` (or still open).
    public struct SignInSession: Sendable, Hashable {
        public var device: String
        public var start: Timestamp
        public var end: Timestamp?
        public var method: SignInMethod
        public var secondFactor: Bool
        /// How it ended: a `signed_out` reason, `replaced` by a newer sign-in on the device, or `nil` while open.
        public var endReason: String?
        public var durationMilliseconds: Int64? {
            end.map { $0.millisecondsSince1970 - start.millisecondsSince1970 }
        }
        public init(device: String, start: Timestamp, end: Timestamp?, method: SignInMethod, secondFactor: Bool, endReason: String?) {
            self.device = device
            self.start = start
            self.end = end
            self.method = method
            self.secondFactor = secondFactor
            self.endReason = endReason
        }
    }
}
