import Foundation
import OnboardingModel
import OnboardingProjections
import OnboardingStore
import PostgreSQL
import Synchronization

/// The reference sync server's logic, independent of HTTP: a router from `SyncRequest` to
/// `SyncResponse` (the HTTP adapter and the in-memory transport both call ``handle(_:)``).
///
/// ```swift
/// let server = try SyncServer(dataDirectory: "/var/lib/onboard")
/// let token = try server.issueToken(role: .device, device: "kiosk-7")
/// let response = server.handle(SyncRequest(method: "GET", path: "/v1/devices/kiosk-7/cursor",
///                                          headers: ["authorization": "Bearer \(token)"]))
/// ```
///
/// Storage: `DATA/server` holds the hashed tokens and the enrolled devices; `DATA/devices/<hex id>`
/// one replica store per device (at most ``Options/maximumOpenReplicas`` open at once). Every
/// acknowledged record is durable first. The server folds all devices' records into one lockout
/// engine keyed `(user, factor)` across devices, in `(at, device, seq)` order whatever order they
/// arrived in (`GlobalLockout`).
public final class SyncServer: Sendable {
    /// How a server runs; every default is what `onboard serve` uses.
    ///
    /// ```swift
    /// var options = SyncServer.Options()
    /// options.maximumClockSkewMilliseconds = 60_000
    /// let server = try SyncServer(dataDirectory: data, options: options)
    /// ```
    public struct Options: Sendable {
        /// The policy of the lockout across devices.
        public var policy: LockoutPolicy = .mediawiki
        /// 5 minutes, Kerberos' default allowance between two clocks: an upload holding an event
        /// dated more than this after the server's clock is refused (400 `future_event`), so no
        /// device can lock a user out beyond now + this + the policy's longest lock. An honest
        /// device clock is within seconds; one that ran ahead syncs again once real time has
        /// caught up to within this of its events (docs/sync-protocol.md § Event times).
        public var maximumClockSkewMilliseconds: Int64 = 5 * 60 * 1000
        /// Replicas kept open at once (1,024 by default, `DeviceReplicas.defaultMaximumOpen`).
        public var maximumOpenReplicas = DeviceReplicas.defaultMaximumOpen
        /// The map size a replica opens with; it doubles when full (the simulator starts tiny so
        /// that growth happens often).
        public var replicaInitialMapSizeBytes = OnboardingStore.Options().initialMapSizeBytes
        /// What one open replica costs in file descriptors (LMDB's data file, lock file and one
        /// descriptor for synchronous writes), for sizing ``maximumOpenReplicas``.
        public static let descriptorsPerReplica = 3
        /// The server's clock (tests and the simulator pass a manual one).
        public var clock: @Sendable () -> Timestamp = SyncServer.systemClock
        /// Where the server reports failures that the client sees only as 500 or 503 (the
        /// operator's log; `onboard serve` writes it to stderr). Never a token or a body.
        public var failureLog: (@Sendable (String) -> Void)?
        /// Where exports are written before they are sent (an unlinked file, so nothing is left
        /// behind): `nil` for the data directory (LMDB) or `$TMPDIR`, else `/var/tmp` (PostgreSQL).
        public var scratchDirectory: String?
        /// `metadata.product.version` of OCSF exports (`onboard serve` passes its own version).
        public var productVersion = "unknown"
        /// The longest this server holds a history poll (`wait=`), in seconds: a poll asking for
        /// more is answered after this; 0 answers every poll at once (a fuzzer's server, whose
        /// every request must be quick).
        public var maximumPollWaitSeconds = SyncLimits.maximumWaitSeconds
        /// Token buckets per token and per client address (``RateLimits/default``;
        /// ``RateLimits/off`` for a fuzzer's or a benchmark's server).
        public var rateLimits = RateLimits.default
        /// How long the device and auditor tokens this server issues live, in milliseconds
        /// (``TokenLifetime/defaultMilliseconds``, 90 days); `nil`: they never expire. The admin
        /// token never expires; it is rotated (`onboard enroll --rotate-admin`).
        public var tokenLifetimeMilliseconds: Int64? = TokenLifetime.defaultMilliseconds

        public init() {}
    }

    /// The system clock, as a `Timestamp`.
    public static let systemClock: @Sendable () -> Timestamp = {
        Timestamp.now
    }

    /// Where the storage lives (docs/server-storage.md); every read and write goes through it.
    package let storage: any ServerStorage
    /// The LMDB replicas, when they are the storage (`onboard serve --data`).
    package let replicaStorage: ReplicaStorage?
    /// The LMDB replicas of an LMDB-backed server (tests reach into them).
    var replicas: DeviceReplicas {
        guard let replicaStorage else { preconditionFailure("this server does not keep LMDB replicas") }
        return replicaStorage.replicas
    }
    /// The data directory of an LMDB-backed server.
    public var dataDirectory: String? { replicaStorage?.dataDirectory }
    /// The server's own Ed25519 key (made on first start, kept by the storage: `DATA/server/signing.key`,
    /// mode 0600, for LMDB): it signs the forget requests in cursor and upload answers, and
    /// devices pin its public half at enrolment (docs/security.md, "Server-driven forgets").
    public var signingKey: SigningKeyPair { storage.signingKey }
    public let options: Options
    /// Devices with an upload in progress here: a second concurrent upload of one device gets 429.
    private let inFlight = Mutex<Set<String>>([])
    /// History requests waiting for a newer attempt (`wait=`), on a thread of their own.
    let polls: PollWaiters
    /// The rate limits' buckets (``RateLimits``).
    let rateBuckets: RateBuckets
    /// What `GET /metrics` reports.
    let metrics = ServerMetrics()
    /// The HTTP server's gauges, once ``observe(_:)`` was told which one serves this server.
    let httpGauges = Mutex<(@Sendable () -> (openConnections: Int, queuedRequests: Int, connectionLimit: Int)?)?>(nil)
    /// Exports being written now (at most ``maximumConcurrentExports``).
    let exportsRunning = Atomic<Int>(0)
    private let shuttingDown = Atomic<Bool>(false)
    /// The admin token created on first start, when there was none (written to `DATA/admin.token`).
    public var createdAdminToken: String? { replicaStorage?.createdAdminToken ?? (storage as? PostgresStorage)?.createdAdminToken }
    /// Replicas whose log could not be read whole when the server started (one line each: the
    /// device and what is wrong). The server starts anyway: their records up to the damage count
    /// in the global views, the others' all do, and `GET /v1/audit` names the damage.
    public var unreadableReplicas: [String] { replicaStorage?.unreadableReplicas ?? [] }

