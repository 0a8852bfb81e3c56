import OnboardingStore

/// `onboard verify`: the hash chain and every index against the log.
enum VerifyCommand {
    static let spec = CommandSpec(
        name: "verify",
        summary: "check the hash chain, the seqs and every index; exit 1 on any problem",
        arguments: "",
        details: [
            "Reads every record, recomputes its hash, checks each link to the previous record and",
            "that seqs run from 1 without gaps, and checks by_id, by_user and by_session hold exactly",
            "the entries the log implies, and that the projection snapshot equals a rebuild of the log.",
            "A pruned store is checked from its prune point: the first kept record must link to the hash",
            "pruned_through keeps, the prune point must not pass the server's acknowledgement, and the",
            "rebuild starts from the base snapshot kept at the prune point.",
            "Each problem is printed with its seq.",
        ],
        options: [.store],
        argumentCount: 0...0,
        run: run)

    static func run(_ invocation: Invocation) throws(CLIError) -> Int32 {
        let store = try OnboardTool.openStore(invocation, writable: false)
        defer { store.close() }
        let report: VerifyReport
        do { report = try store.verify() } catch { throw CLIError(CLIError(error).exitCode, "onboard verify: \(error.message)") }
        if report.isValid {
            let snapshot = report.snapshotSeq.map { "; projection snapshot at seq \($0) matches a rebuild" } ?? ""
            let pruned = report.prunedThrough.map { point in
                "; seq 1…\(point.seq) pruned (acknowledged through seq \(report.acknowledgedSeq)), chain checked from \(point.hash.hex)"
            } ?? ""
            print("ok: \(report.recordsChecked) records, hash chain intact, indexes match\(snapshot)\(pruned); head seq \(report.headSeq) \(report.headHash.hex)")
            return ExitCode.success
        }
        let total = report.problems.count + report.unreportedProblems
        Output.error("onboard verify: \(store.path) has \(total) problem\(total == 1 ? "" : "s"); restore it from a backup or a server copy")
        for problem in report.problems { Output.error("  \(problem)") }
        if report.unreportedProblems > 0 { Output.error("  … and \(report.unreportedProblems) more") }
        return ExitCode.verifyFailed
    }
}
