import Foundation
import OnboardingModel
import OnboardingStore

/// `onboard prune`: remove the oldest events the sync server already holds.
enum PruneCommand {
    static let beforeOption = OptionSpec(
        name: "before", valueName: "DATE",
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
            "Right before deleting, prune asks the server (--server, --token) how far it holds the log",
            "and prunes no further than it confirms with this store's hash there: a server that lost",
            "records, or lies, cannot make the device delete what it does not hold. When the server",
            "cannot be reached, nothing is pruned (exit 69). --dry-run without --server plans from the",
            "store's own sync cursor. Exit 75 when the server has acknowledged nothing yet (run onboard sync first)."
        ],
        options: [.store, beforeOption, dryRunOption] + SyncCommand.connectionOptions,
        argumentCount: 0...0,
        run: run)

    static func run(_ invocation: Invocation) throws(CLIError) -> Int32 {
        guard let text = invocation.values["before"] else {
            throw .usage("onboard prune: --before DATE is required, e.g. --before 2026-06-01")
        }
        let before = try parseDate(text)
        let dryRun = invocation.has("dry-run")
        let server = try SyncCommand.connection(invocation)
        if server == nil && !dryRun {
            throw .usage(
                "onboard prune: --server URL is required: prune asks the sync server what it holds right before deleting (--dry-run alone plans from the store's cursor)"
            )
        }
        let store = try OnboardTool.openStore(invocation, writable: !dryRun || server != nil)
        defer { store.close() }
        if let server { try confirmWithServer(store, server) }
        let plan: PruneResult
        do { plan = try store.planPrune(before: before) } catch { throw CLIError(CLIError(error).exitCode, "onboard prune: \(error.message)") }
        if plan.limit == .nothingAcknowledged {
            throw CLIError(
                ExitCode.tempFail, "onboard prune: nothing pruned: the sync server has acknowledged no event of \(store.path) yet; run onboard sync first")
        }
        guard plan.removed != nil else {
            // The prune point is read from disk: it may be the largest seq there is.
            let start = plan.prunedThrough?.firstKeptSeqText ?? "seq 1"
            print("nothing to prune: the log starts at \(start) and \(stopReason(plan, before: before))")
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
                FileHandle.standardError.write(
                    Data("\rprune: removed \(progress.removedRecords) / \(progress.totalRecords) events (through seq \(progress.throughSeq))".utf8))
            }
        } catch {
            if showProgress { FileHandle.standardError.write(Data("\n".utf8)) }
            let kept = (try? store.prunedThrough()).flatMap { $0 }.map { " (seq 1…\($0.seq) were pruned before it stopped; run prune again to continue)" } ?? ""
            throw CLIError(CLIError(error).exitCode, "onboard prune: \(error.message)\(kept)")
        }
        if showProgress { FileHandle.standardError.write(Data("\n".utf8)) }
        print("pruned \(summary(result))")
        if let point = result.prunedThrough {
            print(
                "the log now starts at \(point.firstKeptSeqText), linked to \(point.hash.hex) (pruned_through); it stops there because \(stopReason(result, before: before))"
            )
        }
        return ExitCode.success
    }

    /// Asks the server how far it holds the log, checks its hash there, and moves the store's
    /// sync cursor back to that seq when it claims more: the prune then stops there. Prunes
    /// nothing (throws) when the server cannot confirm.
    static func confirmWithServer(_ store: OnboardingStore, _ server: (transport: any SyncTransport, token: String)) throws(CLIError) {
        let client = SyncClient(store: store, transport: server.transport, token: server.token)
        let outcome = runBlocking { () async throws(SyncError) -> UInt64 in try await client.confirmedAcknowledgement() }
        let confirmed: UInt64
        switch outcome {
        case .success(let seq): confirmed = seq
        case .failure(let error):
            throw CLIError(SyncCommand.exitCode(of: error), "onboard prune: nothing pruned: the server did not confirm what it holds: \(error.message)")
        }
        do {
            let local = try store.syncCursor()
            if confirmed < local {
                try store.setSyncCursor(confirmed)
                Output.error(
                    "onboard prune: the server now holds only seq 1…\(confirmed) of the \(local) it acknowledged before; pruning stops there (the next sync resends the rest)"
                )
            }
        } catch {
            throw CLIError(CLIError(error).exitCode, "onboard prune: nothing pruned: \(error.message)")
        }
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
        return
            "\(result.recordCount) \(noun) (seq \(range.lowerBound)…\(range.upperBound), about \(byteText(result.freedBytesEstimate)) freed for reuse; the file keeps its size)"
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
