/// The lines of a foreign log that are not authentication events: how many of each kind, and
/// the first few line numbers of each, so that a user can look at what was left out.
///
/// A kind is a short fixed phrase of a parser (`"pam"`, `"not sshd"`, docs/importers.md), never
/// text of the log: it names no user and no address.
///
/// ```swift
/// var skipped = SkippedLines()
/// skipped.add("pam", line: 3)
/// skipped.counts        // ["pam": 1]
/// skipped.firstLines    // ["pam": [3]]
/// ```
public struct SkippedLines: Sendable, Equatable {
    /// Line numbers kept per kind: enough to find the pattern in a log (an editor's "go to
    /// line"), few enough that every kind's examples fit on one line of the summary.
    public static let maximumFirstLines = 5

    /// Skipped lines by kind.
    public private(set) var counts: [String: Int] = [:]
    /// Per kind, its lowest line numbers in ascending order, at most ``maximumFirstLines``.
    public private(set) var firstLines: [String: [Int]] = [:]

    public init() {}

    /// All skipped lines, whatever their kind.
    public var total: Int { counts.values.reduce(0, +) }

    /// The kinds, most common first (the same count: by name), with their counts and first lines.
    public var kinds: [(kind: String, count: Int, firstLines: [Int])] {
        counts.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
            .map { ($0.key, $0.value, firstLines[$0.key] ?? []) }
    }

    /// Counts a line of `kind`. Lines may come in any order (an import that sorts its input
    /// first maps them back to the file's numbers): the lowest numbers are kept.
    public mutating func add(_ kind: String, line: Int) {
        counts[kind, default: 0] += 1
        var lines = firstLines[kind] ?? []
        let position = lines.firstIndex { $0 > line } ?? lines.count
        guard position < Self.maximumFirstLines else { return }
        lines.insert(line, at: position)
        if lines.count > Self.maximumFirstLines { lines.removeLast() }
        firstLines[kind] = lines
    }

    /// The most `skipped_kinds` of a `log_imported` event holds: every kind the parsers name
    /// today fits several times over; a longer list keeps its most common kinds and sums the
    /// rest, so one event stays small whatever a future parser adds.
    public static let maximumRecordedBytes = 512

    /// The kinds as a `log_imported` event records them, most common first (`"9 not sshd, 3
    /// pam"`), at most ``maximumRecordedBytes`` bytes; `nil` when nothing was skipped.
    public var recordedDescription: String? {
        var parts: [String] = []
        var length = 0
        let kinds = kinds
        for (index, kind) in kinds.enumerated() {
            precondition(
                !kind.kind.isEmpty && !kind.kind.unicodeScalars.contains { $0.properties.generalCategory == .control },
                "a skipped kind is a parser's fixed phrase, never empty and without control characters")
            let part = "\(kind.count) \(kind.kind)"
            let rest = kinds[(index + 1)...]
            let tail = rest.isEmpty ? "" : ", \(rest.map(\.count).reduce(0, +)) of \(rest.count) other kind\(rest.count == 1 ? "" : "s")"
            // Kept only if it and what a cut would add after it still fit.
            let separator = parts.isEmpty ? 0 : 2
            if length + separator + part.utf8.count + (rest.isEmpty ? 0 : tail.utf8.count) > Self.maximumRecordedBytes {
                let left = kinds[index...]
                parts.append("\(left.map(\.count).reduce(0, +)) of \(left.count) other kind\(left.count == 1 ? "" : "s")")
                break
            }
            parts.append(part)
            length += separator + part.utf8.count
        }
        return parts.isEmpty ? nil : parts.joined(separator: ", ")
    }

    /// The lines of both, as if counted by one.
    public func merging(_ other: SkippedLines) -> SkippedLines {
        var merged = self
        for (kind, count) in other.counts {
            merged.counts[kind, default: 0] += count
            let lines = ((merged.firstLines[kind] ?? []) + (other.firstLines[kind] ?? [])).sorted()
            merged.firstLines[kind] = Array(lines.prefix(Self.maximumFirstLines))
        }
        return merged
    }
}
