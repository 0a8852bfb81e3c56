import CBaseline
import Foundation

/// Nanoseconds on CLOCK_MONOTONIC; the same timer for the store and every baseline.
@inline(__always) func now() -> UInt64 { cb_now_nanoseconds() }

func seconds(since start: UInt64) -> Double { Double(now() - start) / 1e9 }

/// Nearest-rank percentile of `samples` (which need not be sorted); `p` in 0...1.
func percentile(_ samples: [Double], _ p: Double) -> Double {
    precondition(!samples.isEmpty, "a percentile needs samples")
    let sorted = samples.sorted()
    let rank = Int((p * Double(sorted.count)).rounded(.up)) - 1
    return sorted[min(max(rank, 0), sorted.count - 1)]
}

func median(_ samples: [Double]) -> Double {
    precondition(!samples.isEmpty, "a median needs samples")
    let sorted = samples.sorted()
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/// The per-repetition figures of one side of a paired measurement, and the ratios against it.
struct Paired {
    var subject: [Double] = []
    var baseline: [Double] = []

    /// subject / baseline per repetition (higher is better for throughput, lower for latency).
    var ratios: [Double] { zip(subject, baseline).map { $0 / $1 } }
}

/// Writes a line to standard output at once (unbuffered), so a long run shows its progress
/// even when piped to a file.
func emit(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
