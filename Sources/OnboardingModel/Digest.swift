import CSodium

/// A 32-byte BLAKE2b-256 hash: the links of a store's hash chain.
///
/// ```swift
/// let digest = Digest.hash(bytes)   // libsodium crypto_generichash, 32 bytes, no key
/// digest.hex                        // 64 lowercase hex digits
/// ```
public struct Digest: Sendable, Hashable, CustomStringConvertible {
    public static let byteCount = 32
    /// The `previousHash` of the first record.
    public static let zero = Digest(bytes: [UInt8](repeating: 0, count: byteCount))

    public let bytes: [UInt8]

    public init(bytes: [UInt8]) {
        precondition(bytes.count == Digest.byteCount, "a digest is \(Digest.byteCount) bytes")
        self.bytes = bytes
    }

    /// BLAKE2b-256 of `input`.
    public static func hash(_ input: UnsafeRawBufferPointer) -> Digest {
        Sodium.ensureInitialized()
        var output = [UInt8](repeating: 0, count: byteCount)
        var empty: UInt8 = 0
        let rc = output.withUnsafeMutableBufferPointer { out in
            withUnsafeMutablePointer(to: &empty) { emptyInput in
                crypto_generichash(out.baseAddress!, byteCount,
                                   input.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? UnsafePointer(emptyInput),
                                   UInt64(input.count), nil, 0)
            }
        }
        precondition(rc == 0, "crypto_generichash failed")
        return Digest(bytes: output)
    }

    public static func hash(_ input: [UInt8]) -> Digest {
        input.withUnsafeBytes { hash($0) }
    }

    public var hex: String {
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(64)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    public var description: String { hex }

    /// Parses 64 hex digits.
    public init?(hex: String) {
        let characters = Array(hex.utf8)
        guard characters.count == Digest.byteCount * 2 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case 0x30...0x39: c - 0x30
            case 0x61...0x66: c - 0x61 + 10
            case 0x41...0x46: c - 0x41 + 10
            default: nil
            }
        }
        var bytes = [UInt8]()
        bytes.reserveCapacity(Digest.byteCount)
        for index in stride(from: 0, to: characters.count, by: 2) {
            guard let high = nibble(characters[index]), let low = nibble(characters[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        self.bytes = bytes
    }
}

enum Sodium {
    private static let initialized: Bool = { sodium_init() >= 0 }()

    static func ensureInitialized() {
        precondition(initialized, "libsodium failed to initialise")
    }
}
