import CMicroHTTPD
import Synchronization

/// Answers one request, from any thread, at most once: the first ``respond(_:)`` is sent, later
/// ones do nothing. A handler that cannot answer at once (a long poll waiting for data) keeps its
/// responder and returns, freeing its handler thread; the connection stays suspended, costing a
/// socket and no thread, until the answer comes. ``HTTPServer/stop()`` answers 503 for every
/// responder still unanswered, so a deferred request never outlives the server.
///
/// ```swift
/// func handle(_ request: HTTPRequest, responder: HTTPResponder) {
///     waiters.add { page in responder.respond(.json(page)) }   // answered later, elsewhere
/// }
/// ```
public final class HTTPResponder: Sendable {
    private let core: ServerCore
    private let job: HandlerPool.Job
    private let answered = Atomic<Bool>(false)

    init(core: ServerCore, job: HandlerPool.Job) {
        self.core = core
        self.job = job
    }

    /// Sends `response` if nothing was sent yet; returns whether this call sent it.
    @discardableResult
    public func respond(_ response: HTTPResponse) -> Bool {
        guard answered.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return false }
        core.releaseBody(of: job.context)
        job.context.phase = .handled(response)
        MHD_resume_connection(job.connection)
        // After the resume: `stop()` waits for this before it stops the daemon.
        core.deferredAnswered(self)
        return true
    }

    var identifier: ObjectIdentifier { ObjectIdentifier(self) }
}
