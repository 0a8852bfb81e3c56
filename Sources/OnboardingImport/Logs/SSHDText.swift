/// Byte-exact reading of log text, for the sshd parser.
///
/// `String`'s own `hasPrefix` and searches compare by canonical equivalence, so a combining mark
/// after an ASCII delimiter would change what matches; a log is bytes, so these compare UTF-8
/// bytes. Every index they return is at an ASCII byte (or the end), so it is on a Unicode
/// scalar boundary and slicing there is safe.
extension Substring {
    /// The text after `prefix`, when the text starts with exactly its bytes.
    func after(prefix: String) -> Substring? {
        var index = utf8.startIndex
        for byte in prefix.utf8 {
            guard index < utf8.endIndex, utf8[index] == byte else { return nil }
            index = utf8.index(after: index)
        }
        return self[index...]
    }

    /// The text before `suffix`, when the text ends with exactly its bytes.
    func before(suffix: String) -> Substring? {
        var index = utf8.endIndex
        for byte in suffix.utf8.reversed() {
            guard index > utf8.startIndex else { return nil }
            index = utf8.index(before: index)
            guard utf8[index] == byte else { return nil }
        }
        return self[..<index]
    }

    /// The last place where `needle` (ASCII) occurs, searching from the right.
    func lastRange(of needle: String) -> Range<Index>? {
        let bytes = Array(needle.utf8)
        guard let first = bytes.first, utf8.count >= bytes.count else { return nil }
        var start = utf8.index(utf8.endIndex, offsetBy: -bytes.count)
        while true {
            if utf8[start] == first, let end = matchEnd(of: bytes, at: start) { return start..<end }
            guard start > utf8.startIndex else { return nil }
            start = utf8.index(before: start)
        }
    }

    /// The first place where `needle` (ASCII) occurs.
    func firstRange(of needle: String) -> Range<Index>? {
        let bytes = Array(needle.utf8)
        guard let first = bytes.first else { return nil }
        var start = utf8.startIndex
        while start < utf8.endIndex {
            if utf8[start] == first, let end = matchEnd(of: bytes, at: start) { return start..<end }
            start = utf8.index(after: start)
        }
        return nil
    }

    /// The text up to the first space, and the text after that space (`nil` when there is none).
    func splitAtFirstSpace() -> (head: Substring, tail: Substring?) {
        guard let space = utf8.firstIndex(of: UInt8(ascii: " ")) else { return (self, nil) }
        return (self[..<space], self[utf8.index(after: space)...])
    }

    /// The text before the last space, and the text after it (`nil` when there is no space).
    func splitAtLastSpace() -> (head: Substring, tail: Substring)? {
        guard let space = utf8.lastIndex(of: UInt8(ascii: " ")) else { return nil }
        return (self[..<space], self[utf8.index(after: space)...])
    }

    /// Whether the text is one or more ASCII digits (of any length: a port is checked, never
    /// converted, so 99999999999999999999 cannot overflow anything).
    var isDigits: Bool {
        !utf8.isEmpty && utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }

    /// Where a match of `bytes` starting at `start` ends, or `nil` when they do not match there.
    private func matchEnd(of bytes: [UInt8], at start: Index) -> Index? {
        var index = start
        for byte in bytes {
            guard index < utf8.endIndex, utf8[index] == byte else { return nil }
            index = utf8.index(after: index)
        }
        return index
    }
}
