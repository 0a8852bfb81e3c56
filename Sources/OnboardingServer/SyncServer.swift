import Foundation
import OnboardingModel
import OnboardingProjections
import OnboardingStore
import OnboardingSync
import Synchronization

/// The reference sync server's logic, independent of HTTP: a router from ``SyncRequest`` to
/// ``SyncResponse`` (the HTTP adapter and the in-memory transport both call ``handle(_:)``).
///
/// ```swift
/// let server = try SyncServer(dataDirectory: "/var/lib/onboard")
/// let token = try server.tokens.issue(role: .device, device: "kiosk-7")
/// let response = server.handle(SyncRequest(method: "GET", path: "/v1/devices/kiosk-7/cursor",
///                                          headers: ["authorization": "Bearer \(token)"]))
/// ```
///
/// Storage: `DATA/server` holds the hashed tokens and the enrolled devices; `DATA/devices/<hex id>`
/// one replica store per device. Every acknowledged record is durable first. The server folds all
/// devices' records into one lockout engine keyed `(user, factor)` across devices.
public final class SyncServer: Sendable {
    public let dataDirectory: String
    public let tokens: TokenStore
    let replicas: DeviceReplicas
    /// Devices with an upload in progress: a second concurrent upload of one device gets 429.
    private let inFlight = Mutex<Set<String>>([])
    private let shuttingDown = Atomic<Bool>(false)
    /// The cross-device lockout, and the event ids it has applied: a device log may hold events
    /// imported from another device, and the global views count each event once.
    private let global: Mutex<(engine: LockoutEngine, seen: Set<UUID>)>
    /// The admin token created on first start, when there was none (written to `DATA/admin.token`).
    public let createdAdminToken: String?
    /// Replicas whose log could not be read whole when the server started (one line each: the
    /// device and what is wrong). The server starts anyway: their records up to the damage count
    /// in the global views, the others' all do, and `GET /v1/audit` names the damage.
    public let unreadableReplicas: [String]
    private let policy: LockoutPolicy

    public init(dataDirectory: String, policy: LockoutPolicy = .mediawiki) throws {
        self.dataDirectory = dataDirectory
        self.policy = policy
        try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        tokens = try TokenStore(directory: (dataDirectory as NSString).appendingPathComponent("server"))
        replicas = try DeviceReplicas(directory: (dataDirectory as NSString).appendingPathComponent("devices"))
        if try tokens.hasAdmin() {
            createdAdminToken = nil
        } else {
            let token = try tokens.issue(role: .admin)
            let file = (dataDirectory as NSString).appendingPathComponent("admin.token")
            _ = FileManager.default.createFile(atPath: file, contents: Data((token + "\n").utf8), attributes: [.posixPermissions: 0o600])
            createdAdminToken = token
        }
        global = Mutex((LockoutEngine(policy: policy, acrossDevices: true), []))
        let built = try Self.buildGlobalLockout(tokens: tokens, replicas: replicas, policy: policy)
        unreadableReplicas = built.unreadable
        global.withLock { $0 = (built.engine, built.seen) }
    }

    /// The global lockout: every device's records, merged by time. A replica that cannot be read
    /// whole (a damaged record) contributes its records up to the damage and is listed.
    private func buildGlobalLockout() throws -> (engine: LockoutEngine, seen: Set<UUID>, unreadable: [String]) {
        try Self.buildGlobalLockout(tokens: tokens, replicas: replicas, policy: policy)
    }

    private static func buildGlobalLockout(tokens: TokenStore, replicas: DeviceReplicas,
                                           policy: LockoutPolicy) throws -> (engine: LockoutEngine, seen: Set<UUID>, unreadable: [String]) {
        var engine = LockoutEngine(policy: policy, acrossDevices: true)
        var all: [Record] = []
        var unreadable: [String] = []
        for device in try tokens.enrolledDevices() {
            do {
                let store = try replicas.store(for: device)
                try store.forEachRecord { record in
                    all.append(record)
                    return true
                }
            } catch {
                unreadable.append("\(device): \(error.message)")
            }
        }
        all.sort { ($0.event.at, $0.event.device, $0.seq) < ($1.event.at, $1.event.device, $1.seq) }
        var seen = Set<UUID>()
        for record in all where seen.insert(record.event.id).inserted { engine.apply(record) }
        return (engine, seen, unreadable)
    }

