extension HTTPAccessLogEntry {
    /// `text` made safe for one space-separated log line: every byte outside printable ASCII
    /// (controls such as a line break, DEL, and all non-ASCII bytes, so no bidirectional override
    /// or invisible character gets through either), the space that separates fields, and the
    /// backslash itself become `\xHH`. The result is never empty (`-` stands for an empty field, and
    /// a lone `-` is escaped), and the original bytes can be read back from it.
    ///
    /// ```swift
    /// HTTPAccessLogEntry.escaped("/a\nGET /forged 200")   // "/a\x0aGET\x20/forged\x20200"
    /// ```
    public static func escaped(_ text: String) -> String {
        guard !text.isEmpty else { return "-" }
        guard text != "-" else { return "\\x2d" }
        let needsEscape: (UInt8) -> Bool = { $0 <= 0x20 || $0 >= 0x7F || $0 == UInt8(ascii: "\\") }
        guard text.utf8.contains(where: needsEscape) else { return text }
        let digits = Array("0123456789abcdef".utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count + 16)
        for byte in text.utf8 {
            if needsEscape(byte) {
                bytes += [UInt8(ascii: "\\"), UInt8(ascii: "x"), digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]]
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
