import Foundation
import LMDB
import OnboardingModel
import OnboardingProjections

/// What `verify` found: every problem names the seq (when there is one) and what is wrong.
public struct VerifyReport: Sendable {
    public struct Problem: Sendable, CustomStringConvertible {
        /// What is wrong, in the words an auditor uses.
        public enum Kind: String, Sendable, Hashable {
            /// A record's bytes were changed (it no longer hashes to its hash or to what was signed).
            case modified
            /// Records were deleted (a gap in the seqs, or a signed head beyond the end of the log).
            case missing
            /// Intact records sit under other seqs' keys (swapped or moved).
            case reordered
            /// A signed head does not verify with the store's public key, or the key was replaced.
            case badSignature = "bad signature"
            /// An index (by_id, by_user, by_session) or the head in meta disagrees with the log.
            case index
            /// The projection snapshot is not a rebuild of the log.
            case snapshot
            /// A record cannot be decoded for another reason (truncated, unknown version).
            case damaged
        }

        public var seq: UInt64?
        public var kind: Kind
        public var message: String

        public init(seq: UInt64?, kind: Kind, message: String) {
            self.seq = seq
            self.kind = kind
            self.message = message
        }
        public var description: String {
            if let seq { return "seq \(seq): \(kind.rawValue): \(message)" }
            return "\(kind.rawValue): \(message)"
        }
    }

    /// Report at most this many problems: a badly damaged store would otherwise print one line
    /// per record; the count of the rest is kept.
    public static let maximumProblems = 100

    public var recordsChecked = 0
    public var headSeq: UInt64 = 0
    public var headHash = Digest.zero
    /// The seq the projection snapshot covers, when the store has one.
    public var snapshotSeq: UInt64?
    /// Where the log begins when it was pruned: the chain was checked from this hash on.
    public var prunedThrough: PrunePoint?
    /// The highest seq the sync server acknowledged (0: none).
    public var acknowledgedSeq: UInt64 = 0
    public private(set) var problems: [Problem] = []
    public private(set) var unreportedProblems = 0

    /// The public key the signed heads were checked against (`nil`: the store has none yet).
    public var signingPublicKey: SigningPublicKey?
    /// How many signed heads the store keeps, and the highest seq one of them vouches for: a
    /// valid head checked against the record the log holds at its seq, or, at the prune point,
    /// against the hash `pruned_through` keeps.
    public var signedHeadCount = 0
    public var signedHeadSeq: UInt64?
    /// The seqs of valid signed heads below the prune point. Each signature is valid for
    /// (device, seq, hash), but the record it names was pruned: the hash cannot be compared with
    /// anything the store holds, so such a head proves only that the device once signed that
    /// hash at that seq, not that the kept log continues it (see ``prunePointIsSigned``).
    public var prunedSignedHeadSeqs: [UInt64] = []
    /// A valid signed head sits exactly at the prune point and signs the hash `pruned_through`
    /// keeps, to which the first kept record links: the kept chain continues the signed history.
    public var prunePointIsSigned = false

    public var isValid: Bool { problems.isEmpty }

    /// A `sign_in_options_shown` record whose screen breaks App Store Review Guideline 4.8
    /// (``SignInOptions/guideline48Findings(options:platform:)``): a finding about the app's
    /// design, not about the log, so it never makes the report invalid.
    public struct DesignFinding: Sendable, CustomStringConvertible {
        public var seq: UInt64
        public var findings: [Guideline48Finding]
        public var description: String { "seq \(seq): " + findings.map(\.problem).joined(separator: "; ") }
    }

    /// List the first few design findings; the count says how many records have one.
    public static let maximumDesignFindings = 5
    /// How many `sign_in_options_shown` records break guideline 4.8.
    public private(set) var designFindingCount = 0
    /// The first ``maximumDesignFindings`` of them, by seq.
    public private(set) var designFindings: [DesignFinding] = []

    mutating func addDesignFindings(_ findings: [Guideline48Finding], seq: UInt64) {
        guard !findings.isEmpty else { return }
        designFindingCount += 1
        if designFindings.count < VerifyReport.maximumDesignFindings { designFindings.append(DesignFinding(seq: seq, findings: findings)) }
    }

