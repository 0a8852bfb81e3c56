import Foundation
import OnboardingModel
import OnboardingStore

/// The `onboard` command line: a table of commands, each parsed by the same small parser.
enum OnboardTool {
    static let version = "0.1.0"

    static let commands: [CommandSpec] = [
        RecordCommand.spec, ImportCommand.spec, ExportCommand.spec, LogCommand.spec,
        StatsCommand.spec, VerifyCommand.spec, ForgetUserCommand.spec, LockoutCommand.spec, LabCommand.spec, SessionCommand.spec, UsersCommand.spec,
        HistoryCommand.spec, PruneCommand.spec, GenerateCommand.spec, SyncCommand.spec, TokenCommand.spec, ServeCommand.spec, EnrollCommand.spec,
        AuditCommand.spec, MigrateServerCommand.spec, DemoCommand.spec
    ]

    static var overview: String {
        let width = commands.map(\.name.count).max() ?? 0
        var lines = [
            "onboard — record onboarding and sign-in events in a tamper-evident LMDB log",
            "",
            "Usage: onboard COMMAND [ARGUMENTS] [--store PATH]",
            "",
            "Commands:"
        ]
        for command in commands {
            lines.append("  " + command.name + String(repeating: " ", count: width - command.name.count + 3) + command.summary)
        }
        lines += [
            "",
            "Every command takes --help. Store commands take --store PATH (default: $ONBOARD_STORE or",
            "./onboarding.lmdb); server commands take --data PATH (LMDB) or --database URL (PostgreSQL).",
            "Start with: onboard demo"
        ]
        return lines.joined(separator: "\n")
    }

    /// Runs one command line and returns the exit status. Never traps on bad input.
    static func run(_ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment) -> Int32 {
        guard let first = arguments.first else {
            Output.error(overview)
            return ExitCode.usage
        }
        switch first {
        case "-h", "--help", "help":
            if arguments.count > 1, let command = commands.first(where: { $0.name == arguments[1] }) {
                print(command.help)
            } else {
                print(overview)
            }
            return ExitCode.success
        case "--version", "version":
            print("onboard \(version) (store format \(RecordCodec.formatVersion))")
            return ExitCode.success
        default:
            break
        }
        guard let command = commands.first(where: { $0.name == first }) else {
            Output.error("onboard: unknown command \"\(first)\"; run onboard --help for the list")
            return ExitCode.usage
        }
        do {
            guard
                let invocation = try Invocation.parse(
                    Array(arguments.dropFirst()), for: command,
                    environment: environment)
            else {
                print(command.help)
                return ExitCode.success
            }
            return try command.run(invocation)
        } catch {
            Output.error(error.message)
            return error.exitCode
        }
    }

    /// Opens the invocation's store; reading commands open it read-only and never create it.
    static func openStore(
        _ invocation: Invocation, writable: Bool, deviceID: String? = nil,
        durability: Durability = .full
    ) throws(CLIError) -> OnboardingStore {
        var options = OnboardingStore.Options()
        options.readOnly = !writable
        options.createIfMissing = writable
        options.deviceID = deviceID
        options.durability = durability
        #if DEBUG
            options.storageFaults = TestFaults.injector(invocation.environment)
        #endif
        options.migrationProgress = { done, total in
            // Small stores migrate in a blink; large ones say how far they are.
            if total >= 10_000 { Output.error("migrating \(invocation.storePath) to format 2: \(done)/\(total) records") }
        }
        do {
            return try OnboardingStore.open(at: invocation.storePath, options: options)
        } catch  where error.code == .needsMigration && !writable {
            // A reading command on a store of an older format: migrate it once, then read.
            var migrating = options
            migrating.readOnly = false
            migrating.createIfMissing = false
            do { try OnboardingStore.open(at: invocation.storePath, options: migrating).close() } catch {
                throw CLIError(CLIError(error).exitCode, "onboard \(invocation.command.name): \(error.message)")
            }
            return try openStore(invocation, writable: writable, deviceID: deviceID, durability: durability)
        } catch {
            throw CLIError(CLIError(error).exitCode, "onboard \(invocation.command.name): \(error.message)")
        }
    }
}
