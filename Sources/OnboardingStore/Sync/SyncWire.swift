import Foundation
import OnboardingModel

/// A body that does not follow the protocol; the message names the member and the fix.
public struct SyncWireError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// The JSON bodies of the sync protocol (docs/sync-protocol.md, docs/openapi.yaml). Members are
/// written in a fixed order; readers refuse unknown members.
public enum SyncWire {
    public static let contentType = "application/json"

    // MARK: Records

    /// Appends `{"event": <canonical event JSON with seq>, "prev": "<hex>", "hash": "<hex>"}`:
    /// the event's canonical bytes written in place, never encoded to text and parsed back.
    static func appendRecord(_ record: Record, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: #"{"event":"#.utf8)
        EventJSON.encode(record.event, seq: record.seq, into: &bytes)
        bytes.append(contentsOf: #","prev":"#.utf8)
        JSONWriter.appendQuoted(record.previousHash.hex, to: &bytes)
        bytes.append(contentsOf: #","hash":"#.utf8)
        JSONWriter.appendQuoted(record.hash.hex, to: &bytes)
        bytes.append(UInt8(ascii: "}"))
    }

    public static func record(from value: JSONValue, index: Int) throws(SyncWireError) -> Record {
        // The path is only spelled out for an error: a batch has thousands of records.
        var where_: String { "records[\(index)]" }
        let members = try object(value, where_, allowed: ["event", "prev", "hash"])
        guard let eventValue = members["event"] else { throw SyncWireError("\(where_).event is required") }
        let decoded: EventJSON.Decoded
        do { decoded = try EventJSON.decode(eventValue) } catch { throw SyncWireError("\(where_).event: \(error)") }
        guard let seq = decoded.seq else { throw SyncWireError("\(where_).event.seq is required") }
        return Record(
            seq: seq, event: decoded.event, previousHash: try digest(members["prev"], "\(where_).prev"),
            hash: try digest(members["hash"], "\(where_).hash"))
    }

    // MARK: Upload

    /// The keys that let the server's replica seal, check and read a device's records
    /// (docs/sync-protocol.md § Keys): the device store's pseudonym key and the keys of the
    /// users in the batch that are not forgotten.
    public struct Keys: Sendable, Equatable {
        public var pseudonymKey: SecretKey
        public var users: [UserRef: SecretKey]
        /// By seq: the sealed personal section of a record whose user the device forgot after
        /// sealing it — the server cannot re-encode it from the erased event (§ Keys).
        public var sealed: [UInt64: [UInt8]]
        public init(pseudonymKey: SecretKey, users: [UserRef: SecretKey], sealed: [UInt64: [UInt8]] = [:]) {
            self.pseudonymKey = pseudonymKey
            self.users = users
            self.sealed = sealed
        }
    }

    /// `POST /v1/devices/{device}/events` body: `{"device", "records": [...], "signed_head"?}` in
    /// seq order; `signed_head` is the device's signature over the batch's last record.
    /// `keys` carries what the replica needs to re-encode and read the records (§ Keys).
    public static func uploadBody(device: String, records: [Record], signedHead: SignedHead? = nil, keys: Keys? = nil) -> [UInt8] {
        // The records are written straight into the body (``appendRecord``); the members after
        // them go through the writer, in the same order as always.
        var bytes = Array(#"{"device":"#.utf8)
        JSONWriter.appendQuoted(device, to: &bytes)
        bytes.append(contentsOf: #","records":["#.utf8)
        for (index, record) in records.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            appendRecord(record, to: &bytes)
        }
        bytes.append(UInt8(ascii: "]"))
        var members: [JSONValue.Member] = []
        if let signedHead { members.append(.init("signed_head", signedHeadValue(signedHead))) }
        if let keys {
            let users = keys.users.sorted { $0.key < $1.key }.map { JSONValue.Member($0.key.hex, .string(HexBytes.encode($0.value.bytes))) }
            var keyMembers: [JSONValue.Member] = [
                .init("pseudonym_key", .string(HexBytes.encode(keys.pseudonymKey.bytes))),
                .init("users", .object(users))
            ]
            if !keys.sealed.isEmpty {
                let sealed = keys.sealed.sorted { $0.key < $1.key }.map { JSONValue.Member(String($0.key), .string(HexBytes.encode($0.value))) }
                keyMembers.append(.init("sealed", .object(sealed)))
            }
            members.append(.init("keys", .object(keyMembers)))
        }
        for member in members {
            bytes.append(UInt8(ascii: ","))
            JSONWriter.appendQuoted(member.key, to: &bytes)
            bytes.append(UInt8(ascii: ":"))
            bytes.append(contentsOf: encode(member.value))
        }
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    /// `{"seq", "hash", "signature"}` (hash: 64 hex digits, signature: 128).
    public static func signedHeadValue(_ head: SignedHead) -> JSONValue {
        .object([
            .init("seq", .number(String(head.seq))), .init("hash", .string(head.hash.hex)),
            .init("signature", .string(HexBytes.encode(head.signature)))
        ])
    }

    static func signedHead(from value: JSONValue, device: String) throws(SyncWireError) -> SignedHead {
        let members = try object(value, "body.signed_head", allowed: ["seq", "hash", "signature"])
        guard case .number(let text)? = members["seq"], let seq = UInt64(text) else {
            throw SyncWireError("body.signed_head.seq is required (a whole number)")
        }
        guard case .string(let hex)? = members["signature"], let signature = HexBytes.decode(hex),
            signature.count == SignedHead.signatureByteCount
        else {
            throw SyncWireError("body.signed_head.signature must be \(SignedHead.signatureByteCount * 2) hex digits")
        }
        return SignedHead(device: device, seq: seq, hash: try digest(members["hash"], "body.signed_head.hash"), signature: signature)
    }

    public static func upload(from body: [UInt8]) throws(SyncWireError) -> (device: String, records: [Record], signedHead: SignedHead?) {
        let upload = try uploadWithKeys(from: body)
        return (upload.device, upload.records, upload.signedHead)
    }

    /// One upload as the server reads it.
    public struct Upload: Sendable {
        public var device: String
        /// In seq order, consecutive, starting at 1 or later.
        public var records: [Record]
        public var signedHead: SignedHead?
        /// `nil` when the device sent none (allowed while no record names a user).
        public var keys: Keys?
    }

    /// ``upload(from:)`` with the keys the device sent (`nil` when it sent none).
    public static func uploadWithKeys(from body: [UInt8]) throws(SyncWireError) -> Upload {
        let members = try object(try parse(body), "body", allowed: ["device", "records", "signed_head", "keys"])
        guard case .string(let device)? = members["device"] else { throw SyncWireError("body.device is required (a string)") }
        guard case .array(let items)? = members["records"] else { throw SyncWireError("body.records is required (an array)") }
        guard !items.isEmpty else { throw SyncWireError("body.records is empty; send at least one record") }
        guard items.count <= SyncLimits.maximumBatchEvents else {
            throw SyncWireError("body.records holds \(items.count) records; at most \(SyncLimits.maximumBatchEvents) per upload")
        }
        var records: [Record] = []
        records.reserveCapacity(items.count)
        for (index, item) in items.enumerated() { records.append(try record(from: item, index: index)) }
        try checkConsecutive(records)
        var signedHead: SignedHead?
        if let value = members["signed_head"], value != .null {
            let head = try self.signedHead(from: value, device: device)
            guard let last = records.last, head.seq == last.seq, head.hash == last.hash else {
                throw SyncWireError("body.signed_head must sign the batch's last record (seq \(records.last?.seq ?? 0) and its hash)")
            }
            signedHead = head
        }
        return Upload(device: device, records: records, signedHead: signedHead, keys: try keys(members["keys"]))
    }

    /// Seqs start at 1 and follow one another. A client chooses every seq, so none of this may
    /// trap: `seq + 1` is never computed for the largest seq, which no record can follow.
    static func checkConsecutive(_ records: [Record]) throws(SyncWireError) {
        for index in records.indices {
            let seq = records[index].seq
            if seq == 0 { throw SyncWireError("records[\(index)].event.seq is 0; a log's seqs start at 1") }
            guard index > 0 else { continue }
            let previous = records[index - 1].seq
            if previous == UInt64.max || seq != previous + 1 {
                throw SyncWireError("records[\(index)].event.seq is \(seq) after \(previous); records must have consecutive seqs")
            }
        }
    }

    /// What the server did with one uploaded record.
    public struct Outcome: Sendable, Hashable {
        public enum Kind: String, Sendable, Hashable { case appended, duplicate, refused }
        /// The `reason` of every refused record but the one that caused the refusal, whose
        /// reason is the refusal's ``SyncErrorCode``.
        public static let batchRefusedReason = "batch_refused"
        public var seq: UInt64
        public var kind: Kind
        public var reason: String?
        public init(seq: UInt64, kind: Kind, reason: String? = nil) {
            self.seq = seq
            self.kind = kind
            self.reason = reason
        }
    }

    /// The server's standing for a device: the last seq it holds durably, and that record's hash.
    public struct Cursor: Sendable, Hashable {
        public var device: String
        public var acknowledgedSeq: UInt64
        public var headHash: Digest
        /// Users the server forgot (pseudonym literals in the device's own pseudonyms) whose
        /// `user_forgotten` the device has not sent yet: the device forgets them too.
        public var forgetUsers: [String]
        /// The server's Ed25519 signature of ``forgetMessage(device:pseudonyms:)`` over
        /// ``forgetUsers``, made with the key the device pinned (docs/security.md): a device
        /// forgets only on a valid one. Present whenever ``forgetUsers`` is not empty.
        public var forgetSignature: [UInt8]?
        public init(
            device: String, acknowledgedSeq: UInt64, headHash: Digest, forgetUsers: [String] = [],
            forgetSignature: [UInt8]? = nil
        ) {
            self.device = device
            self.acknowledgedSeq = acknowledgedSeq
            self.headHash = headHash
            self.forgetUsers = forgetUsers
            self.forgetSignature = forgetSignature
        }

        /// Whether ``forgetSignature`` is the signature of this answer's forget requests by `key`.
        public func forgetRequestsAreSigned(by key: SigningPublicKey) -> Bool {
            guard let forgetSignature else { return false }
            return key.verifies(forgetSignature, of: SyncWire.forgetMessage(device: device, pseudonyms: forgetUsers))
        }
    }

    /// What the server signs to ask `device` to forget `pseudonyms`: the tag
    /// `onboard-forget-request-v1` and a NUL, the device id and a NUL, then each pseudonym
    /// literal followed by a NUL, in the answer's order. Naming the device keeps a request made
    /// for one device from being replayed to another.
    public static func forgetMessage(device: String, pseudonyms: [String]) -> [UInt8] {
        var message = Array("onboard-forget-request-v1\0".utf8) + Array(device.utf8) + [0]
        for pseudonym in pseudonyms { message += Array(pseudonym.utf8) + [0] }
        return message
    }

    /// `{"device", "acknowledged_seq", "head_hash"}`, and `"forget_users"` when the server has
    /// forgotten users the device has not — `GET …/cursor`.
    public static func cursorBody(_ cursor: Cursor) -> [UInt8] { encode(cursorValue(cursor)) }

    static func cursorValue(_ cursor: Cursor) -> [JSONValue.Member] {
        var members: [JSONValue.Member] = [
            .init("device", .string(cursor.device)), .init("acknowledged_seq", .number(String(cursor.acknowledgedSeq))),
            .init("head_hash", .string(cursor.headHash.hex))
        ]
        if !cursor.forgetUsers.isEmpty {
            members.append(.init("forget_users", .array(cursor.forgetUsers.map { .string($0) })))
            if let signature = cursor.forgetSignature { members.append(.init("forget_signature", .string(HexBytes.encode(signature)))) }
        }
        return members
    }

    static func encode(_ members: [JSONValue.Member]) -> [UInt8] { encode(.object(members)) }

    public static func cursor(from body: [UInt8]) throws(SyncWireError) -> Cursor {
        let members = try object(try parse(body), "body", allowed: ["device", "acknowledged_seq", "head_hash", "results", "forget_users", "forget_signature"])
        guard case .string(let device)? = members["device"] else { throw SyncWireError("body.device is required") }
        guard case .number(let text)? = members["acknowledged_seq"], let seq = UInt64(text) else {
            throw SyncWireError("body.acknowledged_seq is required (a whole number)")
        }
        var forgetUsers: [String] = []
        if let listed = members["forget_users"] {
            guard case .array(let items) = listed else { throw SyncWireError("body.forget_users must be an array of pseudonyms") }
            for item in items {
                guard case .string(let literal) = item, UserRef.isLiteral(literal) else {
                    throw SyncWireError("body.forget_users holds something other than a pseudonym (\"~\" and 32 hex digits)")
                }
                forgetUsers.append(literal)
            }
        }
        var signature: [UInt8]?
        if let value = members["forget_signature"] {
            guard case .string(let hex) = value, hex.utf8.count == 2 * SignedHead.signatureByteCount,
                let bytes = HexBytes.decode(hex)
            else {
                throw SyncWireError("body.forget_signature must be \(2 * SignedHead.signatureByteCount) hex digits (an Ed25519 signature)")
            }
            signature = bytes
        }
        return Cursor(
            device: device, acknowledgedSeq: seq, headHash: try digest(members["head_hash"], "body.head_hash"),
            forgetUsers: forgetUsers, forgetSignature: signature)
    }

    /// `{"device", "acknowledged_seq", "head_hash", "results": [{"seq", "outcome", "reason"}]}`.
    public static func uploadResponseBody(_ cursor: Cursor, outcomes: [Outcome]) -> [UInt8] {
        encode(.object(cursorValue(cursor) + [.init("results", .array(outcomes.map(outcomeValue)))]))
    }

    /// `{"seq", "outcome", "reason"}`.
    static func outcomeValue(_ outcome: Outcome) -> JSONValue {
        .object([
            .init("seq", .number(String(outcome.seq))), .init("outcome", .string(outcome.kind.rawValue)),
            .init("reason", outcome.reason.map { .string($0) } ?? .null)
        ])
    }

    public static func outcomes(from body: [UInt8]) throws(SyncWireError) -> [Outcome] {
        guard case .array(let items)? = try parse(body)["results"] else { return [] }
        var outcomes: [Outcome] = []
        for item in items {
            guard case .number(let seqText)? = item["seq"], let seq = UInt64(seqText),
                case .string(let kindText)? = item["outcome"], let kind = Outcome.Kind(rawValue: kindText)
            else {
                throw SyncWireError("results: each result needs a seq and an outcome")
            }
            outcomes.append(Outcome(seq: seq, kind: kind, reason: item["reason"]?.stringValue))
        }
        return outcomes
    }

    // MARK: Errors

    /// A refusal: `{"error": {"code", "message", "expected_seq"?}}`.
    ///
    /// The server makes one from a ``SyncErrorCode`` only. Read back, ``code`` is `nil` for a code
    /// this build does not know (a newer server's); ``wireCode`` keeps its text either way, so
    /// the refusal can still be reported (``description``) and the client acts on the status.
    public struct ErrorBody: Sendable, Hashable, Error, CustomStringConvertible {
        /// The code, `nil` when ``wireCode`` is not one of ``SyncErrorCode``.
        public let code: SyncErrorCode?
        /// `error.code` as it is on the wire.
        public let wireCode: String
        public var message: String
        public var expectedSeq: UInt64?
        public init(code: SyncErrorCode, message: String, expectedSeq: UInt64? = nil) {
            self.init(wireCode: code.rawValue, message: message, expectedSeq: expectedSeq)
        }
        /// What a reader makes of any `error.code`, known or not.
        init(wireCode: String, message: String, expectedSeq: UInt64?) {
            self.code = SyncErrorCode(rawValue: wireCode)
            self.wireCode = wireCode
            self.message = message
            self.expectedSeq = expectedSeq
        }
        public var description: String { "\(wireCode): \(message)" }
    }

    public static func errorBody(_ error: ErrorBody, results: [Outcome]? = nil) -> [UInt8] {
        var inner: [JSONValue.Member] = [.init("code", .string(error.wireCode)), .init("message", .string(error.message))]
        if let expected = error.expectedSeq { inner.append(.init("expected_seq", .number(String(expected)))) }
        var members: [JSONValue.Member] = [.init("error", .object(inner))]
        if let results {
            members.append(.init("results", .array(results.map(outcomeValue))))
        }
        return encode(.object(members))
    }

    /// The error of a refusal body, or `nil` when the body is not one.
    public static func error(from body: [UInt8]) -> ErrorBody? {
        guard let value = try? parse(body), let inner = value["error"],
            case .string(let code)? = inner["code"], case .string(let message)? = inner["message"]
        else { return nil }
        var expected: UInt64?
        if case .number(let text)? = inner["expected_seq"] { expected = UInt64(text) }
        return ErrorBody(wireCode: code, message: message, expectedSeq: expected)
    }

    // MARK: Tokens

    /// `{"role", "device"?, "token", "server_key"?, "expires_at"}` — the answer to enrolment,
    /// token issue and rotation; `server_key` (the server's Ed25519 public key, 64 hex digits) is
    /// the key a device pins; `expires_at` is an RFC 3339 time, `null` for a token that never expires.
    public static func tokenBody(
        role: String, device: String?, token: String, serverKey: SigningPublicKey? = nil,
        expiresAt: Timestamp? = nil
    ) -> [UInt8] {
        var members: [JSONValue.Member] = [.init("role", .string(role))]
        if let device { members.append(.init("device", .string(device))) }
        members.append(.init("token", .string(token)))
        if let serverKey { members.append(.init("server_key", .string(serverKey.hex))) }
        members.append(.init("expires_at", expiresAt.map { .string($0.iso8601) } ?? .null))
        return encode(.object(members))
    }

    /// The `expires_at` of a token answer: `nil` for a token that never expires (or an answer
    /// without it, from an older server).
    public static func tokenExpiry(from body: [UInt8]) throws(SyncWireError) -> Timestamp? {
        switch try parse(body)["expires_at"] {
        case nil, .null?: return nil
        case .string(let text)?:
            guard let time = try? Timestamp(iso8601: text) else { throw SyncWireError("body.expires_at \(ErrorEcho.quoted(text)) is not an RFC 3339 time") }
            return time
        default: throw SyncWireError("body.expires_at must be a string or null")
        }
    }

    /// The `server_key` of an enrolment answer, nil when it has none.
    public static func serverKey(from body: [UInt8]) throws(SyncWireError) -> SigningPublicKey? {
        guard let value = try parse(body)["server_key"] else { return nil }
        guard case .string(let hex) = value, let key = SigningPublicKey(hex: hex) else {
            throw SyncWireError("body.server_key must be 64 hex digits (an Ed25519 public key)")
        }
        return key
    }

    public static func token(from body: [UInt8]) throws(SyncWireError) -> String {
        guard case .string(let token)? = try parse(body)["token"] else { throw SyncWireError("body.token is missing") }
        return token
    }

    /// `{"device": "<id>", "public_key"?: "<64 hex>"}` — the enrolment request; the public key is
    /// the one the device signs its chain heads with.
    public static func enrolBody(device: String, publicKey: SigningPublicKey? = nil) -> [UInt8] {
        var members: [JSONValue.Member] = [.init("device", .string(device))]
        if let publicKey { members.append(.init("public_key", .string(publicKey.hex))) }
        return encode(.object(members))
    }

    public static func enrolment(from body: [UInt8]) throws(SyncWireError) -> (device: String, publicKey: SigningPublicKey?) {
        let members = try object(try parse(body), "body", allowed: ["device", "public_key"])
        guard case .string(let device)? = members["device"] else { throw SyncWireError("body.device is required (a string)") }
        do { try Event.validate(deviceID: device) } catch { throw SyncWireError("body.device \(error.message)") }
        var publicKey: SigningPublicKey?
        if let value = members["public_key"], value != .null {
            guard case .string(let hex) = value, let key = SigningPublicKey(hex: hex) else {
                throw SyncWireError("body.public_key must be 64 hex digits (an Ed25519 public key)")
            }
            publicKey = key
        }
        return (device, publicKey)
    }

    // MARK: Helpers

    public static func encode(_ value: JSONValue) -> [UInt8] {
        var writer = JSONWriter()
        writer.append(value)
        return writer.bytes
    }

    static func parse(_ body: [UInt8]) throws(SyncWireError) -> JSONValue {
        do { return try JSONValue.parse(bytes: body) } catch { throw SyncWireError("body is not JSON: \(error)") }
    }

    static func object(_ value: JSONValue, _ where_: @autoclosure () -> String, allowed: [String]) throws(SyncWireError) -> JSONValue.Members {
        switch value.strictObject(allowed: allowed) {
        case .members(let members): return members
        case .notAnObject(let kind): throw SyncWireError("\(where_()) must be an object, got \(kind)")
        case .unknownKey(let key):
            throw SyncWireError("\(where_()) has unknown member \"\(key)\" (allowed: \(allowed.joined(separator: ", ")))")
        }
    }

    static func digest(_ value: JSONValue?, _ where_: String) throws(SyncWireError) -> Digest {
        guard case .string(let text)? = value, let digest = Digest(hex: text) else {
            throw SyncWireError("\(where_) must be 64 hex digits")
        }
        return digest
    }

    static func keys(_ value: JSONValue?) throws(SyncWireError) -> Keys? {
        guard let value, value != .null else { return nil }
        let members = try object(value, "body.keys", allowed: ["pseudonym_key", "users", "sealed"])
        func secret(_ value: JSONValue?, _ where_: String) throws(SyncWireError) -> SecretKey {
            guard case .string(let text)? = value, let bytes = HexBytes.decode(text), bytes.count == SecretKey.byteCount else {
                throw SyncWireError("\(where_) must be 64 hex digits")
            }
            return SecretKey(bytes: bytes)
        }
        let pseudonymKey = try secret(members["pseudonym_key"], "body.keys.pseudonym_key")
        guard case .object(let entries)? = members["users"] else { throw SyncWireError("body.keys.users is required (an object)") }
        var users: [UserRef: SecretKey] = [:]
        for entry in entries {
            guard let ref = UserRef(literal: "~" + entry.key) else {
                throw SyncWireError("body.keys.users has key \"\(entry.key)\"; user refs are 32 lowercase hex digits")
            }
            users[ref] = try secret(entry.value, "body.keys.users.\(entry.key)")
        }
        var sealed: [UInt64: [UInt8]] = [:]
        if let value = members["sealed"] {
            guard case .object(let entries) = value else { throw SyncWireError("body.keys.sealed must be an object of seq → hex") }
            for entry in entries {
                guard let seq = UInt64(entry.key) else {
                    throw SyncWireError("body.keys.sealed has key \"\(entry.key)\"; its keys are the seqs of the batch's records")
                }
                guard case .string(let text) = entry.value, let bytes = HexBytes.decode(text),
                    bytes.count >= PersonalData.nonceByteCount + PersonalData.macByteCount, bytes.count <= Int(UInt16.max)
                else {
                    throw SyncWireError(
                        "body.keys.sealed.\(entry.key) must be the record's sealed section in lowercase hex (nonce (24) ‖ Poly1305 tag (16) ‖ ciphertext)")
                }
                sealed[seq] = bytes
            }
        }
        return Keys(pseudonymKey: pseudonymKey, users: users, sealed: sealed)
    }
}
