import Foundation
import Testing
import OnboardingModel
import OnboardingProjections
@testable import OnboardingStore

/// `appendedRecords()` and `deviceStateUpdates()`: what an app watches from SwiftUI or an actor.
@Suite struct UpdatesTests {
    static func openStore(_ directory: TemporaryDirectory) throws -> OnboardingStore {
        try OnboardingStore.open(at: directory.store, options: storeOptions { $0.deviceID = "kiosk-7" })
    }

    @Test func appendedRecordsDeliversEveryCommitInOrderAndEndsOnClose() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Self.openStore(directory)
        _ = try await store.append(Events.make(0)) // before the subscription: not delivered
        let updates = store.appendedRecords()
        _ = try await store.append([Events.make(1), Events.make(2)])
        _ = try await store.append(Events.make(3))
        _ = try await store.record(.captchaPassed, at: Events.start.adding(milliseconds: 4_000))
        store.close()
        var seqs: [[UInt64]] = []
        for try await batch in updates { seqs.append(batch.map(\.seq)) }
        #expect(seqs == [[2, 3], [4], [5]])
        #expect(store.observers.withLock { $0.isEmpty } && store.closeObservers.withLock { $0.isEmpty })
    }

    @Test func aConsumerTooFarBehindGetsWhatWasBufferedThenWhereToResume() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Self.openStore(directory)
        defer { store.close() }
        let updates = store.appendedRecords(bufferingBatches: 2)
        for index in 0..<5 { _ = try await store.append(Events.make(index)) } // nobody reads meanwhile
        var received: [UInt64] = []
        do {
            for try await batch in updates { received += batch.map(\.seq) }
            Issue.record("the sequence should have thrown")
        } catch let overflow as UpdatesOverflow {
            #expect(overflow.resumeSeq == 3 && overflow.bufferedBatches == 2)
            #expect(overflow.description.contains("read from seq 3"))
        }
        #expect(received == [1, 2], "nothing silently skipped: the buffered commits, then the error")
        #expect(store.observers.withLock { $0.isEmpty }, "the registration went with the sequence")
        // Appends go on, unaffected.
        #expect(try await store.append(Events.make(9)).seq == 6)
    }

    @Test func deviceStateUpdatesStartsWithNowAndFollowsTheForm() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Self.openStore(directory)
        let flow = UUID()
        var updates = store.deviceStateUpdates().makeAsyncIterator()
        let first = await updates.next()
        #expect(first?.flow.screen == .signIn && first?.flow.state == .empty)
        _ = try await store.record(.userSelected, user: "ann", flow: flow, at: Events.start)
        #expect(await updates.next()?.flow.user == "ann")
        _ = try await store.record(
            .fieldEdited(field: .passcode, filled: true, valid: true), user: "ann", flow: flow,
            at: Events.start.adding(milliseconds: 1_000))
        let filled = await updates.next()
        #expect(filled?.flow.state == .partiallyFilled && filled?.flow.submitEnabled == true)
        // Another device's events are not this session's: nothing new until ours changes.
        _ = try await store.append(Events.make(5, device: "phone-1"))
        _ = try await store.record(
            .signInStarted(method: .passcode), user: "ann", flow: flow,
            at: Events.start.adding(milliseconds: 2_000))
        #expect(await updates.next()?.flow.state == .loading)
        store.close()
        #expect(await updates.next() == nil, "the sequence ends when the store closes")
    }

    @Test func aSlowSessionConsumerGetsTheNewestStateNeverAStaleOne() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Self.openStore(directory)
        defer { store.close() }
        let flow = UUID()
        let updates = store.deviceStateUpdates()
        for index in 0..<20 {
            let field: FormField = index % 2 == 0 ? .passcode : .password
            _ = try await store.record(
                .fieldEdited(field: field, filled: true, valid: index % 3 != 0), user: "ann", flow: flow,
                at: Events.start.adding(milliseconds: Int64(index) * 1_000))
        }
        _ = try await store.record(
            .signInStarted(method: .passcode), user: "ann", flow: flow,
            at: Events.start.adding(milliseconds: 30_000))
        let expected = try store.deviceState()
        // Read until the newest state arrives: what comes before it is in commit order, at most
        // one buffered, and nothing after it.
        var seen: [DeviceState] = []
        for await session in updates {
            seen.append(session)
            if session == expected { break }
        }
        #expect(seen.last == expected)
        #expect(seen.count <= 3, "a slow consumer is handed the newest state, not every one: \(seen.count)")
    }

    @Test func subscribingToAClosedStoreEndsAtOnce() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Self.openStore(directory)
        store.close()
        var records = store.appendedRecords().makeAsyncIterator()
        #expect(try await records.next() == nil)
        var sessions = store.deviceStateUpdates().makeAsyncIterator()
        #expect(await sessions.next() == nil)
    }
}
