import Foundation
import OnboardingServer
import OnboardingStore

#if canImport(Glibc)
    import Glibc
#endif

/// `onboard migrate-server`: copy an LMDB-backed sync server into PostgreSQL.
enum MigrateServerCommand {
    static let spec = CommandSpec(
        name: "migrate-server",
        summary: "copy a sync server's data directory (LMDB replicas) into PostgreSQL",
        arguments: "",
        details: [
            "Copies the tokens (their hashes), the server's signing key, the access-log key and every",
            "device's replica into the database named by --database, byte for byte: devices go on",
            "syncing with their tokens and their pinned server key against `onboard serve",
            "--database`. Every replica's chain and signed heads are verified first; nothing is",
            "copied from a server that does not verify. Each device is copied in commits of 1,000",
            "records from where the database's copy ends, so an interrupted run resumes and a",
            "finished one copies nothing again; each copy is audited afterwards. Stop the server on",
            "--data first. Exit 0 when every copy audits, 1 when one does not, 64 for bad usage or",
            "URL, 69 when the database cannot be reached, 65 when the database holds something else."
        ],
        options: [ServeCommand.dataOption, ServerStorageChoice.databaseOption],
        argumentCount: 0...0,
        run: run)

    static func run(_ invocation: Invocation) throws(CLIError) -> Int32 {
        guard let data = invocation.values["data"] else {
            throw .usage("onboard migrate-server: give --data PATH (the server's data directory) and --database URL")
        }
        guard let url = invocation.values["database"] ?? invocation.environment["ONBOARD_DATABASE_URL"].flatMap({ $0.isEmpty ? nil : $0 }) else {
            throw .usage("onboard migrate-server: give --database URL (or set ONBOARD_DATABASE_URL)")
        }
        guard FileManager.default.fileExists(atPath: (data as NSString).appendingPathComponent("server")) else {
            throw CLIError(ExitCode.noInput, "onboard migrate-server: \(data) is not a sync server's data directory (no server/ in it); pass --data PATH")
        }
        let server: SyncServer
        do { server = try SyncServer(databaseURL: url, options: SyncServer.Options(), createsAdminToken: false) } catch {
            throw ServerStorageChoice.cliError(error, command: "migrate-server")
        }
        defer { server.close() }
        guard let storage = server.storage as? PostgresStorage else { preconditionFailure("a --database server is on PostgreSQL") }
        let terminal = isatty(STDERR_FILENO) == 1
        var lastShown = Date.distantPast
        let results: [PostgresMigration.DeviceResult]
        do {
            #if DEBUG
                // The crash test's cut: a debug build stops dead after the first commit, as a kill would.
                let exitAfterFirstCommit = invocation.environment[TestFaults.variable] == "migrate-exit-after-first-commit"
            #else
                let exitAfterFirstCommit = false
            #endif
            results = try PostgresMigration.run(dataDirectory: data, into: storage) { progress in
                if exitAfterFirstCommit { _exit(75) }
                // A bar on a terminal, a line every 5 s in a log.
                let now = Date()
                guard terminal || now.timeIntervalSince(lastShown) >= 5 || progress.copiedRecords == progress.totalRecords else { return }
                lastShown = now
                let fraction = progress.totalRecords == 0 ? 1 : Double(progress.copiedRecords) / Double(progress.totalRecords)
                let filled = Int(fraction * 30)
                let bar =
                    "migrate-server: \(progress.device) [" + String(repeating: "█", count: filled) + String(repeating: "░", count: 30 - filled)
                    + "] \(progress.copiedRecords)/\(progress.totalRecords) records"
                FileHandle.standardError.write(Data((terminal ? "\r\(bar)" + (progress.copiedRecords == progress.totalRecords ? "\n" : "") : bar + "\n").utf8))
            }
        } catch let failure as PostgresMigration.Failure {
            throw CLIError(ExitCode.dataError, "onboard migrate-server: \(failure.description)")
        } catch {
            throw ServerStorageChoice.cliError(error, command: "migrate-server")
        }
        for result in results {
            let state = result.audit.isValid ? "ok" : "FAILED: \(result.audit.firstProblem.map { "\($0)" } ?? "")"
            print("\(result.device): \(result.records) records, \(result.copied) copied now; audit \(state)")
        }
        let failed = results.filter { !$0.audit.isValid }.count
        print(
            "migrated \(results.count) device\(results.count == 1 ? "" : "s") into \(ServerStorageChoice.database(url).displayName), \(failed) failed the audit"
        )
        return failed == 0 ? ExitCode.success : ExitCode.verifyFailed
    }
}
