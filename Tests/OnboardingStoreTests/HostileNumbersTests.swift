import Foundation
import LMDB
import OnboardingModel
import OnboardingProjections
import Testing
@testable import OnboardingStore

/// Numbers read from the store's file (or from a caller) are untrusted: a seq of 2^64 − 1 in
/// meta, in a record's key, as the prune point, as a user number, a sync cursor of the wrong
/// length, a truncated record. Each is refused or reported with a clear error; none traps the
/// process (a trap here would end the test run).
@Suite("Hostile numbers in a store")
struct HostileNumbersTests {
    static let maximum = UInt64.max
    static let farFuture = Timestamp(millisecondsSince1970: 4_000_000_000_000)

    /// A closed store of five events of alice, acknowledged through `acknowledged`.
    static func makeStore(_ path: String, acknowledged: UInt64 = 0) throws -> [Record] {
        let store = try OnboardingStore.open(at: path)
        defer { store.close() }
        _ = try store.appendBlocking(Events.many(5))
        if acknowledged > 0 { try store.setSyncCursor(acknowledged) }
        return try store.allRecords()
    }

    static func put(_ path: String, meta key: String, _ value: [UInt8]) throws {
        try withRawStore(path) { raw in
            try raw.environment.write { try $0.put(raw.meta, key: Array(key.utf8), value: value) }
        }
    }

    /// The bytes of a record for `event` at `seq` after `previous` (an event without a user).
    static func recordBytes(_ index: Int, seq: UInt64, previous: Digest) -> [UInt8] {
        RecordCodec.encode(Events.make(index, user: nil), seq: seq, previousHash: previous, seal: nil)
    }

    static func hash(of bytes: [UInt8]) -> Digest {
        Digest(bytes: Array(bytes[RecordCodec.hashOffset..<(RecordCodec.hashOffset + Digest.byteCount)]))
    }

    @Test("a head of 2^64 − 1 in meta: appends are refused with .corrupted, verify names it, reads and signing do not trap")
    func headAtMaximum() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        _ = try Self.makeStore(directory.store)
        try Self.put(directory.store, meta: "head", StoreLayout.headValue(seq: Self.maximum, hash: .zero))