    /// The problem at the lowest seq (the first bad record), or the first one without a seq.
    public var firstProblem: Problem? {
        problems.filter { $0.seq != nil }.min { $0.seq! < $1.seq! } ?? problems.first
    }

    mutating func add(_ message: String, seq: UInt64? = nil, kind: Problem.Kind = .index) {
        if problems.count < VerifyReport.maximumProblems {
            problems.append(Problem(seq: seq, kind: kind, message: message))
        } else {
            unreportedProblems += 1
        }
    }
}

extension OnboardingStore {
    /// Checks the whole store in one read snapshot: every record decodes, its hash matches its
    /// bytes, each links to the previous one, seqs run from 1 (from the prune point on a pruned
    /// store, linked to its hash) without gaps, the head in `meta` is the last record, every index
    /// holds exactly the entries the log implies, and every signed head verifies with the store's
    /// public key and names a record the log holds with that hash (docs/audit.md, "Verification
    /// procedure"). On the way it checks every `sign_in_options_shown` against App Store Review
    /// Guideline 4.8: its findings are about the app's design and leave the report valid.
    public func verify() throws(StoreError) -> VerifyReport {
        var report = try verifyLog()
        if report.isValid { try verifySnapshot(&report) }
        return report
    }

    /// The projection snapshot must equal a rebuild of the log up to the seq it covers. A snapshot
    /// of another state version is not a problem: the next writable open rebuilds it.
    private func verifySnapshot(_ report: inout VerifyReport) throws(StoreError) {
        if let point = report.prunedThrough {
            // The base must stand for the pruned records: every rebuild starts from it.
            do { _ = try reading { transaction in try readBase(transaction, at: point, policy: nil) } } catch {
                report.add(error.message, seq: point.seq)
                return
            }
        }
        guard let snapshot = try decodeSnapshot() else { return }
        // A snapshot older than the prune point is never used (opens start from the base) and
        // cannot be rebuilt: there is nothing to compare.
        if let point = report.prunedThrough, snapshot.seq < point.seq { return }
        report.snapshotSeq = snapshot.seq
        guard snapshot.version == OnboardingState.stateVersion else { return }
        switch snapshot.state {
        case .failure(let error):
            report.add("projection snapshot cannot be decoded (\(error)); it is rebuilt on the next writable open", seq: snapshot.seq, kind: .snapshot)
        case .success(let state):
            guard snapshot.seq <= report.headSeq, state.seq == snapshot.seq else {
                report.add("projection snapshot claims seq \(snapshot.seq), beyond the log's head \(report.headSeq)", seq: snapshot.seq, kind: .snapshot)
                return
            }
            let rebuilt: OnboardingState
            do { rebuilt = try rebuildState(policy: state.lockout.policy, through: snapshot.seq) } catch  where error.code == .pruned {
                report.add("projection snapshot cannot be checked: \(error.message)", seq: snapshot.seq, kind: .snapshot)
                return
            }
            if rebuilt != state {
                let from = report.prunedThrough.map { "the base snapshot at seq \($0.seq) and " } ?? ""
                report.add(
                    "projection snapshot differs from a rebuild of \(from)the log; it is rebuilt on the next writable open", seq: snapshot.seq, kind: .snapshot)
            }
        }
    }

