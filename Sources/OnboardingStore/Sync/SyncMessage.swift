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
    /// The query arguments, decoded once: handed down by the HTTP server, which decoded them off
    /// the wire, or — for a request made in process — read from the `?…` of `path`
    /// (``queryArguments(of:)``). The router reads these and never decodes the query again.
    public var query: [String: String]

    /// `query`: the arguments already decoded (the HTTP server's); `nil` reads them from `path`.
    public init(
        method: String, path: String, headers: [String: String] = [:], body: [UInt8] = [], query: [String: String]? = nil,
        clientAddress: String? = nil
    ) {
        self.method = method
        self.path = path
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { _, last in last })
        self.body = body
        self.clientAddress = clientAddress
        self.query = query ?? Self.queryArguments(of: path)
    }

    /// The query arguments of `path` (`?a=1&b=2`), decoded as the HTTP server decodes a request's:
    /// `+` is a space; each name and value is percent-decoded once, and kept as sent when it is
    /// not valid percent-encoded UTF-8; a repeated name keeps its first value; a name without
    /// `=` maps to the empty string.
    public static func queryArguments(of path: String) -> [String: String] {
        guard let start = path.firstIndex(of: "?") else { return [:] }
        func decoded(_ text: Substring) -> String {
            let spaced = String(text).replacingOccurrences(of: "+", with: " ")
            return spaced.removingPercentEncoding ?? spaced
        }
        var arguments: [String: String] = [:]
        for pair in path[path.index(after: start)...].split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = decoded(parts[0])
            if arguments[name] == nil { arguments[name] = parts.count > 1 ? decoded(parts[1]) : "" }
        }
        return arguments
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
