import Dispatch

/// A transport that hands each request straight to a server's router in the same process: no
/// sockets, no failures. Tests and the demo use it (wrap it in ``FaultyTransport`` for failures).
///
/// ```swift
/// let server = try SyncServer(dataDirectory: directory)
/// let transport = InMemoryTransport { request in server.handle(request) }
/// ```
///
/// The router blocks (a durable commit per upload), so it runs on a dispatch queue, off Swift
/// concurrency's cooperative threads.
public struct InMemoryTransport: SyncTransport {
    private let handler: @Sendable (SyncRequest) -> SyncResponse

    public init(handler: @escaping @Sendable (SyncRequest) -> SyncResponse) {
        self.handler = handler
    }

    public func send(_ request: SyncRequest) async throws -> SyncResponse {
        let handler = self.handler
        return await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: handler(request)) }
        }
    }
}
