/// How far an import is, for a progress display.
public struct ImportProgress: Sendable {
    public enum Phase: Sendable {
        /// Reading a syslog file's timestamps for the year its first line is in.
        case dating
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
