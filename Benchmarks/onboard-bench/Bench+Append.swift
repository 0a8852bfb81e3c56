import CBaseline
import Foundation
import OnboardingModel
import OnboardingStore

extension Bench {
    /// One timed pass over a log: events per second, and the latency of each commit in ns.
    struct Pass {
        var eventsPerSecond: Double
        var commitNanoseconds: [Double]
    }

    /// Appends of `batchSize` events per commit: the store, C doing the store's writes, the bare
    /// single-put floor and SQLite, alternating.
    func measureAppend(batchSize: Int, eventCount: Int, relaxed: Bool) {
        let encoded = EncodedEvents(BenchEvents.make(count: eventCount, seed: UInt64(batchSize)))
        let ranges = encoded.batches(of: batchSize)
        let batches = ranges.map { Array(encoded.events[$0]) }
        var versusC = Paired(), versusFloor = Paired(), versusSQLite = Paired(), latencyVersusC = Paired()

        for _ in 0..<options.repetitions {
            let store = storeAppendPass(batches, relaxed: relaxed)
            let c = baselinePass(encoded, ranges, layout: CB_LAYOUT_STORE, relaxed: relaxed)
            let floor = baselinePass(encoded, ranges, layout: CB_LAYOUT_FLOOR, relaxed: relaxed)
            let sqlite = sqlitePass(encoded, ranges, relaxed: relaxed)
            versusC.subject.append(store.eventsPerSecond)
            versusC.baseline.append(c.eventsPerSecond)
            versusFloor.subject.append(store.eventsPerSecond)
            versusFloor.baseline.append(floor.eventsPerSecond)
            versusSQLite.subject.append(store.eventsPerSecond)
            versusSQLite.baseline.append(sqlite.eventsPerSecond)
            latencyVersusC.subject.append(percentile(store.commitNanoseconds, 0.5) / 1000)
            latencyVersusC.baseline.append(percentile(c.commitNanoseconds, 0.5) / 1000)
        }

        let mode = relaxed ? "relaxed" : "full"
        let size = batchSize == 1 ? "single" : "batch\(batchSize)"
        let note = "\(eventCount) events, \(batchSize)/commit"
        let targets = Bench.appendTargets[size + "_" + mode] ?? [:]
        for (suffix, paired, baseline) in [
            ("vs_c", versusC, "C same writes"), ("vs_floor", versusFloor, "C floor"),
            ("vs_sqlite", versusSQLite, "SQLite \(relaxed ? "NORMAL" : "FULL")")
        ] {
            let name = "append_\(size)_\(mode)_\(suffix)"
            if batchSize == 1 && suffix == "vs_c" {
                // For single appends the issue's target is commit latency.
                let target = targets[suffix]
                report.add(
                    BenchResult(
                        name: name, unit: "µs p50", paired: latencyVersusC, baseline: baseline,
                        target: target.map { "p50 ≤ \(format($0)) × C" }, goal: .atMost,
                        threshold: target, note: note))
                report.add(
                    BenchResult(
                        name: "append_\(size)_\(mode)_events_per_s_vs_c", unit: "events/s", paired: paired,
                        baseline: baseline, note: note))
                continue
            }
            let target = targets[suffix]
            report.add(
                BenchResult(
                    name: name, unit: "events/s", paired: paired, baseline: baseline,
                    target: target.map { "≥ \(format($0)) ×" }, threshold: target, note: note))
        }
    }

    /// The issue's thresholds, by "size_mode" then comparison.
    static let appendTargets: [String: [String: Double]] = [
        "batch1000_full": ["vs_c": 0.8, "vs_floor": 0.4, "vs_sqlite": 1.5],
        "single_full": ["vs_c": 1.1, "vs_sqlite": 1.0],
        "batch1000_relaxed": ["vs_c": 0.5]
    ]

    func storeAppendPass(_ batches: [[Event]], relaxed: Bool) -> Pass {
        let path = freshDirectory("store")
        defer { remove(path) }
        let store = openStore(at: path, relaxed: relaxed)
        defer { store.close() }
        var latencies: [Double] = []
        latencies.reserveCapacity(batches.count)
        var total = 0
        let start = now()
        for batch in batches {
            let commitStart = now()
            do {
                _ = try store.appendBlocking(batch)
            } catch {
                fatalError("store append failed: \(error)")
            }
            latencies.append(Double(now() - commitStart))
            total += batch.count
        }
        return Pass(eventsPerSecond: Double(total) / seconds(since: start), commitNanoseconds: latencies)
    }

    func baselinePass(_ encoded: EncodedEvents, _ ranges: [Range<Int>], layout: cb_layout, relaxed: Bool) -> Pass {
        let path = freshDirectory(layout == CB_LAYOUT_STORE ? "c" : "floor")
        defer { remove(path) }
        let handle = openBaseline(at: path, layout: layout, relaxed: relaxed)
        defer { cb_close(handle) }
        var latencies: [Double] = []
        latencies.reserveCapacity(ranges.count)
        let start = now()
        for range in ranges {
            let commitStart = now()
            let rc =
                layout == CB_LAYOUT_STORE
                ? cb_append_store(handle, encoded.slice(range), range.count)
                : cb_append_floor(handle, encoded.slice(range), range.count)
            latencies.append(Double(now() - commitStart))
            checkC(rc, "C append")
        }
        return Pass(eventsPerSecond: Double(encoded.count) / seconds(since: start), commitNanoseconds: latencies)
    }

    func sqlitePass(_ encoded: EncodedEvents, _ ranges: [Range<Int>], relaxed: Bool) -> Pass {
        let path = freshDirectory("sqlite")
        defer { remove(path) }
        let log = SQLiteLog(path: (path as NSString).appendingPathComponent("events.sqlite"), relaxed: relaxed)
        var latencies: [Double] = []
        latencies.reserveCapacity(ranges.count)
        let start = now()
        for range in ranges {
            let commitStart = now()
            log.append(encoded, range)
            latencies.append(Double(now() - commitStart))
        }
        return Pass(eventsPerSecond: Double(encoded.count) / seconds(since: start), commitNanoseconds: latencies)
    }
}
