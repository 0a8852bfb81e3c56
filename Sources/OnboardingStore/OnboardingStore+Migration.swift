import Foundation
import LMDB
import OnboardingModel

extension OnboardingStore {
    /// Migrates a format 1 store to format 2 in one write transaction: each record is read with
    /// the format 1 decoder (its hash and link checked), re-encoded with the user's pseudonym (a
    /// `user_keys` entry made for each user on first sight) and its personal fields sealed, and
    /// the chain recomputed; `by_user` is rebuilt on pseudonyms, the pseudonym key stored in
    /// `meta`, the projection snapshot dropped
    /// (rebuilt on open), the store's own signed heads dropped (they sign hashes that no longer
    /// exist; the caller signs the new head), the head and format version updated. LMDB commits
    /// all of it or none: a failure or crash leaves the format 1 store as it was.
    ///
    /// A pruned store is refused: its base snapshot and prune point hold hashes and readable ids
    /// of records that are gone and cannot be re-encoded (docs/format.md § Migration).
    static func migrate(
        _ environment: Environment, databases: Databases, users: UserDirectory, path: String,
        options: Options
    ) throws -> UserDirectory {
        guard !options.readOnly, databases.userKeys != nil else {
            throw StoreError(.needsMigration, "store at \(path) needs migration to format \(StoreLayout.formatVersion); open it writable")
        }
        let directory: UserDirectory
        let progress = options.migrationProgress
        do {
            // Opened before the write transaction: opening a database begins a transaction of
            // its own, which would wait forever for the writer lock this one holds.
            let signed = try environment.openDatabase(StoreLayout.signedHeads, create: false)
            // The closure may run again (map growth): it builds the directory in its own copy and
            // returns it, and reports progress from the start again.
            directory = try environment.write { transaction in
                var directory = users
                guard try transaction.get(databases.meta, key: StoreLayout.MetaKey.prunedThrough) == nil else {
                    throw StoreError(
                        .pruned,
                        "store at \(path) was pruned and cannot be migrated to format \(StoreLayout.formatVersion); export it with the previous onboard and import it into a new store (the sync server keeps the full history)"
                    )
                }
                guard let headValue = try transaction.get(databases.meta, key: StoreLayout.MetaKey.head),
                    let head = StoreLayout.head(fromValue: headValue)
                else {
                    throw StoreError(.corrupted, "cannot migrate \(path): meta has no valid head; nothing was changed")
                }
                try transaction.removeAll(databases.byUser)
                try transaction.put(databases.meta, key: StoreLayout.MetaKey.pseudonymKey, value: users.pseudonymKey.bytes)
                if let snapshots = databases.snapshots { _ = try transaction.delete(snapshots, key: StoreLayout.stateSnapshotKey) }
                if let signed {
                    try transaction.removeAll(signed)
                }
                var previousOld = Digest.zero
                var previousNew = Digest.zero
                var seqKey: [UInt8] = [], indexKey: [UInt8] = [], bytes: [UInt8] = []
                let empty: [UInt8] = []
                let every = max(1, head.seq / 100)
                for seq in stride(from: UInt64(1), through: head.seq, by: 1) {
                    StoreLayout.writeSeqKey(seq, into: &seqKey)
                    guard
                        let old = try transaction.withValue(
                            databases.events, key: seqKey,
                            { value in
                                Result { () throws(RecordDecodingError) in try RecordCodec.decodeLegacy(value, expectedSeq: seq) }
                            })
                    else {
                        throw StoreError(.corrupted, "cannot migrate \(path): seq \(seq) is missing; nothing was changed", seq: seq)
                    }
                    let record: Record
                    switch old {
                    case .success(let decoded): record = decoded
                    case .failure(let error):
                        throw StoreError(.corrupted, "cannot migrate \(path): seq \(seq) is damaged (\(error)); nothing was changed", seq: seq)
                    }
                    guard record.previousHash == previousOld else {
                        throw StoreError(.corrupted, "cannot migrate \(path): seq \(seq) does not link to the record before it; nothing was changed", seq: seq)
                    }
                    previousOld = record.hash
                    var seal: UserSeal?
                    var newEntry: [UInt8]?
                    if let user = record.event.user {
                        let ref = directory.ref(of: user)
                        if directory.key(of: ref) == nil && !UserRef.isLiteral(user) {
                            let key = SecretKey.random()
                            newEntry = userEntryValue(ref: ref, name: user, key: key)
                            directory.add(ref, name: user, key: key)
                        } else if directory.key(of: ref) == nil && !directory.isForgotten(ref) {
                            // A pseudonym literal: a tombstone, as on append (every pseudonym a
                            // record names has an entry).
                            newEntry = ref.bytes
                            directory.forget(ref)
                        }
                        seal = directory.seal(for: user)
                    }
                    bytes.removeAll(keepingCapacity: true)
                    _ = RecordCodec.encode(record.event, seq: seq, previousHash: previousNew, seal: seal, appendingTo: &bytes)
                    previousNew = bytes.withUnsafeBytes {
                        Digest(copying: UnsafeRawBufferPointer(rebasing: $0[RecordCodec.hashOffset..<(RecordCodec.hashOffset + Digest.byteCount)]))
                    }
                    try transaction.put(databases.events, key: seqKey, value: bytes)
                    if let seal {
                        StoreLayout.writeUserKey(seal.ref, seq, into: &indexKey)
                        try transaction.put(databases.byUser, key: indexKey, value: empty)
                        if let newEntry, let userKeys = databases.userKeys {
                            try appendUserEntries([newEntry], to: userKeys, in: transaction)
                        }
                    }
                    if seq % every == 0 { progress?(seq, head.seq) }
                }
                guard previousOld == head.hash else {
                    throw StoreError(.corrupted, "cannot migrate \(path): the meta head does not match the last record; nothing was changed")
                }
                try transaction.put(databases.meta, key: StoreLayout.MetaKey.head, value: StoreLayout.headValue(seq: head.seq, hash: previousNew))
                try transaction.put(
                    databases.meta, key: StoreLayout.MetaKey.formatVersion,
                    value: StoreLayout.uint32Value(StoreLayout.formatVersion))
                return directory
            }
            try environment.sync(force: true)
        } catch let error as StoreError {
            throw error
        } catch let error as LMDBError where error == .transactionFull {
            throw StoreError(
                .transactionTooLarge,
                "store at \(path) is too large to migrate in one transaction; export it with the previous onboard and import it into a new store")
        } catch {
            throw StoreError(.storage, "cannot migrate \(path) to format \(StoreLayout.formatVersion): \(error); the store was left unchanged")
        }
        return directory
    }
}

extension OnboardingStore {
    /// The `format_version` in `meta`.
    func formatVersionOnDisk() throws(StoreError) -> UInt32 {
        try reading { transaction in
            (try transaction.get(databases.meta, key: StoreLayout.MetaKey.formatVersion) ?? [0, 0, 0, 0])
                .reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        }
    }
}
