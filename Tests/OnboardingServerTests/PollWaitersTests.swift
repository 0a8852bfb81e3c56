import Dispatch
import Foundation
import OnboardingStore
import Synchronization
import Testing
import TestSupport
@testable import OnboardingServer

/// The poll thread's bookkeeping, without HTTP or storage: which uploads make which polls look
/// again.
@Suite struct PollWaitersTests {
    /// A poll whose look answers 200 once `ready` holds, counting its looks.
    final class Probe: Sendable {
        let ready = Atomic<Bool>(false)
        let looks = Atomic<Int>(0)
        let answered = DispatchSemaphore(value: 0)
        let answer = Mutex<SyncResponse?>(nil)

        func poll(deadline: Duration, seenGeneration: UInt64) -> HistoryPoll {
            HistoryPoll(
                deadline: .now + deadline, seenGeneration: seenGeneration,
                check: { [self] in
                    looks.add(1, ordering: .relaxed)
                    return ready.load(ordering: .acquiring) ? SyncResponse(status: 200, body: Array("new".utf8)) : nil
                }, timeout: { SyncResponse(status: 200, body: Array("empty".utf8)) })
        }

        func record(_ response: SyncResponse) {
            answer.withLock { $0 = response }
            answered.signal()
        }
    }

    /// Waits (up to five minutes, however loaded the machine) until `condition` holds, on a
    /// thread of its own: the suite's other tests may hold the cooperative pool's threads.
    static func eventually(_ condition: @escaping @Sendable () -> Bool) async throws {
        try await onOwnThread {
            let deadline = ContinuousClock.now + .seconds(300)
            while !condition() && ContinuousClock.now < deadline { usleep(5_000) }
        }
    }

    /// A poll whose first read missed an upload, added after the poll thread already handled that
    /// upload's notice for the polls waiting then, still looks again at once: it is answered by
    /// the upload, not at its deadline. (The deadlines are ten minutes, so a loaded machine can
    /// never reach them: an answer at all is the upload's.)
    @Test func aPollAddedAfterTheNoticeOfAnUploadItsReadMissedStillSeesIt() async throws {
        let waiters = PollWaiters(maximumWaiting: 4, changesAreLocal: true)
        defer { waiters.stop(answering: SyncResponse(status: 503)) }
        let early = Probe()
        #expect(waiters.add(early.poll(deadline: .seconds(600), seenGeneration: waiters.generation)) { early.record($0) })

        let late = Probe()
        let seen = waiters.generation // the late poll's first read starts: nothing new
        late.ready.store(true, ordering: .releasing)
        waiters.notice() // the upload commits and is noticed
        try await Self.eventually { early.looks.load(ordering: .relaxed) >= 1 }
        #expect(early.looks.load(ordering: .relaxed) >= 1, "the waiting poll looked again after the upload")

        #expect(waiters.add(late.poll(deadline: .seconds(600), seenGeneration: seen)) { late.record($0) })
        let answered = try await onOwnThread { late.answered.wait(timeout: .now() + .seconds(300)) }
        #expect(answered == .success, "answered by the upload, not left to its deadline")
        #expect(late.answer.withLock { $0?.body } == Array("new".utf8))
        #expect(waiters.count == 1, "the early poll still waits")
    }

    /// A poll added with the generation it read at sees nothing new: on local storage it looks
    /// again only at its deadline, and answers what is there then.
    @Test func aPollWithNothingNewLooksAgainOnlyAtItsDeadline() async throws {
        let waiters = PollWaiters(maximumWaiting: 4, changesAreLocal: true)
        defer { waiters.stop(answering: SyncResponse(status: 503)) }
        let probe = Probe()
        let added = ContinuousClock.now
        #expect(waiters.add(probe.poll(deadline: .milliseconds(800), seenGeneration: waiters.generation)) { probe.record($0) })
        let answered = try await onOwnThread { probe.answered.wait(timeout: .now() + .seconds(300)) }
        #expect(answered == .success)
        #expect(ContinuousClock.now - added >= .milliseconds(800))
        #expect(probe.answer.withLock { $0?.body } == Array("empty".utf8))
        #expect(probe.looks.load(ordering: .relaxed) == 1, "one look, at the deadline")
    }

    /// Stopping answers every waiting poll and refuses new ones.
    @Test func stopAnswersTheWaitingAndRefusesMore() async throws {
        let waiters = PollWaiters(maximumWaiting: 2, changesAreLocal: true)
        let probes = [Probe(), Probe()]
        for probe in probes { #expect(waiters.add(probe.poll(deadline: .seconds(60), seenGeneration: waiters.generation)) { probe.record($0) }) }
        let third = Probe()
        #expect(!waiters.add(third.poll(deadline: .seconds(60), seenGeneration: 0)) { third.record($0) }, "at most two wait")
        waiters.stop(answering: SyncResponse(status: 503))
        for probe in probes { #expect(probe.answer.withLock { $0?.status } == 503) }
        #expect(!waiters.add(third.poll(deadline: .seconds(60), seenGeneration: 0)) { third.record($0) })
        #expect(waiters.count == 0)
    }
}