    /// Everything ``verify()`` checks but the snapshot, in one read transaction. In order: the
    /// prune point against the sync cursor (`checkPrunePoint(in:report:)`), every record in key
    /// order (`walkRecords(in:walk:report:)`: its place, hash and link, and the index entries it
    /// implies), the head in `meta` (`checkMetaHead(in:after:report:)`), the signed heads, then
    /// each index against what the walk found it must hold.
    private func verifyLog() throws(StoreError) -> VerifyReport {
        try ensureOpen()
        let signedHeadsDatabase = try signedHeadsDatabase(create: false)
        return try reading { transaction in
            var report = VerifyReport()
            let point = try checkPrunePoint(in: transaction, report: &report)
            let signedHeads = try readSignedHeads(signedHeadsDatabase, in: transaction)
            var walk = LogWalk(prunedThrough: point, signedSeqs: Set(signedHeads.map(\.seq)))
            try walkRecords(in: transaction, walk: &walk, report: &report)
            try checkMetaHead(in: transaction, after: walk, report: &report)
            try checkSignedHeads(
                signedHeads, hashes: walk.hashesAtSignedSeqs, lastSeq: walk.lastSeq, unreadable: walk.unreadable,
                prunedThrough: point, in: transaction, report: &report)
            try checkIDIndex(expected: walk.expectedIDs, skipping: walk.unreadable, in: transaction, report: &report)
            try checkIndex(databases.byUser, expected: walk.expectedUserKeys, skipping: walk.unreadable, in: transaction, report: &report)
            try checkUserEntries(in: transaction, report: &report)
            try checkIndex(databases.bySession, expected: walk.expectedSessionKeys, skipping: walk.unreadable, in: transaction, report: &report)
            return report
        }
    }

    /// What the walk over the events carries from record to record, and what it finds the
    /// indexes must hold.
    private struct LogWalk {
        /// A pruned log starts after its prune point, linked to the hash the pruned records left.
        let prunedThrough: PrunePoint?
        /// The seqs signed heads vouch for: the walk keeps the hashes the log holds there.
        let signedSeqs: Set<UInt64>
        var previousHash: Digest
        /// `nil` after seq 2^64 − 1: no record may follow it (seqs come from disk: never `+ 1` blindly).
        var expectedSeq: UInt64?
        var lastSeq: UInt64
        /// Records that cannot be decoded are reported once; their index entries are not
        /// reported again as strays.
        var unreadable = Set<UInt64>()
        var hashesAtSignedSeqs: [UInt64: Digest] = [:]
        var expectedIDs: [UUID: UInt64] = [:]
        var expectedUserKeys = Set<[UInt8]>()
        var expectedSessionKeys = Set<[UInt8]>()

        init(prunedThrough point: PrunePoint?, signedSeqs: Set<UInt64>) {
            prunedThrough = point
            self.signedSeqs = signedSeqs
            previousHash = point?.hash ?? .zero
            expectedSeq = StoreLayout.successor(of: point?.seq ?? 0)
            lastSeq = point?.seq ?? 0
        }
    }

    /// Reads the prune point and the sync cursor into the report: records may be pruned only once
    /// the sync server holds them. Damaged meta values are findings like any other, not a reason
    /// to stop checking.
    private func checkPrunePoint(in transaction: Transaction, report: inout VerifyReport) throws -> PrunePoint? {
        let point: PrunePoint?
        do { point = try readPrunedThrough(transaction) } catch let error as StoreError {
            report.add(error.message)
            point = nil
        }
        report.prunedThrough = point
        do { report.acknowledgedSeq = try readSyncCursor(transaction) } catch let error as StoreError {
            report.add(error.message)
        }
        if let point, point.seq > report.acknowledgedSeq {
            report.add(
                "pruned through seq \(point.seq) but the sync server acknowledged only seq \(report.acknowledgedSeq): records were removed before the server held them",
                seq: point.seq)
        }
        return point
    }

    /// Every entry of `events` in key order: its key is a seq in its place (`checkPlace(of:walk:report:)`),
    /// and its record decodes (`checkRecord(_:seq:followsGap:users:entryRefs:walk:report:)`).
    private func walkRecords(in transaction: Transaction, walk: inout LogWalk, report: inout VerifyReport) throws {
        let users = users
        // Every pseudonym a record names must have an entry (live or a tombstone): without
        // one the user's readable id and key are lost and the records read as the pseudonym.
        let entryRefs = try userEntryRefs(in: transaction)
        try transaction.withCursor(databases.events) { cursor in
            var entry = try cursor.first()
            while let current = entry {
                report.recordsChecked += 1
                if let seq = StoreLayout.seq(fromKey: current.key) {
                    let followsGap = Self.checkPlace(of: seq, walk: &walk, report: &report)
                    checkRecord(
                        current.value, seq: seq, followsGap: followsGap, users: users, entryRefs: entryRefs,
                        walk: &walk, report: &report)
                } else {
                    report.add("events database has a key of \(current.key.count) bytes (expected 8)")
                }
                entry = try cursor.next()
            }
        }
    }

