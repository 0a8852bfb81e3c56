import Foundation
import LMDB
import OnboardingModel

/// What a bearer token lets its holder do.
public enum TokenRole: String, Sendable, Hashable {
    /// Enrol devices, issue and revoke tokens.
    case admin
    /// Upload and read its own device's log, nothing else.
    case device
    /// Read every device's log and every user's history; write nothing.
    case auditor
}

/// A token's rights: its role, for a device token the device, and when it stops granting them.
public struct TokenGrant: Sendable, Hashable {
    public var role: TokenRole
    public var device: String?
    /// When the token expires (the server answers 401 `token_expired` from then on); `nil` for a
    /// token that never does (the admin token).
    public var expiresAt: Timestamp?

    public init(role: TokenRole, device: String? = nil, expiresAt: Timestamp? = nil) {
        self.role = role
        self.device = device
        self.expiresAt = expiresAt
    }
}

/// How long device and auditor tokens live (docs/operations.md § Rotating tokens and keys).
public enum TokenLifetime {
    /// 90 days: a token copied off a device, out of a backup or a CI log stops working within a
    /// quarter without anyone noticing the theft, while a device that syncs at least monthly has
    /// two months to rotate its token (`POST /v1/token`) before it lapses. It is the lifetime
    /// NIST SP 800-63B's era of forced rotation settled on for long-lived machine credentials,
    /// and the upper end of what cloud providers allow for access keys before they warn.
    public static let defaultMilliseconds: Int64 = 90 * 86_400_000
    /// The longest lifetime `--token-lifetime` takes: 10 years (beyond that, say `off`).
    public static let maximumMilliseconds: Int64 = 3_650 * 86_400_000

    /// When a token issued at `now` with `lifetime` (milliseconds, `nil` for none) expires.
    public static func expiry(issuedAt now: Timestamp, lifetimeMilliseconds lifetime: Int64?) -> Timestamp? {
        lifetime.map { Timestamp(millisecondsSince1970: now.millisecondsSince1970 &+ $0) }
    }

    /// Parses a lifetime as `--token-lifetime` takes it: a positive whole number of days (`90d`),
    /// hours (`12h`), minutes (`30m`) or seconds (`45s`), at most 10 years, or `off` (tokens
    /// never expire). `nil` for anything else.
    public static func parse(_ text: String) -> Int64?? {
        if text == "off" { return .some(nil) }
        guard let unit = text.last, let scale: Int64 = ["d": 86_400_000, "h": 3_600_000, "m": 60_000, "s": 1_000][unit],
            text.dropLast().allSatisfy({ $0.isASCII && $0.isNumber }), let count = Int64(text.dropLast()), count > 0,
            count <= maximumMilliseconds / scale
        else { return nil }
        return .some(count * scale)
    }

    /// `90d`, `12h`, … or `off`: the form ``parse(_:)`` reads.
    public static func describe(_ lifetime: Int64?) -> String {
        guard let lifetime else { return "off" }
        for (unit, scale) in [("d", Int64(86_400_000)), ("h", 3_600_000), ("m", 60_000)] where lifetime % scale == 0 {
            return "\(lifetime / scale)\(unit)"
        }
        return "\(lifetime / 1_000)s"
    }
}

/// The server's credentials, in their own LMDB environment (`DATA/server`). Tokens are stored
/// only as BLAKE2b-256 hashes: a token is 32 random bytes, so a fast hash cannot be reversed, and
/// a copy of the database grants nothing.
///
/// Databases: `tokens` (hash → `role\ndevice\nissued ms\nexpires ms`; tokens of an older
/// `onboard` lack the third line, and the fourth until the first start of this one gives them
/// one, see ``init(directory:)``),
/// `devices` (device → its registered public key, or empty), `device_times` (device → enrolled
/// ms ‖ last upload ms, each `i64` big-endian, 0 for unknown; devices enrolled by an older
/// `onboard` have no entry until their next upload).
///
/// ```swift
/// let tokens = try TokenStore(directory: data + "/server")
/// let token = try tokens.issue(role: .device, device: "kiosk-7")   // shown once, never stored
/// tokens.grant(for: token)                                         // TokenGrant(role: .device, device: "kiosk-7")
/// ```
public final class TokenStore: Sendable {
    let environment: Environment
    let tokens: Database
    let devices: Database
    let deviceTimes: Database

