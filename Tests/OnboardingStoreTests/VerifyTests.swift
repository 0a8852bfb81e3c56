import Foundation
import LMDB
import OnboardingModel
import Testing
@testable import OnboardingStore

/// Damage done to a closed store with the plain LMDB wrapper, the way a disk fault or another
/// tool would, then found by `verify()` and by reads.
@Suite("verify() finds damage")
struct VerifyTests {
    static let session = UUID()

    /// A closed store of 8 events: users alternate alice/bob, all in one session.
    private static func makeStore(_ path: String) async throws -> [Event] {
        let store = try OnboardingStore.open(at: path)
        defer { store.close() }
        let events = (0..<8).map { Events.make($0, user: $0 % 2 == 0 ? "alice" : "bob", session: session) }
        _ = try await store.append(Array(events[0..<3]))
        _ = try await store.append(Array(events[3...]))
        let report = try store.verify()
        precondition(report.isValid && report.recordsChecked == 8, "the undamaged store verifies")
        return events
    }

    private static func verify(_ path: String) throws -> VerifyReport {
        let store = try OnboardingStore.open(at: path, options: storeOptions { $0.readOnly = true })
        defer { store.close() }
        return try store.verify()
    }

    /// The seqs the problems name in their `seq` field.
    private static func seqs(_ report: VerifyReport) -> Set<UInt64> {
        Set(report.problems.compactMap(\.seq))
    }

