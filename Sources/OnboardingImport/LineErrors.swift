/// The bad lines of an input: all counted, the first ``EventImporter/maximumReportedLines`` by
/// line number kept for the message (they are found in line order while reading, and out of
/// order when repeats are compared).
struct LineErrors {
    private(set) var listed: [(line: Int, message: String)] = []
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    mutating func add(line: Int, _ message: String) {
        count += 1
        let position = listed.firstIndex { $0.line > line } ?? listed.count
        guard position < EventImporter.maximumReportedLines else { return }
        listed.insert((line, message), at: position)
        if listed.count > EventImporter.maximumReportedLines { listed.removeLast() }
    }

    /// `SOURCE: line N: …; nothing was imported`, then the other listed lines indented.
    func message(source: String) -> String {
        let first = listed[0]
        var message = "\(source): line \(first.line): \(first.message); nothing was imported"
        if count > 1 {
            message += " (\(count - 1) more bad line\(count == 2 ? "" : "s") below)"
            message += listed.dropFirst().map { "\n  line \($0.line): \($0.message)" }.joined()
            if count > listed.count { message += "\n  … and \(count - listed.count) more" }
        }
        return message
    }
}