    /// Seq `seq` must come after the prune point and right after the record before: a seq past
    /// that one means records `missing`, one at or before it `reordered`. Returns whether the
    /// record follows a gap: then its broken link is the gap's consequence, not a second finding.
    private static func checkPlace(of seq: UInt64, walk: inout LogWalk, report: inout VerifyReport) -> Bool {
        let followsGap = seq != walk.expectedSeq
        if let point = walk.prunedThrough, seq <= point.seq {
            report.add("record is still stored although the log was pruned through seq \(point.seq)", seq: seq, kind: .damaged)
        } else if let expected = walk.expectedSeq, seq > expected {
            report.add("\(seqRange(expected, seq - 1)) deleted from the log (seq \(seq) follows seq \(expected - 1))", seq: expected, kind: .missing)
        } else if walk.expectedSeq.map({ seq < $0 }) ?? true {
            report.add("record stored out of order", seq: seq, kind: .reordered)
        }
        walk.expectedSeq = StoreLayout.successor(of: seq)
        walk.lastSeq = seq
        return followsGap
    }

    /// The record stored under `seq` decodes and links to the one before (`checkLink(of:seq:followsGap:walk:report:)`);
    /// the walk notes the index entries it implies (`noteIndexEntries(of:value:seq:entryRefs:walk:report:)`)
    /// and, for a `sign_in_options_shown`, its guideline 4.8 findings (``VerifyReport/designFindings``).
    /// One that cannot be read is reported as what its decoding found (`reportUnreadable(_:value:seq:walk:report:)`).
    private func checkRecord(
        _ value: UnsafeRawBufferPointer, seq: UInt64, followsGap: Bool, users: UserDirectory, entryRefs: Set<UserRef>?,
        walk: inout LogWalk, report: inout VerifyReport
    ) {
        do {
            let record = try RecordCodec.decode(value, expectedSeq: seq, users: users)
            Self.checkLink(of: record, seq: seq, followsGap: followsGap, walk: &walk, report: &report)
            try Self.noteIndexEntries(of: record, value: value, seq: seq, entryRefs: entryRefs, walk: &walk, report: &report)
            // The design check: one comparison of the type for every other record (matching the
            // payload first would copy every record's payload).
            if record.event.type == .signInOptionsShown, case let .signInOptionsShown(options, platform) = record.event.payload {
                report.addDesignFindings(SignInOptions.guideline48Findings(options: options, platform: platform), seq: seq)
            }
        } catch {
            Self.reportUnreadable(error, value: value, seq: seq, walk: &walk, report: &report)
        }
    }

    /// The record's previous hash must be the hash of the record before it, or, for the first one
    /// after the prune point, the hash `pruned_through` keeps. The walk keeps the hash a signed
    /// head at this seq must sign.
    private static func checkLink(of record: Record, seq: UInt64, followsGap: Bool, walk: inout LogWalk, report: inout VerifyReport) {
        if record.previousHash != walk.previousHash, let point = walk.prunedThrough, StoreLayout.successor(of: point.seq) == seq {
            report.add(
                "the first record after the prune point does not link to the hash pruned_through keeps for seq \(point.seq) (the prune point or the record was changed)",
                seq: seq, kind: .modified)
        } else if record.previousHash != walk.previousHash && !followsGap {
            report.add(
                "previous-hash link does not match the hash of the record before it (this record or the one before was replaced, inserted or moved)", seq: seq,
                kind: .modified)
        }
        if walk.signedSeqs.contains(seq) { walk.hashesAtSignedSeqs[seq] = record.hash }
        walk.previousHash = record.hash
    }