    public convenience init(dataDirectory: String, policy: LockoutPolicy = .mediawiki) throws {
        var options = Options()
        options.policy = policy
        try self.init(dataDirectory: dataDirectory, options: options)
    }

    /// A server on LMDB replicas in `dataDirectory` (created if missing; one process per directory).
    public convenience init(dataDirectory: String, options: Options) throws {
        let storage = try ReplicaStorage(
            dataDirectory: dataDirectory, policy: options.policy,
            maximumOpenReplicas: options.maximumOpenReplicas,
            replicaInitialMapSizeBytes: options.replicaInitialMapSizeBytes, failureLog: options.failureLog)
        self.init(storage: storage, options: options)
    }

    /// A server on `storage`.
    package init(storage: any ServerStorage, options: Options) {
        self.storage = storage
        self.replicaStorage = storage as? ReplicaStorage
        self.options = options
        polls = PollWaiters(maximumWaiting: SyncLimits.maximumWaitingPolls, changesAreLocal: storage.changesAreLocal)
        rateBuckets = RateBuckets(options.rateLimits)
    }

    /// A server on PostgreSQL at `databaseURL` (`postgres://…`): its schema is created or
    /// migrated first (docs/server-storage.md). Any number of servers may share the database.
    ///
    /// - Parameters:
    ///   - databaseURL: the PostgreSQL connection URL (`postgres://user@host:port/database`).
    ///   - options: how the server runs (``Options``; the defaults are `onboard serve`'s).
    ///   - createsAdminToken: make an admin token when the database has none (`onboard serve`;
    ///     ``createdAdminToken`` then has it). Other tools leave that to the server.
    public convenience init(databaseURL: String, options: Options, createsAdminToken: Bool = true) throws {
        let storage = try PostgresStorage(url: try DatabaseURL(databaseURL), policy: options.policy, createsAdminToken: createsAdminToken)
        self.init(storage: storage, options: options)
    }

    /// Whether `error` says the database was migrated by a newer `onboard` (which this one
    /// leaves alone: upgrade it).
    public static func isNewerDatabaseSchema(_ error: any Error) -> Bool {
        if case .newerSchema = error as? PostgresStorageError { return true }
        return false
    }

    /// The access log's pseudonymiser, keyed as the storage keeps the key: `DATA/log.key` for
    /// LMDB, a row of `server_keys` in PostgreSQL (so every node names a user alike).
    public func makeAccessLog() throws -> AccessLog {
        if let postgres = storage as? PostgresStorage { return AccessLog(key: postgres.accessLogKey) }
        guard let dataDirectory else { preconditionFailure("a server without storage of its own") }
        return try AccessLog(dataDirectory: dataDirectory)
    }

    /// Where an LMDB-backed server keeps its signing key: `DATA/server/signing.key`.
    public static func signingKeyPath(dataDirectory: String) -> String {
        ReplicaStorage.signingKeyPath(dataDirectory: dataDirectory)
    }

    /// Issues a token (only its hash is kept), as `onboard enroll` and the admin endpoints do. A
    /// device or auditor token expires after ``Options/tokenLifetimeMilliseconds``; an admin token never.
    public func issueToken(role: TokenRole, device: String? = nil) throws -> String {
        try storage.issueToken(role: role, device: device, expiresAt: expiry(of: role))
    }

    /// When a token of `role` issued now expires.
    public func expiry(of role: TokenRole) -> Timestamp? {
        role == .admin ? nil : TokenLifetime.expiry(issuedAt: options.clock(), lifetimeMilliseconds: options.tokenLifetimeMilliseconds)
    }

    /// The admin token of this server replaced by a new one, the old ones revoked at once (in one
    /// transaction: there is never a moment without an admin token); how many were revoked.
    /// `beforeCommit` gets the new token first (to write it to its file); when it throws, nothing changes.
    public func rotateAdminToken(beforeCommit: (String) throws -> Void = { _ in }) throws -> (token: String, revoked: Int) {
        try storage.rotateAdminToken(beforeCommit: beforeCommit)
    }

    /// The global lockout rebuilt from the replicas, for comparing with the one the server keeps
    /// (tests and the simulator: the two must hold the same keys whatever the upload order).
    /// Other storage folds it from the database on every query: always `true`.
    public func globalLockoutMatchesRebuild() throws -> Bool {
        try replicaStorage?.globalLockoutMatchesRebuild() ?? true
    }

