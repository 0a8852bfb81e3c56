/// Why a database operation failed. The message is one line that says what went wrong and, where
/// it can, what to do; it never holds the database URL's password.
///
/// ```swift
/// do { try pool.withConnection { try $0.execute("SELECT 1") } }
/// catch where error.kind == .unavailable { answer503() }
/// ```
public struct PostgreSQLError: Error, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable {
        /// The database URL cannot be used as it is written.
        case badURL
        /// The database cannot be reached, or the connection was lost: try again later.
        case unavailable
        /// The statement ran longer than the statement timeout (SQLSTATE 57014) and was cancelled.
        case timeout
        /// Every pooled connection stayed busy for the whole checkout wait.
        case poolExhausted
        /// The server refused the statement (a constraint, a syntax error, …): ``sqlState`` says which.
        case query
        /// The answer is not what the caller's statement should give (a type, a row count).
        case unexpectedResult
    }

    public let kind: Kind
    public let message: String
    /// The five-character SQLSTATE of a server error (`23505` unique violation, …), when there is one.
    public let sqlState: String?

    public init(_ kind: Kind, _ message: String, sqlState: String? = nil) {
        self.kind = kind
        self.message = message
        self.sqlState = sqlState
    }

    public var description: String { message }

    /// A unique constraint was violated (SQLSTATE 23505).
    public var isUniqueViolation: Bool { sqlState == "23505" }
}
