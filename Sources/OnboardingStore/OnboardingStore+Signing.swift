import Foundation
import LMDB
import OnboardingModel

extension StoreLayout {
    /// Signed heads: key = seq (u64 BE), value = hash (32 bytes) ‖ Ed25519 signature (64 bytes).
    static let signedHeads = "signed_heads"
    /// The device's secret signing key: a file in the store directory, beside (never inside) the
    /// LMDB environment, so no export, sync upload or LMDB copy of the log carries it.
    static let signingKeyFileName = "signing.key"

    static func signedHeadValue(_ head: SignedHead) -> [UInt8] { head.hash.bytes + head.signature }

    static func signedHead(device: String, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) -> SignedHead? {
        guard let seq = seq(fromKey: key), value.count == Digest.byteCount + SignedHead.signatureByteCount else { return nil }
        return SignedHead(
            device: device, seq: seq, hash: Digest(copying: UnsafeRawBufferPointer(rebasing: value[0..<Digest.byteCount])),
            signature: Array(value[Digest.byteCount...]))
    }
}

extension StoreLayout.MetaKey {
    /// The 32-byte Ed25519 public key the store's signed heads are checked against.
    static let signingPublicKey = Array("signing_public_key".utf8)
}

extension OnboardingStore {
    /// The path of the store's secret signing key (`<store>/signing.key`, mode 0600).
    public var signingKeyPath: String { (path as NSString).appendingPathComponent(StoreLayout.signingKeyFileName) }

    /// The public key recorded in the store's `meta` (`nil` for a store that never had one: a
    /// read-only open of a store made before signing existed, or a replica whose device enrolled
    /// without a key).
    public func signingPublicKey() throws(StoreError) -> SigningPublicKey? {
        try reading { transaction in try readSigningPublicKey(transaction) }
    }

    func readSigningPublicKey(_ transaction: Transaction) throws -> SigningPublicKey? {
        guard let bytes = try transaction.get(databases.meta, key: StoreLayout.MetaKey.signingPublicKey) else { return nil }
        guard let key = SigningPublicKey(bytes: bytes) else {
            throw StoreError(.corrupted, "store at \(path) has a signing public key of \(bytes.count) bytes in meta (expected 32); run onboard verify")
        }
        return key
    }

    /// On a writable open of a device store: loads `signing.key`, or creates it (a new store, or
    /// one made before signing existed), and records its public key in `meta`.
    func prepareSigningKey() throws(StoreError) {
        let recorded = try signingPublicKey()
        let key: SigningKeyPair
        if let existing = try Self.readSigningKey(at: signingKeyPath) {
            key = existing
        } else if recorded != nil {
            // The secret is lost: appends still work, signing refuses with a clear error.
            return
        } else {
            key = try Self.createSigningKey(at: signingKeyPath)
        }
        if let recorded {
            guard recorded == key.publicKey else {
                throw StoreError(
                    .signingKey,
                    "\(signingKeyPath) holds the key \(key.publicKey.hex), but the store's meta records \(recorded.hex): the key file does not belong to this store; restore the right signing.key (onboard verify reports which heads it signed)"
                )
            }
        } else {
            do {
                try environment.write { try $0.put(databases.meta, key: StoreLayout.MetaKey.signingPublicKey, value: key.publicKey.bytes) }
            } catch {
                throw StoreError(.storage, "cannot record the signing public key of \(path): \(error)")
            }
        }
        do { _ = try environment.openDatabase(StoreLayout.signedHeads, create: true) } catch {
            throw StoreError(.storage, "cannot create the signed_heads database of \(path): \(error)")
        }
        signingKey.withLock { $0 = key }
    }

    /// The Ed25519 key pair in `path` (mode 0600), created durably when there is none — the same
    /// file format and checks as a store's `signing.key`. The sync server keeps its own key so.
    public static func signingKey(at path: String) throws(StoreError) -> SigningKeyPair {
        if let key = try readSigningKey(at: path) { return key }
        return try createSigningKey(at: path)
    }

