import Foundation
import LMDB
import OnboardingModel
import OnboardingProjections

/// What `verify` found: every problem names the seq (when there is one) and what is wrong.
public struct VerifyReport: Sendable {
    public struct Problem: Sendable, CustomStringConvertible {
        public var seq: UInt64?
        public var message: String
        public var description: String {
            if let seq { return "seq \(seq): \(message)" }
            return message
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

    public var isValid: Bool { problems.isEmpty }

    mutating func add(_ message: String, seq: UInt64? = nil) {
        if problems.count < VerifyReport.maximumProblems {
            problems.append(Problem(seq: seq, message: message))
        } else {
            unreportedProblems += 1
        }
    }
}

extension OnboardingStore {
    /// Checks the whole store in one read snapshot: every record decodes, its hash matches its
    /// bytes, each links to the previous one, seqs run from 1 (from the prune point on a pruned
    /// store, linked to its hash) without gaps, the head in `meta` is the last record, and every
    /// index holds exactly the entries the log implies.
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
            report.add("projection snapshot cannot be decoded (\(error)); it is rebuilt on the next writable open", seq: snapshot.seq)
        case .success(let state):
            guard snapshot.seq <= report.headSeq, state.seq == snapshot.seq else {
                report.add("projection snapshot claims seq \(snapshot.seq), beyond the log's head \(report.headSeq)", seq: snapshot.seq)
                return
            }
            let rebuilt: OnboardingState
            do { rebuilt = try rebuildState(policy: state.lockout.policy, through: snapshot.seq) } catch where error.code == .pruned {
                report.add("projection snapshot cannot be checked: \(error.message)", seq: snapshot.seq)
                return
            }
            if rebuilt != state {
                let from = report.prunedThrough.map { "the base snapshot at seq \($0.seq) and " } ?? ""
                report.add("projection snapshot differs from a rebuild of \(from)the log; it is rebuilt on the next writable open", seq: snapshot.seq)
            }
        }
    }

    private func verifyLog() throws(StoreError) -> VerifyReport {
        try reading { transaction in
            var report = VerifyReport()
            var expectedIDs: [UUID: UInt64] = [:]
            var expectedUserKeys = Set<[UInt8]>()
            var expectedSessionKeys = Set<[UInt8]>()
            // A pruned log starts after its prune point, linked to the hash the pruned records left.
            let point = try readPrunedThrough(transaction)
            report.prunedThrough = point
            report.acknowledgedSeq = try readSyncCursor(transaction)
            if let point, point.seq > report.acknowledgedSeq {
                report.add("pruned through seq \(point.seq) but the sync server acknowledged only seq \(report.acknowledgedSeq): records were removed before the server held them", seq: point.seq)
            }
            var previousHash = point?.hash ?? .zero
            var expectedSeq: UInt64 = (point?.seq ?? 0) + 1
            var lastSeq: UInt64 = point?.seq ?? 0
            // Records that cannot be decoded are reported once; their index entries are not
            // reported again as strays.
            var unreadable = Set<UInt64>()

            try transaction.withCursor(databases.events) { cursor in
                var entry = try cursor.first()
                while let current = entry {
                    defer { report.recordsChecked += 1 }
                    guard let seq = StoreLayout.seq(fromKey: current.key) else {
                        report.add("events database has a key of \(current.key.count) bytes (expected 8)")
                        entry = try cursor.next()
                        continue
                    }
                    if let point, seq <= point.seq {
                        report.add("record is still stored although the log was pruned through seq \(point.seq)", seq: seq)
                    } else if seq != expectedSeq {
                        let missing = seq > expectedSeq ? "seq \(expectedSeq)…\(seq - 1) missing (records deleted)" : "out of order"
                        report.add("gap before this record: \(missing)", seq: seq)
                    }
                    expectedSeq = seq + 1
                    lastSeq = seq
                    do {
                        let record = try RecordCodec.decode(current.value, expectedSeq: seq)
                        if record.previousHash != previousHash, let point, seq == point.seq + 1 {
                            report.add("the first record after the prune point does not link to the hash pruned_through keeps for seq \(point.seq) (the prune point or the record was changed)", seq: seq)
                        } else if record.previousHash != previousHash {
                            report.add("previous-hash link does not match the hash of the record before it (a record was inserted, deleted or reordered)", seq: seq)
                        }
                        previousHash = record.hash
                        let event = record.event
                        if let other = expectedIDs[event.id] {
                            report.add("event id \(event.id.uuidString.lowercased()) also stored at seq \(other)", seq: seq)
                        }
                        expectedIDs[event.id] = seq
                        if let user = event.user { expectedUserKeys.insert(StoreLayout.userKey(user, seq)) }
                        if let session = event.session { expectedSessionKeys.insert(StoreLayout.sessionKey(session, seq)) }
                    } catch {
                        report.add("record cannot be read: \(error)", seq: seq)
                        unreadable.insert(seq)
                        if let links = try? RecordCodec.links(of: current.value) { previousHash = links.hash }
                    }
                    entry = try cursor.next()
                }
            }

            let head = try readHead(transaction)
            report.headSeq = head.seq
            report.headHash = head.hash
            if head.seq != lastSeq {
                report.add("meta head is seq \(head.seq) but the last record is seq \(lastSeq)")
            } else if head.hash != previousHash {
                report.add("meta head hash does not match the hash of the last record", seq: lastSeq)
            }

            // by_id: every record's id → its seq, and nothing else.
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
            try checkIndex(databases.byUser, expected: expectedUserKeys, skipping: unreadable, in: transaction, report: &report)
            try checkIndex(databases.bySession, expected: expectedSessionKeys, skipping: unreadable, in: transaction, report: &report)
            return report
        }
    }

    private func checkIndex(_ index: Database, expected: Set<[UInt8]>, skipping unreadable: Set<UInt64>, in transaction: Transaction,
                            report: inout VerifyReport) throws {
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
}