    public init(directory: String) throws {
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
        environment = try Environment.open(path: directory)
        let created = try environment.createDatabases(["tokens", "devices", "device_times"]) { _, _ in }
        tokens = created[0]
        devices = created[1]
        deviceTimes = created[2]
        try expireLegacyTokens(at: Timestamp.now)
    }

    /// Device and auditor tokens issued before tokens expired get an expiry of now + the default
    /// lifetime: an upgrade neither cuts off the fleet at once nor leaves a token valid forever.
    private func expireLegacyTokens(at now: Timestamp) throws {
        let legacy = try environment.read { transaction in
            try transaction.withCursor(tokens) { cursor in
                var found: [([UInt8], Entry)] = []
                var entry = try cursor.first()
                while let current = entry {
                    if let stored = Entry(Array(current.value)), stored.isLegacy, stored.grant.role != .admin { found.append((Array(current.key), stored)) }
                    entry = try cursor.next()
                }
                return found
            }
        }
        guard !legacy.isEmpty else { return }
        let expiry = TokenLifetime.expiry(issuedAt: now, lifetimeMilliseconds: TokenLifetime.defaultMilliseconds)
        try environment.write { transaction in
            for (key, var stored) in legacy {
                stored.grant.expiresAt = expiry
                try transaction.put(tokens, key: key, value: stored.encoded)
            }
        }
    }

    public func close() { environment.close() }

