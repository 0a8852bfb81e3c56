import OnboardingModel
import OnboardingStore

/// What `GET /v1/devices` says of one enrolled device: when it enrolled and last uploaded, how
/// far the server holds its log, whether its signed heads keep up, and its tokens (by id only).
public struct DeviceStatus: Sendable, Hashable {
    public struct Token: Sendable, Hashable {
        /// The first 16 hex digits of the stored hash of the token (the token itself is never stored).
        public var id: String
        /// `nil` for a token issued by an `onboard` that did not record the time.
        public var issuedAt: Timestamp?
        /// `nil` for a token that never expires.
        public var expiresAt: Timestamp?

        public init(id: String, issuedAt: Timestamp?, expiresAt: Timestamp? = nil) {
            self.id = id
            self.issuedAt = issuedAt
            self.expiresAt = expiresAt
        }
    }

    public var device: String
    /// `nil` for a device enrolled by an `onboard` that did not record the time.
    public var enrolledAt: Timestamp?
    /// The server's time of the device's last upload that appended records.
    public var lastUploadAt: Timestamp?
    public var acknowledgedSeq: UInt64
    public var headHash: Digest
    /// The latest signed head the server accepted.
    public var signedHead: (seq: UInt64, hash: Digest)?
    public var hasPublicKey: Bool
    public var tokens: [Token]

    public static func == (left: DeviceStatus, right: DeviceStatus) -> Bool {
        left.device == right.device && left.enrolledAt == right.enrolledAt && left.lastUploadAt == right.lastUploadAt
            && left.acknowledgedSeq == right.acknowledgedSeq && left.headHash == right.headHash
            && left.signedHead?.seq == right.signedHead?.seq && left.signedHead?.hash == right.signedHead?.hash
            && left.hasPublicKey == right.hasPublicKey && left.tokens == right.tokens
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(device) }

    /// `current` when the latest accepted signed head is at the acknowledged seq, `behind` when
    /// older, `none` when the device never sent one.
    public var signedHeadStatus: String {
        guard let signedHead else { return "none" }
        return signedHead.seq == acknowledgedSeq ? "current" : "behind"
    }

    var jsonValue: JSONValue {
        func time(_ value: Timestamp?) -> JSONValue { value.map { .string($0.iso8601) } ?? .null }
        return .object([
            .init("device", .string(device)), .init("enrolled_at", time(enrolledAt)), .init("last_upload_at", time(lastUploadAt)),
            .init("acknowledged_seq", .number(String(acknowledgedSeq))), .init("head_hash", .string(headHash.hex)),
            .init("signed_head", signedHead.map { .object([.init("seq", .number(String($0.seq))), .init("hash", .string($0.hash.hex))]) } ?? .null),
            .init("signed_head_status", .string(signedHeadStatus)), .init("public_key", .bool(hasPublicKey)),
            .init(
                "tokens",
                .array(tokens.map { .object([.init("id", .string($0.id)), .init("issued_at", time($0.issuedAt)), .init("expires_at", time($0.expiresAt))]) }))
        ])
    }
}
