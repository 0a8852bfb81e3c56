import Foundation
import Synchronization
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The real transport: HTTP(S) through `URLSession` (FoundationNetworking on Linux), written for
/// a server that may be broken or hostile.
///
/// ```swift
/// let transport = URLSessionTransport(baseURL: URL(string: "https://sync.example.com")!)
/// let client = SyncClient(store: store, transport: transport, token: token)
/// ```
///
/// What it guarantees (docs/sync-protocol.md, "The client against a hostile server"):
/// - **One deadline per request**, from the first connection attempt to the last byte of the
///   answer (``timeout``). A server that drips its answer, or streams one that never ends, is cut
///   off when it passes, whatever arrives meanwhile.
/// - **Bounded memory.** The answer is read as it arrives and cut off (the request fails) as soon
///   as it passes ``maximumAnswerBytes``; a `Content-Length` above it fails before any body is read.
/// - **No redirects.** A 3xx is returned to the caller as it is, never followed, so the
///   `Authorization` header goes only to ``baseURL``'s origin (``SyncClient`` refuses the answer).
/// - **A fresh connection after a failure.** After a request fails without an answer the session
///   is replaced, so the retry cannot reuse a connection the server dropped.
/// - No cookies, no cache, no credentials stored.
public final class URLSessionTransport: SyncTransport {
    /// The server's root; request paths (`/v1/…`) are appended to it, so a prefix path is kept.
    public let baseURL: URL
    /// How long one request may take in all: connecting, sending, and receiving the whole answer.
    public let timeout: Duration
    /// The largest answer body accepted.
    public let maximumAnswerBytes: Int

    private let engine: Engine

    /// 30 s: a full batch is ~300 KB and one durable server commit; a slower answer means a
    /// server or network in trouble, and the client's back-off does better than waiting on.
    public static let defaultTimeout = Duration.seconds(30)

    public init(
        baseURL: URL, timeout: Duration = URLSessionTransport.defaultTimeout,
        maximumAnswerBytes: Int = SyncLimits.maximumBodyBytes
    ) {
        precondition(timeout > .zero, "a transport timeout must be positive")
        precondition(maximumAnswerBytes > 0, "the answer limit must be positive")
        self.baseURL = baseURL
        self.timeout = timeout
        self.maximumAnswerBytes = maximumAnswerBytes
        engine = Engine(timeout: timeout, maximumAnswerBytes: maximumAnswerBytes)
    }

    deinit { engine.invalidate() }

    public func send(_ request: SyncRequest) async throws -> SyncResponse {
        var root = baseURL.absoluteString
        while root.hasSuffix("/") { root.removeLast() }
        guard let url = URL(string: root + request.path) else {
            throw URLSessionTransportError("cannot form a URL from \(root) and \(request.path); check the server address")
        }
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = request.method
        urlRequest.timeoutInterval = timeout.seconds
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        if !request.body.isEmpty { urlRequest.httpBody = Data(request.body) }
        return try await engine.send(urlRequest, origin: Self.origin(of: url))
    }

    /// `scheme://host:port` of `url`: what messages name (paths and queries may hold secrets).
    static func origin(of url: URL) -> String {
        let scheme = url.scheme ?? "http"
        let port = url.port.map { ":\($0)" } ?? ""
        return "\(scheme)://\(url.host ?? "?")\(port)"
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
    /// "30 s", "1.5 s": how messages name a deadline.
    var secondsText: String { seconds == seconds.rounded() ? "\(Int(seconds)) s" : "\(seconds) s" }
}

/// The session and the requests in flight. Each request is one data task; its answer is
/// collected by the delegate callbacks, and exactly one of these ends it: the task completing,
/// the answer passing the size limit, or the deadline.
private final class Engine: NSObject, URLSessionDataDelegate, Sendable {
    private struct InFlight {
        let continuation: CheckedContinuation<SyncResponse, any Error>
        let origin: String
        var response: HTTPURLResponse?
        var body: [UInt8] = []
    }

    private struct State {
        var session: URLSession?
        var inFlight: [ObjectIdentifier: InFlight] = [:]
        var invalidated = false
    }

    private let timeout: Duration
    private let maximumAnswerBytes: Int
    private let state = Mutex(State())
    private let timers = DispatchQueue(label: "OnboardingSync.URLSessionTransport.deadlines")

    init(timeout: Duration, maximumAnswerBytes: Int) {
        self.timeout = timeout
        self.maximumAnswerBytes = maximumAnswerBytes
    }

    private func makeSession() -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout.seconds
        configuration.timeoutIntervalForResource = timeout.seconds
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.urlCredentialStorage = nil
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        return URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
    }

    func invalidate() {
        let session = state.withLock { state -> URLSession? in
            state.invalidated = true
            defer { state.session = nil }
            return state.session
        }
        session?.invalidateAndCancel()
    }

