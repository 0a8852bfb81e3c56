import Foundation
import OnboardingImport
import OnboardingModel
import OnboardingStore

extension Bench {
    /// `onboard import` of a JSONL file through the importer the CLI runs (``EventImporter``:
    /// the check pass, then the append pass with the default commit size, the store created,
    /// opened and closed by the importer as the command does), against the same events appended
    /// in batches of 1,000 (as `append_batch1000_full` appends them), alternating, durable both.
    /// Both sides are timed from creating the store to closing it: the close writes the final
    /// projection snapshot and signs the head, part of every import.
    func measureImport(eventCount: Int) {
        // The batch-1000 measurement's events (its seed), written as `onboard generate` writes them.
        let events = BenchEvents.make(count: eventCount, seed: 1_000)
        let directory = freshDirectory("import-input")
        defer { remove(directory) }
        let file = (directory as NSString).appendingPathComponent("events.jsonl")
        var bytes: [UInt8] = []
        bytes.reserveCapacity(eventCount * 256)
        for event in events {
            EventJSON.encode(event, seq: nil, into: &bytes)
            bytes.append(0x0A)
        }
        guard FileManager.default.createFile(atPath: file, contents: Data(bytes)) else {
            failOperation("cannot write \(file)")
        }
        let batches = stride(from: 0, to: events.count, by: 1_000).map { Array(events[$0..<min($0 + 1_000, events.count)]) }

        // The import as users run it (default commit size), and with the baseline's 1,000 events
        // per commit: the second isolates what reading, decoding and checking cost.
        var versusAppend = Paired(), sameCommits = Paired()
        for _ in 0..<options.repetitions {
            versusAppend.subject.append(importPass(file, eventCount: eventCount, commitEvents: EventImporter.defaultCommitEvents))
            sameCommits.subject.append(importPass(file, eventCount: eventCount, commitEvents: 1_000))
            let append = appendOpenToClosePass(batches)
            versusAppend.baseline.append(append)
            sameCommits.baseline.append(append)
        }
        let megabytes = String(format: "%.1f", Double(bytes.count) / 1_048_576)
        report.add(
            BenchResult(
                name: "import_jsonl_full_vs_append_batch1000", unit: "events/s", paired: versusAppend,
                baseline: "store append, 1,000/commit, open to close", target: "≥ 0.5 ×", threshold: 0.5,
                note: "\(eventCount) events, \(megabytes) MiB of JSONL, \(EventImporter.defaultCommitEvents)/commit"))
        report.add(
            BenchResult(
                name: "import_jsonl_commit1000_full_vs_append_batch1000", unit: "events/s", paired: sameCommits,
                baseline: "store append, 1,000/commit, open to close",
                note: "the same import with --commit-every 1000: the cost of reading, decoding and checking"))
    }

    /// One import into a new store; events per second from opening the input to the store's close.
    func importPass(_ file: String, eventCount: Int, commitEvents: Int) -> Double {
        let path = freshDirectory("import-store")
        defer { remove(path) }
        var storeOptions = OnboardingStore.Options()
        storeOptions.durability = .full
        storeOptions.deviceID = BenchEvents.device
        let importer = EventImporter(storePath: path, storeOptions: storeOptions, commitEvents: commitEvents)
        let start = now()
        let summary: ImportSummary
        do {
            summary = try importer.run(try ImportInput(path: file))
        } catch {
            fatalError("import failed: \(error)")
        }
        let elapsed = seconds(since: start)
        guard summary.appended == eventCount else { fatalError("import appended \(summary.appended) of \(eventCount) events") }
        return Double(eventCount) / elapsed
    }

    /// `appendBlocking` of the batches into a new store, timed from its creation to its close.
    func appendOpenToClosePass(_ batches: [[Event]]) -> Double {
        let path = freshDirectory("append-store")
        defer { remove(path) }
        let start = now()
        let store = openStore(at: path, relaxed: false)
        var total = 0
        for batch in batches {
            do {
                _ = try store.appendBlocking(batch)
            } catch {
                fatalError("store append failed: \(error)")
            }
            total += batch.count
        }
        store.close()
        return Double(total) / seconds(since: start)
    }
}
