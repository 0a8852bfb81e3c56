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
    /// `nil` for a device's history of every user.
    public var user: String?
    public var attempts: [Attempt]
    /// The sessions opened by the listed successful attempts, in the order of those attempts.
    public var sessions: [SignInSession]
    /// Where the next page starts, when the query had a `limit` and more attempts match.
    public var nextCursor: HistoryCursor?

    public init(user: String?, attempts: [Attempt] = [], sessions: [SignInSession] = [], nextCursor: HistoryCursor? = nil) {
        self.user = user
        self.attempts = attempts
        self.sessions = sessions
        self.nextCursor = nextCursor
    }

    /// Folds `records` (all of one user, in seq order), keeping those on `device` (all when nil)
    /// with `at` in `since..<until`.
    public static func build(
        user: String, records: [Record], device: String? = nil,
        since: Timestamp? = nil, until: Timestamp? = nil
    ) -> History {
        build(HistoryQuery(user: user, device: device, since: since, until: until), records: records)
    }

    /// Folds `records` (in the order the query pages by, after `query.after`) under `query`.
    public static func build(_ query: HistoryQuery, records: [Record]) -> History {
        var builder = Builder(query: query)
        for record in records where !builder.isSettled { builder.add(record) }
        return builder.history
    }

    /// Builds a history one record at a time, so a reader can fold records as it decodes them
    /// instead of collecting them first (the store's `history(_:)` does, inside its read).
    ///
    /// The reader feeds the records after `query.after` in its page order and may stop once
    /// ``isSettled``: the page is full, one more matching attempt showed there is a next page,
    /// and every session the page lists has found its end (or runs to the end of the records).
    ///
    /// ```swift
    /// var builder = History.Builder(query: HistoryQuery(user: "alice", device: "kiosk-7", limit: 20))
    /// for record in aliceRecords where !builder.isSettled { builder.add(record) }
    /// builder.history.attempts.count   // at most 20
    /// ```
    public struct Builder: Sendable {
        private var built: History
        public let query: HistoryQuery
        /// Index into `built.sessions` of the listed open session per device.
        private var open: [String: Int] = [:]
        /// The position of the last listed attempt.
        private var last: HistoryCursor?
        /// A matching attempt arrived after the page was full.
        private var hasMore = false

        public init(query: HistoryQuery) {
            built = History(user: query.user)
            self.query = query
        }

        public init(user: String, device: String? = nil, since: Timestamp? = nil, until: Timestamp? = nil) {
            self.init(query: HistoryQuery(user: user, device: device, since: since, until: until))
        }

        public var history: History {
            var history = built
            history.nextCursor = hasMore ? last : nil
            return history
        }

        private var isFull: Bool { query.limit.map { built.attempts.count >= $0 } ?? false }

        /// Nothing later can change the page: the reader may stop feeding records.
        public var isSettled: Bool { isFull && hasMore && open.isEmpty }

        /// Adds the next record; records of other users, other devices or outside the time
        /// range are skipped, and attempts the outcome / factor / method filters reject are
        /// not listed (a rejected sign-in still ends the session before it on its device).
        public mutating func add(_ record: Record) {
            let event = record.event
            guard query.covers(event) else { return }

            if let attempt = History.attempt(of: record) {
                let listed = list(attempt)
                guard case let .signInSucceeded(method, secondFactor, _) = event.payload else { return }
                close(event, History.replacedReason)
                if listed {
                    open[event.device] = built.sessions.count
                    built.sessions.append(
                        SignInSession(
                            device: event.device, start: event.at, end: nil, method: method,
                            secondFactor: secondFactor, endReason: nil, user: event.user, seq: record.seq))
                }
            } else if case .signedOut(let reason) = event.payload {
                close(event, reason.rawValue)
            }
        }

        /// Lists the attempt when the filters admit it and the page has room; says whether it did.
        private mutating func list(_ attempt: Attempt) -> Bool {
            guard query.admits(factor: attempt.factor, method: attempt.method.name, outcome: attempt.outcome) else { return false }
            guard !isFull else {
                hasMore = true
                return false
            }
            built.attempts.append(attempt)
            last = HistoryCursor(at: attempt.at, device: attempt.device, seq: attempt.seq)
            return true
        }

        private mutating func close(_ event: Event, _ reason: String) {
            guard let index = open.removeValue(forKey: event.device) else { return }
            built.sessions[index].end = event.at
            built.sessions[index].endReason = reason
        }
    }

    /// The attempt `record` holds — a sign-in or second factor that succeeded, failed or was
    /// throttled — whatever a query's filters say; `nil` for any other event.
    public static func attempt(of record: Record) -> Attempt? {
        let event = record.event
        let parts: (method: AttemptMethod, outcome: Attempt.Outcome, reason: String?)
        switch event.payload {
        case let .signInFailed(method, reason, _): parts = (.signIn(method), .failed, reason.rawValue)
        case let .signInThrottled(method, _, _): parts = (.signIn(method), .throttled, lockedReason)
        case .secondFactorFailed(let method, _): parts = (.secondFactor(method), .failed, nil)
        case .secondFactorSucceeded(let method): parts = (.secondFactor(method), .succeeded, nil)
        case let .signInSucceeded(method, _, _): parts = (.signIn(method), .succeeded, nil)
        default: return nil
        }
        return Attempt(
            seq: record.seq, at: event.at, device: event.device, method: parts.method, outcome: parts.outcome,
            reason: parts.reason, user: event.user)
    }

    /// The `reason` of a throttled attempt.
    public static let lockedReason = "locked"
    /// The `endReason` of a session ended by a newer sign-in on the same device.
    public static let replacedReason = "replaced"

    public struct Attempt: Sendable, Hashable {
        public enum Outcome: String, Sendable, Hashable, Codable, CaseIterable {
            case succeeded, failed, throttled
        }
        public var seq: UInt64
        public var at: Timestamp
        public var device: String
        /// `.signIn(.password)`, … for the first factor; `.secondFactor(.totp)`, … for the second.
        public var method: AttemptMethod
        public var outcome: Outcome
        /// The lockout factor the attempt counts toward (the method's).
        public var factor: LockoutFactor { method.factor }
        /// The failure reason (`invalid_password`, …) or, for a throttled attempt, `locked`.
        public var reason: String?
        /// The event's user (`nil` for an attempt on an account nobody could name).
        public var user: String?
        public init(
            seq: UInt64, at: Timestamp, device: String, method: AttemptMethod,
            outcome: Outcome, reason: String?, user: String? = nil
        ) {
            self.user = user
            self.seq = seq
            self.at = at
            self.device = device
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
        public var user: String?
        /// The seq of the `sign_in_succeeded` that opened it (in its device's log).
        public var seq: UInt64
        public var durationMilliseconds: Int64? {
            end.map { $0.millisecondsSince1970 - start.millisecondsSince1970 }
        }
        public init(
            device: String, start: Timestamp, end: Timestamp?, method: SignInMethod, secondFactor: Bool, endReason: String?,
            user: String? = nil, seq: UInt64 = 0
        ) {
            self.user = user
            self.seq = seq
            self.device = device
            self.start = start
            self.end = end
            self.method = method
            self.secondFactor = secondFactor
            self.endReason = endReason
        }
    }
}
