import Foundation
import OnboardingModel

/// Names and key layouts of the store's LMDB sub-databases (docs/format.md is the reference).
enum StoreLayout {
    /// Version of the store layout written in `meta` under `format_version`. A store with a
    /// larger number was written by a newer build and is refused.
    static let formatVersion: UInt32 = 1

    static let events = "events"
    static let byID = "by_id"
    static let byUser = "by_user"
    static let bySession = "by_session"
    static let meta = "meta"
    /// Projection snapshots: key = projection name, value = u32 BE state version ‖ u64 BE seq ‖ JSON state.
    static let snapshots = "snapshots"
    /// In the order `OnboardingStore.Databases` takes them; `signed_heads` (last) is opened by
    /// name when used (OnboardingStore+Signing.swift).
    static let allDatabases = [events, byID, byUser, bySession, meta, snapshots, signedHeads]
    /// The key of the combined projection state in `snapshots`.
    static let stateSnapshotKey = Array("onboarding_state".utf8)

    enum MetaKey {
        static let formatVersion = Array("format_version".utf8)
        static let deviceID = Array("device_id".utf8)
        static let head = Array("head".utf8)
        static let createdAt = Array("created_at".utf8)
    }

    static func seqKey(_ seq: UInt64) -> [UInt8] {
        withUnsafeBytes(of: seq.bigEndian) { Array($0) }
    }

    // The `write…` forms replace `key`'s contents in place: the append path reuses one buffer per
    // key kind instead of allocating arrays for every put.

    static func writeSeqKey(_ seq: UInt64, into key: inout [UInt8]) {
        key.removeAll(keepingCapacity: true)
        withUnsafeBytes(of: seq.bigEndian) { key.append(contentsOf: $0) }
    }

    static func writeUUID(_ id: UUID, into key: inout [UInt8]) {
        key.removeAll(keepingCapacity: true)
        withUnsafeBytes(of: id.uuid) { key.append(contentsOf: $0) }
    }

    static func writeUserKey(_ user: String, _ seq: UInt64, into key: inout [UInt8]) {
        key.removeAll(keepingCapacity: true)
        key.append(contentsOf: user.utf8)
        key.append(0)
        withUnsafeBytes(of: seq.bigEndian) { key.append(contentsOf: $0) }
    }

    static func writeSessionKey(_ session: UUID, _ seq: UInt64, into key: inout [UInt8]) {
        writeUUID(session, into: &key)
        withUnsafeBytes(of: seq.bigEndian) { key.append(contentsOf: $0) }
    }

    static func seq(fromKey key: UnsafeRawBufferPointer) -> UInt64? {
        guard key.count == 8 else { return nil }
        return key.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }

    static func uuidBytes(_ id: UUID) -> [UInt8] {
        withUnsafeBytes(of: id.uuid) { Array($0) }
    }

    /// `user` UTF-8 ‖ 0x00 ‖ seq (u64 BE). User ids contain no NUL, so the prefix is unambiguous.
    static func userKey(_ user: String, _ seq: UInt64) -> [UInt8] {
        var key: [UInt8] = []
        writeUserKey(user, seq, into: &key)
        return key
    }

    static func userPrefix(_ user: String) -> [UInt8] {
        Array(user.utf8) + [0]
    }

    /// session UUID (16 bytes) ‖ seq (u64 BE).
    static func sessionKey(_ session: UUID, _ seq: UInt64) -> [UInt8] {
        var key: [UInt8] = []
        writeSessionKey(session, seq, into: &key)
        return key
    }

    /// seq (u64 BE) ‖ hash (32 bytes).
    static func headValue(seq: UInt64, hash: Digest) -> [UInt8] {
        seqKey(seq) + hash.bytes
    }

    static func head(fromValue value: [UInt8]) -> (seq: UInt64, hash: Digest)? {
        guard value.count == 8 + Digest.byteCount else { return nil }
        let seq = value[0..<8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return (seq, Digest(bytes: Array(value[8...])))
    }

    static func uint32Value(_ value: UInt32) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }
}