    /// The entries the record implies in `by_id` (its id, stored once), `by_user` (whose user
    /// must have an entry in `user_keys`) and `by_session`.
    private static func noteIndexEntries(
        of record: Record, value: UnsafeRawBufferPointer, seq: UInt64, entryRefs: Set<UserRef>?,
        walk: inout LogWalk, report: inout VerifyReport
    ) throws {
        let event = record.event
        if let other = walk.expectedIDs[event.id] {
            report.add("event id \(event.id.uuidString.lowercased()) also stored at seq \(other)", seq: seq)
        }
        walk.expectedIDs[event.id] = seq
        if let ref = try RecordCodec.userRef(of: value) {
            walk.expectedUserKeys.insert(StoreLayout.userKey(ref, seq))
            if let entryRefs, !entryRefs.contains(ref) {
                report.add(
                    "the record's user \(ref.literal) has no entry in user_keys: the user's readable id and key are lost, so the record reads as the pseudonym with its personal fields erased",
                    seq: seq)
            }
        }
        if let session = event.flow { walk.expectedSessionKeys.insert(StoreLayout.sessionKey(session, seq)) }
    }

    /// A record that cannot be read is reported once, as changed, moved or damaged; the walk goes
    /// on from the hash its header claims, when it has one.
    private static func reportUnreadable(
        _ error: any Error, value: UnsafeRawBufferPointer, seq: UInt64, walk: inout LogWalk,
        report: inout VerifyReport
    ) {
        switch (error as? RecordDecodingError)?.reason ?? .damaged {
        case .modified:
            report.add("record cannot be read: its bytes no longer match its hash (the record was changed)", seq: seq, kind: .modified)
        case .misplaced(let storedSeq):
            report.add("record cannot be read: the record of seq \(storedSeq) is stored here (records were swapped or moved)", seq: seq, kind: .reordered)
        case .damaged:
            report.add("record cannot be read: \(error)", seq: seq, kind: .damaged)
        }
        walk.unreadable.insert(seq)
        if let links = try? RecordCodec.links(of: value) { walk.previousHash = links.hash }
    }

    /// The head in `meta` must be the last record, seq and hash; a head past it means records
    /// deleted from the end of the log.
    private func checkMetaHead(in transaction: Transaction, after walk: LogWalk, report: inout VerifyReport) throws {
        let lastSeq = walk.lastSeq
        let head: (seq: UInt64, hash: Digest)
        do { head = try readHead(transaction) } catch let error as StoreError {
            report.add(error.message)
            head = (lastSeq, walk.previousHash) // checked against nothing: the damage is reported
        }
        report.headSeq = head.seq
        report.headHash = head.hash
        if head.seq > lastSeq {
            report.add(
                "\(Self.seqRange(lastSeq + 1, head.seq)) deleted from the end of the log (meta's head is seq \(head.seq), the last record seq \(lastSeq))",
                seq: lastSeq + 1, kind: .missing)
        } else if head.seq != lastSeq {
            report.add("meta head is seq \(head.seq) but the last record is seq \(lastSeq)")
        } else if head.hash != walk.previousHash {
            report.add("meta head hash does not match the hash of the last record (the record or meta was changed)", seq: lastSeq, kind: .modified)
        }
    }

    /// `by_id`: every record's id → its seq, and nothing else.
    private func checkIDIndex(
        expected expectedIDs: [UUID: UInt64], skipping unreadable: Set<UInt64>, in transaction: Transaction,
        report: inout VerifyReport
    ) throws {
        var seenIDs = Set<UUID>()
        try transaction.withCursor(databases.byID) { cursor in
            var entry = try cursor.first()
            while let current = entry {
                let id = current.key.count == 16 ? UUID(uuid: current.key.load(as: uuid_t.self)) : nil
                if let id { seenIDs.insert(id) }
                let seq = StoreLayout.seq(fromKey: current.value)
                if let id, let seq, expectedIDs[id] == seq {
                    // matches
                } else if let seq, unreadable.contains(seq) {
                    // already reported as unreadable
                } else if let id, let expected = expectedIDs[id] {
                    report.add("by_id maps \(id.uuidString.lowercased()) to seq \(seq.map(String.init) ?? "?"), but the event is at seq \(expected)")
                } else {
                    report.add("by_id has an entry (\(id?.uuidString.lowercased() ?? "\(current.key.count)-byte key")) for no stored event")
                }
                entry = try cursor.next()
            }
        }
        for (id, seq) in expectedIDs.sorted(by: { $0.value < $1.value }) where !seenIDs.contains(id) {
            report.add("by_id lacks the entry for event \(id.uuidString.lowercased())", seq: seq)
        }
    }