    /// Refuse new requests with 503 (in-flight ones finish, waiting polls are answered 503 at
    /// once), then close the stores.
    public func beginShutdown() {
        shuttingDown.store(true, ordering: .sequentiallyConsistent)
        polls.stop(answering: Self.addingSecurityHeaders(failure(.unavailable, "the server is shutting down; retry shortly", retryAfter: 5)))
    }

    public func close() {
        beginShutdown()
        storage.close()
    }

    // MARK: Routing

    /// An answer as the HTTP layer sends it: a response, and the file its body is in for a
    /// large one (an export; `response.body` is then empty).
    public struct Answer: Sendable {
        public var response: SyncResponse
        public var file: HTTPBodyFile?
    }

    /// What the router makes of a request: an answer now, one whose body is a file, or a poll
    /// that waits for a newer attempt.
    enum Reply {
        case now(SyncResponse)
        case file(SyncResponse, HTTPBodyFile)
        case later(HistoryPoll)
    }

    /// Answers `request`, blocking the calling thread while a history poll waits (`wait=`); every
    /// answer carries the security headers (``securityHeaders``) and holds its whole body.
    public func handle(_ request: SyncRequest) -> SyncResponse {
        let answered = Mutex<SyncResponse?>(nil)
        let done = DispatchSemaphore(value: 0)
        handle(request) { answer in
            var response = answer.response
            if let file = answer.file { response.body = file.readAll() ?? [] }
            answered.withLock { $0 = response }
            done.signal()
        }
        done.wait()
        return answered.withLock { $0 } ?? failure(.internal, "the server failed to complete the request; its operator's log has the details")
    }

    /// Answers `request` through `completion`, exactly once: at once, or — for a history poll
    /// that waits — later, from the poll thread, so the caller's thread is free meanwhile.
    public func handle(_ request: SyncRequest, completion answered: @escaping @Sendable (Answer) -> Void) {
        let started = ContinuousClock.now
        // Routed once: the metrics name it, the router answers it.
        let route = Self.route(method: request.method, path: request.path)
        let routeName = Self.metricsName(of: route)
        let completion: @Sendable (Answer) -> Void = { [metrics] answer in
            let response = answer.response
            let code = response.status >= 400 ? SyncWire.error(from: response.body)?.wireCode : nil
            metrics.record(
                route: routeName, method: request.method, status: response.status, errorCode: code,
                seconds: Double((ContinuousClock.now - started) / .microseconds(1)) / 1_000_000)
            answered(answer)
        }
        switch reply(to: request, route: route) {
        case .now(let response): completion(Answer(response: Self.addingSecurityHeaders(response)))
        case .file(let response, let file): completion(Answer(response: Self.addingSecurityHeaders(response), file: file))
        case .later(let poll):
            let waiting = polls.add(poll) { response in completion(Answer(response: Self.addingSecurityHeaders(response))) }
            if !waiting {
                completion(
                    Answer(
                        response: Self.addingSecurityHeaders(
                            failure(
                                .unavailable,
                                "\(SyncLimits.maximumWaitingPolls) history polls are already waiting on this server; retry without wait, or with it in a second",
                                retryAfter: 1))))
            }
        }
    }

    static func addingSecurityHeaders(_ response: SyncResponse) -> SyncResponse {
        var response = response
        addSecurityHeaders(to: &response)
        return response
    }

    private func reply(to request: SyncRequest, route: Route) -> Reply {
        if shuttingDown.load(ordering: .sequentiallyConsistent) {
            return .now(failure(.unavailable, "the server is shutting down; retry shortly", retryAfter: 5))
        }
        switch route {
        case .health, .console, .consoleRedirect, .notFound, .wrongMethod:
            // What needs no token is limited per address (an authenticated request, per token).
            if let address = request.clientAddress, case .refused(let wait) = rateBuckets.anonymous?.take(address) {
                return .now(
                    rateLimited(
                        wait, "\(address) sent more than \(rateBuckets.anonymous?.rate.description ?? "") requests (per second / at once) that need no token"))
            }
        default: break
        }
        switch route {
        case .history(let user):
            return auditorReply(request, user) { user in try self.withValidUserReply(user) { try self.historyReply(request, user: $0, device: nil) } }
        case .deviceHistory(let device):
            return auditorReply(request, device, naming: "device") { device in
                try self.withValidDeviceReply(device) { try self.historyReply(request, user: nil, device: $0) }
            }
        case .userExport(let user):
            return auditorReply(request, user) { user in try self.withValidUserReply(user) { try self.export(request, user: $0, device: nil) } }
        case .deviceExport(let device):
            return auditorReply(request, device, naming: "device") { device in
                try self.withValidDeviceReply(device) { try self.export(request, user: nil, device: $0) }
            }
        default:
            return .now(respond(to: request, route: route))
        }
    }

