/// A device's signed statement "my log's record at `seq` has hash `hash`": an Ed25519 signature
/// over a fixed, unambiguous encoding (docs/format.md, "Signed heads"). Since every record's hash
/// covers the one before it, a signed head vouches for the whole log up to `seq`.
///
/// ```swift
/// let head = SignedHead.sign(device: "kiosk-7", seq: 42, hash: record.hash, with: key)
/// head.isValid(for: key.publicKey)   // true
/// ```
public struct SignedHead: Sendable, Hashable {
    public static let signatureByteCount = 64
    /// The first bytes of every signed message: names what is signed and its version, so a
    /// signature made for this purpose can never be mistaken for one over something else.
    public static let formatTag = Array("onboard-signed-head-v1\0".utf8)

    public var device: String
    public var seq: UInt64
    public var hash: Digest
    public var signature: [UInt8]

    public init(device: String, seq: UInt64, hash: Digest, signature: [UInt8]) {
        self.device = device
        self.seq = seq
        self.hash = hash
        self.signature = signature
    }

    /// format tag ‖ u16 BE byte length of the device id ‖ device id (UTF-8) ‖ seq (u64 BE) ‖ hash (32 bytes).
    public static func message(device: String, seq: UInt64, hash: Digest) -> [UInt8] {
        let id = Array(device.utf8)
        precondition(id.count <= Int(UInt16.max), "a device id is at most \(UInt16.max) bytes")
        var bytes = formatTag
        bytes.reserveCapacity(formatTag.count + 2 + id.count + 8 + Digest.byteCount)
        withUnsafeBytes(of: UInt16(id.count).bigEndian) { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: id)
        withUnsafeBytes(of: seq.bigEndian) { bytes.append(contentsOf: $0) }
        hash.withUnsafeBytes { bytes.append(contentsOf: $0) }
        return bytes
    }

    public static func sign(device: String, seq: UInt64, hash: Digest, with key: SigningKeyPair) -> SignedHead {
        SignedHead(device: device, seq: seq, hash: hash, signature: key.sign(message(device: device, seq: seq, hash: hash)))
    }

    /// Whether the signature is `key`'s over this head's device, seq and hash.
    public func isValid(for key: SigningPublicKey) -> Bool {
        key.verifies(signature, of: SignedHead.message(device: device, seq: seq, hash: hash))
    }
}
