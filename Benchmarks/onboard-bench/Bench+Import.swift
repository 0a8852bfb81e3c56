import Foundation
import OnboardingImport
import OnboardingModel
import OnboardingStore

extension Bench {
    /// `onboard import` of a JSONL file through the importer the CLI runs (``EventImporter``:
    /// the check pass, then the append pass with the default commit size, the store opened,
    /// created and closed by the importer as the command does), against the same events appended
    /// in batches of 1,000 (`append_batch1000_full`'s pass), alternating, durable both.
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

        var versusAppend = Paired()
        for _ in 0..<options.repetitions {
            versusAppend.subject.append(importPass(file, eventCount: eventCount))
            versusAppend.baseline.append(storeAppendPass(batches, relaxed: false).eventsPerSecond)
        }
        let megabytes = String(format: "%.1f", Double(bytes.count) / 1_048_576)
        report.add(BenchResult(name: "import_jsonl_full_vs_append_batch1000", unit: "events/s", paired: versusAppend,
                               baseline: "store append, 1,000/commit", target: "≥ 0.5 ×", threshold: 0.5,
                               note: "\(eventCount) events, \(megabytes) MiB of JSONL, \(EventImporter.defaultCommitEvents)/commit"))
    }

    /// One import into a new store; events per second from opening the input to the store's close.
    func importPass(_ file: String, eventCount: Int) -> Double {
        let path = freshDirectory("import-store")
        defer { remove(path) }
        var storeOptions = OnboardingStore.Options()
        storeOptions.durability = .full
        storeOptions.deviceID = BenchEvents.device
        let importer = EventImporter(storePath: path, storeOptions: storeOptions)
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
}
