import Foundation

/// The state of one request across libmicrohttpd's repeated access-handler calls: created on the
/// first call (headers complete), stored in MHD's per-request pointer as a retained reference, and
/// released in the request-completed callback, which MHD runs exactly once for every request whose
/// handler was called — so it neither leaks nor dangles.
///
/// Not `Sendable`: one connection's calls all run on that connection's thread, one at a time.
final class RequestContext {
    enum Phase {
        /// Collecting the body.
        case receiving
        /// The body outgrew the limit; bytes are counted and dropped, a 413 follows.
        case discarding
        /// A response has been queued; nothing more to do until completion.
        case responded
    }

    let method: String
    /// Percent-decoded (as sent when it does not decode).
    let path: String
    /// As sent, still percent-encoded.
    let rawPath: String
    let started: ContinuousClock.Instant
    var phase = Phase.receiving
    var headers = HTTPHeaders()
    var query: [String: String] = [:]
    var remoteAddress = "unknown"
    var body: [UInt8] = []
    /// Every body byte received, kept or discarded.
    var bodyBytesReceived = 0
    var status = 0
    var responseBodyBytes = 0

    init(method: String, rawPath: String, started: ContinuousClock.Instant) {
        self.method = method
        self.rawPath = rawPath
        self.path = rawPath.removingPercentEncoding ?? rawPath
        self.started = started
    }
}
