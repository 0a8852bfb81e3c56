/// A parser of one record of a JSON authentication log: one element of the log's array, or one
/// line. Like every log parser it never throws: what it cannot use is
/// ``AuthLogLine/skipped(_:)`` with a kind.
///
/// Implementation requirements: `parse` is pure (the same bytes give the same answer, whatever
/// came before: the import's passes read records more than once, and one alone), and total
/// over any bytes.
protocol JSONAuthLogParser: Sendable {
    func parse(_ element: UnsafeRawBufferPointer) -> AuthLogLine
}
