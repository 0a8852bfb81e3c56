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

        if let device = query.device, pathDevice != nil, !(try storage.isEnrolled(device)) {
            return failure(404, "not_found", "device \(device) is not enrolled")
        }
        let found = try storage.history(query)
        return json(200, historyBody(found.history, devices: found.devices))
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

    private func historyBody(_ history: History, devices: [String]) -> [UInt8] {
        guard case .object(var members) = history.jsonValue else { preconditionFailure("a history encodes as a JSON object") }
        members.append(.init("devices", .array(devices.sorted().map { .string($0) })))
        return SyncWire.encode(.object(members))
    }
}