    private func respond(to request: SyncRequest, route: Route) -> SyncResponse {
        switch route {
        case .health: return json(200, SyncWire.encode(.object([.init("status", .string("ok"))])))
        case .consoleRedirect:
            return SyncResponse(
                status: 301, headers: ["location": "/console/", "content-type": "text/plain; charset=utf-8"],
                body: Array("the console is at /console/\n".utf8))
        case .console(let file): return consoleFile(file)
        case .enrol: return admin(request) { try self.enrol(request) }
        case .issueDeviceToken(let device):
            return admin(request) { try self.withValidDevice(device) { try self.issueDeviceToken($0) } }
        case .revokeDeviceTokens(let device):
            return admin(request) {
                try self.withValidDevice(device) { device in
                    // Idempotent: a device that was never enrolled has no tokens to revoke.
                    _ = try self.storage.revokeTokens(device: device)
                    return SyncResponse(status: 204)
                }
            }
        case .issueAuditorToken:
            return admin(request) {
                let expiresAt = self.expiry(of: .auditor)
                let token = try self.storage.issueToken(role: .auditor, device: nil, expiresAt: expiresAt)
                return self.json(201, SyncWire.tokenBody(role: "auditor", device: nil, token: token, expiresAt: expiresAt))
            }
        case .revokeAuditorTokens:
            return admin(request) {
                _ = try self.storage.revokeAuditorTokens()
                return SyncResponse(status: 204)
            }
        case .cursor(let device): return readDevice(request, device) { try self.cursor($0) }
        case .upload(let device): return upload(request, device: device)
        case .history, .deviceHistory, .userExport, .deviceExport:
            // reply(to:) answers these (they may wait or send a file); never reached.
            return failure(.internal, "the server failed to complete the request; its operator's log has the details")
        case .users: return auditor(request) { try self.searchUsers(request) }
        case .devices: return auditor(request) { try self.devicesPage(request) }
        case .deviceAudit(let device):
            return auditor(request, device, naming: "device") { device in try self.withValidDevice(device) { try self.deviceAudit($0) } }
        case .revokeDeviceToken(let device, let id):
            return adminAction(request) { actor in try self.withValidDevice(device) { try self.revokeToken(device: $0, id: id, actor: actor) } }
        case .clearLockout(let user):
            return adminAction(request) { actor in
                guard let name = SyncPaths.percentDecoded(user), !name.isEmpty else {
                    return self.failure(.malformed, "the user in the path is not valid percent-encoded UTF-8")
                }
                return try self.withValidUser(name) { try self.clearLockout(request, user: $0, actor: actor) }
            }
        case .actions: return auditor(request) { try self.actionsPage(request) }
        case .metrics: return admin(request) { self.metricsResponse() }
        case .token:
            switch grant(request) {
            case .refused(let response): return response
            case .granted(let grant): return json(200, SyncWire.encode(tokenDescription(grant, token: request.bearerToken ?? "")))
            }
        case .rotateToken:
            switch grant(request) {
            case .refused(let response): return response
            case .granted(let grant): return guarded { try self.rotate(grant) }
            }
        case .policy: return auditor(request) { self.json(200, Array(self.options.policy.json.utf8)) }
        case .userCounts(let user):
            return auditor(request, user) { user in try self.withValidUser(user) { try self.counts(request, user: $0, device: nil) } }
        case .deviceCounts(let device):
            return auditor(request, device, naming: "device") { device in try self.withValidDevice(device) { try self.counts(request, user: nil, device: $0) } }
        case .forgetUser(let encoded):
            return admin(request) {
                guard let user = SyncPaths.percentDecoded(encoded), !user.isEmpty else {
                    return self.failure(.malformed, "the user in the path is not valid percent-encoded UTF-8")
                }
                return try self.withValidUser(user) { try self.forget(user: $0) }
            }
        case .audit:
            switch grant(request) {
            case .refused(let response): return response
            case .granted(let grant) where grant.role == .device:
                return failure(.forbidden, "a device token cannot audit the server; use an auditor token")
            case .granted: return guarded { json(200, ReplicaAudit.body(try self.audit())) }
            }
        case .lockout(let user):
            return auditor(request, user) { user in
                try self.withValidUser(user) { user in
                    // The query after the token: an unauthenticated request learns nothing of it.
                    var at: Timestamp?
                    let parameters = request.query
                    if let unknown = parameters.keys.sorted().first(where: { $0 != "at" }) {
                        return self.failure(.malformed, "unknown query parameter \(unknown); this endpoint takes at")
                    }
                    if let text = parameters["at"] {
                        do { at = try Timestamp(iso8601: text) } catch {
                            return self.failure(.malformed, "query parameter at: \(error)")
                        }
                    }
                    return self.json(200, SyncWire.encode(.array(try self.globalLockoutEntries(user: user, at: at).map(\.jsonValue))))
                }
            }
        case .wrongMethod(let allowed):
            // RFC 9110 § 15.5.6: a 405 names the methods the path takes.
            var response = failure(
                .methodNotAllowed,
                "\(SyncServer.printable(request.method)) is not allowed on this path (it takes \(allowed.joined(separator: ", "))); see docs/sync-protocol.md")
            response.headers["allow"] = allowed.joined(separator: ", ")
            return response
        case .notFound:
            return failure(.notFound, "no such endpoint; see docs/sync-protocol.md for the paths under /v1")
        }
    }

    enum Route: Equatable {
        case health, enrol, issueAuditorToken, audit, notFound
        /// `/console` (without the slash the page's relative links would resolve outside it).
        case consoleRedirect
        /// A file of the console, by its path under `/console/` as sent (empty: the page).
        case console(String)
        /// A known path with a method it does not take; the methods it takes, for `Allow`.
        case wrongMethod(allowed: [String])
        case issueDeviceToken(String), revokeDeviceTokens(String), cursor(String), upload(String)
        case history(String), lockout(String), deviceHistory(String), forgetUser(String)
        // The audit console's (docs/sync-protocol.md § The audit console).
        case users, devices, actions, token, policy
        /// `POST /v1/token`: a new token for the presented one's device or auditor (rotation).
        case rotateToken
        /// `DELETE /v1/auditors`: every auditor token revoked.
        case revokeAuditorTokens
        /// `GET /metrics`: the Prometheus exposition, for an admin token.
        case metrics
        case deviceAudit(String), revokeDeviceToken(String, String), clearLockout(String)
        case userCounts(String), deviceCounts(String), userExport(String), deviceExport(String)
    }

