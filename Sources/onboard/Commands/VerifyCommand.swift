import OnboardingStore

/// `onboard verify`: the hash chain, every index, the snapshot and the signed heads against the log.
enum VerifyCommand {
    static let spec = CommandSpec(
        name: "verify",
        summary: "check the hash chain, seqs, indexes and signed heads; exit 1 on any problem",
        arguments: "",
        details: [
            "Reads every record, recomputes its hash, checks each link to the previous record and",
            "that seqs run from 1 without gaps, and checks by_id, by_user and by_session hold exactly",
            "the entries the log implies, and that the projection snapshot equals a rebuild of the log.",
            "Every signed head must verify with the store's public key and name a record the log",
            "holds with the signed hash. Each problem is printed with its seq and its kind: modified,",
            "missing, reordered, bad signature, index, snapshot or damaged; the first bad seq leads.",
            "docs/audit.md describes the procedure and what it can and cannot detect.",
            "A pruned store is checked from its prune point: the first kept record must link to the hash",
            "pruned_through keeps, the prune point must not pass the server's acknowledgement, and the",
            "rebuild starts from the base snapshot kept at the prune point. A signed head below the",
            "prune point has only its signature checked (its record is gone): verify says what it proves.",
            "Every record's user must have an entry in user_keys; a record whose user has none is named.",
            "Design findings: every sign_in_options_shown whose screen breaks App Store Review Guideline",
            "4.8 (a third-party provider without Sign in with Apple, or Apple not first on iOS) is counted",
            "and the first few are listed. They are about the app, not the log: the exit status stays",
            "that of the integrity checks (docs/projections.md § Sign-in options)."
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
            let pruned =
                report.prunedThrough.map { point in
                    "; seq 1…\(point.seq) pruned (acknowledged through seq \(report.acknowledgedSeq)), chain checked from \(point.hash.hex)"
                } ?? ""
            print(
                "ok: \(report.recordsChecked) records, hash chain intact, indexes match\(snapshot)\(pruned); \(signatures(report)); head seq \(report.headSeq) \(report.headHash.hex)"
            )
            if let note = prunedHeadsNote(report) { print(note) }
            printDesignFindings(report)
            return ExitCode.success
        }
        let total = report.problems.count + report.unreportedProblems
        Output.error("onboard verify: \(store.path) has \(total) problem\(total == 1 ? "" : "s"); restore it from a backup or a server copy")
        if let first = report.firstProblem {
            Output.error("  first bad \(first.seq.map { "seq \($0)" } ?? "entry"): \(first.kind.rawValue)")
        }
        for problem in report.problems { Output.error("  \(problem)") }
        if report.unreportedProblems > 0 { Output.error("  … and \(report.unreportedProblems) more") }
        if let note = prunedHeadsNote(report) { Output.error(note) }
        printDesignFindings(report)
        return ExitCode.verifyFailed
    }

    /// The guideline 4.8 findings, on stdout after the integrity result: they describe the app's
    /// sign-in screen, not damage, so they change neither the result nor the exit status.
    static func printDesignFindings(_ report: VerifyReport) {
        let count = report.designFindingCount
        guard count > 0 else { return }
        let records = "\(count) sign_in_options_shown record\(count == 1 ? "" : "s")"
        print(
            "design: \(records) break\(count == 1 ? "s" : "") App Store Review Guideline 4.8 — findings about the app's sign-in screen, "
                + "not damage to the log, so the exit status stays that of the integrity checks")
        for finding in report.designFindings { print("  \(finding)") }
        let unlisted = count - report.designFindings.count
        if unlisted > 0 { print("  … and \(unlisted) more") }
    }

    /// What the signature check covered, for the success line.
    static func signatures(_ report: VerifyReport) -> String {
        guard let key = report.signingPublicKey else { return "no signing key yet (made on the next writable open)" }
        guard report.signedHeadCount > 0 else { return "no signed heads yet (key \(key.hex))" }
        let checked = report.signedHeadCount - report.prunedSignedHeadSeqs.count
        let pruned = report.prunedSignedHeadSeqs.count
        let heads = "\(report.signedHeadCount) signed head\(report.signedHeadCount == 1 ? "" : "s")"
        guard pruned > 0 else { return "\(heads) valid up to seq \(report.signedHeadSeq ?? 0) (key \(key.hex))" }
        let kept = report.signedHeadSeq.map { "\(checked) checked against the log up to seq \($0)" } ?? "none checked against the log"
        return "\(heads) (key \(key.hex)): \(kept), \(pruned) below the prune point with only their signature checked"
    }

    /// What the signed heads below the prune point prove and what they do not, or `nil` when
    /// there are none.
    static func prunedHeadsNote(_ report: VerifyReport) -> String? {
        guard let point = report.prunedThrough, !report.prunedSignedHeadSeqs.isEmpty else { return nil }
        let seqs = report.prunedSignedHeadSeqs
        let listed =
            seqs.count <= maximumListedSeqs
            ? seqs.map(String.init).joined(separator: ", ")
            : seqs.prefix(maximumListedSeqs - 1).map(String.init).joined(separator: ", ") + ", … \(seqs.last!)"
        let tie =
            report.prunePointIsSigned
            ? "a signed head at the prune point vouches for that hash"
            : "no signed head vouches for that hash"
        let one = seqs.count == 1
        return "note: the signed head\(one ? "" : "s") at seq \(listed) \(one ? "is" : "are") below the prune point (seq \(point.seq)): "
            + "\(one ? "its signature is" : "their signatures are") valid for (device, seq, hash), but \(one ? "its record was" : "their records were") pruned, "
            + "so \(one ? "the hash" : "the hashes") cannot be compared with any record the store holds — \(one ? "it proves" : "they prove") that the device signed "
            + "\(one ? "that hash at that seq" : "those hashes at those seqs"), not that the kept log continues from \(one ? "it" : "them"). "
            + "The kept log is tied to the pruned history only by the prune point's kept hash \(point.hash.hex), to which the first kept record links; \(tie)."
    }

    /// Seqs of pruned signed heads named in full; more are shortened to the first few and the last.
    static let maximumListedSeqs = 6
}
