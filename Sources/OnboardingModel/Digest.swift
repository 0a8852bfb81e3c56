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
    public static let zero = Digest()

    /// The 32 bytes inline (a tuple is laid out contiguously): every record carries two digests,
    /// and a heap array per digest was a measurable share of appends and reads.
    private var storage: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)

    private init() {}

    public init(bytes: [UInt8]) {
        precondition(bytes.count == Digest.byteCount, "a digest is \(Digest.byteCount) bytes")
        self.init()
        Swift.withUnsafeMutableBytes(of: &storage) { $0.copyBytes(from: bytes) }
    }

    /// The digest whose 32 bytes are exactly `bytes` (e.g. read in place from a stored record).
    public init(copying bytes: UnsafeRawBufferPointer) {
        precondition(bytes.count == Digest.byteCount, "a digest is \(Digest.byteCount) bytes")
        self.init()
        Swift.withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: bytes) }
    }

    /// The 32 bytes, as a new array.
    public var bytes: [UInt8] { withUnsafeBytes { Array($0) } }

    /// The 32 bytes, without copying them to the heap.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try Swift.withUnsafeBytes(of: storage) { try body($0) }
    }

    public static func == (lhs: Digest, rhs: Digest) -> Bool {
        lhs.storage.0 == rhs.storage.0 && lhs.storage.1 == rhs.storage.1
            && lhs.storage.2 == rhs.storage.2 && lhs.storage.3 == rhs.storage.3
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(storage.0)
        hasher.combine(storage.1)
        hasher.combine(storage.2)
        hasher.combine(storage.3)
    }

    /// BLAKE2b-256 of `input`.
    public static func hash(_ input: UnsafeRawBufferPointer) -> Digest {
        var digest = Digest()
        digest.hash(input)
        return digest
    }

    /// BLAKE2b-256 of `input`, written into `output` (32 bytes): no intermediate digest value.
    public static func hash(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) {
        precondition(output.count >= byteCount, "a digest is \(byteCount) bytes")
        Sodium.ensureInitialized()
        var empty: UInt8 = 0
        let rc = withUnsafeMutablePointer(to: &empty) { emptyInput in
            crypto_generichash(
                output.baseAddress!.assumingMemoryBound(to: UInt8.self), byteCount,
                input.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? UnsafePointer(emptyInput),
                UInt64(input.count), nil, 0)
        }
        precondition(rc == 0, "crypto_generichash failed")
    }

    private mutating func hash(_ input: UnsafeRawBufferPointer) {
        Swift.withUnsafeMutableBytes(of: &storage) { Digest.hash(input, into: $0) }
    }

    public static func hash(_ input: [UInt8]) -> Digest {
        input.withUnsafeBytes { hash($0) }
    }

    public var hex: String { withUnsafeBytes { HexBytes.encode($0) } }

    public var description: String { hex }

    /// Parses 64 hex digits.
    public init?(hex: String) {
        guard let bytes = HexBytes.decode(hex), bytes.count == Digest.byteCount else { return nil }
        self.init(bytes: bytes)
    }
}

enum Sodium {
    private static let initialized: Bool = { sodium_init() >= 0 }()

    static func ensureInitialized() {
        precondition(initialized, "libsodium failed to initialise")
    }
}
