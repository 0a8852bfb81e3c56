import OnboardingStore
import PostgreSQL

/// A failure of the server's own (not the client's), classified for the answer: a resource
/// running out is 503 with Retry-After, anything else 500. Only ``logLine`` carries the detail
/// (which may name a file); the client gets neither paths nor messages from below.
///
/// ```swift
/// let failure = ServerFailure(error)
/// log(failure.logLine)
/// failure.isResourceShortage   // true for "Too many open files"
/// ```
struct ServerFailure {
    /// 5 s: long enough for a request holding a replica or a descriptor to finish, short enough
    /// that a device syncing behind it is not kept waiting for long.
    static let retryAfterSeconds = 5

    let resource: String
    let isResourceShortage: Bool
    let logLine: String

    init(_ error: any Error) {
        switch error {
        case let limit as ReplicaLimitReached:
            resource = "open replicas"
            isResourceShortage = true
            logLine = "503: \(limit)"
        case let store as StoreError where store.isResourceShortage || store.code == .closed:
            resource = store.resource ?? "the store is closing"
            isResourceShortage = true
            logLine = "503 (\(resource)): \(store.message)"
        case let database as PostgreSQLError where [.unavailable, .poolExhausted, .timeout].contains(database.kind):
            // The database restarted, is out of connections, or a statement waited too long:
            // nothing was acknowledged, and the client's retry after the wait resumes.
            resource = database.kind == .poolExhausted ? "database connections" : "the database"
            isResourceShortage = true
            logLine = "503 (\(resource)): \(database.message)"
        case let export as ExportFileError:
            resource = "space for exports"
            isResourceShortage = true
            logLine = "503 (\(resource)): \(export)"
        default:
            resource = ""
            isResourceShortage = false
            logLine = "500: \(error)"
        }
    }
}
