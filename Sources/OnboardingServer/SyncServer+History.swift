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

    /// `GET /v1/users/{user}/history` and `GET /v1/devices/{device}/history`: one page of the
    /// history the query string asks for (docs/sync-protocol.md lists the parameters).
    ///
    /// - With a device (in the path or `device=`), the query runs on that device's replica, in
    ///   its log order: a user's records through the `by_user` index, or the replica itself (it
    ///   holds one device's log) read from the cursor until the page is settled.
    /// - With only a user, every replica's records of the user (through `by_user`) are merged by
    ///   `(at, device, seq)`, each event id counted once, and the page continues strictly after
    ///   the cursor's `(at, device, seq)`.
    func history(_ request: SyncRequest, user: String?, device pathDevice: String?) throws -> SyncResponse {
        var parameters = SyncServer.query(request.path)
        let fixed = pathDevice == nil ? ["user"] : ["user", "device"]
        if let unknown = parameters.keys.sorted().first(where: { !HistoryQuery.parameterNames.contains($0) || fixed.contains($0) }) {
            let allowed = HistoryQuery.parameterNames.filter { !fixed.contains($0) }
            return failure(400, "malformed", "unknown query parameter \(unknown); this endpoint takes \(allowed.joined(separator: ", "))")
        }
        parameters["user"] = user
        if let pathDevice { parameters["device"] = pathDevice }
        var query: HistoryQuery
        do { query = try HistoryQuery(parameters: parameters, maximumLimit: SyncServer.maximumHistoryLimit) } catch {
            return failure(400, "malformed", "query parameter \(error.parameter): \(error.message)")
        }
        query.limit = query.limit ?? SyncServer.defaultHistoryLimit
        if pathDevice == nil, let device = query.device {
            // Checked like a device in the path: an id no device can have is a client bug (400),
            // not a device that merely has no records (200, empty).
            do { try Event.validate(deviceID: device) } catch {
                return failure(400, "malformed", "query parameter device: device id \(error.message)")
            }
        }

        if let device = query.device, pathDevice != nil, !tokens.isEnrolled(device) {
            return failure(404, "not_found", "device \(device) is not enrolled")
        }
        let found = try historyAcrossDevices(query)
        return json(200, historyBody(found.history, devices: found.devices))
    }

    /// One page of the history `query` asks for, as `GET /v1/users/{user}/history` (and
    /// `…/devices/{device}/history`) serves it: with `query.device`, from that device's replica
    /// (empty when it is not enrolled); with only a user, every replica's records of the user
    /// merged by `(at, device, seq)`. For those who embed the server; `query.limit` is taken as
    /// it is (`nil`: every attempt).
    ///
    /// ```swift
    /// let failed = try server.history(HistoryQuery(user: "alice", outcomes: [.failed])).attempts
    /// ```
    public func history(_ query: HistoryQuery) throws -> History {
        precondition(query.user != nil || query.device != nil, "a server history needs a user or a device")
        return try historyAcrossDevices(query).history
    }

    /// The page, and the enrolled devices whose logs mention the user (or the one device asked).
    private func historyAcrossDevices(_ query: HistoryQuery) throws -> (history: History, devices: [String]) {
        guard let device = query.device else {
            var devices: [String] = []
            let history = try mergedHistory(query, devices: &devices)
            return (history, devices)
        }
        guard tokens.isEnrolled(device) else { return (History(user: query.user), []) }
        return try replicas.withReplica(device) { store in
            let history = try store.history(query)
            guard let user = query.user else { return (history, [device]) }
            return (history, try store.records(user: user, limit: 1).isEmpty ? [] : [device])
        }
    }

    /// The history of `query.user` across every replica, merged in time order; `devices` gets
    /// the enrolled devices whose logs mention the user.
    private func mergedHistory(_ query: HistoryQuery, devices: inout [String]) throws -> History {
        guard let user = query.user else { preconditionFailure("a history across devices needs a user") }
        var records: [Record] = []
        for device in try tokens.enrolledDevices() {
            var mentioned = false
            let found = try replicas.withReplica(device) { try $0.records(user: user) }
            for record in found {
                mentioned = true
                if query.covers(record.event) { records.append(record) }
            }
            if mentioned { devices.append(device) }
        }
        func key(_ record: Record) -> HistoryCursor { HistoryCursor(at: record.event.at, device: record.event.device, seq: record.seq) }
        records.sort { key($0) < key($1) }
        var seen = Set<UUID>()
        var builder = History.Builder(query: query)
        for record in records where seen.insert(record.event.id).inserted {
            if let after = query.after, !(after < key(record)) { continue }
            builder.add(record)
            if builder.isSettled { break }
        }
        return builder.history
    }

    private func historyBody(_ history: History, devices: [String]) -> [UInt8] {
        guard case .object(var members) = history.jsonValue else { preconditionFailure("a history encodes as a JSON object") }
        members.append(.init("devices", .array(devices.sorted().map { .string($0) })))
        return SyncWire.encode(.object(members))
    }
}
