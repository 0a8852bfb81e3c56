import CBaseline
import Dispatch
import Foundation
import OnboardingModel
import OnboardingStore

extension Bench {
    /// `appenders` concurrent tasks each appending single events and awaiting durability (full),
    /// against C committing the same events in batches of 64 and against C's single-event commit
    /// latency.
    func measureGroupCommit(appenders: Int) {
        let perAppender = max(options.groupCommitEvents / appenders, 1)
        let total = perAppender * appenders
        let encoded = EncodedEvents(BenchEvents.make(count: total, seed: UInt64(1_000 + appenders)))
        let lists = (0..<appenders).map { Array(encoded.events[($0 * perAppender)..<(($0 + 1) * perAppender)]) }
        // C single commits: enough to give a p99, few enough to stay quick.
        let singleRanges = Array(encoded.batches(of: 1).prefix(options.quick ? 100 : 500))
        var throughput = Paired(), p50 = Paired(), p99 = Paired()

        for _ in 0..<options.repetitions {
            let path = freshDirectory("group")
            let store = openStore(at: path, relaxed: false)
            let start = now()
            let latencies = runBlocking {
                await withTaskGroup(of: [Double].self) { group in
                    for list in lists {
                        group.addTask {
                            var samples: [Double] = []
                            samples.reserveCapacity(list.count)
                            for event in list {
                                let appendStart = now()
                                do { _ = try await store.append(event) } catch { fatalError("append failed: \(error)") }
                                samples.append(Double(now() - appendStart) / 1000)
                            }
                            return samples
                        }
                    }
                    return await group.reduce(into: [Double]()) { $0 += $1 }
                }
            }
            throughput.subject.append(Double(total) / seconds(since: start))
            store.close()
            remove(path)

            throughput.baseline.append(
                baselinePass(
                    encoded, encoded.batches(of: 64), layout: CB_LAYOUT_STORE,
                    relaxed: false
                ).eventsPerSecond)
            let single = baselinePass(encoded, singleRanges, layout: CB_LAYOUT_STORE, relaxed: false).commitNanoseconds
            p50.subject.append(percentile(latencies, 0.5))
            p50.baseline.append(percentile(single, 0.5) / 1000)
            p99.subject.append(percentile(latencies, 0.99))
            p99.baseline.append(percentile(single, 0.99) / 1000)
        }

        let note = "\(appenders) appenders × \(perAppender) events, full"
        let p99Ratio = median(p99.ratios)
        if appenders == 64 {
            var result = BenchResult(
                name: "group_commit_64_vs_c_batch64", unit: "events/s", paired: throughput,
                baseline: "C batches of 64", target: "≥ 0.6 ×; p99 ≤ 3 × C single",
                note: note + "; p99 ratio \(format(p99Ratio))")
            result.met = (result.ratio ?? 0) >= 0.6 && p99Ratio <= 3
            report.add(result)
        } else {
            report.add(
                BenchResult(
                    name: "group_commit_\(appenders)_vs_c_batch64", unit: "events/s", paired: throughput,
                    baseline: "C batches of 64", note: note))
        }
        report.add(
            BenchResult(
                name: "group_commit_\(appenders)_p50_vs_c_single", unit: "µs p50", paired: p50,
                baseline: "C single commit", note: note))
        report.add(
            BenchResult(
                name: "group_commit_\(appenders)_p99_vs_c_single", unit: "µs p99", paired: p99,
                baseline: "C single commit", target: appenders == 64 ? "≤ 3 × C" : nil, goal: .atMost,
                threshold: appenders == 64 ? 3 : nil, note: note))
    }
}

/// Runs async work from the benchmark's synchronous main thread (never a cooperative thread).
func runBlocking<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
    let box = BlockingBox<T>()
    let done = DispatchSemaphore(value: 0)
    Task {
        box.value = await body()
        done.signal()
    }
    done.wait()
    return box.value!
}

private final class BlockingBox<T>: @unchecked Sendable {
    // Written by the task before it signals the semaphore, read after `wait` returns: the
    // semaphore orders the write before the read.
    var value: T?
}