    /// Refuse new requests with 503 (in-flight ones finish), then close the stores.
    public func beginShutdown() { shuttingDown.store(true, ordering: .sequentiallyConsistent) }

    public func close() {
        beginShutdown()
        replicas.closeAll()
        tokens.close()
    }

    // MARK: Routing

    public func handle(_ request: SyncRequest) -> SyncResponse {
        if shuttingDown.load(ordering: .sequentiallyConsistent) {
            return failure(503, "unavailable", "the server is shutting down; retry shortly", retryAfter: 5)
        }
        switch SyncServer.route(method: request.method, path: request.path) {
        case .health: return json(200, SyncWire.encode(.object([.init("status", .string("ok"))])))
        case .enrol: return admin(request) { try self.enrol(request) }
        case .issueDeviceToken(let device): return admin(request) { try self.issueDeviceToken(device) }
        case .revokeDeviceTokens(let device):
            return admin(request) {
                guard self.tokens.isEnrolled(device) else { return self.failure(404, "not_found", "device \(device) is not enrolled") }
                _ = try self.tokens.revoke(device: device)
                return SyncResponse(status: 204)
            }
        case .issueAuditorToken:
            return admin(request) { self.json(201, SyncWire.tokenBody(role: "auditor", device: nil, token: try self.tokens.issue(role: .auditor))) }
        case .cursor(let device): return readDevice(request, device) { try self.cursor(device) }
        case .upload(let device): return upload(request, device: device)
        case .history(let user): return auditor(request, user) { user in try self.history(request, user: user, device: nil) }
        case .forgetUser(let encoded):
            return admin(request) {
                guard let user = SyncPaths.percentDecoded(encoded), !user.isEmpty else {
                    return self.failure(400, "malformed", "the user in the path is not valid percent-encoded UTF-8")
                }
                return try self.forget(user: user)
            }
        case .deviceHistory(let device):
            return auditor(request, device, naming: "device") { device in try self.history(request, user: nil, device: device) }
        case .audit:
            switch grant(request) {
            case .refused(let response): return response
            case .granted(let grant) where grant.role == .device:
                return failure(403, "forbidden", "a device token cannot audit the server; use an auditor token")
            case .granted: return guarded { json(200, ReplicaAudit.body(try self.audit())) }
            }
        case .lockout(let user):
            var at: Timestamp?
            if let text = SyncServer.query(request.path)["at"] {
                do { at = try Timestamp(iso8601: text) } catch {
                    return failure(400, "malformed", "query parameter at: \(error)")
                }
            }
            return auditor(request, user) { user in self.json(200, SyncWire.encode(.array(self.globalLockoutEntries(user: user, at: at).map(\.jsonValue)))) }
        case .wrongMethod:
            return failure(405, "method_not_allowed", "\(request.method) is not allowed on \(request.path); see docs/sync-protocol.md")
        case .notFound:
            return failure(404, "not_found", "no such endpoint \(request.path); see docs/sync-protocol.md")
        }
    }

    enum Route: Equatable {
        case health, enrol, issueAuditorToken, audit, wrongMethod, notFound
        case issueDeviceToken(String), revokeDeviceTokens(String), cursor(String), upload(String)
        case history(String), lockout(String), deviceHistory(String), forgetUser(String)
    }

