#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How a target reports a broken property: one line on stderr naming the target and what broke,
/// then `abort()`, which libFuzzer catches like a trap and answers by saving the input as
/// `crash-<sha1>` (printed with its hex and the stack).
///
/// ```swift
/// guard fast == reference else { FuzzCheck.fail("FuzzRecordCodec", "the fast decoder read another event") }
/// ```
public enum FuzzCheck {
    public static func fail(_ target: String, _ message: String) -> Never {
        let line = "\(target): property broken: \(message)\n"
        var bytes = Array(line.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
            guard written > 0 else { break }
            bytes = bytes.dropFirst(written)
        }
        abort()
    }

    /// A short printable rendering of `bytes` for failure messages (hex, at most 256 bytes).
    public static func hex(_ bytes: some Collection<UInt8>) -> String {
        let digits = Array("0123456789abcdef")
        var text = ""
        for byte in bytes.prefix(256) {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return bytes.count > 256 ? text + "… (\(bytes.count) bytes)" : text
    }
}
