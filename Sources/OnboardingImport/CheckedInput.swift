/// What the check found in an input that passed it.
struct CheckedInput {
    /// Lines holding an event.
    var events = 0
    /// Bytes of the input that were checked: later passes read exactly these.
    var bytes: Int64 = 0
    var repeats = 0
    var repeatExamples: [ImportSummary.Repeat] = []
    /// Every event was found in the store (a rerun of an import that finished): nothing to append.
    var allStored = false
    /// Lines of a foreign log that are not events, by kind, numbered as in the file read.
    var skipped = SkippedLines()
    /// The first line's year of an sshd log (given or inferred), which every pass reads with.
    var startYear: Int?
}