    /// The endpoint a method and path name (the query string is ignored).
    static func route(method: String, path: String) -> Route {
        let parts = path.split(separator: "?", maxSplits: 1).first.map { $0.split(separator: "/").map(String.init) } ?? []
        guard parts.first == "v1" else { return .notFound }
        let rest = Array(parts.dropFirst())
        // Segments arrive percent-encoded; a device id is decoded here (users and the device of a
        // history query are decoded by the auditor check, which answers 400 for a bad escape).
        let device = rest.count > 1 ? SyncPaths.percentDecoded(rest[1]) ?? rest[1] : ""
        let candidates: [(String, Route)]
        switch rest.count {
        case 1 where rest[0] == "health": candidates = [("GET", .health)]
        case 1 where rest[0] == "devices": candidates = [("POST", .enrol)]
        case 1 where rest[0] == "auditors": candidates = [("POST", .issueAuditorToken)]
        case 1 where rest[0] == "audit": candidates = [("GET", .audit)]
        case 3 where rest[0] == "devices" && rest[2] == "tokens":
            candidates = [("POST", .issueDeviceToken(device)), ("DELETE", .revokeDeviceTokens(device))]
        case 3 where rest[0] == "devices" && rest[2] == "cursor": candidates = [("GET", .cursor(device))]
        case 3 where rest[0] == "devices" && rest[2] == "events": candidates = [("POST", .upload(device))]
        case 3 where rest[0] == "devices" && rest[2] == "history": candidates = [("GET", .deviceHistory(rest[1]))]
        case 3 where rest[0] == "users" && rest[2] == "history": candidates = [("GET", .history(rest[1]))]
        case 3 where rest[0] == "users" && rest[2] == "lockout": candidates = [("GET", .lockout(rest[1]))]
        case 3 where rest[0] == "users" && rest[2] == "forget": candidates = [("POST", .forgetUser(rest[1]))]
        default: return .notFound
        }
        return candidates.first { $0.0 == method }?.1 ?? .wrongMethod
    }

    // MARK: Authorisation

    private enum Authorization {
        case granted(TokenGrant)
        case refused(SyncResponse)
    }

    private func grant(_ request: SyncRequest) -> Authorization {
        guard let token = request.bearerToken else {
            return .refused(failure(401, "unauthorized", "missing bearer token; send Authorization: Bearer <token>"))
        }
        guard let grant = tokens.grant(for: token) else {
            return .refused(failure(401, "unauthorized", "unknown or revoked token; ask the server's admin for a new one"))
        }
        return .granted(grant)
    }

    private func admin(_ request: SyncRequest, _ body: () throws -> SyncResponse) -> SyncResponse {
        switch grant(request) {
        case .refused(let response): return response
        case .granted(let grant) where grant.role != .admin:
            return failure(403, "forbidden", "this needs an admin token")
        case .granted: return guarded(body)
        }
    }

    private func auditor(_ request: SyncRequest, _ encodedName: String, naming what: String = "user",
                         _ body: (String) throws -> SyncResponse) -> SyncResponse {
        switch grant(request) {
        case .refused(let response): return response
        case .granted(let grant) where grant.role == .device:
            return failure(403, "forbidden", "a device token cannot read users' histories; use an auditor token")
        case .granted:
            guard let name = SyncPaths.percentDecoded(encodedName), !name.isEmpty else {
                return failure(400, "malformed", "the \(what) in the path is not valid percent-encoded UTF-8")
            }
            return guarded { try body(name) }
        }
    }

    private func readDevice(_ request: SyncRequest, _ device: String, _ body: () throws -> SyncResponse) -> SyncResponse {
        switch grant(request) {
        case .refused(let response): return response
        case .granted(let grant) where grant.role == .device && grant.device != device:
            return failure(403, "forbidden", "this token belongs to device \(grant.device ?? "?"), not \(device)")
        case .granted:
            guard tokens.isEnrolled(device) else { return failure(404, "not_found", "device \(device) is not enrolled") }
            return guarded(body)
        }
    }

    private func guarded(_ body: () throws -> SyncResponse) -> SyncResponse {
        do { return try body() } catch let error as SyncWireError {
            return failure(400, "malformed", error.message)
        } catch {
            return failure(500, "internal", "the server failed: \(error)")
        }
    }

    // MARK: Endpoints

    private func enrol(_ request: SyncRequest) throws -> SyncResponse {
        if let refusal = checkJSON(request) { return refusal }
        let (device, publicKey) = try SyncWire.enrolment(from: request.body)
        if let publicKey {
            do { try tokens.register(publicKey: publicKey, device: device) } catch let mismatch as TokenStore.KeyMismatch {
                return failure(409, "key_mismatch", mismatch.description)
            }
            try replicas.store(for: device).recordSigningPublicKey(publicKey)
        }
        return try issueDeviceToken(device)
    }

