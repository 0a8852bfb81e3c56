import OnboardingModel

/// A token the server issued (``SyncTokenClient/rotate()``): keep it as secret as a password.
public struct IssuedToken: Sendable, Hashable {
    public var token: String
    /// When the server stops accepting it; `nil` for a token that never expires.
    public var expiresAt: Timestamp?

    public init(token: String, expiresAt: Timestamp?) {
        self.token = token
        self.expiresAt = expiresAt
    }
}

/// What the server says of a token (`GET /v1/token`, ``SyncTokenClient/status()``).
public struct TokenStatus: Sendable, Hashable {
    /// `device`, `auditor` or `admin`.
    public var role: String
    /// The device of a device token.
    public var device: String?
    /// The token's id (16 hex digits of its stored hash), as the server's device list shows it.
    public var id: String
    /// `nil` for a token that never expires.
    public var expiresAt: Timestamp?

    /// Reads a `GET /v1/token` answer.
    public init(body: [UInt8]) throws(SyncWireError) {
        let value = try SyncWire.parse(body)
        guard case .string(let role)? = value["role"], !role.isEmpty else { throw SyncWireError("body.role must be a non-empty string") }
        guard case .string(let id)? = value["id"] else { throw SyncWireError("body.id must be a string") }
        switch value["device"] {
        case nil, .null?: device = nil
        case .string(let name)?: device = name
        default: throw SyncWireError("body.device must be a string or null")
        }
        self.role = role
        self.id = id
        expiresAt = try SyncWire.tokenExpiry(from: body)
    }
}

/// Asks the sync server about a token and rotates it: one request each, no store needed (an
/// auditor's token works too). Errors are ``SyncError``s with the codes a sync run uses.
///
/// ```swift
/// let tokens = SyncTokenClient(transport: URLSessionTransport(baseURL: server), token: saved)
/// if let expiry = try await tokens.status().expiresAt, expiry < Timestamp.now.adding(milliseconds: 14 * 86_400_000) {
///     let renewed = try await tokens.rotate()   // the saved token stays valid until its own expiry
///     try keychain.save(renewed.token)          // then make the next SyncClient with it
/// }
/// ```
public struct SyncTokenClient: Sendable {
    private let transport: any SyncTransport
    private let token: String

    public init(transport: any SyncTransport, token: String) {
        self.transport = transport
        self.token = token
    }

    /// What the server says of the token: its role, device and expiry (`GET /v1/token`).
    public func status() async throws(SyncError) -> TokenStatus {
        let body = try await send("GET", what: "the token check", expecting: 200)
        do { return try TokenStatus(body: body) } catch {
            throw SyncError.badResponse.with("the server's answer to the token check is unreadable: \(error.message)")
        }
    }

    /// A new token of the same role and device, with a lifetime of its own (`POST /v1/token`).
    /// The token this client holds stays valid until its own expiry or a revoke, so nothing
    /// stops meanwhile: store the new one durably, then switch to it.
    public func rotate() async throws(SyncError) -> IssuedToken {
        let body = try await send("POST", what: "the token rotation", expecting: 201)
        do {
            return IssuedToken(token: try SyncWire.token(from: body), expiresAt: try SyncWire.tokenExpiry(from: body))
        } catch {
            throw SyncError.badResponse.with("the server's answer to the token rotation is unreadable: \(error.message)")
        }
    }

    private func send(_ method: String, what: String, expecting status: Int) async throws(SyncError) -> [UInt8] {
        let response: SyncResponse
        do {
            response = try await transport.send(SyncRequest(method: method, path: SyncPaths.token, headers: ["authorization": "Bearer \(token)"]))
        } catch let error as TransportError {
            throw SyncError.unavailable.with("\(what) failed: \(error.message)")
        } catch {
            throw SyncError.unavailable.with("\(what) failed: \(error)")
        }
        if response.status == status { return response.body }
        let refusal = SyncWire.error(from: response.body)
        let detail = refusal.map { " (\($0))" } ?? ""
        switch response.status {
        case 300...399:
            throw SyncError.redirected.with(
                "the server answered \(what) with HTTP \(response.status), a redirect; redirects are never followed, so the token was sent nowhere else — give the sync server's own address"
            )
        case 401 where refusal?.code == .tokenExpired:
            throw SyncError.tokenExpired.with("the token expired (401\(detail)); a token cannot be rotated once expired — ask the server's admin for a new one")
        case 401:
            throw SyncError.unauthorized.with("the server refused the token (401\(detail))" + (refusal == nil ? "; ask the server's admin for a new one" : ""))
        case 403: throw SyncError.forbidden.with("the server refused \(what) (403\(detail))")
        case 429, 500...599:
            let retry = response.retryAfterSeconds.map { "; retry after \($0) s" } ?? "; retry shortly"
            throw SyncError.unavailable.with("the server could not answer \(what) (HTTP \(response.status)\(detail))\(retry)")
        default:
            throw SyncError.refused.with(
                "\(what) was refused with HTTP \(response.status)\(detail); the client and server may disagree on the protocol — upgrade one of them")
        }
    }
}
