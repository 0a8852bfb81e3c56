import Foundation
/// The limits of the sync protocol, shared by the client and the server so they cannot drift.
public enum SyncLimits {
    /// Events per upload. 1,000 canonical events are about 300 KB of JSON: one durable server
    /// commit amortised over many events, while a refused batch costs little to resend.
    public static let maximumBatchEvents = 1000
    /// Request body bytes. The largest valid event is under 64 KiB; 1,000 typical events are far
    /// below this, and the server refuses anything larger without buffering it (413).
    public static let maximumBodyBytes = 8 * 1024 * 1024
    /// Retries of one upload before the client gives up for this run (each waits with back-off).
    public static let maximumAttempts = 8
    /// First back-off wait, doubled per failed attempt (with full jitter), capped below.
    public static let initialBackoffMilliseconds = 200
    public static let maximumBackoffMilliseconds = 30_000
    /// `Retry-After` values above this are clamped: a server that asks for hours is treated as down
    /// for this run instead of parking the client.
    public static let maximumRetryAfterSeconds = 300
    /// Pseudonyms one cursor or upload answer may ask the device to forget. Each costs the device
    /// a durable event, so a server with more to ask sends them over several answers (they keep
    /// coming until the device's `user_forgotten` arrives); an answer with more is refused.
    public static let maximumForgetUsersPerAnswer = 100
    /// History polls (`wait=`) one server node holds at once; more get 503 with `Retry-After: 1`.
    /// Each costs a suspended connection and a re-read of its query at least once a second, so
    /// 32 keep that under a few dozen reads a second; an audit console tails with one.
    public static let maximumWaitingPolls = 32
    /// The longest `wait=` of a history poll, in seconds: a live tail costs a request every 30 s
    /// when nothing happens, and the answer comes well inside the 60 s a reverse proxy commonly
    /// waits for one (nginx's `proxy_read_timeout`).
    public static let maximumWaitSeconds = 30
}

/// The protocol's paths, versioned under `/v1`.
public enum SyncPaths {
    public static let health = "/v1/health"
    public static let devices = "/v1/devices"
    public static func cursor(device: String) -> String { "/v1/devices/\(device)/cursor" }
    public static func events(device: String) -> String { "/v1/devices/\(device)/events" }
    public static func tokens(device: String) -> String { "/v1/devices/\(device)/tokens" }
    public static func history(user: String) -> String { "/v1/users/\(percentEncoded(user))/history" }
    public static func history(device: String) -> String { "/v1/devices/\(device)/history" }
    public static func lockout(user: String) -> String { "/v1/users/\(percentEncoded(user))/lockout" }
    public static func forget(user: String) -> String { "/v1/users/\(percentEncoded(user))/forget" }
    public static let auditorTokens = "/v1/auditors"
    /// What the presented token may do (its role).
    public static let token = "/v1/token"
    /// The policy of the server's lockout across devices.
    public static let policy = "/v1/policy"

    /// Percent-encodes everything but unreserved characters (RFC 3986), for user ids in paths.
    public static func percentEncoded(_ text: String) -> String {
        var output = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                output.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                output += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return output
    }

    /// Decodes `%XX` escapes; `nil` for a malformed escape or invalid UTF-8.
    public static func percentDecoded(_ text: String) -> String? { text.removingPercentEncoding }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
