import Foundation
import OnboardingModel
import OnboardingProjections
import OnboardingStore

extension SyncServer {
    /// 4 KiB: a factor and 200 characters of reason, escaped, with room to spare.
    static let maximumActionBodyBytes = 4096
    /// 100 actions per page by default, at most 1,000.
    static let defaultActionsLimit = 100
    static let maximumActionsLimit = 1000

    /// `POST /v1/users/{user}/lockout/clear` with `{"factor": "password"|"second_factor"|null,
    /// "reason": "…"}`: clears the user's global lockout for that factor (every factor for
    /// null) from now on, as an audited server action.
    func clearLockout(_ request: SyncRequest, user: String, actor: String) throws -> SyncResponse {
        if let refusal = checkJSON(request) { return refusal }
        guard request.body.count <= Self.maximumActionBodyBytes else {
            return failure(.tooLarge, "the body is \(request.body.count) bytes; a clear's is at most \(Self.maximumActionBodyBytes)")
        }
        let body: JSONValue
        do { body = try JSONValue.parse(bytes: request.body) } catch {
            return failure(.malformed, "body: \(error)")
        }
        let members: JSONValue.Members
        switch body.strictObject(allowed: ["factor", "reason"]) {
        case .members(let found): members = found
        case .notAnObject(let kind): return failure(.malformed, "the body must be an object {\"factor\", \"reason\"}, not \(kind)")
        case .unknownKey(let key): return failure(.malformed, "body has unknown member \(ErrorEcho.quoted(key)) (allowed: factor, reason)")
        }
        var factor: LockoutFactor?
        switch members["factor"] {
        case nil, .null?: factor = nil
        case .string(let text)?:
            guard let known = LockoutFactor(rawValue: text) else {
                return failure(.malformed, "body.factor \(ErrorEcho.quoted(text)) must be password, second_factor or null (every factor)")
            }
            factor = known
        case let other?: return failure(.malformed, "body.factor must be a string or null, not \(other.kindName)")
        }
        guard case .string(let reason)? = members["reason"] else {
            return failure(.malformed, "body.reason is required: 1 to \(ServerAction.maximumReasonCharacters) characters saying why (a ticket, a call)")
        }
        if let refusal = ServerAction.reasonRefusal(reason) { return failure(.malformed, refusal) }
        let action = try storage.record(
            ServerAction(
                kind: .lockoutCleared, at: options.clock(), actor: actor, user: user, factor: factor,
                reason: reason))
        return json(200, SyncWire.encode(.object([.init("action", action.jsonValue)])))
    }

    /// `GET /v1/token`: what the presented token may do, `{"role","device","id","actor","expires_at"}` — the
    /// device for a device token, the token's id (as a device's token list shows it), and the
    /// actor the server's actions name an admin by. Any valid token may ask; the console tells an
    /// auditor from an admin by it.
    func tokenDescription(_ grant: TokenGrant, token: String) -> JSONValue {
        .object([
            .init("role", .string(grant.role.rawValue)), .init("device", grant.device.map { .string($0) } ?? .null),
            .init("id", .string(TokenStore.tokenID(of: token))),
            .init("actor", grant.role == .admin ? .string(ServerAction.actor(adminToken: token)) : .null),
            .init("expires_at", grant.expiresAt.map { .string($0.iso8601) } ?? .null)
        ])
    }

    /// `GET /v1/actions?limit=N&cursor=C`: every server action, newest first.
    func actionsPage(_ request: SyncRequest) throws -> SyncResponse {
        let parameters = request.query
        if let unknown = parameters.keys.sorted().first(where: { !["limit", "cursor"].contains($0) }) {
            return failure(.malformed, "unknown query parameter \(unknown); this endpoint takes limit, cursor")
        }
        let limit: Int
        switch Self.boundedInteger(parameters["limit"], name: "limit", in: 1...Self.maximumActionsLimit, default: Self.defaultActionsLimit) {
        case .failure(let refusal): return refusal.response
        case .success(let value): limit = value
        }
        var before: (at: Timestamp, seq: UInt64)?
        if let text = parameters["cursor"], !text.isEmpty {
            guard let cursor = HistoryCursor(token: text), cursor.device == Self.actionsCursorTag else {
                return failure(
                    .malformed,
                    "query parameter cursor: cursor \(ErrorEcho.quoted(text)) is not one this server issued; pass next_cursor from the previous page unchanged")
            }
            before = (cursor.at, cursor.seq)
        }
        let found = try storage.actions(before: before, limit: limit + 1)
        let page = Array(found.prefix(limit))
        let next = found.count > limit ? page.last.map { HistoryCursor(at: $0.at, device: Self.actionsCursorTag, seq: $0.seq).token } : nil
        return json(
            200,
            SyncWire.encode(
                .object([
                    .init("actions", .array(page.map(\.jsonValue))), .init("next_cursor", next.map { .string($0) } ?? .null)
                ])))
    }

    /// The actions cursor is a history cursor of the last action's `(at, seq)` under this tag in
    /// the device's place (no device id can be it: a device id has no `!`).
    static let actionsCursorTag = "!actions"
}
