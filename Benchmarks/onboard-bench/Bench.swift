import CBaseline
import Foundation
import OnboardingModel
import OnboardingStore

/// Runs the measurements of docs/benchmarks.md. Every measurement alternates the store and its baselines
/// (A B A B …) for `repetitions` rounds in one process, so a noisy machine affects both sides alike.
final class Bench {
    let options: BenchOptions
    let report = Report()
    /// Scratch directory of this run; every store and baseline gets a fresh subdirectory.
    let scratch: String
    private var nextDirectory = 0

    /// Large enough that the C baselines never grow their map (the store grows its own as it does
    /// in production). LMDB does not allocate the map up front on Linux.
    static let baselineMapSizeBytes = 1 << 34

    init(options: BenchOptions) {
        self.options = options
        let base = (options.directory as NSString).appendingPathComponent("onboard-bench-\(getpid())")
        scratch = base
        try? FileManager.default.removeItem(atPath: base)
        do {
            try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        } catch {
            failOperation("cannot create the scratch directory \(base): \(error)")
        }
    }

    func removeScratch() {
        try? FileManager.default.removeItem(atPath: scratch)
    }

    /// A new, empty directory for one store or baseline run.
    func freshDirectory(_ label: String) -> String {
        nextDirectory += 1
        let path = (scratch as NSString).appendingPathComponent("\(nextDirectory)-\(label)")
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            fatalError("cannot create \(path): \(error)")
        }
        return path
    }

    func remove(_ path: String) {
        try? FileManager.default.removeItem(atPath: path)
    }

    func openStore(at path: String, relaxed: Bool) -> OnboardingStore {
        var storeOptions = OnboardingStore.Options()
        storeOptions.durability = relaxed ? .relaxed : .full
        storeOptions.deviceID = BenchEvents.device
        do {
            return try OnboardingStore.open(at: path, options: storeOptions)
        } catch {
            fatalError("cannot open the store at \(path): \(error)")
        }
    }

    func openBaseline(at path: String, layout: cb_layout, relaxed: Bool) -> OpaquePointer {
        var handle: OpaquePointer?
        let rc = cb_open(path, layout, relaxed ? 1 : 0, Bench.baselineMapSizeBytes, &handle)
        guard rc == 0, let handle else { fatalError("cb_open \(path) failed: \(lmdbMessage(rc))") }
        return handle
    }

    func section(_ title: String) {
        emit("\n== \(title)")
    }
}

func lmdbMessage(_ rc: Int32) -> String { "\(rc) (\(String(cString: strerror(rc))))" }

func checkC(_ rc: Int32, _ what: String) {
    guard rc == 0 else { fatalError("\(what) failed: \(lmdbMessage(rc))") }
}
