/// What an import did.
///
/// ```swift
/// let summary = try importer.run(input)
/// print("imported \(summary.appended) events; \(summary.alreadyStored) were already stored")
/// ```
public struct ImportSummary: Sendable, Equatable {
    /// A line skipped because an earlier line of the input holds the same event.
    public struct Repeat: Sendable, Equatable {
        public var line: Int
        public var firstLine: Int
    }

    /// Lines that hold an event (blank lines are not counted).
    public var events = 0
    /// Events appended to the store.
    public var appended = 0
    /// The seqs the appended events got.
    public var firstSeq: UInt64?
    public var lastSeq: UInt64?
    /// Events that were in the store before the import (same id and content): skipped.
    public var alreadyStored = 0
    /// Lines that repeat an earlier line's event (same id and content): skipped.
    public var repeats = 0
    /// The first repeats by line number, at most ``EventImporter/maximumReportedLines``.
    public var repeatExamples: [Repeat] = []
    /// Write transactions committed.
    public var commits = 0
    /// Lines of a foreign log that are not authentication events, by kind (docs/importers.md).
    public var skipped: [String: Int] = [:]
    /// The year an sshd log's first line was read in (given with `--year`, or inferred).
    public var startYear: Int?

    /// The skipped lines on one line, most common kind first: `"9 not sshd, 3 pam"`.
    public var skippedDescription: String {
        skipped.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
            .map { "\($0.value) \($0.key)" }.joined(separator: ", ")
    }
}