    private func issueDeviceToken(_ device: String) throws -> SyncResponse {
        do { try Event.validate(deviceID: device) } catch { return failure(400, "malformed", "device id \(error.message)") }
        let token = try tokens.issue(role: .device, device: device)
        _ = try replicas.store(for: device)
        return json(201, SyncWire.tokenBody(role: "device", device: device, token: token))
    }

    private func cursor(_ device: String) throws -> SyncResponse {
        json(200, SyncWire.cursorBody(try standing(of: device)))
    }

    /// Where the server stands for `device`, with the users it must still forget.
    private func standing(of device: String) throws -> SyncWire.Cursor {
        let store = try replicas.store(for: device)
        let head = try store.head()
        return SyncWire.Cursor(device: device, acknowledgedSeq: head.seq, headHash: head.hash,
                               forgetUsers: try store.forgetRequests().map(\.literal))
    }

    /// Forgets `user` on the server: in every device replica that holds records, the user's
    /// key is destroyed (the records stay, byte for byte, and read as erased) and a forget
    /// request is kept, sent to the device with its cursor until the device's own
    /// `user_forgotten` arrives. The cross-device lockout is refolded under the pseudonyms.
    public func forgetUser(_ user: String, at: Timestamp? = nil) throws -> [(device: String, pseudonym: String, outcome: OnboardingStore.KeyErasure)] {
        let now = at ?? Timestamp(millisecondsSince1970: Int64(Date().timeIntervalSince1970 * 1000))
        var results: [(device: String, pseudonym: String, outcome: OnboardingStore.KeyErasure)] = []
        for device in try tokens.enrolledDevices() {
            let store = try replicas.store(for: device)
            // An empty replica has not received its device's pseudonym key yet: nothing to forget.
            guard try store.head().seq > 0 else { continue }
            let (pseudonym, outcome) = try store.forgetUserKey(user, requestedAt: now)
            results.append((device, pseudonym, outcome))
        }
        let built = try buildGlobalLockout()
        global.withLock { $0 = (built.engine, built.seen) }
        return results
    }

    /// Where the replica of `device` lives in the data directory.
    public func replicaPath(for device: String) -> String { replicas.path(for: device) }

    private func forget(user: String) throws -> SyncResponse {
        do { try Event.validate(userID: user) } catch { return failure(400, "malformed", "user \(error.message)") }
        let results: [(device: String, pseudonym: String, outcome: OnboardingStore.KeyErasure)]
        do { results = try forgetUser(user) } catch let error as StoreError where error.code == .pruned {
            return failure(409, "pruned", error.message)
        }
        return json(200, SyncWire.encode(.object([
            .init("devices", .array(results.map { result in
                .object([.init("device", .string(result.device)), .init("pseudonym", .string(result.pseudonym)),
                         .init("outcome", .string(result.outcome.rawValue))])
            })),
        ])))
    }

