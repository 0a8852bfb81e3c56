import Foundation
import OnboardingModel
import OnboardingProjections
import OnboardingStore

extension SyncServer {
    /// Attempts per page when the request gives no `limit`: a page is built in memory and sent
    /// in one response.
    static let defaultHistoryLimit = 1000
    /// The largest `limit` a request may ask for (a page of 10,000 attempts is about 2 MB of JSON).
    static let maximumHistoryLimit = 10_000
    /// The history endpoints' parameters beyond a ``HistoryQuery``'s.
    static let pageParameterNames = ["order", "wait"]

    /// Which end of the history a page starts from.
    enum HistoryOrder: String {
        case oldest, newest

        /// The `order` parameter: empty or absent is `oldest`.
        init?(parameter: String?) {
            switch parameter ?? "" {
            case "", "oldest": self = .oldest
            case "newest": self = .newest
            default: return nil
            }
        }
    }

    /// A history page as the endpoints answer it.
    struct HistoryPage {
        var history: History
        var devices: [String]
        var actions: [ServerAction]
    }

    /// The `query` of a history-like endpoint (history, counts, export): `names` are the
    /// parameters it takes besides the path's user or device; a refusal is the 400 to answer.
    func historyQuery(
        _ request: SyncRequest, user: String?, device pathDevice: String?, extra: [String],
        takesPages: Bool
    ) -> Result<(HistoryQuery, [String: String]), Refusal> {
        var parameters = request.query
        let fixed = (pathDevice == nil ? ["user"] : ["user", "device"]) + (takesPages ? [] : ["limit", "cursor"])
        let allowed = HistoryQuery.parameterNames.filter { !fixed.contains($0) } + extra
        if let unknown = parameters.keys.sorted().first(where: { !allowed.contains($0) }) {
            return .failure(
                Refusal(response: failure(.malformed, "unknown query parameter \(unknown); this endpoint takes \(allowed.joined(separator: ", "))")))
        }
        var others: [String: String] = [:]
        for name in extra { others[name] = parameters.removeValue(forKey: name) }
        parameters["user"] = user
        if let pathDevice { parameters["device"] = pathDevice }
        let query: HistoryQuery
        do { query = try HistoryQuery(parameters: parameters, maximumLimit: SyncServer.maximumHistoryLimit) } catch {
            return .failure(Refusal(response: failure(.malformed, "query parameter \(error.parameter): \(error.message)")))
        }
        if pathDevice == nil, let device = query.device {
            // Checked like a device in the path: an id no device can have is a client bug (400),
            // not a device that merely has no records (200, empty).
            do { try Event.validate(deviceID: device) } catch {
                return .failure(Refusal(response: failure(.malformed, "query parameter device: device id \(error.message)")))
            }
        }
        return .success((query, others))
    }

    /// `GET /v1/users/{user}/history` and `GET /v1/devices/{device}/history`: one page of the
    /// history the query string asks for (docs/sync-protocol.md lists the parameters).
    ///
    /// - With a device (in the path or `device=`), the query runs on that device's log, in its
    ///   log order; with only a user, every device's records of the user merged by `(at, device,
    ///   seq)`, each event id counted once, the page continuing strictly after the cursor.
    /// - `order=newest` pages from the other end (``newestFirstPage(_:)``).
    /// - `wait=N` (with `order=oldest` and a cursor): when the page would be empty, a poll that
    ///   waits up to N s for a newer attempt (``PollWaiters``).
    func historyReply(_ request: SyncRequest, user: String?, device pathDevice: String?) throws -> Reply {
        let (query, others): (HistoryQuery, [String: String])
        switch historyQuery(request, user: user, device: pathDevice, extra: Self.pageParameterNames, takesPages: true) {
        case .failure(let refusal): return .now(refusal.response)
        case .success(let parsed): (query, others) = parsed
        }
        var page = query
        page.limit = query.limit ?? SyncServer.defaultHistoryLimit
        guard let order = HistoryOrder(parameter: others["order"]) else {
            return .now(failure(.malformed, "query parameter order: order \(ErrorEcho.quoted(others["order"] ?? "")) must be oldest or newest"))
        }
        var wait = 0
        // Absent is 0; empty is no number (as the document's integer says).
        if let text = others["wait"] {
            guard let seconds = Int(text), (0...SyncLimits.maximumWaitSeconds).contains(seconds) else {
                return .now(
                    failure(
                        .malformed,
                        "query parameter wait: wait \(ErrorEcho.quoted(text)) must be a whole number of seconds from 0 to \(SyncLimits.maximumWaitSeconds)"))
            }
            wait = seconds
        }
        if wait > 0 && order == .newest {
            return .now(failure(.malformed, "query parameter wait: a poll waits for newer attempts, so it needs order=oldest"))
        }
        if wait > 0 && page.after == nil {
            return .now(
                failure(.malformed, "query parameter wait: a poll needs a cursor (the next_cursor of the newest attempt shown, or of a page read to its end)"))
        }
        if let device = page.device, pathDevice != nil, !(try storage.isEnrolled(device)) {
            return .now(failure(.notFound, "device \(device) is not enrolled"))
        }
        let generation = polls.generation
        let first = try historyPage(page, order: order)
        let held = min(wait, options.maximumPollWaitSeconds)
        guard held > 0, first.history.attempts.isEmpty else { return .now(json(200, historyBody(first))) }
        let polled = page
        let poll = HistoryPoll(
            deadline: .now + .seconds(held), seenGeneration: generation,
            check: { [self] in
                do {
                    let again = try historyPage(polled, order: .oldest)
                    return again.history.attempts.isEmpty ? nil : json(200, historyBody(again))
                } catch {
                    return failure(for: error)
                }
            },
            timeout: { [self] in
                do { return json(200, historyBody(try historyPage(polled, order: .oldest))) } catch { return failure(for: error) }
            })
        return .later(poll)
    }

