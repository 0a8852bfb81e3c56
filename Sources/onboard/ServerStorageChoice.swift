import Foundation
import OnboardingServer
import OnboardingStore
import PostgreSQL

/// Where a server command's storage is: `--data PATH` (LMDB replicas; the default
/// `./onboard-server`) or `--database URL` / `$ONBOARD_DATABASE_URL` (PostgreSQL). The two
/// options exclude each other; an explicit `--data` wins over the environment variable.
enum ServerStorageChoice {
    case data(String)
    case database(String)

    static let databaseOption = OptionSpec(
        name: "database", valueName: "URL",
        help: "keep everything in PostgreSQL instead (postgres://USER@HOST:PORT/DATABASE; default $ONBOARD_DATABASE_URL); excludes --data")

    static func resolve(_ invocation: Invocation, command: String) throws(CLIError) -> ServerStorageChoice {
        let data = invocation.values["data"]
        let database = invocation.values["database"]
        if data != nil, database != nil {
            throw .usage("onboard \(command): --data and --database exclude each other; give one (LMDB replicas in a directory, or PostgreSQL)")
        }
        if let database { return .database(database) }
        if data == nil, let url = invocation.environment["ONBOARD_DATABASE_URL"], !url.isEmpty { return .database(url) }
        return .data(data ?? "./onboard-server")
    }

    /// What the user sees of where the storage is: the path, or the URL without its password.
    var displayName: String {
        switch self {
        case .data(let path): path
        case .database(let url): (try? DatabaseURL(url))?.redacted ?? "the database"
        }
    }

    /// The error of a server on PostgreSQL that could not start, with its documented exit
    /// status: 64 a URL that cannot be used, 69 a database that cannot be reached now or that a
    /// newer onboard migrated (docs/server-storage.md § Errors).
    static func cliError(_ error: any Error, command: String) -> CLIError {
        if let error = error as? PostgreSQLError {
            switch error.kind {
            case .badURL: return .usage("onboard \(command): \(error.message)")
            case .unavailable, .poolExhausted, .timeout:
                return CLIError(ExitCode.unavailable, "onboard \(command): \(error.message); check that PostgreSQL runs and the URL names it")
            case .query, .unexpectedResult:
                return CLIError(ExitCode.software, "onboard \(command): \(error.message)")
            }
        }
        if SyncServer.isNewerDatabaseSchema(error) { return CLIError(ExitCode.unavailable, "onboard \(command): \(error)") }
        if let error = error as? StoreError { return CLIError(CLIError(error).exitCode, "onboard \(command): \(error.message)") }
        return CLIError(ExitCode.ioError, "onboard \(command): \(error)")
    }
}