    /// The query parameters of a path (`?a=1&b=2`), percent-decoded.
    static func query(_ path: String) -> [String: String] {
        guard let start = path.firstIndex(of: "?") else { return [:] }
        var result: [String: String] = [:]
        for pair in path[path.index(after: start)...].split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            if let key = parts.first.flatMap(SyncPaths.percentDecoded) {
                result[key] = parts.count > 1 ? SyncPaths.percentDecoded(parts[1]) : ""
            }
        }
        return result
    }

    /// The cross-device lockout keys of `user` at `at` (default: now).
    public func globalLockoutEntries(user: String, at: Timestamp? = nil) -> [LockoutEngine.Entry] {
        let now = at ?? Timestamp(millisecondsSince1970: Int64(Date().timeIntervalSince1970 * 1000))
        return global.withLock { global in global.engine.entries(at: now).filter { $0.key.user == user } }
    }

    /// Checks the whole batch against the replica, then appends the new suffix atomically and
    /// durably; answers only after the commit.
    private func upload(_ request: SyncRequest, device: String) -> SyncResponse {
        let authorised: TokenGrant
        switch grant(request) {
        case .refused(let response): return response
        case .granted(let grant): authorised = grant
        }
        guard authorised.role == .device else { return failure(403, "forbidden", "only the device's own token may upload its log") }
        guard authorised.device == device else {
            return failure(403, "forbidden", "this token belongs to device \(authorised.device ?? "?"), not \(device); a device may only write its own log")
        }
        if let refusal = checkJSON(request) { return refusal }
        guard request.body.count <= SyncLimits.maximumBodyBytes else {
            return failure(413, "too_large", "the body is \(request.body.count) bytes; at most \(SyncLimits.maximumBodyBytes) per upload, send smaller batches")
        }
        let claimed = inFlight.withLock { busy in busy.insert(device).inserted }
        guard claimed else { return failure(429, "busy", "an upload of \(device) is already in progress; retry after it", retryAfter: 1) }
        defer { _ = inFlight.withLock { $0.remove(device) } }
        return guarded { try self.ingest(request.body, device: device) }
    }

    private func ingest(_ body: [UInt8], device: String) throws -> SyncResponse {
        let upload = try SyncWire.uploadWithKeys(from: body)
        guard upload.device == device else {
            return failure(400, "malformed", "body.device is \(upload.device) but the path names \(device)")
        }
        let store = try replicas.store(for: device)
        defer { store.clearPendingKeys() }
        let head = try store.head()
        // A device enrolled with a public key signs every batch; the heads the server accepted
        // pin the history up to them (docs/sync-protocol.md, "Signed heads").
        let registered = tokens.publicKey(for: device)
        if let registered {
            guard let signed = upload.signedHead else {
                return failure(422, "signature_required", "device \(device) is enrolled with a signing key; every upload must carry signed_head over its last record — upgrade the client")
            }
            guard signed.isValid(for: registered) else {
                return failure(422, "bad_signature", "signed_head for seq \(signed.seq) of \(device) does not verify with the key registered at enrolment (\(registered.hex)); nothing was stored")
            }
            if try store.signingPublicKey() == nil { try store.recordSigningPublicKey(registered) }
        }
        let pinnedSeq = registered == nil ? 0 : (try store.latestSignedHead()?.seq ?? 0)
        if let keys = upload.keys {
            // The replica seals with the device's keys, so its records hash as the device's do.
            let adopted: Result<Void, StoreError> = Result { () throws(StoreError) in
                try store.adoptKeys(pseudonymKey: keys.pseudonymKey, userKeys: keys.users)
            }
            if case .failure(let error) = adopted {
                guard error.code == .conflict else { throw error }
                // Another pseudonym key is another store: after a signed head was accepted that
                // is a rewritten history, before it a replaced device store.
                if pinnedSeq > 0 {
                    return failure(409, "history_rewritten", "the records of \(device) are pseudonymised with another key than the history it signed up to seq \(pinnedSeq), which the server accepted; the device log was rewritten after its head was signed")
                }
                return failure(409, "keys_changed", error.message)
            }
        }
        var outcomes: [SyncWire.Outcome] = []
        var fresh: [Record] = []
        func refuse(_ status: Int, _ code: String, _ message: String, at index: Int, expected: UInt64? = nil) -> SyncResponse {
            let results = outcomes.map { SyncWire.Outcome(seq: $0.seq, kind: .refused, reason: "batch_refused") }
                + upload.records[index...].enumerated().map { offset, record in
                    SyncWire.Outcome(seq: record.seq, kind: .refused, reason: offset == 0 ? code : "batch_refused")
                }
            return SyncResponse(status: status, headers: ["content-type": SyncWire.contentType],
                                body: SyncWire.errorBody(.init(code: code, message: message, expectedSeq: expected), results: results))
        }
        for (index, record) in upload.records.enumerated() {
            if record.seq <= head.seq {
                let stored = try store.record(at: record.seq)
                guard let stored, stored.hash == record.hash, stored.event == record.event else {
                    if record.seq <= pinnedSeq {
                        return refuse(409, "history_rewritten", "seq \(record.seq) differs from the history \(device) signed up to seq \(pinnedSeq), which the server accepted; the device log was rewritten after its head was signed", at: index)
                    }
                    return refuse(409, "fork", "seq \(record.seq) differs from the record the server holds for \(device); the device log was rewritten", at: index)
                }
                outcomes.append(.init(seq: record.seq, kind: .duplicate))
                continue
            }
            let previous = fresh.last?.hash ?? head.hash
            if fresh.isEmpty && record.seq != head.seq + 1 {
                return refuse(409, "gap", "the server holds \(device) up to seq \(head.seq); send from seq \(head.seq + 1)",
                              at: index, expected: head.seq + 1)
            }
            if fresh.isEmpty && record.previousHash != previous && head.seq > 0 && head.seq <= pinnedSeq {
                return refuse(409, "history_rewritten", "seq \(record.seq) does not follow seq \(head.seq), which \(device) signed and the server accepted; the device log was rewritten after its head was signed", at: index)
            }
            guard var seal = store.checkingSeal(for: record.event) else {
                return refuse(409, "chain_broken", "seq \(record.seq) names a user whose key the upload did not carry, so its hash cannot be checked; send the device's keys with its records (body.keys)", at: index)
            }
            if seal.seal?.key == nil, let sealed = upload.keys?.sealed[record.seq] {
                // Sealed by the device before it forgot the user: written as the device wrote it.
                seal.seal?.sealed = sealed
            }
            let recomputed = RecordCodec.encode(record.event, seq: record.seq, previousHash: previous, seal: seal.seal)
            guard record.previousHash == previous, Array(recomputed[1...Digest.byteCount]) == record.hash.bytes else {
                return refuse(409, "chain_broken", "seq \(record.seq) does not hash to its claimed hash after the previous record; it was forged or damaged", at: index)
            }
            fresh.append(record)
            outcomes.append(.init(seq: record.seq, kind: .appended))
        }
        if !fresh.isEmpty {
            let appendError: StoreError?
            do {
                let sealed = upload.keys.map { keys in fresh.map { keys.sealed[$0.seq] } }
                _ = try store.appendBlocking(fresh.map(\.event), claimedSeqs: fresh.map(\.seq), expectedHead: head.seq,
                                             sealedSections: sealed)
                appendError = nil
            } catch {
                appendError = error
            }
            if let appendError {
                if appendError.code == .headMoved {
                    // Another writer moved the replica between the check and the append: a race,
                    // not a divergence. The client retries and is then told where the log stands.
                    return failure(503, "unavailable", "the log of \(device) changed during the upload; retry", retryAfter: 1)
                }
                guard appendError.code == .conflict || appendError.code == .seqMismatch else { throw appendError }
                outcomes.removeAll()
                return refuse(409, "fork", "the server cannot append: \(appendError.message)", at: 0)
            }
            if fresh.contains(where: { $0.event.type == .userForgotten }) {
                // Earlier records of the forgotten user now read by the pseudonym: refold.
                let built = try buildGlobalLockout()
                global.withLock { $0 = (built.engine, built.seen) }
            } else {
                global.withLock { global in
                    for record in fresh where global.seen.insert(record.event.id).inserted { global.engine.apply(record) }
                }
            }
        }
        if registered != nil, let signed = upload.signedHead {
            // Checked above and the batch is now stored: the replica keeps the device's signature.
            try store.recordSignedHead(signed)
        }
        return json(200, SyncWire.uploadResponseBody(try standing(of: device), outcomes: outcomes))
    }

    // MARK: Responses

    private func checkJSON(_ request: SyncRequest) -> SyncResponse? {
        let type = request.headers["content-type"]?.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        guard type == SyncWire.contentType else {
            return failure(415, "unsupported_media_type", "send Content-Type: application/json (got \(request.headers["content-type"] ?? "none"))")
        }
        return nil
    }

    func json(_ status: Int, _ body: [UInt8]) -> SyncResponse {
        SyncResponse(status: status, headers: ["content-type": SyncWire.contentType], body: body)
    }

    func failure(_ status: Int, _ code: String, _ message: String, retryAfter: Int? = nil) -> SyncResponse {
        var headers = ["content-type": SyncWire.contentType]
        if let retryAfter { headers["retry-after"] = String(retryAfter) }
        return SyncResponse(status: status, headers: headers, body: SyncWire.errorBody(.init(code: code, message: message)))
    }
}
