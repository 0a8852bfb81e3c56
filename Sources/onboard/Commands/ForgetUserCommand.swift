import Foundation
import OnboardingModel
import OnboardingServer
import OnboardingStore

/// `onboard forget-user U`: erasure without breaking the chain (docs/audit.md § Erasure).
enum ForgetUserCommand {
    static let spec = CommandSpec(
        name: "forget-user",
        summary: "erase a user's personal fields: destroy their key, record user_forgotten",
        arguments: "USER",
        details: [
            "Destroys USER's key and appends a user_forgotten event that names only the pseudonym",
            "(~ and 32 hex digits). Records name users by pseudonym; the readable id is kept once,",
            "sealed with the user's key, and display_name, subtitle and image_ref are sealed with it",
            "inside the records. From now on they read as erased (the id as the pseudonym, display_name",
            "as \"[erased]\", subtitle and image_ref absent) in export, log, history and users.",
            "Times, types, outcomes and hashes stay: onboard verify still passes, other users are",
            "untouched, and lockout state carries over under the pseudonym. Later events naming",
            "USER stay pseudonymous. The store file is then compacted so freed pages that held the",
            "key, the sealed id or a snapshot with the name are not left behind; no other process may",
            "have the store open. The next sync carries user_forgotten to the server, whose copy",
            "of the key is destroyed the same way.",
            "",
            "With --data PATH it forgets USER on a sync server's data directory instead (the server's",
            "equivalent; stop the server first, or call POST /v1/users/{user}/forget on a running",
            "one): in every device replica the key is destroyed and the records read as erased, no",
            "event is appended (a replica holds only its device's records), each replica is",
            "compacted, and each device is asked at its next sync to forget USER too; its",
            "user_forgotten then arrives like any other record. With --database URL the same on a",
            "server's PostgreSQL (also while servers run on it)."
        ],
        options: [.store, ServeCommand.dataOption, ServerStorageChoice.databaseOption],
        argumentCount: 1...1,
        run: run)

    static func run(_ invocation: Invocation) throws(CLIError) -> Int32 {
        // USER may be a pseudonym literal: a user the sync server asked this device to forget.
        let user = invocation.arguments[0]
        if invocation.values["database"] != nil {
            guard case .database(let url) = try ServerStorageChoice.resolve(invocation, command: "forget-user") else {
                preconditionFailure("--database resolves to a database")
            }
            return try forgetInDatabase(user, url: url)
        }
        if let data = invocation.values["data"] { return try forgetOnServer(user, data: data) }
        let store = try OnboardTool.openStore(invocation, writable: true)
        let outcome: (pseudonym: String, seq: UInt64)?
        do {
            if try store.isForgotten(user) {
                outcome = nil
            } else {
                let now = Timestamp.now
                outcome = try store.forgetUser(user, at: now)
            }
        } catch {
            store.close()
            throw CLIError(CLIError(error).exitCode, "onboard forget-user: \(error.message)")
        }
        store.close()
        // Also when the user was forgotten before (by a sync at the server's request, or a
        // compaction that failed): freed pages may still hold the key; compacting removes them.
        do {
            try OnboardingStore.compact(at: store.path)
        } catch {
            throw CLIError(
                CLIError(error).exitCode,
                "onboard forget-user: the user is forgotten but compacting failed: \(error.message); run forget-user again when no other process has the store open"
            )
        }
        guard let outcome else {
            Output.error("onboard forget-user: \(user) was already forgotten; the store file was compacted")
            return ExitCode.success
        }
        print("forgot \(user): key destroyed, user_forgotten at seq \(outcome.seq); the user now reads as \(outcome.pseudonym)")
        return ExitCode.success
    }

    /// `--data`: the server's forget, then every replica compacted (the server is not running).
    static func forgetOnServer(_ user: String, data: String) throws(CLIError) -> Int32 {
        guard FileManager.default.fileExists(atPath: (data as NSString).appendingPathComponent("server")) else {
            throw CLIError(ExitCode.noInput, "onboard forget-user: \(data) is not a sync server's data directory (no server/ in it); pass --data PATH")
        }
        let results: [ForgetOutcome]
        let paths: [String]
        do {
            let server = try SyncServer(dataDirectory: data)
            do {
                results = try server.forgetUser(user)
                paths = results.compactMap { server.replicaPath(for: $0.device) }
            } catch {
                server.close()
                throw error
            }
            server.close()
        } catch let error as StoreError {
            throw CLIError(CLIError(error).exitCode, "onboard forget-user: \(error.message)")
        } catch {
            throw CLIError(ExitCode.ioError, "onboard forget-user: cannot forget \(user) in \(data): \(error)")
        }
        for path in paths {
            do { try OnboardingStore.compact(at: path) } catch {
                throw CLIError(
                    CLIError(error).exitCode,
                    "onboard forget-user: \(user) is forgotten in every replica but compacting \(path) failed: \(error.message); run it again with the server stopped"
                )
            }
        }
        printOutcomes(results)
        print("forgot \(user) in \(results.count) replica\(results.count == 1 ? "" : "s") of \(data)")
        return ExitCode.success
    }

    /// `--database`: the server's forget in PostgreSQL, in one transaction per device's log.
    static func forgetInDatabase(_ user: String, url: String) throws(CLIError) -> Int32 {
        do { try Event.validate(userID: user) } catch { throw .usage("onboard forget-user: user \(error.message)") }
        let results: [ForgetOutcome]
        let server: SyncServer
        do { server = try SyncServer(databaseURL: url, options: SyncServer.Options(), createsAdminToken: false) } catch {
            throw ServerStorageChoice.cliError(error, command: "forget-user")
        }
        defer { server.close() }
        do { results = try server.forgetUser(user) } catch {
            throw ServerStorageChoice.cliError(error, command: "forget-user")
        }
        printOutcomes(results)
        print("forgot \(user) in \(results.count) device log\(results.count == 1 ? "" : "s") of \(ServerStorageChoice.database(url).displayName)")
        return ExitCode.success
    }

    static func printOutcomes(_ results: [ForgetOutcome]) {
        for result in results {
            let what =
                switch result.outcome {
                case .erased: "key destroyed"
                case .alreadyForgotten: "already forgotten"
                case .neverSeen: "never seen; later records stay erased"
                }
            print("\(result.device): \(what), reads as \(result.pseudonym); the device is asked to forget at its next sync")
        }
    }
}
