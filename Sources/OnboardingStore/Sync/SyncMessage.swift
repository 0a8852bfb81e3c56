import Foundation

/// A protocol request as the server's router and the client's transports see it: the HTTP parts
/// that matter, independent of any HTTP library (the in-memory transport hands it straight to the
/// router; the HTTP server and URLSession transport translate).
public struct SyncRequest: Sendable, Hashable {
    public var method: String
    public var path: String
    /// Header names lower-cased.
    public var headers: [String: String]
    public var body: [UInt8]
    /// The client's IP address as the server saw it (`nil` in process): what the server's
    /// per-address rate limits key on. Never sent by a client.
    public var clientAddress: String?

    public init(method: String, path: String, headers: [String: String] = [:], body: [UInt8] = [], clientAddress: String? = nil) {
        self.method = method
        self.path = path
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { _, last in last })
        self.body = body
        self.clientAddress = clientAddress
    }

    /// The bearer token of the `Authorization` header.
    public var bearerToken: String? {
        guard let value = headers["authorization"], value.lowercased().hasPrefix("bearer ") else { return nil }
        let token = String(value.dropFirst(7)).trimmingCharacters(in: .whitespaces)
        return token.isEmpty ? nil : token
    }
}

/// A protocol response.
public struct SyncResponse: Sendable, Hashable {
    public var status: Int
    /// Header names lower-cased.
    public var headers: [String: String]
    public var body: [UInt8]

    public init(status: Int, headers: [String: String] = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { _, last in last })
        self.body = body
    }

    /// `Retry-After` in seconds, when present and numeric.
    public var retryAfterSeconds: Int? { headers["retry-after"].flatMap { Int($0) } }
}

