import OnboardingModel

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
    /// Lines of a foreign log that are not authentication events, by kind, with the first line
    /// numbers of each (docs/importers.md).
    public var skippedLines = SkippedLines()
    /// The year an sshd log's first line was read in (given with `--year`, or inferred).
    public var startYear: Int?
    /// The earliest and the latest time of the events read (stored before or not); `nil` when
    /// the import had nothing to append (the check pass keeps no times).
    public var firstAt: Timestamp?
    public var lastAt: Timestamp?
    /// The seq of the `log_imported` event that keeps this summary in the store: `nil` when none
    /// was appended (a JSONL import, or an import that appended no event).
    public var summarySeq: UInt64?

    /// Lines of a foreign log that are not authentication events, by kind.
    public var skipped: [String: Int] { skippedLines.counts }

    /// The skipped lines on one line, most common kind first: `"9 not sshd, 3 pam"`.
    public var skippedDescription: String {
        skippedLines.kinds.map { "\($0.count) \($0.kind)" }.joined(separator: ", ")
    }
}