    private func checkIndex(
        _ index: Database, expected: Set<[UInt8]>, skipping unreadable: Set<UInt64>, in transaction: Transaction,
        report: inout VerifyReport
    ) throws {
        var found = Set<[UInt8]>()
        try transaction.withCursor(index) { cursor in
            var entry = try cursor.first()
            while let current = entry {
                let key = Array(current.key)
                if expected.contains(key) {
                    found.insert(key)
                } else {
                    let seq = key.count >= 8 ? StoreLayout.seq(fromKey: UnsafeRawBufferPointer(rebasing: current.key[(key.count - 8)...])) : nil
                    if let seq, unreadable.contains(seq) {
                        entry = try cursor.next()
                        continue
                    }
                    report.add("\(index.name) has an entry for seq \(seq.map(String.init) ?? "?") that the log does not imply")
                }
                entry = try cursor.next()
            }
        }
        let missing = expected.subtracting(found).compactMap { key in
            key.withUnsafeBytes { StoreLayout.seq(fromKey: UnsafeRawBufferPointer(rebasing: $0[(key.count - 8)...])) }
        }
        for seq in missing.sorted() {
            report.add("\(index.name) lacks the entry for this record", seq: seq)
        }
    }

    /// Every entry in `user_keys` must name a pseudonym once; a live one must open with the key
    /// it holds and name the user its pseudonym says: the readable id it seals hashes to that
    /// pseudonym under the store's pseudonym key. A tombstone (a forgotten user) is the pseudonym
    /// alone.
    private func checkUserEntries(in transaction: Transaction, report: inout VerifyReport) throws {
        guard let userKeys = databases.userKeys else { return }
        let pseudonymKey = users.pseudonymKey
        var seen = Set<UserRef>()
        try transaction.withCursor(userKeys) { cursor in
            var entry = try cursor.first()
            while let current = entry {
                defer { entry = try? cursor.next() }
                let number = StoreLayout.seq(fromKey: current.key).map(String.init) ?? "?"
                guard let ref = Self.userEntryRef(current.value) else {
                    report.add("user_keys entry \(number) is too short to name a user (it was changed)")
                    continue
                }
                if !seen.insert(ref).inserted {
                    report.add("user_keys holds user \(ref.literal) twice (entry \(number))")
                }
                guard current.value.count > UserRef.byteCount else { continue } // forgotten
                guard let opened = Self.userEntry(from: current.value) else {
                    report.add("user_keys entry \(number) (user \(ref.literal)) does not open with the key it holds (it was changed)")
                    continue
                }
                if UserRef(user: opened.name, pseudonymKey: pseudonymKey) != ref {
                    report.add("user_keys entry \(number) names a user whose pseudonym is not \(ref.literal) (entries were swapped or replaced)")
                }
            }
        }
    }

    /// The pseudonyms `user_keys` has an entry for (live, tombstone, or one that does not open:
    /// that one `checkUserEntries` reports); `nil` for a store without the database.
    private func userEntryRefs(in transaction: Transaction) throws -> Set<UserRef>? {
        guard let userKeys = databases.userKeys else { return nil }
        var refs = Set<UserRef>()
        try transaction.withCursor(userKeys) { cursor in
            var entry = try cursor.first()
            while let current = entry {
                if let ref = Self.userEntryRef(current.value) { refs.insert(ref) }
                entry = try cursor.next()
            }
        }
        return refs
    }

    /// "seq 4" or "seq 4…7".
    static func seqRange(_ first: UInt64, _ last: UInt64) -> String {
        first == last ? "seq \(first)" : "seq \(first)…\(last)"
    }

