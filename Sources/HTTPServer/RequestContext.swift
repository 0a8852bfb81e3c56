import Foundation

/// The state of one request across libmicrohttpd's repeated access-handler calls: created on the
/// first call (headers complete), stored in MHD's per-request pointer as a retained reference, and
/// released in the request-completed callback, which MHD runs exactly once for every request whose
/// handler was called — so it neither leaks nor dangles.
///
/// `@unchecked Sendable`: it is used by one thread at a time. MHD calls back for one connection on
/// one polling thread; while the request is `.queued` the connection is suspended and only the
/// handler worker touches the context, handing it back through MHD_resume_connection.
final class RequestContext: @unchecked Sendable {
    enum Phase {
        /// Collecting the body.
        case receiving
        /// The body cannot be kept (over the size limit, or no room in the body budget); bytes
        /// are counted and dropped, and this response follows.
        case discarding(HTTPResponse)
        /// Handed to a handler worker; the connection is suspended.
        case queued
        /// The worker's answer, to be sent when MHD calls back after the resume.
        case handled(HTTPResponse)
        /// A response has been queued; nothing more to do until completion.
        case responded
    }

    let method: String
    /// Percent-decoded (as sent when it does not decode).
    let path: String
    /// As sent, still percent-encoded.
    let rawPath: String
    let started: ContinuousClock.Instant
    /// The connection's socket: the key of its entry in the connection table.
    let descriptor: Int32
    var phase = Phase.receiving
    var headers = HTTPHeaders()
    var query: [String: String] = [:]
    var remoteAddress = "unknown"
    var body: [UInt8] = []
    /// Every body byte received, kept or discarded.
    var bodyBytesReceived = 0
    /// Bytes of `body` counted against the server's body budget, given back once the handler
    /// has returned (or the request ends without one).
    var chargedBodyBytes = 0
    var status = 0
    var responseBodyBytes = 0

    init(method: String, rawPath: String, descriptor: Int32, started: ContinuousClock.Instant) {
        self.method = method
        self.rawPath = rawPath
        self.path = rawPath.removingPercentEncoding ?? rawPath
        self.descriptor = descriptor
        self.started = started
    }
}
