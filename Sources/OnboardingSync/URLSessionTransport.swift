import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The real transport: HTTP(S) through `URLSession` (FoundationNetworking on Linux).
///
/// ```swift
/// let transport = URLSessionTransport(baseURL: URL(string: "https://sync.example.com")!)
/// let client = SyncClient(store: store, transport: transport, token: token)
/// ```
public struct URLSessionTransport: SyncTransport {
    /// The server's root; request paths (`/v1/…`) are appended to it, so a prefix path is kept.
    public let baseURL: URL
    /// How long one request may take, connection included.
    public let timeout: Duration
    private let session: URLSession

    /// 30 s: a full batch is ~300 KB and one durable server commit; a slower answer means a
    /// server or network in trouble, and the client's back-off does better than waiting on.
    public static let defaultTimeout = Duration.seconds(30)

    public init(baseURL: URL, timeout: Duration = URLSessionTransport.defaultTimeout) {
        precondition(timeout > .zero, "a transport timeout must be positive")
        self.baseURL = baseURL
        self.timeout = timeout
        let configuration = URLSessionConfiguration.ephemeral
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        configuration.timeoutIntervalForRequest = seconds
        configuration.timeoutIntervalForResource = seconds
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        session = URLSession(configuration: configuration)
    }

    public func send(_ request: SyncRequest) async throws -> SyncResponse {
        var root = baseURL.absoluteString
        while root.hasSuffix("/") { root.removeLast() }
        guard let url = URL(string: root + request.path) else {
            throw URLSessionTransportError("cannot form a URL from \(root) and \(request.path); check the server address")
        }
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = request.method
        urlRequest.timeoutInterval = session.configuration.timeoutIntervalForRequest
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        if !request.body.isEmpty { urlRequest.httpBody = Data(request.body) }
        let (data, response) = try await session.data(for: urlRequest)
        guard let http = response as? HTTPURLResponse else {
            throw URLSessionTransportError("\(url) answered without HTTP; check the server address")
        }
        guard data.count <= SyncLimits.maximumBodyBytes else {
            throw URLSessionTransportError("\(url) answered with \(data.count) bytes, more than the protocol's \(SyncLimits.maximumBodyBytes); check the server address")
        }
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
        }
        return SyncResponse(status: http.statusCode, headers: headers, body: Array(data))
    }
}
