import Foundation
import OnboardingModel
import OnboardingProjections

/// The simulator's own answer to a history query: a brute-force filter over every record it
/// knows a store holds, written from docs/sync-protocol.md (§ history) without the code under
/// test's builder or paging. The store's and the server's pages, followed to the end, must add up
/// to exactly this.
///
/// ```swift
/// let expected = HistoryModel.answer(query, records: readings)   // readings in the page order
/// ```
enum HistoryModel {
    /// One listed attempt, as both the JSON of the server and the store's ``History`` give it.
    struct Attempt: Hashable, CustomStringConvertible {
        var seq: UInt64
        var at: String
        var device: String
        var factor: String
        var method: String
        var outcome: String
        var reason: String?
        var user: String?
        var description: String { "\(device)#\(seq) \(at) \(factor)/\(method) \(outcome)\(reason.map { " (\($0))" } ?? "")" }
    }

    /// One listed session.
    struct Session: Hashable, CustomStringConvertible {
        var seq: UInt64
        var device: String
        var start: String
        var end: String?
        var method: String
        var secondFactor: Bool
        var endReason: String?
        var user: String?
        var description: String { "\(device)#\(seq) \(start)…\(end ?? "open") (\(endReason ?? "-"))" }
    }

    struct Answer: Hashable {
        var attempts: [Attempt] = []
        var sessions: [Session] = []
    }

    /// A record as it reads in the store that holds it, with its seq there.
    struct Reading {
        var seq: UInt64
        var event: Event
    }

    /// The whole answer (every page) to `query` over `records`, which are in the order the
    /// history pages by (seq on a device; `(at, device, seq)` on the server).
    static func answer(_ query: HistoryQuery, records: [Reading]) -> Answer {
        var answer = Answer()
        // Per device, the listed session that is still open (its index in `answer.sessions`).
        var open: [String: Int] = [:]
        func close(_ device: String, at: Timestamp, reason: String) {
            guard let index = open.removeValue(forKey: device) else { return }
            answer.sessions[index].end = at.iso8601
            answer.sessions[index].endReason = reason
        }
        for record in records {
            let event = record.event
            if let user = query.user, event.user != user { continue }
            if let device = query.device, event.device != device { continue }
            if let since = query.since, event.at < since { continue }
            if let until = query.until, !(event.at < until) { continue }
            if case .signedOut(let reason) = event.payload {
                close(event.device, at: event.at, reason: reason.rawValue)
                continue
            }
            guard let (factor, method, outcome, reason) = classify(event.payload) else { continue }
            if case .signInSucceeded = event.payload { close(event.device, at: event.at, reason: "replaced") }
            let admitted =
                (query.outcomes.map { $0.contains(outcome) } ?? true)
                && (query.factors.map { $0.contains(factor) } ?? true)
                && (query.methods.map { $0.contains(method) } ?? true)
            guard admitted else { continue }
            answer.attempts.append(
                Attempt(
                    seq: record.seq, at: event.at.iso8601, device: event.device, factor: factor.rawValue,
                    method: method, outcome: outcome.rawValue, reason: reason, user: event.user))
            if case let .signInSucceeded(first, secondFactor, _) = event.payload {
                open[event.device] = answer.sessions.count
                answer.sessions.append(
                    Session(
                        seq: record.seq, device: event.device, start: event.at.iso8601, end: nil, method: first.rawValue,
                        secondFactor: secondFactor, endReason: nil, user: event.user))
            }
        }
        return answer
    }

    /// What kind of attempt a payload is: sign-in attempts count under the password (first)
    /// factor whatever their method, codes under the second; a throttled attempt is `locked`.
    private static func classify(_ payload: Payload) -> (LockoutFactor, String, History.Attempt.Outcome, String?)? {
        switch payload {
        case let .signInFailed(method, reason, _): (.password, method.rawValue, .failed, reason.rawValue)
        case let .signInThrottled(method, _, _): (.password, method.rawValue, .throttled, "locked")
        case let .signInSucceeded(method, _, _): (.password, method.rawValue, .succeeded, nil)
        case .secondFactorFailed(let method, _): (.secondFactor, method.rawValue, .failed, nil)
        case .secondFactorSucceeded(let method): (.secondFactor, method.rawValue, .succeeded, nil)
        default: nil
        }
    }

    // MARK: What the code under test answered

    static func rows(of history: History) -> Answer {
        Answer(
            attempts: history.attempts.map { attempt in
                Attempt(
                    seq: attempt.seq, at: attempt.at.iso8601, device: attempt.device, factor: attempt.factor.rawValue,
                    method: attempt.method.name, outcome: attempt.outcome.rawValue, reason: attempt.reason, user: attempt.user)
            },
            sessions: history.sessions.map { session in
                Session(
                    seq: session.seq, device: session.device, start: session.start.iso8601, end: session.end?.iso8601,
                    method: session.method.rawValue, secondFactor: session.secondFactor, endReason: session.endReason, user: session.user)
            })
    }

    /// One page of the server's JSON, read with Foundation's parser (not the code under test's),
    /// with its `next_cursor` and `devices`.
    static func rows(ofJSON body: [UInt8]) -> (page: Answer, nextCursor: String?, devices: [String])? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
            let attempts = object["attempts"] as? [[String: Any]], let sessions = object["sessions"] as? [[String: Any]],
            let devices = object["devices"] as? [String]
        else { return nil }
        func text(_ value: Any?) -> String? { value as? String }
        func number(_ value: Any?) -> UInt64? { (value as? NSNumber)?.uint64Value }
        var page = Answer()
        for item in attempts {
            guard let seq = number(item["seq"]), let at = text(item["at"]), let device = text(item["device"]), let factor = text(item["factor"]),
                let method = text(item["method"]), let outcome = text(item["outcome"])
            else { return nil }
            page.attempts.append(
                Attempt(
                    seq: seq, at: at, device: device, factor: factor, method: method, outcome: outcome,
                    reason: text(item["reason"]), user: text(item["user"])))
        }
        for item in sessions {
            guard let seq = number(item["seq"]), let device = text(item["device"]), let start = text(item["start"]),
                let method = text(item["method"]), let secondFactor = item["second_factor"] as? Bool
            else { return nil }
            page.sessions.append(
                Session(
                    seq: seq, device: device, start: start, end: text(item["end"]), method: method,
                    secondFactor: secondFactor, endReason: text(item["end_reason"]), user: text(item["user"])))
        }
        return (page, text(object["next_cursor"]), devices)
    }

    /// The first difference between two answers, in words.
    static func difference(_ expected: Answer, _ actual: Answer) -> String {
        if let index = zip(expected.attempts, actual.attempts).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset {
            return "attempt \(index + 1): expected \(expected.attempts[index]), got \(actual.attempts[index])"
        }
        if expected.attempts.count != actual.attempts.count {
            return
                "expected \(expected.attempts.count) attempts, got \(actual.attempts.count) (first extra: \(expected.attempts.count > actual.attempts.count ? expected.attempts[actual.attempts.count].description : actual.attempts[expected.attempts.count].description))"
        }
        if let index = zip(expected.sessions, actual.sessions).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset {
            return "session \(index + 1): expected \(expected.sessions[index]), got \(actual.sessions[index])"
        }
        return "expected \(expected.sessions.count) sessions, got \(actual.sessions.count)"
    }
}