    /// The key in `path`, `nil` when there is no such file. Refuses a file others may read.
    static func readSigningKey(at path: String) throws(StoreError) -> SigningKeyPair? {
        var status = stat()
        guard stat(path, &status) == 0 else {
            if errno == ENOENT { return nil }
            throw StoreError(.signingKey, "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        guard status.st_mode & 0o077 == 0 else {
            throw StoreError(.signingKey, "\(path) may be read by other users (mode \(String(status.st_mode & 0o777, radix: 8))); run chmod 600 \(path)")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw StoreError(.signingKey, "cannot read \(path); check its permissions")
        }
        guard let key = SigningKeyPair(secretBytes: Array(data)) else {
            throw StoreError(
                .signingKey, "\(path) is not an Ed25519 secret key (\(data.count) bytes, expected \(SigningKeyPair.secretByteCount)); restore it from a backup")
        }
        return key
    }

    /// Writes a new key pair to `path` with mode 0600, durably; another process that created it
    /// first wins (`O_EXCL`) and its key is used.
    static func createSigningKey(at path: String) throws(StoreError) -> SigningKeyPair {
        let key = SigningKeyPair.generate()
        let descriptor = Foundation.open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard descriptor >= 0 else {
            if errno == EEXIST, let raced = try readSigningKey(at: path) { return raced }
            throw StoreError(.notWritable, "cannot create \(path): \(String(cString: strerror(errno))); the store needs a writable directory")
        }
        let written = key.secretBytes.withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress, $0.count) }
        let synced = fsync(descriptor) == 0
        Foundation.close(descriptor)
        guard written == SigningKeyPair.secretByteCount, synced else {
            unlink(path)
            throw StoreError(.notWritable, "cannot write \(path): \(String(cString: strerror(errno)))")
        }
        return key
    }

    /// Signs the log's head as of `seq` (the current head when `nil`) with the device's key and
    /// keeps the signed head in `signed_heads`; returns the one already kept for that seq when
    /// there is one. `nil` for an empty log.
    ///
    /// ```swift
    /// let head = try store.signHead()          // what a sync batch carries
    /// ```
    @discardableResult
    public func signHead(through seq: UInt64? = nil) throws(StoreError) -> SignedHead? {
        try ensureOpen()
        return try signHeadWhileOpen(through: seq)
    }

    /// ``signHead(through:)`` without the open check: `close()` signs after marking the store closed.
    func signHeadWhileOpen(through seq: UInt64? = nil) throws(StoreError) -> SignedHead? {
        guard !options.readOnly else { throw StoreError(.notWritable, "store at \(path) is open read-only; it cannot sign its head") }
        guard let key = signingKey.withLock({ $0 }) else {
            throw StoreError(.signingKey, "store at \(path) has no signing key (\(signingKeyPath) is missing); restore it from a backup to sign heads and sync")
        }
        let database = try signedHeadsDatabase(create: true)!
        do {
            return try environment.write { transaction -> SignedHead? in
                let head = try readHead(transaction)
                let target = seq ?? head.seq
                guard target > 0 else { return nil }
                guard target <= head.seq else {
                    throw StoreError(.storage, "cannot sign seq \(target): the log ends at seq \(head.seq)")
                }
                let hash: Digest
                if target == head.seq {
                    hash = head.hash
                } else if let record = try readRecord(target, in: transaction) {
                    hash = record.hash
                } else {
                    throw StoreError(.corrupted, "store at \(path) lacks seq \(target); run onboard verify")
                }
                let keyBytes = StoreLayout.seqKey(target)
                if let kept = try transaction.withValue(
                    database, key: keyBytes,
                    { value in
                        keyBytes.withUnsafeBytes { StoreLayout.signedHead(device: deviceID, key: $0, value: value) }
                    }), kept?.hash == hash, kept?.isValid(for: key.publicKey) == true
                {
                    return kept
                }
                let signed = SignedHead.sign(device: deviceID, seq: target, hash: hash, with: key)
                try transaction.put(database, key: keyBytes, value: StoreLayout.signedHeadValue(signed))
                return signed
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(.storage, "cannot sign the head of \(path): \(error)")
        }
    }

    /// Every signed head the store keeps, in seq order.
    public func signedHeads() throws(StoreError) -> [SignedHead] {
        try ensureOpen()
        guard let database = try signedHeadsDatabase(create: false) else { return [] }
        return try reading { transaction in
            try transaction.withCursor(database) { cursor in
                var heads: [SignedHead] = []
                var entry = try cursor.first()
                while let current = entry {
                    if let head = StoreLayout.signedHead(device: deviceID, key: current.key, value: current.value) { heads.append(head) }
                    entry = try cursor.next()
                }
                return heads
            }
        }
    }

    /// The signed head with the highest seq, `nil` when there is none.
    public func latestSignedHead() throws(StoreError) -> SignedHead? {
        try ensureOpen()
        guard let database = try signedHeadsDatabase(create: false) else { return nil }
        return try reading { transaction in
            try transaction.withCursor(database) { cursor in
                try cursor.last().flatMap { StoreLayout.signedHead(device: deviceID, key: $0.key, value: $0.value) }
            }
        }
    }

    /// Whether this store holds its signing key (a writable device store whose signing.key is present).
    public var canSignHeads: Bool { !options.readOnly && signingKey.withLock { $0 != nil } }

    /// Records the public key of the device this (replica) store copies, as registered at
    /// enrolment. A different key than the one recorded is refused.
    package func recordSigningPublicKey(_ key: SigningPublicKey) throws(StoreError) {
        try ensureOpen()
        guard !options.readOnly else { throw StoreError(.notWritable, "store at \(path) is open read-only") }
        do {
            try environment.write { transaction in
                if let recorded = try readSigningPublicKey(transaction) {
                    guard recorded == key else {
                        throw StoreError(.signingKey, "store at \(path) already records the signing key \(recorded.hex), not \(key.hex)")
                    }
                    return
                }
                try transaction.put(databases.meta, key: StoreLayout.MetaKey.signingPublicKey, value: key.bytes)
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(.storage, "cannot record the signing key of \(path): \(error)")
        }
    }

    /// Keeps a signed head made by the device this store copies (a server replica). It must be
    /// valid for the recorded public key and name a record the store holds with that hash.
    package func recordSignedHead(_ head: SignedHead) throws(StoreError) {
        try ensureOpen()
        guard !options.readOnly else { throw StoreError(.notWritable, "store at \(path) is open read-only") }
        let database = try signedHeadsDatabase(create: true)!
        do {
            try environment.write { transaction in
                guard let key = try readSigningPublicKey(transaction) else {
                    throw StoreError(.signingKey, "store at \(path) records no signing public key; a signed head cannot be checked")
                }
                guard head.device == deviceID, head.isValid(for: key) else {
                    throw StoreError(.signingKey, "the signed head for seq \(head.seq) is not \(deviceID)'s signature")
                }
                guard let record = try readRecord(head.seq, in: transaction), record.hash == head.hash else {
                    throw StoreError(.conflict, "the signed head for seq \(head.seq) names a record this store does not hold", seq: head.seq)
                }
                try transaction.put(
                    database, key: StoreLayout.seqKey(head.seq),
                    value: StoreLayout.signedHeadValue(head))
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(.storage, "cannot keep the signed head of \(path): \(error)")
        }
    }

    /// `signed_heads`, created on first use when `create` (stores made before signing lack it);
    /// `nil` when it does not exist and `create` is false. Opened outside any transaction: LMDB
    /// opens database handles in a transaction of their own.
    func signedHeadsDatabase(create: Bool) throws(StoreError) -> Database? {
        do {
            guard let database = try environment.openDatabase(StoreLayout.signedHeads, create: create && !options.readOnly) else {
                if create { throw StoreError(.storage, "cannot create the signed_heads database of \(path)") }
                return nil
            }
            return database
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(.storage, "cannot open the signed_heads database of \(path): \(error)")
        }
    }
}