    /// The endpoint a method and path name (the query string is ignored).
    static func route(method: String, path: String) -> Route {
        let bare = path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        if bare == "/console" { return method == "GET" ? .consoleRedirect : .wrongMethod(allowed: ["GET"]) }
        if bare == "/metrics" { return method == "GET" ? .metrics : .wrongMethod(allowed: ["GET"]) }
        if bare.hasPrefix("/console/") { return method == "GET" ? .console(String(bare.dropFirst("/console/".count))) : .wrongMethod(allowed: ["GET"]) }
        // A DELETE names exactly what it removes: `…/tokens/` (a token id left empty) is no
        // path, not the revocation of every token of the device.
        if method == "DELETE", bare.hasSuffix("/") { return .notFound }
        let parts = bare.split(separator: "/").map(String.init)
        guard parts.first == "v1" else { return .notFound }
        let rest = Array(parts.dropFirst())
        // Segments arrive percent-encoded; a device id is decoded here and checked by the handler
        // (400 for an id that is not one; an escape that does not decode stays as sent and fails
        // that check). Users and the device of a history query are decoded by the auditor check.
        let device = rest.count > 1 ? SyncPaths.percentDecoded(rest[1]) ?? rest[1] : ""
        let candidates: [(String, Route)]
        switch rest.count {
        case 1 where rest[0] == "health": candidates = [("GET", .health)]
        case 1 where rest[0] == "devices": candidates = [("GET", .devices), ("POST", .enrol)]
        case 1 where rest[0] == "users": candidates = [("GET", .users)]
        case 1 where rest[0] == "actions": candidates = [("GET", .actions)]
        case 1 where rest[0] == "token": candidates = [("GET", .token), ("POST", .rotateToken)]
        case 1 where rest[0] == "policy": candidates = [("GET", .policy)]
        case 1 where rest[0] == "auditors": candidates = [("POST", .issueAuditorToken), ("DELETE", .revokeAuditorTokens)]
        case 1 where rest[0] == "audit": candidates = [("GET", .audit)]
        case 3 where rest[0] == "devices" && rest[2] == "tokens":
            candidates = [("POST", .issueDeviceToken(device)), ("DELETE", .revokeDeviceTokens(device))]
        case 3 where rest[0] == "devices" && rest[2] == "cursor": candidates = [("GET", .cursor(device))]
        case 3 where rest[0] == "devices" && rest[2] == "events": candidates = [("POST", .upload(device))]
        case 3 where rest[0] == "devices" && rest[2] == "history": candidates = [("GET", .deviceHistory(rest[1]))]
        case 3 where rest[0] == "users" && rest[2] == "history": candidates = [("GET", .history(rest[1]))]
        case 3 where rest[0] == "users" && rest[2] == "lockout": candidates = [("GET", .lockout(rest[1]))]
        case 3 where rest[0] == "users" && rest[2] == "forget": candidates = [("POST", .forgetUser(rest[1]))]
        case 3 where rest[0] == "devices" && rest[2] == "audit": candidates = [("GET", .deviceAudit(device))]
        case 3 where rest[0] == "users" && rest[2] == "counts": candidates = [("GET", .userCounts(rest[1]))]
        case 3 where rest[0] == "devices" && rest[2] == "counts": candidates = [("GET", .deviceCounts(rest[1]))]
        case 3 where rest[0] == "users" && rest[2] == "export": candidates = [("GET", .userExport(rest[1]))]
        case 3 where rest[0] == "devices" && rest[2] == "export": candidates = [("GET", .deviceExport(rest[1]))]
        case 4 where rest[0] == "devices" && rest[2] == "tokens":
            candidates = [("DELETE", .revokeDeviceToken(device, SyncPaths.percentDecoded(rest[3]) ?? rest[3]))]
        case 4 where rest[0] == "users" && rest[2] == "lockout" && rest[3] == "clear": candidates = [("POST", .clearLockout(rest[1]))]
        default: return .notFound
        }
        return candidates.first { $0.0 == method }?.1 ?? .wrongMethod(allowed: candidates.map(\.0))
    }

    // MARK: Authorisation

    private enum Authorization {
        case granted(TokenGrant)
        case refused(SyncResponse)
    }

    /// The token's grant, within the rate limits: a failed authentication counts against its
    /// address (over the limit, 429 instead of 401), a valid token against its own bucket.
    private func grant(_ request: SyncRequest) -> Authorization {
        let address = request.clientAddress
        /// A failed authentication: 401, or 429 once its address is over the limit.
        func failed(_ refusal: SyncResponse) -> Authorization {
            if let address, let buckets = rateBuckets.failedAuthentication, case .refused(let wait) = buckets.take(address) {
                return .refused(
                    rateLimited(
                        wait, "\(address) sent more than \(buckets.rate.description) requests (per second / at once) with a missing, unknown or revoked token"))
            }
            return .refused(refusal)
        }
        guard let token = request.bearerToken else {
            return failed(failure(.unauthorized, "missing bearer token; send Authorization: Bearer <token>"))
        }
        let found: TokenGrant?
        do { found = try storage.grant(for: token) } catch { return .refused(failure(for: error)) }
        guard let grant = found else {
            return failed(failure(.unauthorized, "unknown or revoked token; ask the server's admin for a new one"))
        }
        if let expiry = grant.expiresAt, options.clock() >= expiry {
            let renewal =
                grant.device.map { "onboard enroll --device \($0), or POST /v1/devices/\($0)/tokens" } ?? "onboard enroll --auditor, or POST /v1/auditors"
            return failed(
                failure(
                    .tokenExpired,
                    "this \(grant.role.rawValue) token expired at \(expiry.iso8601); ask the server's admin for a new one (\(renewal)) — rotate tokens before they expire with POST /v1/token (onboard token --rotate)"
                ))
        }
        if let buckets = rateBuckets.perToken, case .refused(let wait) = buckets.take(RateBuckets.key(of: TokenStore.key(token))) {
            return .refused(rateLimited(wait, "this token sent more than \(buckets.rate.description) requests (per second / at once)"))
        }
        return .granted(grant)
    }

