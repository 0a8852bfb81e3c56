import Foundation
import OnboardingModel
import OnboardingProjections
import OnboardingServer
import OnboardingStore

extension Simulator {
    /// One query of the server's history endpoint and one of a device's history, drawn by the
    /// seed, each followed page by page to the end and compared with ``HistoryModel``.
    func checkHistories() throws {
        try checkServerHistory()
        try checkDeviceHistory()
    }

    /// Filters drawn by the seed (none, a time range, outcomes, factors, methods, a page size).
    private func drawQuery(user: String?, device: String?) -> HistoryQuery {
        var query = HistoryQuery(user: user, device: device)
        if chance(300) {
            let now = clock.nowMilliseconds
            let since = now - random.between(0...7_200_000)
            query.since = Timestamp(millisecondsSince1970: since)
            if chance(500) { query.until = Timestamp(millisecondsSince1970: since + random.between(0...3_600_000)) }
        }
        if chance(300) {
            let all = History.Attempt.Outcome.allCases
            let chosen = Set(all.filter { _ in chance(500) })
            query.outcomes = chosen.isEmpty ? [all[random.below(all.count)]] : chosen
        }
        if chance(200) { query.factors = [LockoutFactor.allCases[random.below(LockoutFactor.allCases.count)]] }
        if chance(100) { query.methods = chance(500) ? ["password"] : ["passcode", "biometric", "totp"] }
        if chance(500) { query.limit = 1 + random.below(8) }
        return query
    }

    /// A user to ask about: one any device knows by name, or the pseudonym a device's replica
    /// gives a forgotten user.
    private func drawUser() -> String? {
        let known = Set(devices.flatMap { $0.pseudonyms.keys }).sorted()
        guard !known.isEmpty else { return nil }
        let user = known[random.below(known.count)]
        if chance(250), let device = pick({ $0.isEnrolled && $0.pseudonyms[user] != nil }) {
            return device.pseudonyms[user]!.literal
        }
        return user
    }

    private func checkServerHistory() throws {
        // One query in ten is a device's history of every user (`GET /v1/devices/{device}/history`).
        if chance(100), let device = pick({ $0.isEnrolled }) { return try checkServerDeviceHistory(device) }
        guard let user = drawUser() else { return }
        let deviceFilter = chance(150) ? pick({ $0.isEnrolled })?.id : nil
        let query = drawQuery(user: user, device: deviceFilter)
        // The model: the records the replicas hold, as they read there — across devices in
        // (at, device, seq) order, on one device's replica in its log order.
        let readings: [HistoryModel.Reading]
        if let deviceFilter, let device = devices.first(where: { $0.id == deviceFilter }) {
            readings = device.replicaView.enumerated().map { HistoryModel.Reading(seq: UInt64($0.offset + 1), event: $0.element) }
        } else {
            readings = mergedReadings()
        }
        // The devices whose replica holds records that read as the user there: by name while
        // live, by the pseudonym once forgotten (a forget cuts the name's link to the device).
        var mentioning: Set<String> = []
        for device in devices where device.isEnrolled && (deviceFilter == nil || device.id == deviceFilter) {
            if device.replicaView.contains(where: { $0.user == user }) { mentioning.insert(device.id) }
        }
        let expected = HistoryModel.answer(query, records: readings)

        var actual = HistoryModel.Answer()
        var cursor: String?
        var pages = 0
        var devicesAnswered: [String] = []
        repeat {
            pages += 1
            guard pages <= Self.pageBound(query, expected, serverDefault: true) else {
                throw failure(
                    "history",
                    "the server's history of \(UserRef.isLiteral(user) ? "a pseudonym" : user) did not end after \(pages - 1) pages; \(expected.attempts.count) attempts match"
                )
            }
            let response = server.handle(
                SyncRequest(
                    method: "GET", path: Self.historyPath(query, cursor: cursor),
                    headers: ["authorization": "Bearer \(auditorToken)"]))
            guard !String(decoding: response.body, as: UTF8.self).contains(directory) else {
                throw failure("no paths in answers", "the server's history answer names a path of its data directory")
            }
            guard response.status == 200, let page = HistoryModel.rows(ofJSON: response.body) else {
                throw failure(
                    "history", "the server answered \(response.status) to a history query: \(String(decoding: response.body.prefix(300), as: UTF8.self))")
            }
            if let limit = query.limit, page.page.attempts.count > limit || (page.nextCursor != nil && page.page.attempts.count != limit) {
                throw failure("history", "a page of \(page.page.attempts.count) attempts for limit \(limit) (next cursor: \(page.nextCursor != nil))")
            }
            actual.attempts += page.page.attempts
            actual.sessions += page.page.sessions
            devicesAnswered = page.devices
            cursor = page.nextCursor
        } while cursor != nil
        statistics.historyQueries += 1
        guard actual == expected else {
            throw failure(
                "history",
                "the server's history of \(UserRef.isLiteral(user) ? "a pseudonym" : user) (\(Self.describe(query))) differs from a filter over the replicas' records: \(HistoryModel.difference(expected, actual))"
            )
        }
        // Without a device filter, the devices whose records read as the user; with one, that device when they do.
        let expectedDevices = mentioning.sorted()
        guard devicesAnswered == expectedDevices else {
            throw failure(
                "history",
                "the server names devices \(devicesAnswered) for \(UserRef.isLiteral(user) ? "a pseudonym" : user); the replicas that hold the user's records are \(expectedDevices)"
            )
        }
    }

