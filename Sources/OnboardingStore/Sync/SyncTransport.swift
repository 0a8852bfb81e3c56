/// Carries one protocol request to a sync server and brings back its answer.
///
/// Every conformer must satisfy:
/// - `send` throws only when no answer arrived (the connection failed, timed out, or was
///   refused): the request may or may not have reached the server, so the caller may resend it.
/// - Every HTTP answer, whatever its status (4xx and 5xx included), is returned, never thrown: the
///   client decides what a status means.
/// - Header names in the returned response are lower-cased (``SyncResponse`` does this).
/// - It is safe to call from several tasks at once.
///
/// ```swift
/// let transport: any SyncTransport = URLSessionTransport(baseURL: URL(string: "https://sync.example")!)
/// let response = try await transport.send(SyncRequest(method: "GET", path: SyncPaths.health))
/// ```
public protocol SyncTransport: Sendable {
    func send(_ request: SyncRequest) async throws -> SyncResponse
}
