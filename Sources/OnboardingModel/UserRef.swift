import CSodium

/// The pseudonymous id of a user inside one store's records: 16 bytes, a keyed BLAKE2b-128 of
/// the user id under the store's pseudonym key (see ``PersonalData``). The record and the
/// `by_user` index hold it in place of the readable id; a forgotten user is known only by it.
///
/// Its text form, the *pseudonym literal*, is `~` and 32 lowercase hex digits. An event whose
/// `user` is a pseudonym literal names the user without the readable form: that is how erased
/// records read back, export, re-import and sync.
///
/// ```swift
/// let ref = UserRef(user: "alice", pseudonymKey: key)
/// ref.literal                     // "~3f0c…" (33 characters)
/// UserRef(literal: ref.literal)   // == ref
/// ```
public struct UserRef: Sendable, Hashable, Comparable, CustomStringConvertible {
    public static let byteCount = 16
    private var storage: (UInt64, UInt64) = (0, 0)

    public init(bytes: UnsafeRawBufferPointer) {
        precondition(bytes.count == UserRef.byteCount, "a user ref is \(UserRef.byteCount) bytes")
        Swift.withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: bytes) }
    }

    public init(bytes: [UInt8]) {
        self = bytes.withUnsafeBytes { UserRef(bytes: $0) }
    }

    /// The ref of the readable `user` under `pseudonymKey` (a store's 32-byte secret).
    /// Hashes the UTF-8 in place into the ref's own storage: no allocation (a new user's first
    /// sighting on the append path).
    public init(user: String, pseudonymKey: SecretKey) {
        Sodium.ensureInitialized()
        var text = user
        if text.isEmpty { text = "\0" } // never: user ids are validated non-empty
        let rc = text.withUTF8 { utf8 in
            pseudonymKey.withUnsafeBytes { key in
                Swift.withUnsafeMutableBytes(of: &storage) { output in
                    crypto_generichash(
                        output.baseAddress!.assumingMemoryBound(to: UInt8.self), UserRef.byteCount,
                        utf8.baseAddress!, UInt64(utf8.count),
                        key.baseAddress!.assumingMemoryBound(to: UInt8.self), key.count)
                }
            }
        }
        precondition(rc == 0, "crypto_generichash failed")
    }

    /// Parses a pseudonym literal (`~` and 32 lowercase hex digits); `nil` for anything else.
    public init?(literal: String) {
        // Most strings are readable ids: decided by the first byte and length, no copy.
        guard literal.utf8.first == UInt8(ascii: "~"), literal.utf8.count == 1 + UserRef.byteCount * 2 else { return nil }
        let digits = literal.utf8.dropFirst()
        // Lowercase only: a literal has one spelling, the one records read back as.
        guard !digits.contains(where: { (UInt8(ascii: "A")...UInt8(ascii: "F")).contains($0) }),
            let bytes = HexBytes.decode(String(decoding: digits, as: UTF8.self))
        else { return nil }
        self.init(bytes: bytes)
    }

    /// Whether `user` is a pseudonym literal rather than a readable user id.
    public static func isLiteral(_ user: String) -> Bool {
        user.utf8.first == UInt8(ascii: "~") && UserRef(literal: user) != nil
    }

    public var bytes: [UInt8] { withUnsafeBytes { Array($0) } }

    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try Swift.withUnsafeBytes(of: storage) { try body($0) }
    }

    public var hex: String { withUnsafeBytes { HexBytes.encode($0) } }
    /// `~` and 32 lowercase hex digits.
    public var literal: String { "~" + hex }
    public var description: String { literal }

    public static func == (lhs: UserRef, rhs: UserRef) -> Bool {
        lhs.storage.0 == rhs.storage.0 && lhs.storage.1 == rhs.storage.1
    }

    /// Byte order, by the two words read big-endian: no copies.
    public static func < (lhs: UserRef, rhs: UserRef) -> Bool {
        let left = (lhs.storage.0.bigEndian, lhs.storage.1.bigEndian)
        let right = (rhs.storage.0.bigEndian, rhs.storage.1.bigEndian)
        return left < right
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(storage.0)
        hasher.combine(storage.1)
    }
}

/// A 32-byte secret: a user's sealing key or a store's pseudonym key. Never written to the
/// hashed log, an export or a log line (`description` hides it).
public struct SecretKey: Sendable, Equatable, CustomStringConvertible {
    public static let byteCount = 32
    private var storage: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)

    public init(bytes: UnsafeRawBufferPointer) {
        precondition(bytes.count == SecretKey.byteCount, "a secret key is \(SecretKey.byteCount) bytes")
        Swift.withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: bytes) }
    }

    public init(bytes: [UInt8]) {
        self = bytes.withUnsafeBytes { SecretKey(bytes: $0) }
    }

    /// A new key from libsodium's CSPRNG.
    public static func random() -> SecretKey {
        Sodium.ensureInitialized()
        var bytes = [UInt8](repeating: 0, count: byteCount)
        randombytes_buf(&bytes, byteCount)
        return SecretKey(bytes: bytes)
    }

    public var bytes: [UInt8] { withUnsafeBytes { Array($0) } }

    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try Swift.withUnsafeBytes(of: storage) { try body($0) }
    }

    public var description: String { "SecretKey(redacted)" }

    /// Constant-time comparison (libsodium `sodium_memcmp`).
    public static func == (lhs: SecretKey, rhs: SecretKey) -> Bool {
        lhs.withUnsafeBytes { left in
            rhs.withUnsafeBytes { right in sodium_memcmp(left.baseAddress!, right.baseAddress!, byteCount) == 0 }
        }
    }
}