    private func readSignedHeads(_ database: Database?, in transaction: Transaction) throws -> [SignedHead] {
        guard let database else { return [] }
        return try transaction.withCursor(database) { cursor in
            var heads: [SignedHead] = []
            var entry = try cursor.first()
            while let current = entry {
                if let head = StoreLayout.signedHead(device: deviceID, key: current.key, value: current.value) {
                    heads.append(head)
                } else {
                    // Kept as a head that cannot verify: an entry of the wrong shape is a bad signature.
                    let seq = StoreLayout.seq(fromKey: current.key) ?? 0
                    heads.append(SignedHead(device: deviceID, seq: seq, hash: .zero, signature: []))
                }
                entry = try cursor.next()
            }
            return heads
        }
    }

    /// Every signed head must verify with the public key in `meta`, which must be the key of
    /// `signing.key` when that file is present, and must name a record the log holds with the
    /// signed hash: a head beyond the log's end means records were removed from the tail, a
    /// different hash that the signed history was rewritten. A head at the prune point is checked
    /// against the hash `pruned_through` keeps; one below it only for its signature (the record it
    /// names is gone, and with it what the hash could be compared with): it is listed in
    /// `prunedSignedHeadSeqs`, not counted in `signedHeadSeq`.
    private func checkSignedHeads(
        _ heads: [SignedHead], hashes: [UInt64: Digest], lastSeq: UInt64, unreadable: Set<UInt64>,
        prunedThrough point: PrunePoint?, in transaction: Transaction, report: inout VerifyReport
    ) throws {
        report.signedHeadCount = heads.count
        let publicKey: SigningPublicKey?
        do { publicKey = try readSigningPublicKey(transaction) } catch {
            report.add("meta's signing public key is damaged (\(error)); the signed heads cannot be checked", kind: .badSignature)
            return
        }
        report.signingPublicKey = publicKey
        if let publicKey, options.signsHeads, let fileKey = try? Self.readSigningKey(at: signingKeyPath), fileKey.publicKey != publicKey {
            report.add(
                "meta's signing public key \(publicKey.hex) is not the key of \(signingKeyPath) (\(fileKey.publicKey.hex)): the key was replaced",
                kind: .badSignature)
        }
        guard !heads.isEmpty else { return }
        guard let publicKey else {
            report.add(
                "the store keeps \(heads.count) signed head\(heads.count == 1 ? "" : "s") but meta records no public key to check them (the key was removed)",
                seq: heads[0].seq, kind: .badSignature)
            return
        }
        for head in heads {
            guard head.isValid(for: publicKey) else {
                report.add(
                    "the signed head of seq \(head.seq) does not verify with the store's public key \(publicKey.hex) (it was re-signed with another key or altered)",
                    seq: head.seq, kind: .badSignature)
                continue
            }
            if let point, head.seq < point.seq {
                // Nothing left to compare the hash with: the signature is all that can be checked.
                report.prunedSignedHeadSeqs.append(head.seq)
            } else if let point, head.seq == point.seq {
                if head.hash != point.hash {
                    report.add(
                        "the prune point's kept hash differs from the one signed at seq \(head.seq) (signed hash \(head.hash.hex), kept \(point.hash.hex)): the prune point was rewritten",
                        seq: head.seq, kind: .modified)
                } else {
                    report.prunePointIsSigned = true
                    report.signedHeadSeq = max(report.signedHeadSeq ?? 0, head.seq)
                }
            } else if head.seq > lastSeq {
                report.add(
                    "a valid signed head vouches for seq \(head.seq) but the log ends at seq \(lastSeq): \(Self.seqRange(lastSeq + 1, head.seq)) removed from the tail",
                    seq: lastSeq + 1, kind: .missing)
            } else if let hash = hashes[head.seq], hash != head.hash {
                report.add(
                    "the record differs from the one signed at seq \(head.seq) (signed hash \(head.hash.hex), log \(hash.hex)): the history was rewritten after it was signed",
                    seq: head.seq, kind: .modified)
            } else if hashes[head.seq] == nil && !unreadable.contains(head.seq) {
                report.add("a valid signed head vouches for seq \(head.seq), which the log lacks", seq: head.seq, kind: .missing)
            } else {
                report.signedHeadSeq = max(report.signedHeadSeq ?? 0, head.seq)
            }
        }
    }
}
