import Foundation
import OnboardingModel
import OnboardingStore

extension EventImporter {
    /// The check pass and the comparison of repeats; throws listing the bad lines, or naming the
    /// first event the store would refuse, before anything is written.
    func check(_ input: ImportInput, store: OnboardingStore?, startYear: Int?, firstPass: Bool) throws(ImportError) -> CheckedInput {
        var checked = CheckedInput()
        checked.startYear = startYear
        var decoder = lineDecoder(startYear: startYear)
        var errors = LineErrors()
        var finder = RepeatedIDFinder(bufferEntries: idBufferEntries)
        var storeCheck = try StoreCheck(store: store)
        var claimsSeqs = false
        var reporter = ProgressReporter(progress, phase: .checking, totalBytes: input.sizeBytes)
        // The store refuses events dated past its clock and skew (docs/store.md): checked here,
        // so that such a line stops the import before its first commit, not in the middle.
        let now = storeOptions.clock()
        let latest = storeOptions.maximumClockSkewMilliseconds.map { now.adding(milliseconds: $0) }

        let reader = firstPass ? try input.firstPassReader() : try input.rereader()
        func takeEvent(_ decoded: EventJSON.Decoded, line: Int, offset: Int64, length: Int) throws(ImportError) {
            if let latest, latest < decoded.event.at {
                let skew = storeOptions.maximumClockSkewMilliseconds! / 1000
                errors.add(
                    line: line,
                    "the event is dated \(decoded.event.at.iso8601), more than \(skew) s after this machine's clock (\(now.iso8601)): it cannot have happened yet; fix the clock that dated it, or import with --max-clock-skew none"
                )
                return
            }
            checked.events += 1
            if decoded.seq != nil { claimsSeqs = true }
            try finder.add(RepeatedIDFinder.Entry(id: decoded.event.id, line: line, offset: offset, length: length))
            try storeCheck.check(decoded, line: line)
        }
        func take(_ decoding: LineDecoding, line: JSONLLine?) throws(ImportError) {
            switch decoding {
            case .event(let event):
                guard let line, case .text(let bytes) = line.content else { return }
                try takeEvent(event, line: line.number, offset: line.offset, length: bytes.count)
            case .skipped(let kind):
                checked.skipped.add(kind, line: input.sourceLine(line?.number ?? 0))
            case .invalid(let message):
                errors.add(line: line?.number ?? 0, message)
            case .invalidLine(let number, let message):
                errors.add(line: number, message)
            case .several(let events, let skipped):
                for (kind, number) in skipped { checked.skipped.add(kind, line: input.sourceLine(number)) }
                for found in events { try takeEvent(found.decoded, line: found.line, offset: found.offset, length: found.length) }
            }
        }
        let totals = try JSONLReader.read(from: reader) { line throws(ImportError) in
            reporter.line(line)
            try take(decoder.decode(line), line: line)
        }
        try take(decoder.finish(), line: nil)
        if !decoder.sawLocalTime { checked.startYear = nil }
        checked.bytes = totals.bytes

        // Lines that repeat an id: the same event is skipped, another one is refused.
        var repeatLines: LineSet?
        try finder.forEachRepeat { first, repeated throws(ImportError) in
            let original = try decodeAgain(first, of: input, startYear: startYear)
            let again = try decodeAgain(repeated, of: input, startYear: startYear)
            let line = Int(repeated.line)
            let firstLine = Int(first.line)
            if original.event != again.event {
                errors.add(line: line, "event id \(again.event.id.uuidString.lowercased()) was used on line \(firstLine) for a different event")
            } else if let claimed = again.seq, claimed != original.seq {
                if let earlier = original.seq {
                    errors.add(line: line, "repeats the event of line \(firstLine) but claims seq \(claimed), not its seq \(earlier)")
                } else {
                    errors.add(
                        line: line,
                        "repeats the event of line \(firstLine) but claims seq \(claimed), and line \(firstLine) claims none; give both the same seq, or neither"
                    )
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
            storeCheck = try recheck(input, store: store, skipping: repeatLines, bytes: checked.bytes, startYear: startYear)
        }
        if let failure = storeCheck.failure {
            throw ImportError(.invalidInput, "\(input.name): line \(failure.line): \(failure.message)")
        }
        checked.allStored = store != nil && storeCheck.newEvents == 0 && !storeCheck.leftToTheStore
        return checked
    }

    /// A line the check pass decoded, read and decoded again.
    private func decodeAgain(_ entry: RepeatedIDFinder.Entry, of input: ImportInput, startYear: Int?) throws(ImportError) -> EventJSON.Decoded {
        let bytes = try input.bytes(at: entry.offset, length: Int(entry.length))
        // It decoded in the check pass: failing now means the input changed under the import.
        // (A foreign line's decoding needs no earlier line: an sshd line's id holds its number,
        // so sshd lines never repeat one another, and a Keycloak event stands alone.)
        var decoder = lineDecoder(startYear: startYear)
        guard case .event(let decoded) = bytes.withUnsafeBytes({ decoder.decode($0, line: Int(entry.line)) }) else { throw input.changed() }
        return decoded
    }

    /// The store check again, over the checked bytes, without the lines in `repeats`.
    private func recheck(
        _ input: ImportInput, store: OnboardingStore?, skipping repeats: LineSet,
        bytes: Int64, startYear: Int?
    ) throws(ImportError) -> StoreCheck {
        var storeCheck = try StoreCheck(store: store)
        var decoder = lineDecoder(startYear: startYear)
        var reporter = ProgressReporter(progress, phase: .checkingAgain, totalBytes: bytes)
        func recheck(_ decoding: LineDecoding, line: Int) throws(ImportError) {
            switch decoding {
            case .event(let decoded):
                guard !repeats.contains(line) else { return }
                try storeCheck.check(decoded, line: line)
            case .skipped: return
            case .invalid, .invalidLine: throw input.changed()
            case .several(let events, _):
                for found in events where !repeats.contains(found.line) { try storeCheck.check(found.decoded, line: found.line) }
            }
        }
        try JSONLReader.read(byteLimit: bytes, from: try input.rereader()) { line throws(ImportError) in
            reporter.line(line)
            // Decoded also when skipped: an sshd line's year depends on the lines before it.
            try recheck(decoder.decode(line), line: line.number)
        }
        try recheck(decoder.finish(), line: 0)
        return storeCheck
    }
}
