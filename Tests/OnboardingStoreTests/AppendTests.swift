import Foundation
import OnboardingModel
import Testing
@testable import OnboardingStore

@Suite("Appending events")
struct AppendTests {
    @Test("seqs start at 1 and run without gaps; records link into a hash chain ending at the head")
    func sequentialSeqs() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try OnboardingStore.open(at: directory.store)
        defer { store.close() }
        #expect(try store.head().seq == 0)
        #expect(try store.head().hash == .zero)

        let singles = Events.many(5)
        var seqs: [UInt64] = []
        for event in singles {
            let result = try await store.append(event)
            #expect(!result.isDuplicate)
            seqs.append(result.seq)
        }
        #expect(seqs == [1, 2, 3, 4, 5])
        let batch = Events.many(4, from: 5)
        #expect(try await store.append(batch) == (6...9).map { AppendResult(seq: $0, isDuplicate: false) })
        let last = Events.make(9)
        #expect(try store.appendBlocking([last]) == [AppendResult(seq: 10, isDuplicate: false)])

        let records = try store.allRecords()
        #expect(records.map(\.seq) == Array(1...10))
        #expect(records.map(\.event) == singles + batch + [last])
        #expect(records[0].previousHash == .zero)
        for (previous, record) in zip(records, records.dropFirst()) {
            #expect(record.previousHash == previous.hash, "seq \(record.seq) links to seq \(previous.seq)")
        }
        let head = try store.head()
        #expect(head.seq == 10)
        #expect(head.hash == records[9].hash)
        #expect(try store.verify().isValid)
    }

    @Test("an empty batch returns no results and writes nothing")
    func emptyBatch() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try OnboardingStore.open(at: directory.store)
        defer { store.close() }
        #expect(try await store.append([]) == [])
        #expect(try store.appendBlocking([]) == [])
        #expect(try store.head().seq == 0)
        #expect(store.commitCount == 0)
    }

    @Test("a batch whose third event conflicts appends none of its events, and leaves no gap")
    func batchAtomicity() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try OnboardingStore.open(at: directory.store)
        defer { store.close() }
        let stored = Events.make(0)
        _ = try await store.append(stored)
        let before = try store.head()

        let fresh = Events.many(3, from: 1)
        let batch = [fresh[0], fresh[1], stored.altered(), fresh[2]]
        let error = await #expect(throws: StoreError.self) { try await store.append(batch) }
        #expect(error?.code == .conflict)
        #expect(error?.batchIndex == 2)
        #expect(error?.seq == 1)
        #expect(try store.head() == before)
        for event in fresh { #expect(try store.seq(of: event.id) == nil) }
        #expect(try store.records(user: "alice").map(\.seq) == [1])

        // The seqs the failed batch would have used are still free.
        #expect(try await store.append(fresh).map(\.seq) == [2, 3, 4])
        #expect(try store.verify().isValid)
    }

    @Test("re-appending an identical event returns its original seq as a duplicate and writes nothing")
    func idempotentDuplicate() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try OnboardingStore.open(at: directory.store)
        defer { store.close() }
        let first = Events.make(0, session: UUID())
        let second = Events.make(1)
        _ = try await store.append([first, second])
        let head = try store.head()
        let dataFile = directory.store + "/data.mdb"
        let sizeBefore = try FileManager.default.attributesOfItem(atPath: dataFile)[.size] as? Int

        #expect(try await store.append(first) == AppendResult(seq: 1, isDuplicate: true))
        #expect(
            try store.appendBlocking([first, second]) == [
                AppendResult(seq: 1, isDuplicate: true),
                AppendResult(seq: 2, isDuplicate: true)
            ])
        #expect(try store.head() == head)
        #expect(try store.allRecords().map(\.event) == [first, second])
        #expect(try store.records(flow: first.flow!).count == 1, "no second index entry")
        #expect(try FileManager.default.attributesOfItem(atPath: dataFile)[.size] as? Int == sizeBefore)

        // A duplicate mixed with a new event: the new one gets the next seq.
        let third = Events.make(2)
        #expect(
            try await store.append([second, third]) == [
                AppendResult(seq: 2, isDuplicate: true),
                AppendResult(seq: 3, isDuplicate: false)
            ])
        #expect(try store.verify().isValid)
    }

    @Test(
        "the same id with different content is a .conflict naming the stored seq",
        arguments: [
            "time", "user", "session", "payload", "device"
        ])
    func conflict(change: String) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try OnboardingStore.open(at: directory.store)
        defer { store.close() }
        _ = try await store.append(Events.many(2))
        let original = Events.make(5, session: UUID())
        #expect(try await store.append(original).seq == 3)
        _ = try await store.append(Events.make(6))
        let head = try store.head()

        var changed = original
        switch change {
        case "time": changed.at = changed.at.adding(milliseconds: 1)
        case "user": changed.user = nil
        case "session": changed.flow = UUID()
        case "payload": changed.payload = .signInStarted(method: .password)
        default: changed.device = "kiosk-8"
        }
        let error = await #expect(throws: StoreError.self) { try await store.append(changed) }
        #expect(error?.code == .conflict)
        #expect(error?.seq == 3)
        #expect(error?.batchIndex == 0)
        #expect(error?.message.contains("seq 3") == true)
        #expect(error?.message.contains(original.id.uuidString.lowercased()) == true)
        #expect(try store.head() == head)
        #expect(try store.storedRecord(at: 3)?.event == original)
    }

    @Test("duplicates inside one batch: identical ones share a seq, different ones conflict")
    func duplicatesInsideBatch() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try OnboardingStore.open(at: directory.store)
        defer { store.close() }
        let a = Events.make(0)
        let b = Events.make(1)
        #expect(
            try await store.append([a, b, a]) == [
                AppendResult(seq: 1, isDuplicate: false),
                AppendResult(seq: 2, isDuplicate: false),
                AppendResult(seq: 1, isDuplicate: true)
            ])
        #expect(try store.head().seq == 2)

        let c = Events.make(2)
        let error = await #expect(throws: StoreError.self) { try await store.append([c, Events.make(3), c.altered()]) }
        #expect(error?.code == .conflict)
        #expect(error?.batchIndex == 2)
        #expect(error?.seq == 3, "the seq the first copy would have had")
        #expect(try store.head().seq == 2)
        #expect(try store.seq(of: c.id) == nil)
        #expect(try store.verify().isValid)
    }

    @Test("expectedHead: the batch is refused with .headMoved unless the head is the expected one")
    func expectedHead() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try OnboardingStore.open(at: directory.store)
        defer { store.close() }
        #expect(try await store.append(Events.make(0), expectedHead: 0).seq == 1)

        let stale = Events.make(1)
        let error = await #expect(throws: StoreError.self) { try await store.append(stale, expectedHead: 0) }
        #expect(error?.code == .headMoved)
        #expect(error?.seq == 1, "the actual head")
        #expect(error?.message.contains("seq 1") == true)
        let ahead = await #expect(throws: StoreError.self) { try await store.append([stale, Events.make(2)], expectedHead: 7) }
        #expect(ahead?.code == .headMoved)
        #expect(try store.seq(of: stale.id) == nil)

        #expect(try await store.append(stale, expectedHead: 1).seq == 2)
        #expect(try store.appendBlocking([Events.make(3)], expectedHead: 2).map(\.seq) == [3])
        #expect(throws: StoreError.self) { try store.appendBlocking([Events.make(4)], expectedHead: 2) }
        #expect(try store.head().seq == 3)
    }

    @Test("claimedSeqs: matching claims are accepted, a wrong claim is .seqMismatch and writes nothing")
    func claimedSeqs() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try OnboardingStore.open(at: directory.store)
        defer { store.close() }
        let events = Events.many(5)
        #expect(try await store.append([events[0], events[1]], claimedSeqs: [1, 2]).map(\.seq) == [1, 2])

        let error = await #expect(throws: StoreError.self) {
            try await store.append([events[2], events[3]], claimedSeqs: [3, 5])
        }
        #expect(error?.code == .seqMismatch)
        #expect(error?.batchIndex == 1)
        #expect(error?.seq == 4, "the seq the store would assign")
        #expect(try store.head().seq == 2)
        #expect(try store.seq(of: events[2].id) == nil)

        // nil claims let the store assign; a duplicate must claim its stored seq.
        #expect(try await store.append([events[2], events[3]], claimedSeqs: [nil, 4]).map(\.seq) == [3, 4])
        #expect(try await store.append([events[0]], claimedSeqs: [1]) == [AppendResult(seq: 1, isDuplicate: true)])
        let duplicate = await #expect(throws: StoreError.self) { try await store.append([events[1]], claimedSeqs: [7]) }
        #expect(duplicate?.code == .seqMismatch)
        #expect(duplicate?.seq == 2)
        #expect(try store.appendBlocking([events[4]], claimedSeqs: [5]).map(\.seq) == [5])
        #expect(try store.verify().isValid)
    }

    @Test("an invalid event is .invalidEvent with its batch index, and nothing of the batch is written")
    func invalidEvent() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try OnboardingStore.open(at: directory.store)
        defer { store.close() }
        let good = Events.make(0)
        let cases: [(Event, String)] = [
            (Events.make(1, device: "kiosk 7"), "device"),
            (Events.make(1, user: "al\u{7}ice"), "user"),
            (Events.make(1, user: ""), "user"),
            (
                Events.make(
                    1,
                    payload: .userAdded(
                        displayName: String(repeating: "x", count: Limits.maximumTextBytes + 1),
                        subtitle: nil, imageRef: nil, passcodePolicy: .numeric,
                        passcodeMinLength: 6)), "display_name"
            )
        ]
        for (bad, field) in cases {
            let error = await #expect(throws: StoreError.self) { try await store.append([good, bad, Events.make(2)]) }
            #expect(error?.code == .invalidEvent)
            #expect(error?.batchIndex == 1)
            #expect(error?.message.contains(field) == true, "message names \(field): \(error?.message ?? "")")
            let blocking = #expect(throws: StoreError.self) { try store.appendBlocking([bad]) }
            #expect(blocking?.batchIndex == 0)
        }
        #expect(try store.head().seq == 0)
        #expect(try store.seq(of: good.id) == nil)
        #expect(store.commitCount == 0, "invalid batches never reach a transaction")
    }
}
