import Foundation
import OnboardingServer

/// `onboard audit`: verify every device replica of a sync server's data directory against the
/// heads its devices signed.
enum AuditCommand {
    static let spec = CommandSpec(
        name: "audit",
        summary: "verify every device replica a sync server holds against its signed heads",
        arguments: "",
        details: [
            "Works on the data directory directly (read-only), also while `onboard serve` runs; the",
            "server's GET /v1/audit (auditor token) answers the same. For each enrolled device: the",
            "replica's hash chain, seqs and indexes, every signed head the server accepted against",
            "the key registered at enrolment. One line per device: ok, or the first bad seq and what",
            "is wrong (modified, missing, reordered, bad signature). Exit 1 when any device fails.",
            "With --database URL (or $ONBOARD_DATABASE_URL) it audits a server's PostgreSQL."
        ],
        options: [ServeCommand.dataOption, ServerStorageChoice.databaseOption, .json],
        argumentCount: 0...0,
        run: run)

    static func run(_ invocation: Invocation) throws(CLIError) -> Int32 {
        let audits: [DeviceAudit]
        switch try ServerStorageChoice.resolve(invocation, command: "audit") {
        case .data(let data):
            guard FileManager.default.fileExists(atPath: (data as NSString).appendingPathComponent("server")) else {
                throw CLIError(ExitCode.noInput, "onboard audit: \(data) is not a sync server's data directory (no server/ in it); pass --data PATH")
            }
            do { audits = try ReplicaAudit.run(dataDirectory: data) } catch {
                throw CLIError(ExitCode.ioError, "onboard audit: cannot read \(data): \(error)")
            }
        case .database(let url):
            do {
                let server = try SyncServer(databaseURL: url, options: SyncServer.Options(), createsAdminToken: false)
                defer { server.close() }
                audits = try server.audit()
            } catch {
                throw ServerStorageChoice.cliError(error, command: "audit")
            }
        }
        if invocation.has("json") {
            print(String(decoding: ReplicaAudit.body(audits), as: UTF8.self))
        } else {
            for audit in audits { print(line(audit)) }
            let failed = audits.filter { !$0.isValid }.count
            print("\(audits.count) device\(audits.count == 1 ? "" : "s") audited, \(failed) failed")
        }
        return audits.allSatisfy(\.isValid) ? ExitCode.success : ExitCode.verifyFailed
    }

    /// `kiosk-7: ok, 120 records, signed up to seq 120` or `kiosk-9: FAILED at seq 5: modified: …`.
    static func line(_ audit: DeviceAudit) -> String {
        if let problem = audit.firstProblem {
            let more = audit.problems.count > 1 ? " (+\(audit.problems.count - 1) more)" : ""
            return "\(audit.device): FAILED \(problem.seq.map { "at seq \($0)" } ?? "") \(problem.kind.rawValue): \(problem.message)\(more)"
                .replacingOccurrences(of: "FAILED  ", with: "FAILED ")
        }
        let signed: String
        if audit.registeredKey == nil {
            signed = "no signing key registered"
        } else if let seq = audit.signedHeadSeq {
            signed = "signed up to seq \(seq)"
        } else {
            signed = "no signed head accepted yet"
        }
        return "\(audit.device): ok, \(audit.records) records, \(signed)"
    }
}
