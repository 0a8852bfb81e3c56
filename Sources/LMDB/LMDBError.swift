import CLMDB

/// An error returned by LMDB, with the operation that failed.
///
/// Callers match on the named codes:
///
/// ```swift
/// do { try environment.write { try $0.put(events, key: k, value: v, flags: .noOverwrite) } }
/// catch let error as LMDBError where error == .keyExists { … }
/// ```
public struct LMDBError: Error, Sendable, CustomStringConvertible {
    /// The raw LMDB (or errno) return code.
    public let code: Int32
    /// What the wrapper was doing, for example `"mdb_env_open /path"`.
    public let operation: String

    init(code: Int32, operation: String = "") {
        self.code = code
        self.operation = operation
    }

    public static let keyExists = LMDBError(code: MDB_KEYEXIST)
    public static let notFound = LMDBError(code: MDB_NOTFOUND)
    public static let corrupted = LMDBError(code: MDB_CORRUPTED)
    public static let panic = LMDBError(code: MDB_PANIC)
    public static let versionMismatch = LMDBError(code: MDB_VERSION_MISMATCH)
    public static let invalid = LMDBError(code: MDB_INVALID)
    public static let mapFull = LMDBError(code: MDB_MAP_FULL)
    public static let databasesFull = LMDBError(code: MDB_DBS_FULL)
    public static let readersFull = LMDBError(code: MDB_READERS_FULL)
    public static let transactionFull = LMDBError(code: MDB_TXN_FULL)
    public static let mapResized = LMDBError(code: MDB_MAP_RESIZED)
    public static let incompatible = LMDBError(code: MDB_INCOMPATIBLE)
    public static let badValueSize = LMDBError(code: MDB_BAD_VALSIZE)
    /// The environment is already open in this process with incompatible options.
    public static let alreadyOpen = LMDBError(code: -30_000)
    /// The environment was closed (a transaction raced with `close()`).
    public static let closed = LMDBError(code: -30_002)
    /// The map reached `Environment.Options.maximumMapSizeBytes` and cannot grow further.
    public static let mapAtMaximum = LMDBError(code: -30_001)

    /// LMDB's own text for the code.
    public var reason: String {
        switch code {
        case LMDBError.alreadyOpen.code:
            return "the environment is already open in this process with other options"
        case LMDBError.closed.code:
            return "the environment is closed"
        case LMDBError.mapAtMaximum.code:
            return "the map reached its configured maximum size"
        default:
            return String(cString: mdb_strerror(code))
        }
    }

    public var description: String {
        operation.isEmpty ? reason : "\(operation): \(reason)"
    }
}

extension LMDBError: Equatable {
    /// Two errors are equal when their codes are; the operation is context only.
    public static func == (lhs: LMDBError, rhs: LMDBError) -> Bool { lhs.code == rhs.code }
}

/// Throws an `LMDBError` when `code` is not `MDB_SUCCESS`.
@inline(__always)
func check(_ code: Int32, _ operation: @autoclosure () -> String) throws {
    if code != MDB_SUCCESS { throw LMDBError(code: code, operation: operation()) }
}
