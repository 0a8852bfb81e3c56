/// A set of line numbers as one bit per line of the input (1 MiB per 8 million lines), needed
/// only for an input with both seqs and repeated lines.
struct LineSet {
    private var words: [UInt64]

    init(lines: Int) { words = Array(repeating: 0, count: lines / 64 + 1) }

    mutating func insert(_ line: Int) { words[line >> 6] |= 1 << UInt64(line & 63) }

    func contains(_ line: Int) -> Bool {
        line >> 6 < words.count && words[line >> 6] & (1 << UInt64(line & 63)) != 0
    }
}
