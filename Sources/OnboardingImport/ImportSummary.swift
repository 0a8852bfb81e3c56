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
}

/// How far an import is, for a progress display.
public struct ImportProgress: Sendable {
    public enum Phase: Sendable {
        /// Reading and checking every line; nothing is written yet.
        case checking
        /// Reading again to check the seqs against lines that repeat earlier ones.
        case checkingAgain
        /// Appending the checked events.
        case appending
    }

    public var phase: Phase
    /// Lines read in this phase.
    public var lines: Int
    /// Bytes read in this phase, and of all (`nil` for stdin's first pass).
    public var bytes: Int64
    public var totalBytes: Int64?
    /// For `.appending`: events committed, and to commit.
    public var committedEvents: Int
    public var totalEvents: Int
}
