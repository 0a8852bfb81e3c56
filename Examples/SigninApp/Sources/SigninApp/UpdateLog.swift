import OnboardingStore

/// Follows a `SyncAgent`'s updates, as a SwiftUI view model would, and lets the app wait for a run.
actor UpdateLog {
    private(set) var finishedRuns = 0
    private(set) var failures: [SyncError] = []
    private var waiters: [(runs: Int, continuation: CheckedContinuation<Void, Never>)] = []

    init(_ updates: AsyncStream<SyncAgent.Update>) {
        Task { [weak self] in
            for await update in updates { await self?.note(update) }
        }
    }

    private func note(_ update: SyncAgent.Update) {
        switch update {
        case .progress(let progress): print("  sync: sent through seq \(progress.acknowledgedSeq) of \(progress.headSeq)")
        case .finished(let summary):
            finishedRuns += 1
            print("  sync: run \(finishedRuns) done, \(summary.appended) new events")
        case .failed(let error):
            failures.append(error)
            print("  sync failed: \(error.message)")
        case .signedIn: print("  sync: signed in, syncing")
        case .signedOut: print("  sync: signed out, stopped")
        case .started: break
        }
        let (ready, waiting) = (waiters.filter { finishedRuns >= $0.runs }, waiters.filter { finishedRuns < $0.runs })
        waiters = waiting
        for waiter in ready { waiter.continuation.resume() }
    }

    /// Returns once `runs` runs have finished in all, or after `timeout`, saying which.
    func waitForRuns(_ runs: Int, timeout: Duration) async -> Bool {
        if finishedRuns >= runs { return true }
        let deadline = Task { [weak self] in
            try? await Task.sleep(for: timeout)
            await self?.giveUp()
        }
        await withCheckedContinuation { waiters.append((runs, $0)) }
        deadline.cancel()
        return finishedRuns >= runs
    }

    private func giveUp() {
        let waiting = waiters
        waiters = []
        for waiter in waiting { waiter.continuation.resume() }
    }
}
