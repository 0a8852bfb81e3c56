import Foundation
import OnboardingModel
import OnboardingProjections
import OnboardingStore

/// Everything a sync server keeps, behind one seam: the router (``SyncServer``) reads and writes
/// only through it (docs/server-storage.md). Two implementations: ``ReplicaStorage``, one LMDB
/// replica per device in a data directory (the embedded default), and PostgreSQL, for fleets
/// that outgrow one machine or one process.
///
/// Every method may throw a storage error; the router turns those into 500 or, for a resource
/// that ran out or a database that is unreachable, 503 with Retry-After.
package protocol ServerStorage: Sendable {
    /// The server's own Ed25519 key: it signs forget requests, and devices pin its public half.
    var signingKey: SigningKeyPair { get }

    // MARK: Tokens (kept hashed)

    /// A new token, expiring at `expiresAt` (never when `nil`); only its hash is kept.
    func issueToken(role: TokenRole, device: String?, expiresAt: Timestamp?) throws -> String
    /// What `token` may do, with its expiry; `nil` for an unknown or revoked token.
    func grant(for token: String) throws -> TokenGrant?
    /// Replaces every admin token with a new one, in one transaction: the new token and how many
    /// were revoked. `beforeCommit` gets the new token first; when it throws, nothing changes.
    func rotateAdminToken(beforeCommit: (String) throws -> Void) throws -> (token: String, revoked: Int)
    /// Revokes every token of `device`; returns how many there were.
    func revokeTokens(device: String) throws -> Int
    /// Revokes every auditor token; returns how many there were.
    func revokeAuditorTokens() throws -> Int
    func hasAdmin() throws -> Bool

    // MARK: Devices

    func enrolledDevices() throws -> [String]
    func isEnrolled(_ device: String) throws -> Bool
    /// The key `device` enrolled with, if any: every batch it uploads must carry a head signed by it.
    func registeredKey(of device: String) throws -> SigningPublicKey?
    /// Makes `device`'s log (and registers `publicKey`), before its first token is handed out.
    /// Throws ``TokenStore/KeyMismatch`` when the device is registered with another key.
    func enroll(_ device: String, publicKey: SigningPublicKey?) throws

    /// Runs `body` with `device`'s log, holding that device's lock (never one lock for all
    /// devices): a batch's checks and its append see no other writer of the device between them.
    func withDeviceLog<R>(_ device: String, _ body: (any DeviceLog) throws -> R) throws -> R

    // MARK: Across devices

    /// One page of `query` (a user across devices, or one device), and the devices whose logs
    /// hold records that read as the user (or the one device asked): `GET …/history`.
    func history(_ query: HistoryQuery) throws -> (history: History, devices: [String])
    /// The lockout keys of `user` across devices at `at`, folded in `(at, device, seq)` order.
    func lockoutEntries(user: String, at: Timestamp) throws -> [LockoutEngine.Entry]
    /// Forgets `user` in every device's log that holds its records (docs/sync-protocol.md § Forget requests).
    func forgetUser(_ user: String, at: Timestamp) throws -> [ForgetOutcome]
    /// Checks every device's log against its chain and signed heads (`GET /v1/audit`).
    func audit() throws -> [DeviceAudit]

    // MARK: The audit console (docs/sync-protocol.md § The audit console)

    /// Calls `body` with every record `query` covers (its user, device and time range; its
    /// limit and outcome, factor and method filters are not applied here), in the order a history
    /// pages by: with `query.device` that device's seq order, else `(at, device, seq)` across
    /// devices (each event id once). Ascending from after `query.after`, or with `newestFirst`
    /// descending from before it. Stops when `body` returns `false`. Memory stays bounded by a
    /// read batch, except for a user across an LMDB server's replicas (see ``ReplicaStorage``).
    func forEachRecord(_ query: HistoryQuery, newestFirst: Bool, _ body: (Record) throws -> Bool) throws
    /// Enrolled devices after `after` (byte order), at most `limit`, with their status.
    func deviceStatuses(after: String?, limit: Int) throws -> [DeviceStatus]
    /// The audit of one device's log; `nil` for a device that is not enrolled.
    func audit(device: String) throws -> DeviceAudit?
    /// Revokes the tokens of `device` whose id (``TokenStore/tokenID(hash:)``) is `id`; how many.
    func revokeToken(device: String, id: String) throws -> Int
    /// Stores `action` durably at the next seq and returns it so; a clear is folded into the
    /// global lockout at its `(at, "", seq)` from then on.
    func record(_ action: ServerAction) throws -> ServerAction
    /// The actions about `user`, in fold order `(at, seq)`.
    func actions(ofUser user: String) throws -> [ServerAction]
    /// Every action, newest first by `(at, seq)`, strictly before `before`; at most `limit`.
    func actions(before: (at: Timestamp, seq: UInt64)?, limit: Int) throws -> [ServerAction]
    /// The users every word of `search` (folded, ``SearchTerms``) begins a word of the id or
    /// latest display name of, in byte order of their ids, at most `limit`.
    func searchUsers(_ search: [String], limit: Int) throws -> [UserMatch]
    /// Whether every write to the storage goes through this process (LMDB: one process per data
    /// directory), so a waiting history poll needs looking at only after a local upload.
    var changesAreLocal: Bool { get }

    func close()
}

/// What forgetting a user did in one device's log.
public struct ForgetOutcome: Sendable, Hashable {
    public var device: String
    /// The pseudonym the device's records name the user by from now on.
    public var pseudonym: String
    public var outcome: OnboardingStore.KeyErasure
}

/// One device's log on the server, as an upload's checks and append need it; only valid inside
/// ``ServerStorage/withDeviceLog(_:_:)``. The operations are those of a device store acting as
/// a replica: the records are the device's, byte for byte, sealed with the keys it sent.
package protocol DeviceLog {
    var device: String { get }
    func head() throws -> (seq: UInt64, hash: Digest)
    func storedRecord(at seq: UInt64) throws -> Record?
    /// The records in `range` (those the log holds), in seq order.
    func records(in range: ClosedRange<UInt64>) throws -> [Record]
    /// The pseudonym of `user` under the device's pseudonym key.
    func userRef(of user: String) -> UserRef
    /// What writing `event` would seal with (`nil`: it names a user whose key the upload lacks).
    func checkingSeal(for event: Event) -> OnboardingStore.CheckingSeal?
    /// Takes the keys an upload carried; throws `StoreError` `.conflict` for another pseudonym key.
    func adoptKeys(pseudonymKey: SecretKey, userKeys: [UserRef: SecretKey]) throws
    /// Appends the checked records at their seqs, only if the head is still `expectedHead`
    /// (`StoreError` `.headMoved` otherwise), with the sealed sections the device sent.
    func append(_ events: [Event], claimedSeqs: [UInt64?], expectedHead: UInt64, sealedSections: [[UInt8]?]?) throws
    func signingPublicKey() throws -> SigningPublicKey?
    func recordSigningPublicKey(_ key: SigningPublicKey) throws
    func latestSignedHead() throws -> SignedHead?
    func recordSignedHead(_ head: SignedHead) throws
    func requestForgetOfUsersTheDeviceHolds(_ refs: [UserRef], requestedAt: Timestamp) throws
    /// Pseudonyms the server forgot whose device has not recorded `user_forgotten` yet.
    func forgetRequests() throws -> [UserRef]
}
