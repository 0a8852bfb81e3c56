import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `onboard serve --trusted-proxy`: the reverse proxies whose `X-Forwarded-For` names the client
/// (docs/operations.md § Behind a reverse proxy).
public enum TrustedProxies {
    /// Whether `text` is an IPv4 or IPv6 address in its usual text form.
    public static func isIPAddress(_ text: String) -> Bool {
        // Only the characters an address is written with: inet_pton reads a C string, which would
        // end at a NUL inside the text and take what came before.
        guard !text.isEmpty, text.utf8.count <= 45,
            text.utf8.allSatisfy({ $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: ":") || ($0 < 0x80 && Character(UnicodeScalar($0)).isHexDigit) })
        else { return false }
        var v4 = in_addr(), v6 = in6_addr()
        return inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1
    }

    /// `sin_addr.s_addr` of an IPv4 address (network byte order), for the HTTP layer's
    /// per-address connection limit; `nil` for anything else.
    public static func ipv4(_ text: String) -> UInt32? {
        var address = in_addr()
        return inet_pton(AF_INET, text, &address) == 1 ? address.s_addr : nil
    }

    /// A comma-separated list of IP addresses, or the first entry that is not one.
    public static func parse(_ text: String) -> Result<Set<String>, InvalidEntry> {
        var addresses: Set<String> = []
        for entry in text.split(separator: ",", omittingEmptySubsequences: false) {
            let candidate = entry.trimmingCharacters(in: .whitespaces)
            guard isIPAddress(candidate) else { return .failure(InvalidEntry(text: candidate)) }
            addresses.insert(candidate)
        }
        return .success(addresses)
    }

    public struct InvalidEntry: Error {
        public let text: String
    }
}
