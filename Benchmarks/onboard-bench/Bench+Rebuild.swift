import CBaseline
import Foundation
import OnboardingLab
import OnboardingModel
import OnboardingProjections
import OnboardingStore

extension Bench {
    /// Rebuild of all projections against the C full-read scan, and a user's history against C's
    /// by_user range scan and reads, on one log of `logEvents` events written by both sides.
    func measureRebuildAndHistory() {
        let count = options.logEvents
        let encoded = EncodedEvents(BenchEvents.make(count: count, historyEvents: options.historyEvents, seed: 42))
        let ranges = encoded.batches(of: 1_000)

        let fillStart = now()
        let storePath = freshDirectory("log-store")
        let store = openStore(at: storePath, relaxed: true)
        for range in ranges {
            do { _ = try store.appendBlocking(Array(encoded.events[range])) } catch { fatalError("fill failed: \(error)") }
        }
        let storeFill = seconds(since: fillStart)
        let cPath = freshDirectory("log-c")
        let c = openBaseline(at: cPath, layout: CB_LAYOUT_STORE, relaxed: true)
        for range in ranges { checkC(cb_append_store(c, encoded.slice(range), range.count), "C fill") }
        // The C baseline must write the store's bytes: its head hash, computed in C over the
        // chain, equals the last record's hash as the store's encoder computed it.
        var headSeq: UInt64 = 0
        var headHash = [UInt8](repeating: 0, count: Digest.byteCount)
        checkC(cb_head(c, &headSeq, &headHash), "C head")
        let last = encoded.descriptors[count - 1]
        precondition(
            headSeq == UInt64(count) && headHash == Array(UnsafeBufferPointer(start: last.record + 1, count: Digest.byteCount)),
            "the C baseline's hash chain differs from the store's encoding")
        let stored: Int
        do { stored = try store.records(user: BenchEvents.historyUser).count } catch { fatalError("records(user:) failed: \(error)") }
        precondition(stored == options.historyEvents, "the store holds \(stored) history events, not \(options.historyEvents)")
        emit("   (filled \(count) events: store \(format(storeFill)) s, C \(format(seconds(since: fillStart) - storeFill)) s)")
        defer {
            store.close()
            cb_close(c)
            remove(storePath)
            remove(cPath)
        }

        var rebuild = Paired()
        for _ in 0..<options.repetitions {
            var start = now()
            let state: OnboardingState
            do { state = try store.rebuildState(policy: .mediawiki) } catch { fatalError("rebuild failed: \(error)") }
            rebuild.subject.append(Double(count) / seconds(since: start))
            precondition(state.seq == UInt64(count), "rebuild folded \(state.seq) of \(count) events")

            start = now()
            var records: UInt64 = 0, bytes: UInt64 = 0
            checkC(cb_scan(c, &records, &bytes), "C scan")
            rebuild.baseline.append(Double(count) / seconds(since: start))
            precondition(records == UInt64(count), "C scanned \(records) of \(count) records")
        }
        report.add(
            BenchResult(
                name: "rebuild_vs_c_scan", unit: "events/s", paired: rebuild, baseline: "C cursor scan",
                target: "≥ 0.3 ×", threshold: 0.3, note: "\(count) events, all projections"))

        // The lockout lab's replay path (docs/lab.md): a log read into lockout inputs with no
        // hash check and no projection, then replayed under one policy, against the same C scan.
        var lab = Paired(), labRead = Paired()
        for _ in 0..<options.repetitions {
            var start = now()
            let log: LabLog
            do { log = try LabLog(store: store) } catch { fatalError("lab read failed: \(error)") }
            let read = seconds(since: start)
            let result = LabReplay.run(log, policy: .mediawiki)
            let total = seconds(since: start)
            precondition(log.eventCount == count && result.policy == "mediawiki", "the lab read \(log.eventCount) of \(count) events")
            lab.subject.append(Double(count) / total)
            labRead.subject.append(Double(count) / read)

            start = now()
            var records: UInt64 = 0, bytes: UInt64 = 0
            checkC(cb_scan(c, &records, &bytes), "C scan")
            let c = Double(count) / seconds(since: start)
            lab.baseline.append(c)
            labRead.baseline.append(c)
        }
        report.add(
            BenchResult(
                name: "lab_replay_vs_c_scan", unit: "events/s", paired: lab, baseline: "C cursor scan",
                target: "≥ 0.3 ×", threshold: 0.3, note: "\(count) events: lockout-only read and one mediawiki replay, no hash check"))
        report.add(
            BenchResult(
                name: "lab_read_vs_c_scan", unit: "events/s", paired: labRead, baseline: "C cursor scan",
                note: "the read alone: what a sweep pays once, before its replays"))

        // The store's history checks every record it reads (BLAKE2b of previous hash ‖ body, the
        // same check as a rebuild), so the baseline it is held to does the same in C: range scan,
        // a read of every byte of each record, and the hash check. The C range scan without the
        // check is reported beside it, so the price of the check stays visible.
        var p50 = Paired(), p99 = Paired(), p99Unverified = Paired()
        let user = BenchEvents.historyUser
        let userBytes = EncodedEvents.indexPrefix(of: user)
        func cHistory(verify: Bool) -> Double {
            var records: UInt64 = 0, bytes: UInt64 = 0
            let start = now()
            let rc = cb_history(c, userBytes, userBytes.count, verify ? 1 : 0, &records, &bytes)
            let microseconds = Double(now() - start) / 1000
            checkC(rc, "C history")
            precondition(records == UInt64(options.historyEvents), "C history read \(records) records")
            return microseconds
        }
        for _ in 0..<options.repetitions {
            var storeLatencies: [Double] = [], cLatencies: [Double] = [], cUnverifiedLatencies: [Double] = []
            for _ in 0..<options.historyCallsPerRepetition {
                let start = now()
                let history: History
                do { history = try store.history(user: user) } catch { fatalError("history failed: \(error)") }
                storeLatencies.append(Double(now() - start) / 1000)
                withExtendedLifetime(history) {}
            }
            for _ in 0..<options.historyCallsPerRepetition { cLatencies.append(cHistory(verify: true)) }
            for _ in 0..<options.historyCallsPerRepetition { cUnverifiedLatencies.append(cHistory(verify: false)) }
            p50.subject.append(percentile(storeLatencies, 0.5))
            p50.baseline.append(percentile(cLatencies, 0.5))
            p99.subject.append(percentile(storeLatencies, 0.99))
            p99.baseline.append(percentile(cLatencies, 0.99))
            p99Unverified.subject.append(percentile(storeLatencies, 0.99))
            p99Unverified.baseline.append(percentile(cUnverifiedLatencies, 0.99))
        }
        let note = "\(options.historyEvents) events among \(count), each hash-checked on both sides"
        report.add(
            BenchResult(
                name: "history_user_p50_vs_c", unit: "µs p50", paired: p50, baseline: "C range scan + check",
                note: note))
        report.add(
            BenchResult(
                name: "history_user_p99_vs_c", unit: "µs p99", paired: p99, baseline: "C range scan + check",
                target: "≤ 2 × C", goal: .atMost, threshold: 2, note: note))
        report.add(
            BenchResult(
                name: "history_user_p99_vs_c_unverified", unit: "µs p99", paired: p99Unverified,
                baseline: "C range scan", note: "C reads every byte but checks no hash"))
    }
}
