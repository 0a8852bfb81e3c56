#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The client address of a sign-in event (`client_address`, schema 2 of `sign_in_failed`,
/// `sign_in_throttled`, `second_factor_failed`, `sign_in_succeeded` and `sign_in_aborted`): an IPv4 or IPv6 address
/// in the canonical text form of RFC 5952 (what `inet_ntop` writes), so one address is always
/// one lockout key. Personal data: sealed with the user's key, erased by a forget, and read back
/// as ``erased`` once its user is forgotten (docs/events.md § Client address).
///
/// ```swift
/// ClientAddress.canonical("2001:DB8::0:1")   // "2001:db8::1"
/// ClientAddress.canonical("10.0.0.256")      // nil
/// ```
public enum ClientAddress {
    public static let fieldName = "client_address"
    /// What an erased address reads as: the record keeps its schema, so it re-encodes to the
    /// bytes it was written as.
    public static let erased = PersonalData.erasedText

    /// The canonical form of an IPv4 or IPv6 literal (no port, brackets, zone or mask), or `nil`.
    /// An IPv4-mapped IPv6 address (`::ffff:192.0.2.1`) becomes the IPv4 address it maps.
    public static func canonical(_ text: some StringProtocol) -> String? {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count <= 45, !bytes.contains(0) else { return nil }
        let literal = String(decoding: bytes, as: UTF8.self)
        var v4 = in_addr()
        if inet_pton(AF_INET, literal, &v4) == 1 { return format(AF_INET, withUnsafeBytes(of: &v4) { Array($0) }) }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, literal, &v6) == 1 else { return nil }
        let isMapped = withUnsafeBytes(of: &v6) { raw in
            raw.prefix(10).allSatisfy { $0 == 0 } && raw[10] == 0xFF && raw[11] == 0xFF
        }
        if isMapped {
            return format(AF_INET, withUnsafeBytes(of: &v6) { Array($0[12..<16]) })
        }
        return format(AF_INET6, withUnsafeBytes(of: &v6) { Array($0) })
    }

    /// Whether `text` may stand in an event: a canonical address, or ``erased``.
    public static func isValid(_ text: String) -> Bool {
        text == erased || canonical(text) == text
    }

    /// The text of the address in `bytes` (4 bytes for IPv4, 16 for IPv6).
    private static func format(_ family: Int32, _ bytes: [UInt8]) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(family, bytes, &buffer, socklen_t(buffer.count)) != nil else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