    func send(_ request: URLRequest, origin: String) async throws -> SyncResponse {
        let box = Mutex<URLSessionDataTask?>(nil)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<SyncResponse, any Error>) in
                let task: URLSessionDataTask? = state.withLock { state in
                    guard !state.invalidated else { return nil }
                    let session = state.session ?? makeSession()
                    state.session = session
                    let task = session.dataTask(with: request)
                    state.inFlight[ObjectIdentifier(task)] = InFlight(continuation: continuation, origin: origin)
                    return task
                }
                guard let task else {
                    continuation.resume(throwing: URLSessionTransportError("the transport was released; make a new one"))
                    return
                }
                box.withLock { $0 = task }
                timers.asyncAfter(deadline: .now() + timeout.seconds) { [weak self, weak task] in
                    guard let self, let task else { return }
                    let seconds = self.timeout.secondsText
                    self.finish(task, replacingSession: true) { origin, _ in
                        .failure(
                            URLSessionTransportError(
                                "\(origin) sent no complete answer within \(seconds) (the deadline of one request, connecting included); the server or the network is too slow or stalled"
                            ))
                    }
                }
                task.resume()
            }
        } onCancel: {
            if let task = box.withLock({ $0 }) {
                finish(task, replacingSession: false) { _, _ in .failure(CancellationError()) }
            }
        }
    }

    /// Ends `task`'s request once: removes it, cancels the task (a no-op when it completed), and
    /// resumes its caller with `outcome`. A later callback for the task finds nothing to do.
    private func finish(
        _ task: URLSessionTask, replacingSession: Bool, cancelling: Bool = true,
        _ outcome: (_ origin: String, _ inFlight: InFlight) -> Result<SyncResponse, any Error>
    ) {
        let (entry, oldSession) = state.withLock { state -> (InFlight?, URLSession?) in
            guard let entry = state.inFlight.removeValue(forKey: ObjectIdentifier(task)) else { return (nil, nil) }
            guard replacingSession else { return (entry, nil) }
            // The next request opens a new connection: the one this request used may be dead.
            defer { state.session = nil }
            return (entry, state.session)
        }
        guard let entry else { return }
        if cancelling { task.cancel() }
        // Cancel, not finish: a connection still receiving (an endless answer) must close now.
        // Other requests of that session fail as a dropped connection would, and are resent.
        oldSession?.invalidateAndCancel()
        entry.continuation.resume(with: outcome(entry.origin, entry))
    }

    // MARK: URLSessionDataDelegate

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        // Never follow: the 3xx itself becomes the answer, and the token goes nowhere else.
        completionHandler(nil)
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        let limit = maximumAnswerBytes
        if response.expectedContentLength > Int64(limit) {
            finish(dataTask, replacingSession: true, cancelling: false) { origin, _ in
                .failure(
                    URLSessionTransportError(
                        "\(origin) announced an answer of \(response.expectedContentLength) bytes, more than the protocol's \(limit); nothing of it was read — check the server address"
                    ))
            }
            completionHandler(.cancel)
            return
        }
        state.withLock { $0.inFlight[ObjectIdentifier(dataTask)]?.response = response as? HTTPURLResponse }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let limit = maximumAnswerBytes
        let tooLarge = state.withLock { state -> Bool in
            let key = ObjectIdentifier(dataTask)
            guard var entry = state.inFlight[key] else { return false }
            guard entry.body.count + data.count <= limit else { return true }
            state.inFlight[key] = nil // no copy-on-write of the body while appending
            entry.body.append(contentsOf: data)
            state.inFlight[key] = entry
            return false
        }
        if tooLarge {
            finish(dataTask, replacingSession: true) { origin, _ in
                .failure(
                    URLSessionTransportError(
                        "\(origin) sent an answer longer than the protocol's \(limit) bytes; it was cut off there — check the server address"))
            }
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        finish(task, replacingSession: error != nil, cancelling: false) { origin, entry in
            if let error { return .failure(URLSessionTransportError(Self.describe(error, origin: origin))) }
            guard let http = entry.response ?? task.response as? HTTPURLResponse else {
                return .failure(URLSessionTransportError("\(origin) answered without HTTP; check the server address"))
            }
            var headers: [String: String] = [:]
            for (name, value) in http.allHeaderFields {
                if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
            }
            return .success(SyncResponse(status: http.statusCode, headers: headers, body: entry.body))
        }
    }

    /// A URL loading failure in words (Foundation's own descriptions on Linux are often `(null)`).
    static func describe(_ error: any Error, origin: String) -> String {
        guard let error = error as? URLError else { return "the request to \(origin) failed: \(error)" }
        switch error.code {
        case .timedOut:
            return "\(origin) did not answer in time; the server or the network is too slow or stalled"
        case .cannotConnectToHost:
            return "\(origin) refused the connection; is the server running at that address?"
        case .cannotFindHost, .dnsLookupFailed:
            return "the host of \(origin) is unknown; check the server address"
        case .networkConnectionLost:
            return "the connection to \(origin) was lost before the answer was complete"
        case .notConnectedToInternet:
            return "no network to reach \(origin)"
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
            .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot, .clientCertificateRejected:
            return "the TLS connection to \(origin) failed (URLError \(error.code.rawValue)); check the server's certificate and the address"
        case .badServerResponse:
            return "\(origin) sent an answer that is not valid HTTP"
        case .cancelled:
            return "the request to \(origin) was cancelled"
        default:
            return "the request to \(origin) failed (URLError \(error.code.rawValue))"
        }
    }
}
