import Foundation
import OnboardingModel
import OnboardingStore

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
}

extension EventImporter {
    /// The check pass and the comparison of repeats; throws listing the bad lines, or naming the
    /// first event the store would refuse, before anything is written.
    func check(_ input: ImportInput, store: OnboardingStore?) throws(ImportError) -> CheckedInput {
        var checked = CheckedInput()
        var errors = LineErrors()
        var finder = RepeatedIDFinder(bufferEntries: idBufferEntries)
        var storeCheck = try StoreCheck(store: store)
        var claimsSeqs = false
        var reporter = ProgressReporter(progress, phase: .checking, totalBytes: input.sizeBytes)

        let totals = try JSONLReader.read(from: try input.firstPassReader()) { line throws(ImportError) in
            reporter.line(line)
            guard let (decoded, length) = decodeReporting(line, into: &errors) else { return }
            checked.events += 1
            if decoded.seq != nil { claimsSeqs = true }
            try finder.add(RepeatedIDFinder.Entry(id: decoded.event.id, line: line.number, offset: line.offset, length: length))
            try storeCheck.check(decoded, line: line.number)
        }
        checked.bytes = totals.bytes

        // Lines that repeat an id: the same event is skipped, another one is refused.
        var repeatLines: LineSet?
        try finder.forEachRepeat { first, repeated throws(ImportError) in
            let original = try decodeAgain(first, of: input)
            let again = try decodeAgain(repeated, of: input)
            let line = Int(repeated.line)
            let firstLine = Int(first.line)
            if original.event != again.event {
                errors.add(line: line, "event id \(again.event.id.uuidString.lowercased()) was used on line \(firstLine) for a different event")
            } else if let claimed = again.seq, claimed != original.seq {
                if let earlier = original.seq {
                    errors.add(line: line, "repeats the event of line \(firstLine) but claims seq \(claimed), not its seq \(earlier)")
                } else {
                    errors.add(line: line, "repeats the event of line \(firstLine) but claims seq \(claimed), and line \(firstLine) claims none; give both the same seq, or neither")
                }
            } else {
                checked.repeats += 1
                let example = ImportSummary.Repeat(line: line, firstLine: firstLine)
                let position = checked.repeatExamples.firstIndex { $0.line > line } ?? checked.repeatExamples.count
                if position < Self.maximumReportedLines {
                    checked.repeatExamples.insert(example, at: position)
                    if checked.repeatExamples.count > Self.maximumReportedLines { checked.repeatExamples.removeLast() }
                }
                if claimsSeqs {
                    if repeatLines == nil { repeatLines = LineSet(lines: totals.lines) }
                    repeatLines!.insert(line)
                }
            }
        }
        guard errors.isEmpty else { throw ImportError(.invalidInput, errors.message(source: input.name)) }

        // The seqs a repeat does not take were counted as taken: count again, skipping repeats.
        if let repeatLines {
            storeCheck = try recheck(input, store: store, skipping: repeatLines, bytes: checked.bytes)
        }
        if let failure = storeCheck.failure {
            throw ImportError(.invalidInput, "\(input.name): line \(failure.line): \(failure.message)")
        }
        checked.allStored = store != nil && storeCheck.newEvents == 0 && !storeCheck.leftToTheStore
        return checked
    }

    /// The line's event and its length, or `nil` with the line's error recorded.
    private func decodeReporting(_ line: JSONLLine, into errors: inout LineErrors) -> (EventJSON.Decoded, Int)? {
        switch line.content {
        case .tooLong(let isValidUTF8):
            errors.add(line: line.number, isValidUTF8 ? "line is longer than \(Limits.maximumJSONLineBytes) bytes" : "is not valid UTF-8")
            return nil
        case .text(let bytes):
            do throws(EventValidationError) {
                return (try EventJSON.decode(lineBytes: bytes), bytes.count)
            } catch {
                errors.add(line: line.number, error.description)
                return nil
            }
        }
    }

    /// A line the check pass decoded, read and decoded again.
    private func decodeAgain(_ entry: RepeatedIDFinder.Entry, of input: ImportInput) throws(ImportError) -> EventJSON.Decoded {
        let bytes = try input.bytes(at: entry.offset, length: Int(entry.length))
        // It decoded in the check pass: failing now means the input changed under the import.
        guard let decoded = bytes.withUnsafeBytes({ try? EventJSON.decode(lineBytes: $0) }) else { throw input.changed() }
        return decoded
    }

    /// The store check again, over the checked bytes, without the lines in `repeats`.
    private func recheck(_ input: ImportInput, store: OnboardingStore?, skipping repeats: LineSet,
                         bytes: Int64) throws(ImportError) -> StoreCheck {
        var storeCheck = try StoreCheck(store: store)
        var reporter = ProgressReporter(progress, phase: .checkingAgain, totalBytes: bytes)
        try JSONLReader.read(byteLimit: bytes, from: try input.rereader()) { line throws(ImportError) in
            reporter.line(line)
            guard !repeats.contains(line.number) else { return }
            guard case .text(let bytes) = line.content,
                  let decoded = try? EventJSON.decode(lineBytes: bytes) else { throw input.changed() }
            try storeCheck.check(decoded, line: line.number)
        }
        return storeCheck
    }
}

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

/// Calls the importer's progress closure every ``EventImporter/progressIntervalLines`` lines.
struct ProgressReporter {
    private let progress: ((ImportProgress) -> Void)?
    private var state: ImportProgress
    private var nextReport = EventImporter.progressIntervalLines

    init(_ progress: ((ImportProgress) -> Void)?, phase: ImportProgress.Phase, totalBytes: Int64?) {
        self.progress = progress
        state = ImportProgress(phase: phase, lines: 0, bytes: 0, totalBytes: totalBytes, committedEvents: 0, totalEvents: 0)
    }

    mutating func line(_ line: JSONLLine) {
        guard let progress, line.number >= nextReport else { return }
        nextReport = line.number + EventImporter.progressIntervalLines
        state.lines = line.number
        state.bytes = line.offset
        progress(state)
    }
}
