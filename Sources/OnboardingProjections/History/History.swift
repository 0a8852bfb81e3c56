import Foundation
import OnboardingModel

/// A user's sign-in history, built from that user's records (read through the `by_user` index,
/// never a full scan): every attempt with its outcome, and the sessions it opened.
///
/// ```swift
/// let history = History.build(user: "alice", records: aliceRecords, since: june)
/// history.attempts.filter { $0.outcome == .failed }.count
/// history.sessions.first?.durationMilliseconds
/// ```
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
        var history = History(user: user)
        // Index into `sessions` of the open session per device.
        var open: [String: Int] = [:]
        for record in records {
            let event = record.event
            guard event.user == user else { continue }
            if let device, event.device != device { continue }
            if let since, event.at < since { continue }
            if let until, event.at >= until { continue }

            func attempt(_ factor: LockoutFactor, _ method: String, _ outcome: Attempt.Outcome, _ reason: String?) {
                history.attempts.append(Attempt(seq: record.seq, at: event.at, device: event.device, factor: factor,
                                                method: method, outcome: outcome, reason: reason))
            }
            func close(_ reason: String) {
                guard let index = open.removeValue(forKey: event.device) else { return }
                history.sessions[index].end = event.at
                history.sessions[index].endReason = reason
            }

            switch event.payload {
            case let .signInFailed(method, reason):
                attempt(.password, method.rawValue, .failed, reason.rawValue)
            case let .signInThrottled(method, _):
                attempt(.password, method.rawValue, .throttled, History.lockedReason)
            case .secondFactorFailed(let method):
                attempt(.secondFactor, method.rawValue, .failed, nil)
            case .secondFactorSucceeded(let method):
                attempt(.secondFactor, method.rawValue, .succeeded, nil)
            case let .signInSucceeded(method, secondFactor):
                attempt(.password, method.rawValue, .succeeded, nil)
                close(History.replacedReason)
                open[event.device] = history.sessions.count
                history.sessions.append(SignInSession(device: event.device, start: event.at, end: nil, method: method,
                                                      secondFactor: secondFactor, endReason: nil))
            case .signedOut(let reason):
                close(reason.rawValue)
            default:
                continue
            }
        }
        return history
    }

    /// The `reason` of a throttled attempt.
    public static let lockedReason = "locked"
    /// The `endReason` of a session ended by a newer sign-in on the same device.
    public static let replacedReason = "replaced"

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
