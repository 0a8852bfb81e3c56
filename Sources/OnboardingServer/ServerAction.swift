import Foundation
import OnboardingModel
import OnboardingProjections

/// Something an administrator did on the server itself rather than on a device — clearing a
/// user's lockout, revoking a token — kept by the storage, audited (`GET /v1/actions`), shown in
/// the user's history and exports, and for a clear folded into the global lockout at its time
/// (docs/sync-protocol.md § Server actions).
///
/// ```swift
/// let clear = ServerAction(kind: .lockoutCleared, at: now, actor: "admin:9f2c…", user: "alice", factor: nil, reason: "helpdesk call 4711")
/// ```
public struct ServerAction: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// The user's global lockout was cleared for one factor, or all.
        case lockoutCleared = "lockout_cleared"
        /// One token of a device was revoked.
        case tokenRevoked = "token_revoked"
    }

    public var id: UUID
    /// The storage's order of actions (from 1): after the time, an action's place in the fold.
    public var seq: UInt64
    public var at: Timestamp
    /// `admin:` and the first 16 hex digits of the admin token's hash.
    public var actor: String
    public var kind: Kind
    /// The user it is about; the pseudonym literal once the user is forgotten.
    public var user: String?
    /// The factor a clear is for; `nil` for every factor (and for actions that are not clears).
    public var factor: LockoutFactor?
    /// What the admin wrote; `nil` once the user is forgotten.
    public var reason: String?
    /// The device a token revocation is about.
    public var device: String?
    /// The revoked token's id (16 hex digits of its hash).
    public var token: String?

    public init(
        id: UUID = UUID(), seq: UInt64 = 0, kind: Kind, at: Timestamp, actor: String, user: String? = nil,
        factor: LockoutFactor? = nil, reason: String? = nil, device: String? = nil, token: String? = nil
    ) {
        self.id = id
        self.seq = seq
        self.kind = kind
        self.at = at
        self.actor = actor
        self.user = user
        self.factor = factor
        self.reason = reason
        self.device = device
        self.token = token
    }

    /// 1–200 characters: a ticket number and a sentence; an audit trail, not a document.
    public static let maximumReasonCharacters = 200

    /// Why `reason` cannot be a clear's reason (the 400's message), `nil` when it can: 1–200
    /// characters — Unicode scalars, as JSON Schema's `maxLength` counts them — none a control character.
    static func reasonRefusal(_ reason: String) -> String? {
        guard (1...maximumReasonCharacters).contains(reason.unicodeScalars.count) else {
            return "body.reason must be 1 to \(maximumReasonCharacters) characters, got \(reason.unicodeScalars.count)"
        }
        guard !reason.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            return "body.reason must not contain control characters"
        }
        return nil
    }

    /// The actor text of an admin token: `admin:` and 16 hex digits of its stored hash.
    static func actor(adminToken: String) -> String { "admin:" + TokenStore.tokenID(of: adminToken) }

    /// Where the action sorts among records in the global lockout's fold: `(at, "", seq)`, so at
    /// one millisecond it comes before every device's records.
    var position: HistoryCursor { HistoryCursor(at: at, device: "", seq: seq) }

    /// `{"id","at","actor","action","user","factor","reason","device","token"}`.
    public var jsonValue: JSONValue {
        func text(_ value: String?) -> JSONValue { value.map { .string($0) } ?? .null }
        return .object([
            .init("id", .string(id.uuidString.lowercased())), .init("at", .string(at.iso8601)), .init("actor", .string(actor)),
            .init("action", .string(kind.rawValue)), .init("user", text(user)), .init("factor", text(factor?.rawValue)),
            .init("reason", text(reason)), .init("device", text(device)), .init("token", text(token))
        ])
    }

    /// A fresh pseudonym literal for a forgotten user's actions: random, so nothing links it to
    /// the user's id (the device pseudonyms of their records are each device's own).
    static func pseudonym() -> String {
        var generator = SystemRandomNumberGenerator()
        return UserRef(bytes: (0..<UserRef.byteCount).map { _ in UInt8.random(in: 0...255, using: &generator) }).literal
    }

    /// The action as a user's forget leaves it: `user` the pseudonym it is known by from then on,
    /// no reason (free text an admin wrote about that user).
    func forgotten(as pseudonym: String) -> ServerAction {
        var erased = self
        erased.user = pseudonym
        erased.reason = nil
        return erased
    }

    /// The personal part (user, reason) as one byte string, sealed by the storage: `u16` length of
    /// the user's UTF-8, the user, the reason's UTF-8; a missing user or reason is written empty.
    var personalBytes: [UInt8] {
        let user = Array((self.user ?? "").utf8)
        return [UInt8(user.count >> 8), UInt8(user.count & 0xFF)] + user + Array((reason ?? "").utf8)
    }

    /// ``personalBytes`` read back; `nil` when they are not such bytes.
    static func personal(from bytes: [UInt8]) -> (user: String?, reason: String?)? {
        guard bytes.count >= 2 else { return nil }
        let length = Int(bytes[0]) << 8 | Int(bytes[1])
        guard bytes.count >= 2 + length, let user = String(validating: bytes[2..<(2 + length)], as: UTF8.self),
            let reason = String(validating: bytes[(2 + length)...], as: UTF8.self)
        else { return nil }
        return (user.isEmpty ? nil : user, reason.isEmpty ? nil : reason)
    }
}
