import Foundation
import Synchronization
import Testing
import TestSupport
import OnboardingModel
import OnboardingProjections
@testable import OnboardingStore

/// `store.history(_:)`: reads through the index only what the query needs, and pages that
/// concatenate to the whole history even while events are appended.
@Suite("History queries on a store", .slow)
struct HistoryQueryStoreTests {
    /// The n-th event of alice's repeating cycle: failed, succeeded, signed out (user).
    static func aliceEvent(_ index: Int, device: String = Events.device) -> Event {
        let payload: Payload =
            switch index % 3 {
            case 0: .signInFailed(method: .password, reason: .invalidPassword)
            case 1: .signInSucceeded(method: .password, secondFactor: false)
            default: .signedOut(reason: .user)
            }
        return Events.make(index, user: "alice", payload: payload, device: device)
    }

    @Test("history of one user among 10^6 events reads only that user's records")
    func oneUserAmongAMillion() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try OnboardingStore.open(
            at: directory.store,
            options: storeOptions {
                $0.durability = .relaxed
                $0.maintainProjections = false
            })
        defer { store.close() }
        let total = 1_000_000
        let batch = 10_000
        let aliceEvery = 2000 // alice: 500 of the 10^6 events, spread over the whole log
        let users = (0..<997).map { "user-\($0)" }
        let failure = Payload.signInFailed(method: .passcode, reason: .invalidPasscode)
        let started = ContinuousClock.now
        var aliceCount = 0
        // Batch k is appended on another thread while batch k + 1 is made: the two halves of the
        // build overlap on two cores. At most two batches wait, so memory stays bounded.
        let appender = DispatchQueue(label: "HistoryQueryStoreTests.append")
        let appended = DispatchGroup()
        let room = DispatchSemaphore(value: 2)
        let appendFailure = Mutex<StoreError?>(nil)
        for first in stride(from: 0, to: total, by: batch) {
            let events = (first..<first + batch).map { index in
                if index % aliceEvery == 0 {
                    aliceCount += 1
                    return Self.aliceEvent(aliceCount - 1)
                }
                return Events.make(index, user: users[index % users.count], payload: failure)
            }
            room.wait()
            appender.async(group: appended) {
                defer { room.signal() }
                do throws(StoreError) { _ = try store.appendBlocking(events) } catch { appendFailure.withLock { $0 = error } }
            }
        }
        appended.wait()
        if let error = appendFailure.withLock({ $0 }) { throw error }
        let built = ContinuousClock.now - started
        #expect(try store.head().seq == UInt64(total))
        #expect(aliceCount == total / aliceEvery)

        let before = store.recordsDecoded
        let queryStarted = ContinuousClock.now
        let history = try store.history(HistoryQuery(user: "alice"))
        let queried = ContinuousClock.now - queryStarted
        #expect(store.recordsDecoded - before == UInt64(aliceCount), "the query read records of other users")
        #expect(history.attempts.count == 334) // failed and succeeded of 500 cycle steps: 167 + 167
        #expect(history.sessions.count == 167)
        #expect(history.sessions.dropLast().allSatisfy { $0.endReason == "user" })
        #expect(history.sessions.last?.end == nil) // the 500th event is a sign-in
        print("10^6 events built in \(built), alice's history of \(aliceCount) records read in \(queried)")

        // A page reads its attempts and the few records that settle it, not the user's whole history.
        let pageBefore = store.recordsDecoded
        let page = try store.history(HistoryQuery(user: "alice", outcomes: [.failed], limit: 10))
        #expect(page.attempts.count == 10)
        #expect(page.nextCursor != nil)
        #expect(store.recordsDecoded - pageBefore <= 34, "10 failed attempts lie in alice's first 31 records, plus one more")
    }

    @Test("pages concatenate to the whole history even with appends between them")
    func pagingUnderAppends() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try OnboardingStore.open(at: directory.store, options: storeOptions { $0.maintainProjections = false })
        defer { store.close() }
        var index = 0
        func appendMixed(_ count: Int) throws {
            var events: [Event] = []
            for _ in 0..<count {
                events.append(Self.aliceEvent(index, device: index % 4 == 0 ? "phone-1" : Events.device))
                events.append(Events.make(index, user: "bob", payload: .signInFailed(method: .password, reason: .invalidPassword)))
                index += 1
            }
            _ = try store.appendBlocking(events)
        }
        try appendMixed(40)

        for limit in [1, 3, 7, 100] {
            var query = HistoryQuery(user: "alice", limit: limit)
            var attempts: [History.Attempt] = []
            var sessions: [History.SignInSession] = []
            var pageCount = 0
            while true {
                let page = try store.history(query)
                attempts += page.attempts
                sessions += page.sessions
                pageCount += 1
                // New events arrive while an auditor reads page after page.
                if pageCount == 2 { try appendMixed(5) }
                guard let next = page.nextCursor else { break }
                query.after = next
            }
            let whole = try store.history(HistoryQuery(user: "alice"))
            #expect(attempts == whole.attempts, "limit \(limit)")
            #expect(sessions == whole.sessions, "limit \(limit)")
            #expect(Set(attempts.map(\.seq)).count == attempts.count, "limit \(limit): an attempt came twice")
        }
    }

    @Test("a device's history without a user reads the log only as far as the page needs")
    func deviceHistoryIsBounded() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try OnboardingStore.open(at: directory.store, options: storeOptions { $0.maintainProjections = false })
        defer { store.close() }
        _ = try store.appendBlocking(
            (0..<1000).map {
                Events.make(
                    $0, user: "user-\($0 % 10)",
                    payload: .signInFailed(method: .password, reason: .invalidPassword))
            })
        let before = store.recordsDecoded
        let page = try store.history(HistoryQuery(device: Events.device, limit: 5))
        #expect(page.attempts.map(\.seq) == [1, 2, 3, 4, 5])
        #expect(page.attempts.map(\.user) == ["user-0", "user-1", "user-2", "user-3", "user-4"])
        #expect(store.recordsDecoded - before == 6)
        let next = try store.history(HistoryQuery(device: Events.device, limit: 5, after: page.nextCursor))
        #expect(next.attempts.map(\.seq) == [6, 7, 8, 9, 10])

        #expect(throws: StoreError.self) {
            try store.history(HistoryQuery(user: "a", since: Events.start, until: Events.start.adding(milliseconds: -1)))
        }
    }
}
