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
        self.path = PercentDecoding.decode(rawPath) ?? rawPath
        self.started = started
    }
}

/// `%XX` escapes of a URL path or query component, decoded to UTF-8 text. libmicrohttpd's own
/// unescaping is turned off (see `onboard_mhd_keep_escapes`) so a router can split the path as
/// sent; components are decoded here.
enum PercentDecoding {
    /// `nil` when an escape is malformed or the bytes are not UTF-8.
    static func decode(_ text: String) -> String? {
        guard text.utf8.contains(UInt8(ascii: "%")) else { return text }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