    /// 429 `rate_limited` with `Retry-After`.
    func rateLimited(_ retryAfterSeconds: Int, _ what: String) -> SyncResponse {
        failure(.rateLimited, "\(what); retry after \(retryAfterSeconds) s", retryAfter: retryAfterSeconds)
    }

    private func admin(_ request: SyncRequest, _ body: () throws -> SyncResponse) -> SyncResponse {
        switch grant(request) {
        case .refused(let response): return response
        case .granted(let grant) where grant.role != .admin:
            return failure(.forbidden, "this needs an admin token")
        case .granted: return guarded(body)
        }
    }

    private func auditor(
        _ request: SyncRequest, _ encodedName: String, naming what: String = "user",
        _ body: (String) throws -> SyncResponse
    ) -> SyncResponse {
        switch auditorName(request, encodedName, naming: what) {
        case .failure(let refusal): return refusal.response
        case .success(let name): return guarded { try body(name) }
        }
    }

    /// For an endpoint with no name in its path: an auditor or admin token.
    private func auditor(_ request: SyncRequest, _ body: () throws -> SyncResponse) -> SyncResponse {
        switch grant(request) {
        case .refused(let response): return response
        case .granted(let grant) where grant.role == .device:
            return failure(.forbidden, "a device token cannot read the server's records; use an auditor token")
        case .granted: return guarded(body)
        }
    }

    private func auditorReply(
        _ request: SyncRequest, _ encodedName: String, naming what: String = "user",
        _ body: (String) throws -> Reply
    ) -> Reply {
        switch auditorName(request, encodedName, naming: what) {
        case .failure(let refusal): return .now(refusal.response)
        case .success(let name):
            do { return try body(name) } catch { return .now(failure(for: error)) }
        }
    }

    /// A refusal, as an error (for ``Result``).
    struct Refusal: Error { let response: SyncResponse }

    /// The name in the path when the token is an auditor's or admin's, else the refusal.
    private func auditorName(_ request: SyncRequest, _ encodedName: String, naming what: String) -> Result<String, Refusal> {
        switch grant(request) {
        case .refused(let response): return .failure(Refusal(response: response))
        case .granted(let grant) where grant.role == .device:
            return .failure(Refusal(response: failure(.forbidden, "a device token cannot read users' histories; use an auditor token")))
        case .granted:
            guard let name = SyncPaths.percentDecoded(encodedName), !name.isEmpty else {
                return .failure(Refusal(response: failure(.malformed, "the \(what) in the path is not valid percent-encoded UTF-8")))
            }
            return .success(name)
        }
    }

    /// An admin's action: `body` gets the actor (``ServerAction/actor(adminToken:)``).
    private func adminAction(_ request: SyncRequest, _ body: (String) throws -> SyncResponse) -> SyncResponse {
        admin(request) { try body(ServerAction.actor(adminToken: request.bearerToken ?? "")) }
    }

    private func readDevice(_ request: SyncRequest, _ device: String, _ body: (String) throws -> SyncResponse) -> SyncResponse {
        switch grant(request) {
        case .refused(let response): return response
        case .granted(let grant):
            return guarded {
                try withValidDevice(device) { device in
                    if grant.role == .device && grant.device != device {
                        return failure(.forbidden, "this token belongs to device \(grant.device ?? "?"), not \(device)")
                    }
                    guard try storage.isEnrolled(device) else { return failure(.notFound, "device \(device) is not enrolled") }
                    return try body(device)
                }
            }
        }
    }

    /// Runs `body` with `device` when it is a valid device id, else answers 400: every endpoint
    /// with a device in its path checks it the same way, before it looks the device up.
    func withValidDevice(_ device: String, _ body: (String) throws -> SyncResponse) throws -> SyncResponse {
        do { try Event.validate(deviceID: device) } catch {
            return failure(.malformed, "the device in the path: device id \(error.message)")
        }
        return try body(device)
    }

    private func withValidDeviceReply(_ device: String, _ body: (String) throws -> Reply) throws -> Reply {
        do { try Event.validate(deviceID: device) } catch {
            return .now(failure(.malformed, "the device in the path: device id \(error.message)"))
        }
        return try body(device)
    }

    private func withValidUserReply(_ user: String, _ body: (String) throws -> Reply) throws -> Reply {
        do { try Event.validate(userID: user) } catch { return .now(failure(.malformed, "user \(error.message)")) }
        return try body(user)
    }

    /// Runs `body` with `user` when it is a valid user id (1–256 bytes, no control character),
    /// else answers 400: an id no event can carry has no history and no lockout to read.
    func withValidUser(_ user: String, _ body: (String) throws -> SyncResponse) throws -> SyncResponse {
        do { try Event.validate(userID: user) } catch { return failure(.malformed, "user \(error.message)") }
        return try body(user)
    }

