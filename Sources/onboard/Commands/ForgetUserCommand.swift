import Foundation
import OnboardingModel
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
        ],
        options: [.store],
        argumentCount: 1...1,
        run: run)

    static func run(_ invocation: Invocation) throws(CLIError) -> Int32 {
        let user = invocation.arguments[0]
        guard !UserRef.isLiteral(user) else {
            throw .usage("onboard forget-user: \(user) is already a pseudonym; pass the readable user id")
        }
        let store = try OnboardTool.openStore(invocation, writable: true)
        let outcome: (pseudonym: String, seq: UInt64)
        do {
            guard try !store.isForgotten(user) else {
                store.close()
                Output.error("onboard forget-user: \(user) was already forgotten; nothing to do")
                return ExitCode.success
            }
            let now = Timestamp(millisecondsSince1970: Int64(Date().timeIntervalSince1970 * 1000))
            outcome = try store.forgetUser(user, at: now)
        } catch {
            store.close()
            throw CLIError(CLIError(error).exitCode, "onboard forget-user: \(error.message)")
        }
        store.close()
        do {
            try OnboardingStore.compact(at: store.path)
        } catch {
            throw CLIError(CLIError(error).exitCode, "onboard forget-user: the user is forgotten (seq \(outcome.seq)) but compacting failed: \(error.message); run forget-user again when no other process has the store open")
        }
        print("forgot \(user): key destroyed, user_forgotten at seq \(outcome.seq); the user now reads as \(outcome.pseudonym)")
        return ExitCode.success
    }
}
