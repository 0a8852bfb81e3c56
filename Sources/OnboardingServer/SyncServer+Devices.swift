import Foundation
import OnboardingModel
import OnboardingStore

extension SyncServer {
    /// 100 devices per page by default, at most 1,000 (about 400 KB of JSON).
    static let defaultDevicesLimit = 100
    static let maximumDevicesLimit = 1000

    /// `GET /v1/devices?limit=N&after=DEVICE`: enrolled devices in byte order of their ids, after
    /// `after`, with what the console shows of each (``DeviceStatus``).
    func devicesPage(_ request: SyncRequest) throws -> SyncResponse {
        let parameters = request.query
        if let unknown = parameters.keys.sorted().first(where: { !["limit", "after"].contains($0) }) {
            return failure(.malformed, "unknown query parameter \(unknown); this endpoint takes limit, after")
        }
        let limit: Int
        switch Self.boundedInteger(parameters["limit"], name: "limit", in: 1...Self.maximumDevicesLimit, default: Self.defaultDevicesLimit) {
        case .failure(let refusal): return refusal.response
        case .success(let value): limit = value
        }
        var after: String?
        if let text = parameters["after"], !text.isEmpty {
            do { try Event.validate(deviceID: text) } catch {
                return failure(.malformed, "query parameter after: device id \(error.message)")
            }
            after = text
        }
        // One more than the page: whether there is a next one.
        let found = try storage.deviceStatuses(after: after, limit: limit + 1)
        let page = Array(found.prefix(limit))
        return json(
            200,
            SyncWire.encode(
                .object([
                    .init("devices", .array(page.map(\.jsonValue))),
                    .init("next_after", found.count > limit ? .string(page.last!.device) : .null)
                ])))
    }

    /// `GET /v1/devices/{device}/audit`: the device's entry of `GET /v1/audit`.
    func deviceAudit(_ device: String) throws -> SyncResponse {
        guard let audit = try storage.audit(device: device) else { return failure(.notFound, "device \(device) is not enrolled") }
        return json(200, SyncWire.encode(audit.jsonValue))
    }

    /// Whether `id` is a token id as `GET /v1/devices` lists them: 16 lowercase hex digits.
    static func isTokenID(_ id: String) -> Bool {
        id.utf8.count == 16 && id.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// `DELETE /v1/devices/{device}/tokens/{id}`: revokes that token (its id is the first 16 hex
    /// digits of its hash, as `GET /v1/devices` lists it) and records the action.
    func revokeToken(device: String, id: String, actor: String) throws -> SyncResponse {
        guard Self.isTokenID(id) else {
            return failure(.malformed, "the token id in the path must be 16 lowercase hex digits, as GET /v1/devices lists it; got \(ErrorEcho.quoted(id))")
        }
        guard try storage.revokeToken(device: device, id: id) > 0 else {
            return failure(.notFound, "no token \(id) for device \(device)")
        }
        _ = try storage.record(ServerAction(kind: .tokenRevoked, at: options.clock(), actor: actor, device: device, token: id))
        return SyncResponse(status: 204)
    }
}
