import Foundation
import OnboardingModel
import OnboardingStore

extension EventImporter {
    /// The append pass: the checked bytes again, decoded and appended `commitEvents` at a time.
    /// The last commit of a foreign log's import also appends its `log_imported` summary
    /// (``summaryEvent(of:appending:device:at:)``), so the summary is in the store exactly when the
    /// import's last events are, and an import that appends no event records none.
    func append(
        _ input: ImportInput, checked: CheckedInput, to store: OnboardingStore,
        summary: inout ImportSummary
    ) throws(ImportError) {
        let batchCapacity = min(commitEvents, checked.events) + 1
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
        func commit(last: Bool = false) throws(ImportError) {
            var recordsSummary = false
            if last, format.skipsForeignLines {
                // A summary only when the import appends something: counted before the commit,
                // from the events of this batch the store does not hold yet.
                let appending = try newEvents(events, in: store, input: input)
                if summary.appended + appending > 0 {
                    events.append(summaryEvent(of: summary, appending: appending, device: store.deviceID, at: storeOptions.clock()))
                    claims.append(nil)
                    recordsSummary = true
                }
            }
            let results: [AppendResult]
            do {
                results = try store.appendBlocking(events, claimedSeqs: claims)
            } catch {
                // The summary, last in the batch, has no line.
                let line = error.batchIndex.flatMap { lines.indices.contains($0) ? "line \(lines[$0]): " : nil } ?? ""
                throw ImportError(.store, "\(input.name): \(line)\(error.message)\(kept())", storeError: error)
            }
            if recordsSummary, let result = results.last {
                summary.summarySeq = result.seq
                events.removeLast()
            }
            for result in results.prefix(events.count) {
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
        var earliest: Timestamp?
        var latest: Timestamp?
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
            let at = decoded.event.at
            if earliest.map({ at < $0 }) ?? true { earliest = at }
            if latest.map({ at > $0 }) ?? true { latest = at }
            events.append(decoded.event)
            claims.append(decoded.seq)
            lines.append(line)
            // The batch that ends the input waits for the loop's end: its commit takes the summary.
            if events.count == commitEvents, seen != checked.events { try commit() }
        }
        try JSONLReader.read(byteLimit: checked.bytes, from: try input.rereader()) { line throws(ImportError) in
            try take(decoder.decode(line), line: line.number)
        }
        try take(decoder.finish(), line: 0)
        guard seen == checked.events else { throw ImportError(.inputOutput, input.changed().message + kept()) }
        summary.firstAt = earliest
        summary.lastAt = latest
        if !events.isEmpty { try commit(last: true) }
        // A repeat was appended as a duplicate of the event its first line appended.
        summary.alreadyStored = max(0, duplicates - checked.repeats)
    }

    /// How many events of `batch` the store does not hold yet (an event twice in the batch, once).
    private func newEvents(_ batch: [Event], in store: OnboardingStore, input: ImportInput) throws(ImportError) -> Int {
        let ids = Set(batch.map(\.id))
        do {
            return ids.count - (try store.storedCount(of: ids))
        } catch {
            throw ImportError(.store, "\(input.name): \(error.message)", storeError: error)
        }
    }

    /// The `log_imported` event of an import whose last commit appends `appending` more events:
    /// on the store's device, at the store's clock, naming no user (docs/importers.md § The
    /// summary in the store).
    func summaryEvent(of summary: ImportSummary, appending: Int, device: String, at: Timestamp) -> Event {
        func clamped(_ count: Int) -> Int { min(max(count, 0), Payload.maximumImportCount) }
        let skipped = summary.skippedLines
        return Event(
            id: UUID(), device: device, at: at, user: nil, flow: nil,
            payload: .logImported(
                format: format.loggedFormat, events: clamped(summary.events), appended: clamped(summary.appended + appending),
                skipped: clamped(skipped.total), skippedKinds: skipped.recordedDescription,
                firstAt: summary.firstAt ?? at, lastAt: summary.lastAt ?? at))
    }
}