    /// Runs an endpoint. A protocol error is the client's (400); anything else is the server's:
    /// 503 with Retry-After when a resource ran out (descriptors, memory, disk, open replicas),
    /// else 500. Neither says more than that — the detail, which may name files, goes to the
    /// operator's log (``Options/failureLog``), never to the client.
    private func guarded(_ body: () throws -> SyncResponse) -> SyncResponse {
        do { return try body() } catch { return failure(for: error) }
    }

    /// The answer to an endpoint that threw `error`: see ``guarded(_:)``.
    func failure(for error: any Error) -> SyncResponse {
        if let error = error as? SyncWireError { return failure(.malformed, error.message) }
        let failure = ServerFailure(error)
        options.failureLog?("onboard serve: \(failure.logLine)")
        if failure.isResourceShortage {
            return self.failure(
                .unavailable, "the server is short of a resource (\(failure.resource)); retry shortly",
                retryAfter: ServerFailure.retryAfterSeconds)
        }
        return self.failure(.internal, "the server failed to complete the request; its operator's log has the details")
    }

    /// A method name as it may appear in an answer: printable ASCII only, at most 32 bytes.
    static func printable(_ text: String) -> String {
        let kept = text.unicodeScalars.prefix(32).map { $0.isASCII && $0.value >= 0x20 && $0.value < 0x7F ? Character($0) : "?" }
        return String(kept)
    }

    // MARK: Endpoints

    private func enrol(_ request: SyncRequest) throws -> SyncResponse {
        if let refusal = checkJSON(request) { return refusal }
        let (device, publicKey) = try SyncWire.enrolment(from: request.body)
        let token: String
        do { token = try enroll(device: device, publicKey: publicKey) } catch let invalid as EventValidationError {
            return failure(.malformed, "device id \(invalid.message)")
        } catch let mismatch as TokenStore.KeyMismatch {
            return failure(.keyMismatch, mismatch.description)
        }
        return json(
            201,
            SyncWire.tokenBody(
                role: "device", device: device, token: token, serverKey: signingKey.publicKey,
                expiresAt: expiry(of: .device)))
    }

    /// `POST /v1/devices/{device}/tokens`: one more token for `device`.
    private func issueDeviceToken(_ device: String) throws -> SyncResponse {
        let token: String
        do { token = try enroll(device: device) } catch let invalid as EventValidationError {
            return failure(.malformed, "device id \(invalid.message)")
        }
        return json(
            201,
            SyncWire.tokenBody(
                role: "device", device: device, token: token, serverKey: signingKey.publicKey,
                expiresAt: expiry(of: .device)))
    }

    /// `POST /v1/token`: a new token of the presented token's role and device, with a lifetime of
    /// its own; the presented one stays valid until its expiry or a revoke, so a device switches
    /// to the new token whenever it likes. An admin token is rotated on the server machine.
    private func rotate(_ grant: TokenGrant) throws -> SyncResponse {
        guard grant.role != .admin else {
            return failure(.forbidden, "the admin token is rotated on the server machine, where its file is: onboard enroll --rotate-admin")
        }
        let expiresAt = expiry(of: grant.role)
        let token = try storage.issueToken(role: grant.role, device: grant.device, expiresAt: expiresAt)
        return json(
            201,
            SyncWire.tokenBody(
                role: grant.role.rawValue, device: grant.device, token: token,
                serverKey: grant.role == .device ? signingKey.publicKey : nil, expiresAt: expiresAt))
    }

    /// Enrols `device`, as `POST /v1/devices` does for an admin, and returns its new token (the
    /// server keeps only its hash). With `publicKey` (the device store's
    /// `signingPublicKey()`), every batch the device uploads must carry a head signed by it.
    /// A device enrolled before gets one more token; the ones it had stay valid.
    ///
    /// ```swift
    /// let token = try server.enroll(device: store.deviceID, publicKey: try store.signingPublicKey())
    /// let client = SyncClient(store: store, transport: transport, token: token, serverKey: server.signingKey.publicKey)
    /// ```
    ///
    /// - Throws: `EventValidationError` for a device id no device can have;
    ///   `TokenStore.KeyMismatch` when the device is registered with another key; a storage error.
    public func enroll(device: String, publicKey: SigningPublicKey? = nil) throws -> String {
        try Event.validate(deviceID: device)
        // The log first: a token is only handed out for a device the server can store.
        try storage.enroll(device, publicKey: publicKey)
        return try storage.issueToken(role: .device, device: device, expiresAt: expiry(of: .device))
    }

    private func cursor(_ device: String) throws -> SyncResponse {
        json(200, SyncWire.cursorBody(try standing(of: device)))
    }

    /// Where the server stands for `device`, with the users it must still forget.
    private func standing(of device: String) throws -> SyncWire.Cursor {
        try storage.withDeviceLog(device) { log in try standing(of: device, in: log) }
    }

    func standing(of device: String, in log: any DeviceLog) throws -> SyncWire.Cursor {
        let head = try log.head()
        // At most the protocol's limit per answer; the rest follow in later answers, as the
        // device's user_forgotten events for these arrive and their requests end.
        let forget = Array(try log.forgetRequests().prefix(SyncLimits.maximumForgetUsersPerAnswer).map(\.literal))
        let signature = forget.isEmpty ? nil : signingKey.sign(SyncWire.forgetMessage(device: device, pseudonyms: forget))
        return SyncWire.Cursor(
            device: device, acknowledgedSeq: head.seq, headHash: head.hash,
            forgetUsers: forget, forgetSignature: signature)
    }

