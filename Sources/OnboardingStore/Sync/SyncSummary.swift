/// What one ``SyncClient/run(timeLimit:progress:)`` did.
///
/// ```swift
/// let summary = try await client.run()
/// print("\(summary.appended) new, \(summary.duplicates) already there, up to seq \(summary.acknowledgedSeq)")
/// ```
public struct SyncSummary: Sendable, Hashable {
    /// Records the server stored for the first time.
    public var appended = 0
    /// Records the server already held (a resend after a lost answer).
    public var duplicates = 0
    /// Uploads answered with 200.
    public var batches = 0
    /// Requests repeated after a network failure, 429 or 5xx.
    public var retries = 0
    /// Times the server's `gap` answer moved the client back (or forward) to its expected seq.
    public var rewinds = 0
    /// The highest seq the server holds, as last reported.
    public var acknowledgedSeq: UInt64 = 0
    /// Users the server had forgotten that this run forgot in the local store too (pseudonym
    /// literals); their `user_forgotten` events are uploaded like any other record.
    public var forgottenOnRequest: [String] = []
    /// Forget requests from the server this store could not carry out, with the reason (a
    /// pruned store cannot forget; see docs/audit.md § Erasure).
    public var forgetFailures: [String] = []
    /// Pseudonyms the server asked to forget that this store never held: ignored, since a forget
    /// would only add an event for a user the device never had.
    public var unknownForgetRequests = 0
    /// Why the server's forget requests were not carried out at all (no pinned server key, or
    /// not signed with it); nil when they were, or when there were none.
    public var forgetRequestsRefused: String?
    /// The run ended early because ``SyncClient/stop()`` was called or its task was cancelled.
    public var wasStopped = false

    public init() {}
}
