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
        var builder = Builder(user: user, device: device, since: since, until: until)
        for record in records { builder.add(record) }
        return builder.history
    }

    /// Builds a history one record at a time, so a reader can fold records as it decodes them
    /// instead of collecting them first (the store's `history(user:)` does, inside its read).
    ///
    /// ```swift
    /// var builder = History.Builder(user: "alice", device: "kiosk-7")
    /// for record in aliceRecords { builder.add(record) }
    /// builder.history.attempts.count
    /// ```
    public struct Builder: Sendable {
        public private(set) var history: History
        let device: String?
        let since: Timestamp?
        let until: Timestamp?
        /// Index into `history.sessions` of the open session per device.
        private var open: [String: Int] = [:]

        public init(user: String, device: String? = nil, since: Timestamp? = nil, until: Timestamp? = nil) {
            history = History(user: user)
            self.device = device
            self.since = since
            self.until = until
        }

        /// Adds the next record (records come in seq order); records of other users, other
        /// devices or outside the time range are skipped.
        public mutating func add(_ record: Record) {
            let event = record.event
            guard event.user == history.user else { return }
            if let device, event.device != device { return }
            if let since, event.at < since { return }
            if let until, event.at >= until { return }

            switch event.payload {
            case let .signInFailed(method, reason):
                attempt(record, .password, method.rawValue, .failed, reason.rawValue)
            case let .signInThrottled(method, _):
                attempt(record, .password, method.rawValue, .throttled, History.lockedReason)
            case .secondFactorFailed(let method):
                attempt(record, .secondFactor, method.rawValue, .failed, nil)
            case .secondFactorSucceeded(let method):
                attempt(record, .secondFactor, method.rawValue, .succeeded, nil)
            case let .signInSucceeded(method, secondFactor):
                attempt(record, .password, method.rawValue, .succeeded, nil)
                close(event, History.replacedReason)
                open[event.device] = history.sessions.count
                history.sessions.append(SignInSession(device: event.device, start: event.at, end: nil, method: method,
                                                      secondFactor: secondFactor, endReason: nil))
            case .signedOut(let reason):
                close(event, reason.rawValue)
            default:
                return
            }
        }

        private mutating func attempt(_ record: Record, _ factor: LockoutFactor, _ method: String,
                                      _ outcome: Attempt.Outcome, _ reason: String?) {
            history.attempts.append(Attempt(seq: record.seq, at: record.event.at, device: record.event.device, factor: factor,
                                            method: method, outcome: outcome, reason: reason))
        }

        private mutating func close(_ event: Event, _ reason: String) {
            guard let index = open.removeValue(forKey: event.device) else { return }
            history.sessions[index].end = event.at
            history.sessions[index].endReason = reason
        }
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
