/// Why a sync run stopped without the server holding the local log. The message says what was
/// wrong and what to do; match on ``code`` (or compare with the named constants: equality
/// ignores the message). Every code is listed in docs/sync-protocol.md § Errors in an app.
///
/// ```swift
/// do { _ = try await client.run() }
/// catch where error.code == .fork { alertOperator(error.message) }   // `error` is a SyncError
/// catch { retryLater() }
/// ```
public struct SyncError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, for branching; the raw value is the name the docs use.
    public enum Code: String, Hashable, Sendable, CaseIterable {
        case fork, chainBroken, historyRewritten, badSignature, unauthorized, tokenExpired, forbidden, serverAhead, unavailable, refused, badResponse,
            redirected, timeLimit, serverKeyMismatch, store, busy
    }

    public let code: Code
    public let message: String

    private init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }

    public static func == (lhs: SyncError, rhs: SyncError) -> Bool { lhs.code == rhs.code }

    /// The server holds a different record at a seq this store also holds. Never resent.
    public static let fork = SyncError(.fork, "the server holds a different record at a seq this store holds")
    /// A record does not hash or link to its predecessor as the server computes it.
    public static let chainBroken = SyncError(.chainBroken, "the server found the hash chain broken")
    /// The server holds a head this device signed, and the upload contradicts it: the local log
    /// was rewritten after that head was accepted. Never resent.
    public static let historyRewritten = SyncError(.historyRewritten, "the upload contradicts a head this device signed earlier")
    /// The server refused the batch's signed head (not made with the key registered at
    /// enrolment, or missing).
    public static let badSignature = SyncError(.badSignature, "the server refused the batch's signed head")
    /// 401: the token is missing, unknown or revoked.
    public static let unauthorized = SyncError(.unauthorized, "the server refused the device token")
    /// 401 `token_expired`: the token was valid and its lifetime ended. Get a new one from the
    /// server's admin; rotate the next one before it lapses (``SyncTokenClient/rotate()``).
    public static let tokenExpired = SyncError(.tokenExpired, "the device token expired")
    /// 403: the token belongs to another device (or role).
    public static let forbidden = SyncError(.forbidden, "the token may not write this device's log")
    /// The server acknowledges more than this store holds.
    public static let serverAhead = SyncError(.serverAhead, "the server holds records this store lacks")
    /// Too many consecutive network failures or 429/5xx answers.
    public static let unavailable = SyncError(.unavailable, "the sync server is unavailable")
    /// Any other refusal (400, 404, 413 for one record, 415, an unknown 409).
    public static let refused = SyncError(.refused, "the server refused the request")
    /// An answer that breaks the protocol: unreadable JSON, an acknowledgement other than
    /// exactly the batch sent (or with another hash), a refusal inside a 200, more forget
    /// requests than ``SyncLimits/maximumForgetUsersPerAnswer``. Nothing of it is acted on.
    public static let badResponse = SyncError(.badResponse, "the server's answer does not follow the protocol")
    /// The server answered with a redirect (3xx). Redirects are never followed, so the token
    /// was sent nowhere else.
    public static let redirected = SyncError(.redirected, "the server answered with a redirect")
    /// The run passed the time limit it was given (``SyncClient/run(timeLimit:progress:)``).
    public static let timeLimit = SyncError(.timeLimit, "the sync run passed its time limit")
    /// The server key given differs from the one this store pinned at its first sync.
    public static let serverKeyMismatch = SyncError(.serverKeyMismatch, "the server key differs from the pinned one")
    /// Reading or writing the local store failed.
    public static let store = SyncError(.store, "the local store failed")
    /// `run()` was called while a run of the same client was in progress.
    public static let busy = SyncError(.busy, "a sync run is already in progress")

    func with(_ message: String) -> SyncError { SyncError(code, message) }
}