    /// One page, its devices and the actions about its user in the page's span.
    func historyPage(_ query: HistoryQuery, order: HistoryOrder) throws -> HistoryPage {
        var history: History
        var devices: [String]
        switch order {
        case .oldest:
            (history, devices) = try storage.history(query)
        case .newest:
            history = try newestFirstPage(query)
            devices = try devicesHolding(query)
        }
        devices.sort()
        let actions = query.user == nil ? [] : try actionsInSpan(of: history, query: query, order: order)
        history.user = query.user
        return HistoryPage(history: history, devices: devices, actions: actions)
    }

    /// The devices a history lists: with a device, it alone (when it holds records that read as
    /// the user, for a user's history); else every device whose records read as the user.
    private func devicesHolding(_ query: HistoryQuery) throws -> [String] {
        var probe = query
        probe.limit = 1
        probe.after = nil
        probe.outcomes = nil
        return try storage.history(probe).devices
    }

    /// The actions about `query.user` between the page's ends in the fold order `(at, "", seq)`
    /// (docs/sync-protocol.md § Server actions): after the cursor (or from `since`) up to the
    /// page's last attempt when there is a next page, else to `until` — mirrored for newest first,
    /// so the pages of a history share out its actions with none twice. A factor filter keeps
    /// the actions of those factors and those of every factor.
    private func actionsInSpan(of history: History, query: HistoryQuery, order: HistoryOrder) throws -> [ServerAction] {
        guard let user = query.user else { return [] }
        let last = history.nextCursor
        return try storage.actions(ofUser: user).filter { action in
            let position = action.position
            if let since = query.since, action.at < since { return false }
            if let until = query.until, action.at >= until { return false }
            if let factors = query.factors, let factor = action.factor, !factors.contains(factor) { return false }
            switch order {
            case .oldest:
                if let after = query.after, !(after < position) { return false }
                if let last, last < position { return false }
            case .newest:
                if let before = query.after, !(position < before) { return false }
                if let last, position < last { return false }
            }
            return true
        }
    }

