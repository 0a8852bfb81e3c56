import Foundation
import OnboardingModel

/// What an auditor asks of a sign-in history: whose, where, when, which outcomes, factors and
/// methods, and which page. The CLI (`onboard history`) and the sync server's history endpoint
/// build it from the same parameter names with ``init(parameters:maximumLimit:)``.
///
/// ```swift
/// let query = try HistoryQuery(parameters: ["user": "alice", "since": "2026-06-01T00:00:00Z",
///                                           "outcome": "failed,throttled", "limit": "50"])
/// let page = try store.history(query)
/// let next = page.nextCursor.map { cursor in var query = query; query.after = cursor; return query }
/// ```
public struct HistoryQuery: Sendable, Hashable {
    /// `nil`: every user (then `device` must be set: a device's history).
    public var user: String?
    public var device: String?
    /// Inclusive.
    public var since: Timestamp?
    /// Exclusive.
    public var until: Timestamp?
    /// `nil`: every outcome.
    public var outcomes: Set<History.Attempt.Outcome>?
    /// `nil`: both factors.
    public var factors: Set<LockoutFactor>?
    /// Method names (`password`, `passcode`, `biometric`, …, `totp`, `sms`, …); `nil`: every method.
    public var methods: Set<String>?
    /// Attempts per page; `nil`: all.
    public var limit: Int?
    /// Continue after this attempt (the `next_cursor` of the previous page).
    public var after: HistoryCursor?

    public init(
        user: String? = nil, device: String? = nil, since: Timestamp? = nil, until: Timestamp? = nil,
        outcomes: Set<History.Attempt.Outcome>? = nil, factors: Set<LockoutFactor>? = nil,
        methods: Set<String>? = nil, limit: Int? = nil, after: HistoryCursor? = nil
    ) {
        self.user = user
        self.device = device
        self.since = since
        self.until = until
        self.outcomes = outcomes
        self.factors = factors
        self.methods = methods
        self.limit = limit
        self.after = after
    }

    /// The parameter names ``init(parameters:maximumLimit:)`` accepts, as the CLI options and the endpoint's
    /// query string spell them.
    public static let parameterNames = ["user", "device", "since", "until", "outcome", "factor", "method", "limit", "cursor"]

    /// Every method name of the event vocabulary: first factors, then second factors.
    public static let methodNames = SignInMethod.wireNames + SecondFactorMethod.wireNames

    /// Outcome names, with `success` accepted for `succeeded`.
    public static let outcomeNames = History.Attempt.Outcome.allCases.map(\.rawValue)

    /// A page holds at most this many attempts whatever `limit` asks: a page is built in memory.
    public static let maximumLimit = 100_000

    /// Builds a query from text parameters (absent or empty: no filter). `outcome`, `factor` and
    /// `method` take comma-separated lists. Throws a one-line error naming the bad parameter.
    ///
    /// - Parameter maximumLimit: the largest `limit` accepted (a server pages by less).
    public init(parameters: [String: String], maximumLimit: Int = HistoryQuery.maximumLimit) throws(HistoryQueryError) {
        func value(_ name: String) -> String? {
            guard let text = parameters[name], !text.isEmpty else { return nil }
            return text
        }
        func time(_ name: String) throws(HistoryQueryError) -> Timestamp? {
            guard let text = value(name) else { return nil }
            do { return try Timestamp(iso8601: text) } catch {
                throw HistoryQueryError(parameter: name, "\(name) \"\(text)\" is not an ISO 8601 UTC time such as 2026-06-01T00:00:00Z")
            }
        }
        func list<T>(_ name: String, _ known: [String], _ make: (String) -> T?) throws(HistoryQueryError) -> Set<T>? {
            guard let text = value(name) else { return nil }
            var result = Set<T>()
            for item in text.split(separator: ",", omittingEmptySubsequences: false).map({ $0.trimmingCharacters(in: .whitespaces) }) {
                guard let made = make(item) else {
                    throw HistoryQueryError(parameter: name, "unknown \(name) \"\(item)\"; expected one of \(known.joined(separator: ", "))")
                }
                result.insert(made)
            }
            return result
        }
        self.init(user: value("user"), device: value("device"), since: try time("since"), until: try time("until"))
        outcomes = try list("outcome", Self.outcomeNames) { $0 == "success" ? .succeeded : History.Attempt.Outcome(rawValue: $0) }
        factors = try list("factor", LockoutFactor.wireNames) { LockoutFactor(rawValue: $0) }
        methods = try list("method", Self.methodNames) { Self.methodNames.contains($0) ? $0 : nil }
        if let text = value("limit") {
            guard let limit = Int(text), (1...maximumLimit).contains(limit) else {
                throw HistoryQueryError(parameter: "limit", "limit \"\(text)\" must be a whole number from 1 to \(maximumLimit)")
            }
            self.limit = limit
        }
        if let text = value("cursor") {
            guard let cursor = HistoryCursor(token: text) else {
                throw HistoryQueryError(
                    parameter: "cursor", "cursor \"\(text)\" is not a cursor this server or CLI issued; pass next_cursor from the previous page unchanged")
            }
            after = cursor
        }
        try validate()
    }