        let store = try OnboardingStore.open(at: directory.store)
        defer { store.close() }
        do {
            _ = try store.appendBlocking([Events.make(9)])
            Issue.record("an append after a head of 2^64 − 1 was accepted")
        } catch {
            #expect(error.code == .corrupted)
            #expect(error.message.contains("too close to 2^64 − 1"), "\(error.message)")
        }
        #expect(try store.records(in: 1...Self.maximum).count == 5)
        let report = try store.verify()
        #expect(report.problems.contains { $0.kind == .missing && $0.seq == 6 }, "\(report.problems)")
        let page = try store.history(HistoryQuery(user: "alice", after: HistoryCursor(at: Events.start, device: Events.device, seq: Self.maximum)))
        #expect(page.attempts.isEmpty && page.nextCursor == nil, "nothing follows seq 2^64 − 1")
    }

    @Test("a chain-valid record stored under seq 2^64 − 1: verify reports the gap before it, reads and appends do not trap")
    func recordAtMaximum() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let records = try Self.makeStore(directory.store)
        let last = Self.recordBytes(50, seq: Self.maximum, previous: records[4].hash)
        try withRawStore(directory.store) { raw in
            try raw.environment.write { transaction in
                try transaction.put(raw.events, key: Keys.seq(Self.maximum), value: last)
                try transaction.put(raw.meta, key: Keys.head, value: StoreLayout.headValue(seq: Self.maximum, hash: Self.hash(of: last)))
            }
        }
        let store = try OnboardingStore.open(at: directory.store, options: storeOptions { $0.readOnly = true })
        defer { store.close() }
        let report = try store.verify()
        let gap = try #require(report.problems.first { $0.kind == .missing })
        #expect(gap.seq == 6 && gap.message.contains("seq 6…\(Self.maximum - 1) deleted"), "\(gap)")
        var seqs: [UInt64] = []
        try store.forEachRecord {
            seqs.append($0.seq); return true
        }
        #expect(seqs == [1, 2, 3, 4, 5, Self.maximum])
        // A writable open replays the log into the projections and stops at the gap.
        #expect(throws: StoreError.self) { _ = try OnboardingStore.open(at: directory.store) }
    }

    @Test("a prune point of 2^64 − 1: plan and prune remove nothing, verify reports the records left below it")
    func prunePointAtMaximum() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        _ = try Self.makeStore(directory.store, acknowledged: 5)
        try Self.put(directory.store, meta: "pruned_through", StoreLayout.headValue(seq: Self.maximum, hash: .zero))
        try Self.put(directory.store, meta: "sync_cursor", Keys.seq(Self.maximum))

        let reader = try OnboardingStore.open(at: directory.store, options: storeOptions { $0.readOnly = true })
        defer { reader.close() }
        #expect(try reader.prunedThrough()?.firstKeptSeqText == "no seq (nothing follows seq \(Self.maximum))")
        let plan = try reader.planPrune(before: Self.farFuture)
        #expect(plan.removed == nil)
        let report = try reader.verify()
        #expect(report.problems.filter { $0.message.contains("still stored although the log was pruned") }.map(\.seq) == [1, 2, 3, 4, 5])
    }

    @Test("a record at 2^64 − 1 after a prune point at 2^64 − 2 prunes in one batch without overflowing")
    func pruneUpToMaximum() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let point = PrunePoint(seq: Self.maximum - 1, hash: Digest(bytes: Array(repeating: 7, count: 32)))
        _ = try Self.makeStore(directory.store)
        let last = Self.recordBytes(50, seq: Self.maximum, previous: point.hash)
        // The base snapshot a prune through seq 2^64 − 2 would have left (an empty state at that seq).
        let empty = String(decoding: OnboardingState(policy: .mediawiki).snapshotJSON, as: UTF8.self)
        let base = empty.replacingOccurrences(of: #""seq":0"#, with: #""seq":\#(Self.maximum - 1)"#)
        try #require(base != empty, "the state's JSON names its seq")
        try withRawStore(directory.store) { raw in
            let snapshots = try #require(try raw.environment.openDatabase("snapshots", create: false))
            try raw.environment.write { transaction in
                for seq: UInt64 in 1...5 { try transaction.delete(raw.events, key: Keys.seq(seq)) }
                for database in [raw.byID, raw.byUser, raw.bySession] { try transaction.removeAll(database) }
                try transaction.put(raw.events, key: Keys.seq(Self.maximum), value: last)
                try transaction.put(raw.meta, key: Keys.head, value: StoreLayout.headValue(seq: Self.maximum, hash: Self.hash(of: last)))
                try transaction.put(raw.meta, key: Array("pruned_through".utf8), value: StoreLayout.headValue(seq: point.seq, hash: point.hash))
                try transaction.put(raw.meta, key: Array("sync_cursor".utf8), value: Keys.seq(Self.maximum))
                try transaction.put(
                    snapshots, key: Array("pruned_base".utf8),
                    value: StoreLayout.uint32Value(UInt32(OnboardingState.stateVersion)) + Keys.seq(point.seq) + Array(base.utf8))
                _ = try transaction.delete(snapshots, key: Array("onboarding_state".utf8))
            }
        }
        let store = try OnboardingStore.open(at: directory.store)
        defer { store.close() }
        let result = try store.prune(before: Self.farFuture)
        #expect(result.removed == Self.maximum...Self.maximum)
        #expect(result.prunedThrough?.seq == Self.maximum)
        #expect(try store.head().seq == Self.maximum)
        #expect(try store.allRecords().isEmpty)
    }

    @Test("a user_keys entry numbered 2^64 − 1: a new user is refused with .corrupted, known users still append")
    func userNumberAtMaximum() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        _ = try Self.makeStore(directory.store)
        try withRawStore(directory.store) { raw in
            try raw.environment.write { transaction in
                let stray = UserRef(user: "stray", pseudonymKey: .random())
                try transaction.put(try #require(raw.userKeysDatabase), key: Keys.seq(Self.maximum), value: stray.bytes)
            }
        }
        let store = try OnboardingStore.open(at: directory.store)
        defer { store.close() }
        do {
            _ = try store.appendBlocking([Events.make(10, user: "newcomer")])
            Issue.record("a user numbered past 2^64 − 1 was accepted")
        } catch {
            #expect(error.code == .corrupted)
            #expect(error.message.contains("user_keys holds an entry numbered \(Self.maximum)"), "\(error.message)")
        }
        _ = try store.appendBlocking([Events.make(11)])
        #expect(try store.head().seq == 6)
    }

    @Test("a sync cursor of the wrong length is .corrupted for readers and prune, and a finding of verify")
    func damagedSyncCursor() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        _ = try Self.makeStore(directory.store)
        try Self.put(directory.store, meta: "sync_cursor", [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
        let store = try OnboardingStore.open(at: directory.store)
        defer { store.close() }
        #expect(throws: StoreError.self) { _ = try store.syncCursor() }
        #expect(throws: StoreError.self) { _ = try store.prune(before: Self.farFuture) }
        let report = try store.verify()
        #expect(report.problems.contains { $0.message.contains("sync_cursor of 9 bytes (expected 8)") }, "\(report.problems)")
    }

    /// What a snapshot file can hold that the projections' arithmetic must survive: times at
    /// Int64's ends (refused on decoding: the snapshot is rebuilt from the log) and counters at
    /// Int32's end (kept: they stop there instead of overflowing).
    enum SnapshotTampering: String, CaseIterable, CustomTestStringConvertible {
        case windowStartAtMaximum, lastFailureAtMinimum, failuresAtMaximum, windowCountAtMaximum
        var testDescription: String { rawValue }

        func apply(to json: String) -> String {
            func replacing(_ pattern: String, _ template: String) -> String {
                json.replacingOccurrences(of: pattern, with: template, options: .regularExpression)
            }
            switch self {
            case .windowStartAtMaximum: return replacing(#""windows":\[\[[0-9]+,"#, #""windows":[[9223372036854775807,"#)
            case .lastFailureAtMinimum: return replacing(#""lastFailureAt":[0-9]+"#, #""lastFailureAt":-9223372036854775808"#)
            case .failuresAtMaximum: return replacing(#""failures":[0-9]+"#, #""failures":2147483647"#)
            case .windowCountAtMaximum: return replacing(#""windows":\[\[([0-9]+),[0-9]+\]"#, #""windows":[[$1,2147483647]"#)
            }
        }

        /// Whether the tampered snapshot still decodes (counters in range) or is refused (times).
        var decodes: Bool { self == .failuresAtMaximum || self == .windowCountAtMaximum }

        /// MediaWiki counts failures in windows; Keycloak's back-off subtracts the last failure's
        /// time from the next one's.
        var policy: LockoutPolicy {
            switch self {
            case .windowStartAtMaximum, .windowCountAtMaximum: .mediawiki
            case .lastFailureAtMinimum, .failuresAtMaximum: .keycloak
            }
        }
    }

    @Test("a projection snapshot with numbers at the ends of their types never traps the store", arguments: SnapshotTampering.allCases)
    func hostileSnapshot(_ tampering: SnapshotTampering) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let options = storeOptions { $0.lockoutPolicy = tampering.policy }
        let failures = (0..<3).map { Events.make($0, payload: .signInFailed(method: .password, reason: .invalidPassword)) }
        do {
            let store = try OnboardingStore.open(at: directory.store, options: options)
            _ = try store.appendBlocking(failures)
            store.close()
        }
        try withRawStore(directory.store) { raw in
            let snapshots = try #require(try raw.environment.openDatabase("snapshots", create: false))
            try raw.environment.write { transaction in
                let key = Array("onboarding_state".utf8)
                let value = try #require(try transaction.get(snapshots, key: key))
                let json = String(decoding: value[12...], as: UTF8.self)
                let tampered = tampering.apply(to: json)
                try #require(tampered != json, "the snapshot holds the value to change: \(json)")
                try transaction.put(snapshots, key: key, value: Array(value[..<12]) + Array(tampered.utf8))
            }
        }
        let store = try OnboardingStore.open(at: directory.store, options: options)
        defer { store.close() }
        _ = try store.appendBlocking([
            Events.make(10, payload: .signInFailed(method: .password, reason: .invalidPassword)),
            Events.make(11, payload: .signInFailed(method: .password, reason: .invalidPassword))
        ])
        _ = try store.signInDecision(user: "alice", device: Events.device, at: Events.start.adding(milliseconds: 20_000))
        let report = try store.verify()
        // The open store still keeps the tampered snapshot (a new one is written later): verify
        // names it, as differing from a rebuild or as refused.
        let snapshot = report.problems.filter { $0.kind == .snapshot }.map(\.message)
        #expect(snapshot.count == 1, "\(report.problems)")
        #expect(snapshot.allSatisfy { $0.contains(tampering.decodes ? "differs from a rebuild" : "cannot be decoded") }, "\(snapshot)")
    }

    @Test("a truncated record is named by verify and is .corrupted for every reader; nothing traps", arguments: [0, 1, 33, 65, 66, 80])
    func truncatedRecord(keptBytes: Int) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        _ = try Self.makeStore(directory.store, acknowledged: 5)
        try withRawStore(directory.store) { raw in
            try raw.environment.write { transaction in
                let value = try #require(try transaction.get(raw.events, key: Keys.seq(3)))
                try transaction.put(raw.events, key: Keys.seq(3), value: Array(value.prefix(keptBytes)))
            }
        }
        let store = try OnboardingStore.open(at: directory.store, options: storeOptions { $0.readOnly = true })
        defer { store.close() }
        let report = try store.verify()
        #expect(report.firstProblem?.seq == 3, "\(report.problems)")
        #expect(throws: StoreError.self) { _ = try store.storedRecord(at: 3) }
        #expect(throws: StoreError.self) { _ = try store.records(user: "alice") }
        #expect(try store.stats().eventCount == 5)
        #expect(throws: StoreError.self) { _ = try store.planPrune(before: Self.farFuture) }
    }
}