    /// A new random token: `obt_` and 64 hex digits (32 bytes from the system's CSPRNG).
    static func newToken() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return "obt_" + Digest(bytes: bytes).hex
    }

    static func key(_ token: String) -> [UInt8] { Digest.hash(Array(token.utf8)).bytes }

    /// A token's id, as the console shows it: the first 16 hex digits of its stored hash (it
    /// names the token without being able to stand for it).
    public static func tokenID(hash: [UInt8]) -> String { String(HexBytes.encode(hash).prefix(16)) }
    public static func tokenID(of token: String) -> String { tokenID(hash: key(token)) }

    /// A stored token's value: role, device, when it was issued and when it expires (empty for never).
    struct Entry {
        var grant: TokenGrant
        var issuedAt: Timestamp?
        /// Written by an `onboard` from before tokens expired: no expiry line at all.
        var isLegacy: Bool

        init(grant: TokenGrant, issuedAt: Timestamp?) {
            self.grant = grant
            self.issuedAt = issuedAt
            isLegacy = false
        }

        init?(_ value: [UInt8]) {
            let parts = String(decoding: value, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            guard let first = parts.first, let role = TokenRole(rawValue: String(first)) else { return nil }
            let device = parts.count > 1 && !parts[1].isEmpty ? String(parts[1]) : nil
            func time(_ index: Int) -> Timestamp? { parts.count > index ? Int64(parts[index]).map { Timestamp(millisecondsSince1970: $0) } : nil }
            grant = TokenGrant(role: role, device: device, expiresAt: time(3))
            issuedAt = time(2)
            isLegacy = parts.count < 4
        }

        var encoded: [UInt8] {
            Array(
                "\(grant.role.rawValue)\n\(grant.device ?? "")\n\(issuedAt.map { String($0.millisecondsSince1970) } ?? "")\n\(grant.expiresAt.map { String($0.millisecondsSince1970) } ?? "")"
                    .utf8)
        }
    }

    /// Issues a token (enrolling the device for a device token) and returns it; only its hash is
    /// kept. It expires at `expiresAt` (never when `nil`).
    public func issue(role: TokenRole, device: String? = nil, expiresAt: Timestamp? = nil) throws -> String {
        precondition((role == .device) == (device != nil), "a device token names its device, no other does")
        let token = TokenStore.newToken()
        let now = Timestamp.now
        let value = Entry(grant: TokenGrant(role: role, device: device, expiresAt: expiresAt), issuedAt: now).encoded
        try environment.write { transaction in
            try transaction.put(tokens, key: TokenStore.key(token), value: value, flags: .noOverwrite)
            // The device's entry holds its registered public key; a new token must not erase it.
            if let device, try transaction.get(devices, key: Array(device.utf8)) == nil {
                try transaction.put(devices, key: Array(device.utf8), value: [])
                try recordEnrolment(of: device, at: now, in: transaction)
            }
        }
        return token
    }

    /// The grant of `token`, or `nil` for an unknown or revoked one.
    public func grant(for token: String) -> TokenGrant? {
        guard let value = try? environment.read({ try $0.get(tokens, key: TokenStore.key(token)) }) else { return nil }
        return Entry(value)?.grant
    }

    /// Revokes every token of `device`; returns how many there were.
    @discardableResult
    public func revoke(device: String) throws -> Int {
        try revoke { grant, _ in grant.role == .device && grant.device == device }
    }

    /// Revokes every auditor token; returns how many there were.
    @discardableResult
    public func revokeAuditors() throws -> Int {
        try revoke { grant, _ in grant.role == .auditor }
    }

    /// Revokes the tokens of `device` whose ``tokenID(hash:)`` is `id`; returns how many there were.
    @discardableResult
    public func revoke(device: String, id: String) throws -> Int {
        try revoke { grant, hash in grant.role == .device && grant.device == device && TokenStore.tokenID(hash: hash) == id }
    }

    private func revoke(where doomed: (TokenGrant, [UInt8]) -> Bool) throws -> Int {
        try environment.write { transaction in try revoke(where: doomed, in: transaction) }
    }

    private func revoke(where doomed: (TokenGrant, [UInt8]) -> Bool, in transaction: Transaction) throws -> Int {
        var keys: [[UInt8]] = []
        try transaction.withCursor(tokens) { cursor in
            var entry = try cursor.first()
            while let current = entry {
                if let stored = Entry(Array(current.value)), doomed(stored.grant, Array(current.key)) { keys.append(Array(current.key)) }
                entry = try cursor.next()
            }
        }
        for key in keys { try transaction.delete(tokens, key: key) }
        return keys.count
    }

    /// Replaces every admin token with a new one, in one commit, and returns it with how many
    /// were revoked (`onboard enroll --rotate-admin`). `beforeCommit` gets the new token first
    /// (to write it to its file); when it throws, nothing changes.
    public func rotateAdmin(beforeCommit: (String) throws -> Void = { _ in }) throws -> (token: String, revoked: Int) {
        let token = TokenStore.newToken()
        let revoked = try environment.write { transaction in
            try beforeCommit(token)
            let revoked = try revoke(where: { grant, _ in grant.role == .admin }, in: transaction)
            try transaction.put(
                tokens, key: TokenStore.key(token), value: Entry(grant: TokenGrant(role: .admin), issuedAt: Timestamp.now).encoded,
                flags: .noOverwrite)
            return revoked
        }
        return (token, revoked)
    }

    /// Every device token, by device: its id, when it was issued and expires, in hash order.
    func deviceTokens() throws -> [String: [DeviceStatus.Token]] {
        try environment.read { transaction in
            try transaction.withCursor(tokens) { cursor in
                var found: [String: [DeviceStatus.Token]] = [:]
                var entry = try cursor.first()
                while let current = entry {
                    if let stored = Entry(Array(current.value)), stored.grant.role == .device, let device = stored.grant.device {
                        found[device, default: []].append(
                            .init(
                                id: TokenStore.tokenID(hash: Array(current.key)), issuedAt: stored.issuedAt,
                                expiresAt: stored.grant.expiresAt))
                    }
                    entry = try cursor.next()
                }
                return found
            }
        }
    }

    // MARK: Device times

    private func recordEnrolment(of device: String, at time: Timestamp, in transaction: Transaction) throws {
        guard try transaction.get(deviceTimes, key: Array(device.utf8)) == nil else { return }
        try transaction.put(deviceTimes, key: Array(device.utf8), value: Self.times(enrolled: time, lastUpload: nil))
    }

    private static func times(enrolled: Timestamp?, lastUpload: Timestamp?) -> [UInt8] {
        withUnsafeBytes(of: (enrolled?.millisecondsSince1970 ?? 0).bigEndian) { Array($0) }
            + withUnsafeBytes(of: (lastUpload?.millisecondsSince1970 ?? 0).bigEndian) { Array($0) }
    }

    private static func times(_ value: [UInt8]) -> (enrolled: Timestamp?, lastUpload: Timestamp?) {
        guard value.count == 16 else { return (nil, nil) }
        func time(_ bytes: ArraySlice<UInt8>) -> Timestamp? {
            let milliseconds = Int64(bitPattern: bytes.reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
            return milliseconds == 0 ? nil : Timestamp(millisecondsSince1970: milliseconds)
        }
        return (time(value[0..<8]), time(value[8..<16]))
    }

    /// When each device enrolled and last uploaded, as far as recorded.
    func deviceTimesByDevice() throws -> [String: (enrolled: Timestamp?, lastUpload: Timestamp?)] {
        try environment.read { transaction in
            try transaction.withCursor(deviceTimes) { cursor in
                var found: [String: (enrolled: Timestamp?, lastUpload: Timestamp?)] = [:]
                var entry = try cursor.first()
                while let current = entry {
                    found[String(decoding: current.key, as: UTF8.self)] = Self.times(Array(current.value))
                    entry = try cursor.next()
                }
                return found
            }
        }
    }

    /// Records the devices' last upload times, in one commit (their enrolment times stay).
    func recordUploads(_ uploads: [String: Timestamp]) throws {
        try environment.write { transaction in
            for (device, time) in uploads {
                let key = Array(device.utf8)
                let enrolled = try transaction.get(deviceTimes, key: key).map(Self.times)?.enrolled
                try transaction.put(deviceTimes, key: key, value: Self.times(enrolled: enrolled, lastUpload: time))
            }
        }
    }

    /// Whether any admin token exists (the server creates one on first start).
    public func hasAdmin() throws -> Bool {
        try environment.read { transaction in
            try transaction.withCursor(tokens) { cursor in
                var entry = try cursor.first()
                while let current = entry {
                    if current.value.starts(with: Array("admin\n".utf8)) { return true }
                    entry = try cursor.next()
                }
                return false
            }
        }
    }

    /// Every enrolled device, sorted.
    public func enrolledDevices() throws -> [String] {
        try environment.read { transaction in
            try transaction.withCursor(devices) { cursor in
                var names: [String] = []
                var entry = try cursor.first()
                while let current = entry {
                    names.append(String(decoding: current.key, as: UTF8.self))
                    entry = try cursor.next()
                }
                return names
            }
        }
    }

    /// Registers the Ed25519 public key that `device` signs its chain heads with (enrolling it).
    /// Registering the same key again is fine; another key than the one registered is refused:
    /// a replaced key would let a rewritten history be signed anew.
    public func register(publicKey: SigningPublicKey, device: String) throws {
        try environment.write { transaction in
            let key = Array(device.utf8)
            if let existing = try transaction.get(devices, key: key), !existing.isEmpty {
                guard existing == publicKey.bytes else {
                    throw KeyMismatch(device: device, registered: SigningPublicKey(bytes: existing), offered: publicKey)
                }
                return
            }
            try transaction.put(devices, key: key, value: publicKey.bytes)
            try recordEnrolment(of: device, at: Timestamp.now, in: transaction)
        }
    }

    /// The public key registered for `device`, `nil` when it enrolled without one.
    public func publicKey(for device: String) -> SigningPublicKey? {
        guard let value = (try? environment.read { try $0.get(devices, key: Array(device.utf8)) }) ?? nil else { return nil }
        return SigningPublicKey(bytes: value)
    }

    /// A device offered another public key than the one registered for it.
    public struct KeyMismatch: Error, CustomStringConvertible {
        public let device: String
        public let registered: SigningPublicKey?
        public let offered: SigningPublicKey
        public var description: String {
            "device \(device) is registered with the signing key \(registered?.hex ?? "?"), not \(offered.hex); a device's key cannot be replaced — enrol the store under a new device id"
        }
    }

    /// Every token's hash with its grant (role, device, expiry) and issue time (`onboard migrate-server` copies them).
    package func allTokens() throws -> [(hash: [UInt8], grant: TokenGrant, issuedAt: Timestamp?)] {
        try environment.read { transaction in
            try transaction.withCursor(tokens) { cursor in
                var all: [(hash: [UInt8], grant: TokenGrant, issuedAt: Timestamp?)] = []
                var entry = try cursor.first()
                while let current = entry {
                    if let stored = Entry(Array(current.value)) { all.append((Array(current.key), stored.grant, stored.issuedAt)) }
                    entry = try cursor.next()
                }
                return all
            }
        }
    }

    public func isEnrolled(_ device: String) -> Bool {
        ((try? environment.read { try $0.get(devices, key: Array(device.utf8)) }) ?? nil) != nil
    }
}
