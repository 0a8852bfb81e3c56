import Foundation
import OnboardingModel

/// Names and key layouts of the store's LMDB sub-databases (docs/format.md is the reference).
enum StoreLayout {
    /// Version of the store layout written in `meta` under `format_version`. A store with a
    /// larger number was written by a newer build and is refused.
    /// Version 2: records name users by pseudonym, personal fields sealed per user, `by_user`
    /// keyed by pseudonym, each user's sealed entry in `user_keys`, the pseudonym key in `meta`
    /// (docs/format.md § Format 2).
    static let formatVersion: UInt32 = 2

    static let events = "events"
    static let byID = "by_id"
    static let byUser = "by_user"
    static let bySession = "by_session"
    static let meta = "meta"
    /// Projection snapshots: key = projection name, value = u32 BE state version ‖ u64 BE seq ‖ JSON state.
    static let snapshots = "snapshots"
    /// In the order `OnboardingStore.Databases` takes them; `signed_heads` (last) is opened by
    /// name when used (OnboardingStore+Signing.swift).
    static let allDatabases = [events, byID, byUser, bySession, meta, snapshots, signedHeads, userKeys]
    /// Outside the hashed log, one entry per user in order of first sighting: key = user number
    /// (`u64` BE, 1, 2, …), value = pseudonym (16) ‖ key (32) ‖ nonce (24) ‖ sealed readable id,
    /// or the pseudonym alone once the user is forgotten. Numbered, not keyed by pseudonym, so a
    /// new user's entry is appended to the tree's last page: a commit of many new users writes
    /// one more page, not one per user (docs/format.md § User entries).
    static let userKeys = "user_keys"
    /// The key of the combined projection state in `snapshots`.
    static let stateSnapshotKey = Array("onboarding_state".utf8)

    enum MetaKey {
        static let formatVersion = Array("format_version".utf8)
        static let deviceID = Array("device_id".utf8)
        static let head = Array("head".utf8)
        static let createdAt = Array("created_at".utf8)
        /// The 32-byte secret that derives user pseudonyms (format 2).
        static let pseudonymKey = Array("pseudonym_key".utf8)
        /// `forget_request` ‖ pseudonym (16 bytes) → u64 BE ms: on a sync server's replica, a user
        /// the server forgot whose `user_forgotten` the device has not sent yet.
        static let forgetRequestPrefix = Array("forget_request".utf8)
        /// `[1]` once a sync server's replica took its device's pseudonym key (absent on a device
        /// store, and on a replica that has received only records naming no user).
        static let devicePseudonymKey = Array("device_pseudonym_key".utf8)
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

    /// How many leading bytes of a user's pseudonym start its `by_user` keys: 8, so a key is 16
    /// bytes (a batch's puts land on every page of the index, and shorter keys mean fewer pages
    /// to write). Two users sharing 8 bytes (odds about n²/2⁶⁵) share the prefix: a read by user
    /// skips the records whose pseudonym differs.
    static let userIndexPrefixByteCount = 8

    /// The first ``userIndexPrefixByteCount`` bytes of `ref`: the prefix of its `by_user` keys.
    static func userIndexPrefix(_ ref: UserRef) -> [UInt8] {
        Array(ref.bytes.prefix(userIndexPrefixByteCount))
    }

    static func writeUserKey(_ ref: UserRef, _ seq: UInt64, into key: inout [UInt8]) {
        key.removeAll(keepingCapacity: true)
        ref.withUnsafeBytes { key.append(contentsOf: UnsafeRawBufferPointer(rebasing: $0[..<userIndexPrefixByteCount])) }
        withUnsafeBytes(of: seq.bigEndian) { key.append(contentsOf: $0) }
    }

    static func writeSessionKey(_ session: UUID, _ seq: UInt64, into key: inout [UInt8]) {
        writeUUID(session, into: &key)
        withUnsafeBytes(of: seq.bigEndian) { key.append(contentsOf: $0) }
    }

    /// The seq after `seq`, `nil` after 2^64 − 1. Seqs come from disk, an import or a request:
    /// `seq + 1` must never trap on one.
    static func successor(of seq: UInt64) -> UInt64? {
        seq == .max ? nil : seq + 1
    }

    /// A `u64` BE value (the sync cursor); `nil` unless it is exactly 8 bytes.
    static func uint64(fromValue value: [UInt8]) -> UInt64? {
        value.count == 8 ? value.reduce(UInt64(0)) { $0 << 8 | UInt64($1) } : nil
    }

    static func seq(fromKey key: UnsafeRawBufferPointer) -> UInt64? {
        guard key.count == 8 else { return nil }
        return key.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }

    static func uuidBytes(_ id: UUID) -> [UInt8] {
        withUnsafeBytes(of: id.uuid) { Array($0) }
    }

    /// the user pseudonym's first 8 bytes ‖ seq (u64 BE): the readable user id is never a key.
    static func userKey(_ ref: UserRef, _ seq: UInt64) -> [UInt8] {
        var key: [UInt8] = []
        writeUserKey(ref, seq, into: &key)
        return key
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
