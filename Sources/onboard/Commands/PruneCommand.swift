import Foundation
import OnboardingModel
import OnboardingStore

/// `onboard prune`: remove the oldest events the sync server already holds.
enum PruneCommand {
    static let beforeOption = OptionSpec(name: "before", valueName: "DATE",
                                         help: "remove acknowledged events older than this UTC date (2026-06-01) or time (2026-06-01T12:00:00Z)")
    static let dryRunOption = OptionSpec(name: "dry-run", valueName: nil, help: "print what would be removed and remove nothing")

    static let spec = CommandSpec(
        name: "prune",
        summary: "remove old events the sync server has acknowledged; the chain stays verifiable",
        arguments: "",
        details: [
            "Removes the oldest events, seq 1 on, that the sync server has acknowledged and that happened",
            "before DATE, with their index entries; it stops at the first event that is not acknowledged",
            "or not older. The hash of the last removed event is kept (pruned_through), so verify checks",
            "the chain from there, and the projection state at that point is kept as a snapshot, so the",
            "lockout, session and users stay exact. The server keeps the full history. Each batch of",
            "\(OnboardingStore.pruneBatchRecords) events is one transaction; an interrupted prune is continued by running it again.",
            "Exit 75 when the server has acknowledged nothing yet (run onboard sync first).",
        ],
        options: [.store, beforeOption, dryRunOption],
        argumentCount: 0...0,
        run: run)

    static func run(_ invocation: Invocation) throws(CLIError) -> Int32 {
        guard let text = invocation.values["before"] else {
            throw .usage("onboard prune: --before DATE is required, e.g. --before 2026-06-01")
        }
        let before = try parseDate(text)
        let dryRun = invocation.has("dry-run")
        let store = try OnboardTool.openStore(invocation, writable: !dryRun)
        defer { store.close() }
        let plan: PruneResult
        do { plan = try store.planPrune(before: before) } catch { throw CLIError(CLIError(error).exitCode, "onboard prune: \(error.message)") }
        if plan.limit == .nothingAcknowledged {
            throw CLIError(ExitCode.tempFail, "onboard prune: nothing pruned: the sync server has acknowledged no event of \(store.path) yet; run onboard sync first")
        }
        guard plan.removed != nil else {
            let start = (plan.prunedThrough?.seq ?? 0) + 1
            print("nothing to prune: the log starts at seq \(start) and \(stopReason(plan, before: before))")
            return ExitCode.success
        }
        if dryRun {
            print("would prune \(summary(plan))")
            print("it stops there because \(stopReason(plan, before: before))")
            return ExitCode.success
        }
        let showProgress = Output.standardErrorIsTerminal && plan.recordCount > OnboardingStore.pruneBatchRecords
        let result: PruneResult
        do {
            result = try store.prune(before: before) { progress in
                guard showProgress else { return }
                FileHandle.standardError.write(Data("\rprune: removed \(progress.removedRecords) / \(progress.totalRecords) events (through seq \(progress.throughSeq))".utf8))
            }
        } catch {
            if showProgress { FileHandle.standardError.write(Data("\n".utf8)) }
            let kept = (try? store.prunedThrough()).flatMap { $0 }.map { " (seq 1…\($0.seq) were pruned before it stopped; run prune again to continue)" } ?? ""
            throw CLIError(CLIError(error).exitCode, "onboard prune: \(error.message)\(kept)")
        }
        if showProgress { FileHandle.standardError.write(Data("\n".utf8)) }
        print("pruned \(summary(result))")
        if let point = result.prunedThrough {
            print("the log now starts at \(point.firstKeptSeqText), linked to \(point.hash.hex) (pruned_through); it stops there because \(stopReason(result, before: before))")
        }
        return ExitCode.success
    }

    /// `YYYY-MM-DD` (midnight UTC) or a UTC date-time as everywhere else.
    static func parseDate(_ text: String) throws(CLIError) -> Timestamp {
        let isDate = text.utf8.count == 10
        do { return try Timestamp(iso8601: isDate ? text + "T00:00:00Z" : text) } catch {
            throw .usage("onboard prune: --before \"\(text)\" is not an ISO 8601 UTC date (2026-06-01) or date-time (2026-06-01T12:00:00Z)")
        }
    }

    static func summary(_ result: PruneResult) -> String {
        guard let range = result.removed else { return "nothing" }
        let noun = result.recordCount == 1 ? "event" : "events"
        return "\(result.recordCount) \(noun) (seq \(range.lowerBound)…\(range.upperBound), about \(byteText(result.freedBytesEstimate)) freed for reuse; the file keeps its size)"
    }

    /// Why the prune stops where it does.
    static func stopReason(_ result: PruneResult, before: Timestamp) -> String {
        switch result.limit {
        case .nothingAcknowledged: return "the sync server has acknowledged no event yet"
        case .acknowledged(let seq): return "events after seq \(seq) are not acknowledged by the sync server yet"
        case .date: return "the next event is not older than \(before.iso8601)"
        case .head: return "every event was acknowledged and older than \(before.iso8601)"
        }
    }

    static func byteText(_ bytes: Int) -> String {
        if bytes >= 10 << 20 { return "\(bytes >> 20) MiB" }
        if bytes >= 10 << 10 { return "\(bytes >> 10) KiB" }
        return "\(bytes) bytes"
    }
}