    /// One page of `query` newest first: attempts from the newest (or from before the cursor)
    /// going back, the sessions the listed successes opened (newest first too), and a
    /// `next_cursor` that continues with older attempts. A session's end is the nearest later
    /// `sign_in_succeeded` or `signed_out` on its device, as oldest-first pages find it: seen on
    /// the way down, or — for a page after the first — looked up after the cursor.
    func newestFirstPage(_ query: HistoryQuery) throws -> History {
        let limit = query.limit ?? SyncServer.defaultHistoryLimit
        var attempts: [History.Attempt] = []
        var sessions: [History.SignInSession] = []
        var hasMore = false
        /// Per device, the nearest later event that ends a session, seen so far going down.
        var laterEnd: [String: (at: Timestamp, reason: String)] = [:]
        /// Per device, the listed sessions no later record of the scan ended.
        var open: [String: [Int]] = [:]
        try storage.forEachRecord(query, newestFirst: true) { record in
            let event = record.event
            if let attempt = History.attempt(of: record) {
                let admitted = query.admits(factor: attempt.factor, method: attempt.method.name, outcome: attempt.outcome)
                if admitted {
                    guard attempts.count < limit else {
                        hasMore = true
                        return false
                    }
                    attempts.append(attempt)
                }
                if case let .signInSucceeded(method, secondFactor, _) = event.payload {
                    if admitted {
                        let end = laterEnd[event.device]
                        if end == nil { open[event.device, default: []].append(sessions.count) }
                        sessions.append(
                            History.SignInSession(
                                device: event.device, start: event.at, end: end?.at, method: method,
                                secondFactor: secondFactor, endReason: end?.reason, user: event.user, seq: record.seq))
                    }
                    laterEnd[event.device] = (event.at, History.replacedReason)
                }
            } else if case .signedOut(let reason) = event.payload {
                laterEnd[event.device] = (event.at, reason.rawValue)
            }
            return true
        }
        if query.after != nil, !open.isEmpty {
            // Their ends, if any, are in what a newer page holds (from the cursor's own record
            // on): the first ending event after each open session on its device, read forward
            // from the oldest of them — what lies before the cursor was read on the way down.
            // In the page's order: time across devices, seq on one device.
            func precedes(_ left: HistoryCursor, _ right: HistoryCursor) -> Bool { query.device == nil ? left < right : left.seq < right.seq }
            var starts: [String: HistoryCursor] = [:]
            for (device, indices) in open {
                starts[device] = indices.map { HistoryCursor(at: sessions[$0].start, device: device, seq: sessions[$0].seq) }.max(by: precedes)
            }
            var after = query
            after.after = starts.values.min(by: precedes)
            try storage.forEachRecord(after, newestFirst: false) { record in
                let event = record.event
                let reason: String? =
                    switch event.payload {
                    case .signInSucceeded: History.replacedReason
                    case .signedOut(let reason): reason.rawValue
                    default: nil
                    }
                guard let reason, let start = starts[event.device],
                    precedes(start, HistoryCursor(at: event.at, device: event.device, seq: record.seq))
                else { return true }
                if let indices = open.removeValue(forKey: event.device) {
                    for index in indices {
                        sessions[index].end = event.at
                        sessions[index].endReason = reason
                    }
                }
                return !open.isEmpty
            }
        }
        let next = hasMore ? attempts.last.map { HistoryCursor(at: $0.at, device: $0.device, seq: $0.seq) } : nil
        return History(user: query.user, attempts: attempts, sessions: sessions, nextCursor: next)
    }

    /// One page of the history `query` asks for, as `GET /v1/users/{user}/history` (and
    /// `…/devices/{device}/history`) serves it: with `query.device`, from that device's log
    /// (empty when it is not enrolled); with only a user, every device's records of the user
    /// merged by `(at, device, seq)`. For those who embed the server; `query.limit` is taken as
    /// it is (`nil`: every attempt).
    ///
    /// ```swift
    /// let failed = try server.history(HistoryQuery(user: "alice", outcomes: [.failed])).attempts
    /// ```
    public func history(_ query: HistoryQuery) throws -> History {
        precondition(query.user != nil || query.device != nil, "a server history needs a user or a device")
        return try storage.history(query).history
    }

    /// An attempt as the history answer and the JSONL export write it: as `onboard history
    /// --format json` does, plus `erased` (its user reads as a pseudonym) and `cursor`, its own
    /// position as a cursor: a page continued from it starts right after (oldest first) or
    /// before (newest first) it, and a poll (`wait=`) from the newest attempt shown waits for
    /// the next one.
    static func attemptValue(_ attempt: History.Attempt) -> JSONValue {
        guard case .object(var members) = attempt.jsonValue else { preconditionFailure("an attempt encodes as a JSON object") }
        members.append(.init("erased", .bool(attempt.user.map(UserRef.isLiteral) ?? false)))
        members.append(.init("cursor", .string(HistoryCursor(at: attempt.at, device: attempt.device, seq: attempt.seq).token)))
        return .object(members)
    }

    /// `{"user","attempts","sessions","next_cursor","actions","devices"}`.
    func historyBody(_ page: HistoryPage) -> [UInt8] {
        let history = page.history
        return SyncWire.encode(
            .object([
                .init("user", history.user.map { .string($0) } ?? .null),
                .init("attempts", .array(history.attempts.map(Self.attemptValue))),
                .init("sessions", .array(history.sessions.map(\.jsonValue))),
                .init("next_cursor", history.nextCursor.map { .string($0.token) } ?? .null),
                .init("actions", .array(page.actions.map(\.jsonValue))),
                .init("devices", .array(page.devices.map { .string($0) }))
            ]))
    }
}
