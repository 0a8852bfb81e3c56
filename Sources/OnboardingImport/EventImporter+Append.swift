import Foundation
import OnboardingModel
import OnboardingStore

extension EventImporter {
    /// The append pass: the checked bytes again, decoded and appended `commitEvents` at a time.
    func append(
        _ input: ImportInput, checked: CheckedInput, to store: OnboardingStore,
        summary: inout ImportSummary
    ) throws(ImportError) {
        let batchCapacity = min(commitEvents, checked.events)
        var events: [Event] = []
        var claims: [UInt64?] = []
        var lines: [Int] = []
        events.reserveCapacity(batchCapacity)
        claims.reserveCapacity(batchCapacity)
        lines.reserveCapacity(batchCapacity)
        var duplicates = 0
        var progressState = ImportProgress(
            phase: .appending, lines: 0, bytes: 0, totalBytes: checked.bytes,
            committedEvents: 0, totalEvents: checked.events)

        func kept() -> String {
            summary.appended > 0 ? " (\(summary.appended) events of earlier commits were kept; rerun to resume)" : ""
        }
        func commit() throws(ImportError) {
            let results: [AppendResult]
            do {
                results = try store.appendBlocking(events, claimedSeqs: claims)
            } catch {
                let line = error.batchIndex.map { "line \(lines[$0]): " } ?? ""
                throw ImportError(.store, "\(input.name): \(line)\(error.message)\(kept())", storeError: error)
            }
            for result in results {
                if result.isDuplicate {
                    duplicates += 1
                } else {
                    summary.appended += 1
                    if summary.firstSeq == nil { summary.firstSeq = result.seq }
                    summary.lastSeq = result.seq
                }
            }
            summary.commits += 1
            progressState.committedEvents += events.count
            progressState.lines = lines.last ?? 0
            progress?(progressState)
            events.removeAll(keepingCapacity: true)
            claims.removeAll(keepingCapacity: true)
            lines.removeAll(keepingCapacity: true)
        }

        var seen = 0
        var decoder = lineDecoder(startYear: checked.startYear)
        func take(_ decoding: LineDecoding, line: Int) throws(ImportError) {
            switch decoding {
            case .event(let decoded): try append(decoded, line: line)
            case .skipped: return
            case .invalid, .invalidLine: throw ImportError(.inputOutput, input.changed().message + kept())
            case .several(let found, _):
                for event in found { try append(event.decoded, line: event.line) }
            }
        }
        func append(_ decoded: EventJSON.Decoded, line: Int) throws(ImportError) {
            seen += 1
            events.append(decoded.event)
            claims.append(decoded.seq)
            lines.append(line)
            if events.count == commitEvents { try commit() }
        }
        try JSONLReader.read(byteLimit: checked.bytes, from: try input.rereader()) { line throws(ImportError) in
            try take(decoder.decode(line), line: line.number)
        }
        try take(decoder.finish(), line: 0)
        if !events.isEmpty { try commit() }
        guard seen == checked.events else { throw ImportError(.inputOutput, input.changed().message + kept()) }
        // A repeat was appended as a duplicate of the event its first line appended.
        summary.alreadyStored = max(0, duplicates - checked.repeats)
    }
}
