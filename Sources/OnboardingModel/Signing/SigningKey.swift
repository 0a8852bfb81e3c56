import CSodium

/// An Ed25519 public key (32 bytes): what a device's signed heads are checked against.
///
/// ```swift
/// let key = SigningPublicKey(hex: "3b6a27bc…")!   // 64 hex digits
/// signedHead.isValid(for: key)
/// ```
public struct SigningPublicKey: Sendable, Hashable, CustomStringConvertible {
    public static let byteCount = 32
    public let bytes: [UInt8]

    public init?(bytes: [UInt8]) {
        guard bytes.count == SigningPublicKey.byteCount else { return nil }
        self.bytes = bytes
    }

    /// Parses 64 hex digits.
    public init?(hex: String) {
        guard let bytes = HexBytes.decode(hex), let key = SigningPublicKey(bytes: bytes) else { return nil }
        self = key
    }

    public var hex: String { HexBytes.encode(bytes) }
    public var description: String { hex }
}

/// An Ed25519 key pair (libsodium `crypto_sign`). The secret half never leaves the device: the
/// store keeps it in its own 0600 file, not in the log (docs/format.md, "Signing key").
///
/// ```swift
/// let key = SigningKeyPair.generate()
/// let signature = key.sign(message)
/// ```
public struct SigningKeyPair: Sendable {
    /// libsodium's secret key: the 32-byte seed followed by the 32-byte public key.
    public static let secretByteCount = 64
    public let secretBytes: [UInt8]
    public let publicKey: SigningPublicKey

    /// A new key pair from the system's CSPRNG (libsodium's `randombytes`).
    public static func generate() -> SigningKeyPair {
        Sodium.ensureInitialized()
        var publicBytes = [UInt8](repeating: 0, count: SigningPublicKey.byteCount)
        var secret = [UInt8](repeating: 0, count: secretByteCount)
        let rc = crypto_sign_keypair(&publicBytes, &secret)
        precondition(rc == 0, "crypto_sign_keypair failed")
        return SigningKeyPair(secret: secret, publicBytes: publicBytes)
    }

    /// The key pair held in a 64-byte libsodium secret key; `nil` when the bytes are not one
    /// (wrong length, or the embedded public key is not the seed's).
    public init?(secretBytes: [UInt8]) {
        guard secretBytes.count == SigningKeyPair.secretByteCount else { return nil }
        Sodium.ensureInitialized()
        var seed = [UInt8](repeating: 0, count: 32)
        guard crypto_sign_ed25519_sk_to_seed(&seed, secretBytes) == 0 else { return nil }
        var publicBytes = [UInt8](repeating: 0, count: SigningPublicKey.byteCount)
        var rebuilt = [UInt8](repeating: 0, count: SigningKeyPair.secretByteCount)
        guard crypto_sign_seed_keypair(&publicBytes, &rebuilt, seed) == 0, rebuilt == secretBytes else { return nil }
        self.init(secret: secretBytes, publicBytes: publicBytes)
    }

    private init(secret: [UInt8], publicBytes: [UInt8]) {
        secretBytes = secret
        publicKey = SigningPublicKey(bytes: publicBytes)!
    }

    /// The 64-byte detached Ed25519 signature of `message`.
    public func sign(_ message: [UInt8]) -> [UInt8] {
        Sodium.ensureInitialized()
        var signature = [UInt8](repeating: 0, count: SignedHead.signatureByteCount)
        let rc = crypto_sign_detached(&signature, nil, message, UInt64(message.count), secretBytes)
        precondition(rc == 0, "crypto_sign_detached failed")
        return signature
    }
}

extension SigningPublicKey {
    /// Whether `signature` is this key's Ed25519 signature of `message`.
    public func verifies(_ signature: [UInt8], of message: [UInt8]) -> Bool {
        guard signature.count == SignedHead.signatureByteCount else { return false }
        Sodium.ensureInitialized()
        return crypto_sign_verify_detached(signature, message, UInt64(message.count), bytes) == 0
    }
}

/// Lowercase hex of arbitrary bytes, and back.
public enum HexBytes {
    /// Lowercase hex.
    public static func encode(_ bytes: [UInt8]) -> String {
        bytes.withUnsafeBytes { encode($0) }
    }

    public static func encode(_ bytes: UnsafeRawBufferPointer) -> String {
        String(unsafeUninitializedCapacity: bytes.count * 2) { text in
            let digits: StaticString = "0123456789abcdef"
            let table = digits.utf8Start
            for (index, byte) in bytes.enumerated() {
                text[2 * index] = table[Int(byte >> 4)]
                text[2 * index + 1] = table[Int(byte & 0xF)]
            }
            return bytes.count * 2
        }
    }

    /// `nil` unless `text` is an even number of hex digits.
    public static func decode(_ text: String) -> [UInt8]? {
        var text = text
        return text.withUTF8 { characters -> [UInt8]? in
            guard characters.count % 2 == 0 else { return nil }
            func nibble(_ c: UInt8) -> UInt8? {
                switch c {
                case 0x30...0x39: c - 0x30
                case 0x61...0x66: c - 0x61 + 10
                case 0x41...0x46: c - 0x41 + 10
                default: nil
                }
            }
            var failed = false
            let bytes = [UInt8](unsafeUninitializedCapacity: characters.count / 2) { output, count in
                for index in 0..<(characters.count / 2) {
                    guard let high = nibble(characters[2 * index]), let low = nibble(characters[2 * index + 1]) else {
                        failed = true
                        break
                    }
                    output[index] = high << 4 | low
                    count = index + 1
                }
            }
            return failed ? nil : bytes
        }
    }
}