    /// `GET /v1/devices/{device}/history` (every user, the replica's log order) against the model.
    private func checkServerDeviceHistory(_ device: SimulatedDevice) throws {
        let query = drawQuery(user: nil, device: device.id)
        let readings = device.replicaView.enumerated().map { HistoryModel.Reading(seq: UInt64($0.offset + 1), event: $0.element) }
        let expected = HistoryModel.answer(query, records: readings)
        var actual = HistoryModel.Answer()
        var cursor: String?
        var pages = 0
        repeat {
            pages += 1
            guard pages <= Self.pageBound(query, expected, serverDefault: true) else {
                throw failure("history", "the server's history of \(device.id) did not end after \(pages - 1) pages; \(expected.attempts.count) attempts match")
            }
            let path = Self.historyPath(query, cursor: cursor)
            let response = server.handle(SyncRequest(method: "GET", path: path, headers: ["authorization": "Bearer \(auditorToken)"]))
            guard response.status == 200, let page = HistoryModel.rows(ofJSON: response.body) else {
                throw failure("history", "the server answered \(response.status) to \(path): \(String(decoding: response.body.prefix(300), as: UTF8.self))")
            }
            actual.attempts += page.page.attempts
            actual.sessions += page.page.sessions
            cursor = page.nextCursor
        } while cursor != nil
        statistics.historyQueries += 1
        guard actual == expected else {
            throw failure(
                "history",
                "the server's history of \(device.id) (\(Self.describe(query))) differs from a filter over its replica's records: \(HistoryModel.difference(expected, actual))"
            )
        }
    }

    /// Every replica's records, as they read there, in (at, device, seq) order (kept until a
    /// replica changes).
    private func mergedReadings() -> [HistoryModel.Reading] {
        if let mergedReplicaReadings { return mergedReplicaReadings }
        var readings: [HistoryModel.Reading] = []
        for device in devices where device.isEnrolled {
            readings += device.replicaView.enumerated().map { HistoryModel.Reading(seq: UInt64($0.offset + 1), event: $0.element) }
        }
        readings.sort { ($0.event.at, $0.event.device, $0.seq) < ($1.event.at, $1.event.device, $1.seq) }
        mergedReplicaReadings = readings
        return readings
    }

    private func checkDeviceHistory() throws {
        guard let device = pick({ _ in true }) else { return }
        let user = chance(300) ? nil : drawUser()
        var query = drawQuery(user: user, device: user == nil ? device.id : nil)
        let forgotten = device.forgottenOnDevice
        let readings = device.log.dropFirst(Int(device.prunedThrough)).map { record in
            HistoryModel.Reading(seq: record.seq, event: device.expectedReading(of: record, forgotten: forgotten))
        }
        let expected = HistoryModel.answer(query, records: readings)
        var actual = HistoryModel.Answer()
        var pages = 0
        repeat {
            pages += 1
            guard pages <= Self.pageBound(query, expected) else {
                throw failure("history", "the history of \(device.id) did not end after \(pages - 1) pages; \(expected.attempts.count) attempts match")
            }
            let page = try expect("reading the history of \(device.id)") { try device.store.history(query) }
            let rows = HistoryModel.rows(of: page)
            actual.attempts += rows.attempts
            actual.sessions += rows.sessions
            query.after = page.nextCursor
        } while query.after != nil
        statistics.historyQueries += 1
        guard actual == expected else {
            throw failure(
                "history",
                "the history of \(user.map { UserRef.isLiteral($0) ? "a pseudonym" : $0 } ?? "every user") on \(device.id) (\(Self.describe(query))) differs from a filter over its records: \(HistoryModel.difference(expected, actual))"
            )
        }
    }

    /// The server's page without a `limit` (docs/sync-protocol.md § history).
    static let serverDefaultHistoryLimit = 1000

    /// The pages a history may take: every full page, one more for the rest, one to spare.
    static func pageBound(_ query: HistoryQuery, _ expected: HistoryModel.Answer, serverDefault: Bool = false) -> Int {
        guard let limit = query.limit ?? (serverDefault ? serverDefaultHistoryLimit : nil) else { return 1 }
        return expected.attempts.count / limit + 2
    }

    static func historyPath(_ query: HistoryQuery, cursor: String?) -> String {
        var parameters: [String] = []
        func add(_ name: String, _ value: String?) {
            if let value { parameters.append("\(name)=\(SyncPaths.percentEncoded(value))") }
        }
        // A user's history takes the device as a filter; a device's history names it in the path.
        if query.user != nil { add("device", query.device) }
        add("since", query.since?.iso8601)
        add("until", query.until?.iso8601)
        add("outcome", query.outcomes.map { $0.map(\.rawValue).sorted().joined(separator: ",") })
        add("factor", query.factors.map { $0.map(\.rawValue).sorted().joined(separator: ",") })
        add("method", query.methods.map { $0.sorted().joined(separator: ",") })
        add("limit", query.limit.map(String.init))
        add("cursor", cursor)
        let path = query.user.map { SyncPaths.history(user: $0) } ?? SyncPaths.history(device: query.device!)
        return parameters.isEmpty ? path : path + "?" + parameters.joined(separator: "&")
    }

    static func describe(_ query: HistoryQuery) -> String {
        var parts: [String] = []
        if let device = query.device { parts.append("device \(device)") }
        if let since = query.since { parts.append("since \(since.iso8601)") }
        if let until = query.until { parts.append("until \(until.iso8601)") }
        if let outcomes = query.outcomes { parts.append("outcomes " + outcomes.map(\.rawValue).sorted().joined(separator: ",")) }
        if let factors = query.factors { parts.append("factors " + factors.map(\.rawValue).sorted().joined(separator: ",")) }
        if let methods = query.methods { parts.append("methods " + methods.sorted().joined(separator: ",")) }
        if let limit = query.limit { parts.append("pages of \(limit)") }
        return parts.isEmpty ? "no filter" : parts.joined(separator: ", ")
    }
}