    @Test("an undamaged store verifies, with the head and record count")
    func valid() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        _ = try await Self.makeStore(directory.store)
        let report = try Self.verify(directory.store)
        #expect(report.isValid)
        #expect(report.problems.isEmpty)
        #expect(report.recordsChecked == 8)
        #expect(report.headSeq == 8)
    }

    @Test(
        "one flipped byte in a record is reported at its seq, and reading it throws .corrupted",
        arguments: [
            RecordCodec.headerByteCount + 20, // inside the body (the event id)
            5, // inside the stored hash
            -1 // the last byte
        ])
    func flippedByte(offset: Int) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        _ = try await Self.makeStore(directory.store)
        try withRawStore(directory.store) { raw in
            try raw.environment.write { transaction throws in
                var value = try #require(try transaction.get(raw.events, key: Keys.seq(5)))
                let index = offset >= 0 ? offset : value.count + offset
                value[index] ^= 0x01
                try transaction.put(raw.events, key: Keys.seq(5), value: value)
            }
        }

        let report = try Self.verify(directory.store)
        #expect(!report.isValid)
        if offset == 5 {
            // The damaged stored hash is what seq 6 no longer links to: both sides are named.
            #expect(Self.seqs(report) == [5, 6], "problems: \(report.problems)")
        } else {
            #expect(Self.seqs(report) == [5], "problems: \(report.problems)")
        }
        #expect(report.problems.contains { $0.seq == 5 && $0.description.contains("cannot be read") })
        // The unreadable record's index entries are not reported again as strays.
        #expect(report.problems.count == (offset == 5 ? 2 : 1), "problems: \(report.problems)")

        let store = try OnboardingStore.open(at: directory.store, options: storeOptions { $0.readOnly = true })
        defer { store.close() }
        let error = #expect(throws: StoreError.self) { try store.storedRecord(at: 5) }
        #expect(error?.code == .corrupted)
        #expect(error?.seq == 5)
        #expect(error?.message.contains("seq 5") == true)
        #expect((#expect(throws: StoreError.self) { try store.records(in: 1...8) })?.seq == 5)
        #expect((#expect(throws: StoreError.self) { try store.records(user: "alice") })?.code == .corrupted)
        // The records around it still read.
        #expect(try store.storedRecord(at: 4)?.seq == 4)
        #expect(try store.storedRecord(at: 6)?.seq == 6)
        #expect(try store.records(in: 1...4).count == 4, "a range that stops before the damage reads")
        #expect(try store.records(in: 6...8).count == 3)
        #expect(try store.records(user: "bob").map(\.seq) == [2, 4, 6, 8])
    }

    @Test("a deleted record is reported as missing at its seq, and index reads through it throw .corrupted")
    func deletedRecord() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        _ = try await Self.makeStore(directory.store)
        try withRawStore(directory.store) { raw in
            try raw.environment.write { transaction throws in #expect(try transaction.delete(raw.events, key: Keys.seq(4))) }
        }

        let report = try Self.verify(directory.store)
        #expect(!report.isValid)
        #expect(Self.seqs(report) == [4], "problems: \(report.problems)")
        let gap = report.problems.first { $0.seq == 4 && $0.kind == .missing }
        #expect(gap?.description.hasPrefix("seq 4: missing: seq 4 deleted from the log") == true, "the gap names the missing seq: \(report.problems)")
        #expect(report.firstProblem?.seq == 4)
        #expect(report.recordsChecked == 7)

        let store = try OnboardingStore.open(at: directory.store, options: storeOptions { $0.readOnly = true })
        defer { store.close() }
        let error = #expect(throws: StoreError.self) { try store.records(user: "bob") }
        #expect(error?.code == .corrupted)
        #expect(error?.seq == 4)
        #expect(try store.records(user: "alice").map(\.seq) == [1, 3, 5, 7])
    }

    @Test("a deleted last record shows as a head that points past the log")
    func deletedLastRecord() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        _ = try await Self.makeStore(directory.store)
        try withRawStore(directory.store) { raw in
            try raw.environment.write { transaction throws in #expect(try transaction.delete(raw.events, key: Keys.seq(8))) }
        }
        let report = try Self.verify(directory.store)
        #expect(!report.isValid)
        #expect(report.headSeq == 8)
        #expect(
            report.problems.contains { $0.message.contains("head is seq 8") && $0.message.contains("seq 7") },
            "problems: \(report.problems)")
    }

    @Test("two records with swapped values are both reported at their seqs")
    func swappedRecords() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        _ = try await Self.makeStore(directory.store)
        try withRawStore(directory.store) { raw in
            try raw.environment.write { transaction throws in
                let third = try #require(try transaction.get(raw.events, key: Keys.seq(3)))
                let sixth = try #require(try transaction.get(raw.events, key: Keys.seq(6)))
                try transaction.put(raw.events, key: Keys.seq(3), value: sixth)
                try transaction.put(raw.events, key: Keys.seq(6), value: third)
            }
        }

        let report = try Self.verify(directory.store)
        #expect(!report.isValid)
        let seqs = Self.seqs(report)
        #expect(seqs.contains(3) && seqs.contains(6), "problems: \(report.problems)")
        // Beyond the two moved records, only the links right after them can be named.
        #expect(seqs.isSubset(of: [3, 4, 6, 7]), "problems: \(report.problems)")
        #expect(report.problems.contains { $0.seq == 3 && $0.message.contains("seq 6") })
        #expect(report.problems.contains { $0.seq == 6 && $0.message.contains("seq 3") })

        let store = try OnboardingStore.open(at: directory.store, options: storeOptions { $0.readOnly = true })
        defer { store.close() }
        #expect((#expect(throws: StoreError.self) { try store.storedRecord(at: 3) })?.seq == 3)
        #expect((#expect(throws: StoreError.self) { try store.storedRecord(at: 6) })?.seq == 6)
    }

    @Test("a missing by_user entry is reported with the seq of its record")
    func missingUserIndexEntry() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        _ = try await Self.makeStore(directory.store)
        try withRawStore(directory.store) { raw in
            try raw.environment.write { transaction throws in #expect(try transaction.delete(raw.byUser, key: try raw.userKey("bob", 6))) }
        }
        let report = try Self.verify(directory.store)
        #expect(!report.isValid)
        #expect(report.problems.count == 1, "problems: \(report.problems)")
        #expect(report.problems.allSatisfy { $0.message.contains("by_user") })
        #expect(report.problems.map(\.description) == ["seq 6: index: by_user lacks the entry for this record"])
    }

    @Test("a by_user or by_session entry the log does not imply is reported with its seq")
    func bogusUserAndSessionEntries() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        _ = try await Self.makeStore(directory.store)
        try withRawStore(directory.store) { raw in
            try raw.environment.write { transaction throws in
                try transaction.put(raw.byUser, key: try raw.userKey("mallory", 3), value: [])
                try transaction.put(raw.bySession, key: Keys.session(UUID(), 7), value: [])
            }
        }
        let report = try Self.verify(directory.store)
        #expect(report.problems.count == 2, "problems: \(report.problems)")
        #expect(report.problems.contains { $0.description.contains("by_user") && $0.description.contains("seq 3") })
        #expect(report.problems.contains { $0.description.contains("by_session") && $0.description.contains("seq 7") })
        #expect(Self.seqs(report).isSubset(of: [3, 7]))
    }

    @Test("a bogus by_id entry, and one pointing at the wrong seq, are reported")
    func bogusIDEntries() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let events = try await Self.makeStore(directory.store)
        let stranger = UUID()
        try withRawStore(directory.store) { raw in
            try raw.environment.write { transaction throws in
                try transaction.put(raw.byID, key: Keys.uuid(stranger), value: Keys.seq(2))
                try transaction.put(raw.byID, key: Keys.uuid(events[2].id), value: Keys.seq(7))
            }
        }
        let report = try Self.verify(directory.store)
        #expect(report.problems.count == 2, "problems: \(report.problems)")
        #expect(report.problems.contains { $0.description.contains(stranger.uuidString.lowercased()) })
        let moved = report.problems.first { $0.description.contains(events[2].id.uuidString.lowercased()) }
        #expect(moved?.description.contains("seq 3") == true, "names where the event really is: \(report.problems)")
        #expect(Self.seqs(report).isSubset(of: [3]))
    }

    @Test("a missing by_id entry is reported")
    func missingIDEntry() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let events = try await Self.makeStore(directory.store)
        try withRawStore(directory.store) { raw in
            try raw.environment.write { transaction throws in #expect(try transaction.delete(raw.byID, key: Keys.uuid(events[4].id))) }
        }
        let report = try Self.verify(directory.store)
        #expect(report.problems.count == 1, "problems: \(report.problems)")
        #expect(report.problems.allSatisfy { $0.description.contains("by_id") })
        #expect(report.problems.allSatisfy { $0.seq == nil || $0.seq == 5 })
    }
}
