import Foundation
import HTTPServer
import OnboardingStore

/// Serves a ``SyncServer`` over libmicrohttpd: translates HTTP requests into the protocol's
/// `SyncRequest` and back. All protocol logic stays in the router.
///
/// ```swift
/// let http = HTTPServer(port: 8080, limits: SyncHTTPHandler.limits, handler: SyncHTTPHandler(server: server))
/// try http.start()
/// ```
public struct SyncHTTPHandler: HTTPHandler {
    public let server: SyncServer
    /// Reverse proxies whose `X-Forwarded-For` is believed (`onboard serve --trusted-proxy`): a
    /// request from one of them counts against the rate limits of the client address the proxy
    /// appended, not the proxy's own. Anyone else's `X-Forwarded-For` is ignored.
    public let trustedProxies: Set<String>

    public init(server: SyncServer, trustedProxies: Set<String> = []) {
        self.server = server
        self.trustedProxies = trustedProxies
    }

    /// The HTTP layer refuses bodies over the protocol's limit before buffering them (413).
    public static var limits: HTTPServer.Limits {
        var limits = HTTPServer.Limits()
        limits.maximumRequestBodyBytes = SyncLimits.maximumBodyBytes
        return limits
    }

    /// For ``HTTPServer``'s `responseHeaders`: the router's security headers also on the answers
    /// the HTTP layer sends itself (413, 431, 503).
    public static var responseHeaders: HTTPHeaders {
        HTTPHeaders(SyncServer.securityHeaders.sorted { $0.key < $1.key }.map { ($0.key, $0.value) } + [("cache-control", "no-store")])
    }

    public func handle(_ request: HTTPRequest) -> HTTPResponse {
        Self.httpResponse(SyncServer.Answer(response: server.handle(syncRequest(request)), file: nil))
    }

    /// Answers through `responder`: at once, or — a history poll that waits — later from the
    /// server's poll thread, so no handler thread waits with it.
    public func handle(_ request: HTTPRequest, responder: HTTPResponder) {
        server.handle(syncRequest(request)) { answer in responder.respond(Self.httpResponse(answer)) }
    }

    private func syncRequest(_ request: HTTPRequest) -> SyncRequest {
        // The path as sent: the router splits it into segments and decodes a user id itself, so an
        // encoded `/` in a user id (`corp%2Falice`) stays inside its segment. The query arguments
        // are the HTTP server's, decoded once off the wire and handed down as they are.
        let path = request.rawPath
        var headers: [String: String] = [:]
        for field in request.headers { headers[field.name.lowercased()] = field.value }
        return SyncRequest(
            method: request.method, path: path, headers: headers, body: request.body, query: request.query,
            clientAddress: Self.clientAddress(peer: request.remoteAddress, forwardedFor: headers["x-forwarded-for"], trusting: trustedProxies))
    }

    /// The client's address: the peer's, or — when the peer is a trusted proxy — the rightmost
    /// `X-Forwarded-For` entry that is not itself a trusted proxy (what the outermost trusted
    /// proxy saw; entries to its left are the client's own word). An entry that is not an IP
    /// address stops the walk at the last trusted hop: a garbled header never lends a request
    /// someone else's address.
    static func clientAddress(peer: String?, forwardedFor: String?, trusting proxies: Set<String>) -> String? {
        guard let peer, proxies.contains(peer), let forwardedFor else { return peer }
        var address = peer
        for entry in forwardedFor.split(separator: ",").reversed() {
            let candidate = entry.trimmingCharacters(in: .whitespaces)
            guard TrustedProxies.isIPAddress(candidate) else { break }
            address = candidate
            if !proxies.contains(candidate) { break }
        }
        return address
    }

    private static func httpResponse(_ answer: SyncServer.Answer) -> HTTPResponse {
        let response = answer.response
        var httpHeaders = HTTPHeaders()
        for (name, value) in response.headers.sorted(by: { $0.key < $1.key }) { httpHeaders.add(name: name, value: value) }
        if let file = answer.file { return HTTPResponse(status: response.status, headers: httpHeaders, bodyFile: file) }
        return HTTPResponse(status: response.status, headers: httpHeaders, body: response.body)
    }
}
