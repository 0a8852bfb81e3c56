import CBaseline
import Foundation
import OnboardingModel
import OnboardingProjections

extension Bench {
    /// Lockout decision latency with `lockoutKeys` keys: LockoutEngine.decide against a C hash
    /// table lookup and the same comparison. Each call is timed alone with the same clock on both
    /// sides; the clock's own cost (median of back-to-back reads) is subtracted from every sample.
    func measureLockoutDecision() {
        let keyCount = options.lockoutKeys
        let engine = Bench.lockoutEngine(keys: keyCount, lockEvery: 10)
        precondition(engine.keyCount == keyCount, "engine has \(engine.keyCount) keys, expected \(keyCount)")
        let decideAt = Timestamp(millisecondsSince1970: BenchEvents.startMilliseconds + 60_000)
        let keys = (0..<keyCount).map { engine.key(user: "user-\($0)", device: BenchEvents.device, factor: .password) }

        // The C table holds the same keys (user ‖ 0 ‖ device ‖ 0 ‖ factor) with their lock ends.
        guard let table = cb_lockout_create(keyCount) else { fatalError("cb_lockout_create failed") }
        defer { cb_lockout_destroy(table) }
        var keyBytes: [UInt8] = []
        var keyOffsets: [Int] = []
        for key in keys {
            keyOffsets.append(keyBytes.count)
            keyBytes += Array(key.user!.utf8) + [0] + Array(key.device!.utf8) + [0] + Array(key.factor.rawValue.utf8)
        }
        keyOffsets.append(keyBytes.count)
        for entry in engine.entries(at: decideAt) {
            guard let user = entry.key.user, let index = Int(user.dropFirst("user-".count)) else { continue }
            let until = entry.permanent ? Int64.max : entry.lockedUntil?.millisecondsSince1970 ?? Int64.min
            let rc = keyBytes.withUnsafeBufferPointer {
                cb_lockout_put(
                    table, $0.baseAddress! + keyOffsets[index], keyOffsets[index + 1] - keyOffsets[index],
                    until, Int32(entry.failures))
            }
            precondition(rc == 0, "C lockout table is full")
        }

        var random = SplitMix64(state: 7)
        let order = (0..<options.lockoutDecisionsPerRepetition).map { _ in random.next(below: keyCount) }
        let clockCost = Bench.clockCostNanoseconds()
        var p50 = Paired(), p99 = Paired(), p999 = Paired()
        var agreement = 0

        for _ in 0..<options.repetitions {
            var storeSamples = [Double](), cSamples = [Double]()
            storeSamples.reserveCapacity(order.count)
            cSamples.reserveCapacity(order.count)
            var locked = 0
            for index in order {
                let start = now()
                let decision = engine.decide(keys[index], at: decideAt)
                let end = now()
                if !decision.isAllowed { locked += 1 }
                storeSamples.append(max(Double(end - start) - clockCost, 0))
            }
            var cLocked = 0
            keyBytes.withUnsafeBufferPointer { bytes in
                let base = bytes.baseAddress!
                for index in order {
                    var failures: Int32 = 0
                    let start = now()
                    let isLocked = cb_lockout_decide(
                        table, base + keyOffsets[index], keyOffsets[index + 1] - keyOffsets[index],
                        decideAt.millisecondsSince1970, &failures)
                    let end = now()
                    cLocked += Int(isLocked)
                    cSamples.append(max(Double(end - start) - clockCost, 0))
                }
            }
            agreement = locked == cLocked ? agreement : agreement + 1
            p50.subject.append(percentile(storeSamples, 0.5))
            p50.baseline.append(percentile(cSamples, 0.5))
            p99.subject.append(percentile(storeSamples, 0.99))
            p99.baseline.append(percentile(cSamples, 0.99))
            p999.subject.append(percentile(storeSamples, 0.999))
            p999.baseline.append(percentile(cSamples, 0.999))
        }
        precondition(agreement == 0, "the C table and LockoutEngine disagree on which keys are locked")

        let note = "\(keyCount) keys, clock cost \(format(clockCost)) ns subtracted"
        let p99Value = median(p99.subject), p50Ratio = median(p50.ratios)
        var target = BenchResult(
            name: "lockout_decision_p99", unit: "ns p99", paired: p99, baseline: "C hash lookup",
            target: "p99 ≤ 1 µs, p50 ≤ 2 × C", note: note + "; met needs p50 ratio \(format(p50Ratio)) ≤ 2")
        target.met = p99Value <= 1_000 && p50Ratio <= 2
        report.add(target)
        report.add(
            BenchResult(
                name: "lockout_decision_p50_vs_c", unit: "ns p50", paired: p50, baseline: "C hash lookup",
                target: "≤ 2 × C", goal: .atMost, threshold: 2, note: note))
        report.add(
            BenchResult(
                name: "lockout_decision_p999_vs_c", unit: "ns p99.9", paired: p999, baseline: "C hash lookup",
                note: note))
    }

    /// An engine with `keys` password keys on one device, one user each; every `lockEvery`-th key
    /// failed often enough within a minute to be locked (MediaWiki: 5 per 5 minutes).
    static func lockoutEngine(keys: Int, lockEvery: Int) -> LockoutEngine {
        var engine = LockoutEngine(policy: .mediawiki)
        var seq: UInt64 = 0
        var random = SplitMix64(state: 11)
        for index in 0..<keys {
            let failures = index % lockEvery == 0 ? 6 : 1
            for attempt in 0..<failures {
                seq += 1
                let event = Event(
                    id: BenchEvents.uuid(&random, milliseconds: BenchEvents.startMilliseconds),
                    device: BenchEvents.device,
                    at: Timestamp(millisecondsSince1970: BenchEvents.startMilliseconds + Int64(attempt) * 1_000),
                    user: "user-\(index)", flow: nil,
                    payload: .signInFailed(method: .passcode, reason: .invalidPasscode))
                engine.apply(Record(seq: seq, event: event, previousHash: .zero, hash: .zero))
            }
        }
        return engine
    }

    /// The median cost of reading the clock twice back to back, in nanoseconds.
    static func clockCostNanoseconds() -> Double {
        var samples: [Double] = []
        samples.reserveCapacity(100_000)
        for _ in 0..<100_000 {
            let start = now()
            samples.append(Double(now() - start))
        }
        return median(samples)
    }
}