    /// Checks what no single parameter shows: a time range that ends before it starts, a query
    /// with neither user nor device, a limit below 1.
    public func validate() throws(HistoryQueryError) {
        if let since, let until, until < since {
            throw HistoryQueryError(parameter: "until", "until (\(until.iso8601)) is before since (\(since.iso8601))")
        }
        if user == nil && device == nil {
            throw HistoryQueryError(parameter: "user", "name a user or a device (or both)")
        }
        if let limit, limit < 1 {
            throw HistoryQueryError(parameter: "limit", "limit must be at least 1")
        }
    }

    /// Does an attempt of `factor` by `method` with `outcome` pass the outcome, factor and method filters?
    public func admits(factor: LockoutFactor, method: String, outcome: History.Attempt.Outcome) -> Bool {
        (outcomes?.contains(outcome) ?? true) && (factors?.contains(factor) ?? true) && (methods?.contains(method) ?? true)
    }

    /// Does `event` pass the user, device and time filters (the records a history looks at)?
    public func covers(_ event: Event) -> Bool {
        if let user, event.user != user { return false }
        if let device, event.device != device { return false }
        if let since, event.at < since { return false }
        if let until, event.at >= until { return false }
        return true
    }
}

/// A bad history query parameter: `message` is one line saying what was wrong.
public struct HistoryQueryError: Error, Sendable, Hashable, CustomStringConvertible {
    public var parameter: String
    public var message: String
    public init(parameter: String, _ message: String) {
        self.parameter = parameter
        self.message = message
    }
    public var description: String { message }
}

/// Where a page of history ended: the last attempt listed. A device store continues after its
/// `seq` (log order); the server after `(at, device, seq)` (time order across devices). Both are
/// positions of records that never move, so appends meanwhile neither repeat nor skip an attempt.
///
/// ```swift
/// let cursor = HistoryCursor(at: attempt.at, device: attempt.device, seq: attempt.seq)
/// HistoryCursor(token: cursor.token) == cursor   // true
/// ```
public struct HistoryCursor: Sendable, Hashable, Comparable {
    public var at: Timestamp
    public var device: String
    public var seq: UInt64

    public init(at: Timestamp, device: String, seq: UInt64) {
        self.at = at
        self.device = device
        self.seq = seq
    }

    /// Time order across devices: `(at, device, seq)`.
    public static func < (lhs: HistoryCursor, rhs: HistoryCursor) -> Bool {
        (lhs.at, lhs.device, lhs.seq) < (rhs.at, rhs.device, rhs.seq)
    }

    /// The opaque text form: base64url of `h1:<ms>:<seq>:<device>`, without padding.
    public var token: String {
        let text = "h1:\(at.millisecondsSince1970):\(seq):\(device)"
        return Data(text.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Parses ``token``; `nil` for anything else.
    public init?(token: String) {
        guard token.count <= 512, token.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else { return nil }
        var base64 = token.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64), let text = String(data: data, encoding: .utf8) else { return nil }
        let parts = text.split(separator: ":", maxSplits: 3, omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 4, parts[0] == "h1", let milliseconds = Int64(parts[1]), let seq = UInt64(parts[2]),
            !parts[3].isEmpty
        else { return nil }
        self.init(at: Timestamp(millisecondsSince1970: milliseconds), device: parts[3], seq: seq)
    }
}