    /// Forgets `user` on the server: in every device replica that holds records, the user's
    /// key is destroyed (the records stay, byte for byte, and read as erased) and a forget
    /// request is kept, sent to the device with its cursor until the device's own
    /// `user_forgotten` arrives. The cross-device lockout is refolded under the pseudonyms.
    public func forgetUser(_ user: String, at: Timestamp? = nil) throws -> [ForgetOutcome] {
        try storage.forgetUser(user, at: at ?? options.clock())
    }

    /// Runs `body` with the log the server holds for an enrolled `device`, on any storage: for
    /// checks that compare it with the device's log (the simulator). Read only through it.
    /// Throws `StoreError.Code.storeMissing` for a device that is not enrolled.
    package func withDeviceLog<R>(of device: String, _ body: (any DeviceLog) throws -> R) throws -> R {
        guard try storage.isEnrolled(device) else {
            throw StoreError(.storeMissing, "device \(device) is not enrolled; the server holds no log of it")
        }
        return try storage.withDeviceLog(device, body)
    }

    /// Where the replica of `device` lives in the data directory (an LMDB-backed server).
    public func replicaPath(for device: String) -> String? { replicaStorage?.replicas.path(for: device) }

    /// Runs `body` with the replica of an enrolled `device` of an LMDB-backed server, leased as a
    /// request leases it: for checks that read what the server holds (tests and the simulator
    /// compare it with the device's log). Read only through it: writes belong to the upload
    /// path. Throws `StoreError.Code.storeMissing` for a device that is not enrolled (no
    /// replica is made) or a server on other storage.
    public func withReplica<R>(of device: String, _ body: (OnboardingStore) throws -> R) throws -> R {
        guard let replicaStorage, replicaStorage.tokens.isEnrolled(device) else {
            throw StoreError(.storeMissing, "device \(device) is not enrolled; it has no replica")
        }
        return try replicaStorage.replicas.withReplica(device, body)
    }

    private func forget(user: String) throws -> SyncResponse {
        let results: [ForgetOutcome]
        do { results = try forgetUser(user) } catch let error as StoreError where error.code == .pruned {
            // The store's message names the replica's directory: the client gets the facts only.
            return failure(
                .pruned,
                "a replica of this server was pruned through seq \(error.seq.map(String.init) ?? "?"), and its base snapshot holds readable ids a forget cannot rewrite; forget the user with the server stopped (onboard forget-user --data) after restoring that replica unpruned"
            )
        }
        return json(
            200,
            SyncWire.encode(
                .object([
                    .init(
                        "devices",
                        .array(
                            results.map { result in
                                .object([
                                    .init("device", .string(result.device)), .init("pseudonym", .string(result.pseudonym)),
                                    .init("outcome", .string(result.outcome.rawValue))
                                ])
                            }))
                ])))
    }

    /// The cross-device lockout keys of `user` at `at` (default: now).
    public func globalLockoutEntries(user: String, at: Timestamp? = nil) throws -> [LockoutEngine.Entry] {
        try storage.lockoutEntries(user: user, at: at ?? options.clock())
    }

    /// Checks the whole batch against the replica, then appends the new suffix atomically and
    /// durably; answers only after the commit.
    private func upload(_ request: SyncRequest, device: String) -> SyncResponse {
        let authorised: TokenGrant
        switch grant(request) {
        case .refused(let response): return response
        case .granted(let grant): authorised = grant
        }
        guard authorised.role == .device else { return failure(.forbidden, "only the device's own token may upload its log") }
        return guarded {
            try withValidDevice(device) { device in
                guard authorised.device == device else {
                    return failure(.forbidden, "this token belongs to device \(authorised.device ?? "?"), not \(device); a device may only write its own log")
                }
                if let refusal = checkJSON(request) { return refusal }
                guard request.body.count <= SyncLimits.maximumBodyBytes else {
                    return failure(
                        .tooLarge, "the body is \(request.body.count) bytes; at most \(SyncLimits.maximumBodyBytes) per upload, send smaller batches")
                }
                let claimed = inFlight.withLock { busy in busy.insert(device).inserted }
                guard claimed else { return failure(.busy, "an upload of \(device) is already in progress; retry after it", retryAfter: 1) }
                defer { _ = inFlight.withLock { $0.remove(device) } }
                let upload = try SyncWire.uploadWithKeys(from: request.body)
                if let refusal = refusal(of: upload, device: device) { return refusal }
                let response = try storage.withDeviceLog(device) { log in try ingest(upload, device: device, into: log) }
                // A history poll waiting on this node looks again now, not at its next second.
                if response.status == 200 {
                    polls.notice()
                    metrics.ingested(events: 0, bytes: request.body.count)
                }
                return response
            }
        }
    }

    // MARK: Responses

    func checkJSON(_ request: SyncRequest) -> SyncResponse? {
        let type = request.headers["content-type"]?.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        guard type == SyncWire.contentType else {
            return failure(.unsupportedMediaType, "send Content-Type: application/json (got \(request.headers["content-type"] ?? "none"))")
        }
        return nil
    }

    func json(_ status: Int, _ body: [UInt8]) -> SyncResponse {
        SyncResponse(status: status, headers: ["content-type": SyncWire.contentType], body: body)
    }

    /// A refusal with `code`, at the status the code comes with (``SyncErrorCode/status``).
    func failure(_ code: SyncErrorCode, _ message: String, retryAfter: Int? = nil) -> SyncResponse {
        var headers = ["content-type": SyncWire.contentType]
        if let retryAfter { headers["retry-after"] = String(retryAfter) }
        return SyncResponse(status: code.status, headers: headers, body: SyncWire.errorBody(.init(code: code, message: message)))
    }
}
