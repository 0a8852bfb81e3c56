import Dispatch
import Synchronization

/// The threads that run ``HTTPHandler/handle(_:)``, fed by a bounded queue.
///
/// libmicrohttpd's polling threads must never block (each serves thousands of connections), so
/// a complete request is queued here and its connection suspended; a worker runs the handler,
/// stores the response and resumes the connection, and MHD sends the response. A full queue is
/// refused at once (the caller answers 503), never grown.
final class HandlerPool: Sendable {
    /// One complete request and the suspended connection waiting for its answer.
    struct Job: @unchecked Sendable {
        // The context is handed over whole: the polling thread stops touching it when it suspends
        // the connection and starts again only after the worker's MHD_resume_connection, whose
        // lock orders the two.
        let context: RequestContext
        let connection: OpaquePointer
        let request: HTTPRequest
    }

    enum Submission: Equatable {
        case queued
        case full
        case stopping
    }

    private struct State {
        /// Taken jobs are set to nil at once: a job holds its request's body, which must go with
        /// the handler's return, not whenever the array is next compacted.
        var jobs: [Job?] = []
        /// Index of the oldest job in `jobs`; the array is compacted as the front empties.
        var head = 0
        var stopping = false
        /// Set by `stop(refusingQueued: true)`: queued jobs get `refusal` instead of the handler.
        var refusing = false
        var threads: [ServerThread] = []

        var queued: Int { jobs.count - head }

        mutating func pop() -> Job? {
            guard head < jobs.count else { return nil }
            let job = jobs[head]
            jobs[head] = nil
            head += 1
            // Compact once the consumed front is at least half the storage (amortised O(1)).
            if head >= 64, head * 2 >= jobs.count {
                jobs.removeFirst(head)
                head = 0
            }
            return job
        }
    }

    private let state = Mutex(State())
    private let work = DispatchSemaphore(value: 0)
    private let threadCount: Int
    private let capacity: Int

    init(threadCount: Int, capacity: Int) {
        self.threadCount = threadCount
        self.capacity = capacity
    }

    /// Starts the workers; `run` gets each job and whether the pool is refusing.
    func start(_ run: @escaping @Sendable (Job, _ refusing: Bool) -> Void) throws(ServerThread.StartError) {
        for index in 0..<threadCount {
            switch ServerThread.start(name: "onboard-work\(index)", { self.workLoop(run) }) {
            case .success(let thread): state.withLock { $0.threads.append(thread) }
            case .failure(let error):
                stop(refusingQueued: true)
                throw error
            }
        }
    }

    /// Queues `job`, calling `beforeEnqueue` first under the queue's lock, so whatever it does
    /// (suspending the connection) happens before any worker can see the job. Returns without
    /// calling it when the queue is full or the pool is stopping.
    func submit(_ job: Job, beforeEnqueue: () -> Void) -> Submission {
        let outcome: Submission = state.withLock { state in
            if state.stopping { return .stopping }
            if state.queued >= capacity { return .full }
            beforeEnqueue()
            state.jobs.append(job)
            return .queued
        }
        if outcome == .queued { work.signal() }
        return outcome
    }

    var queuedCount: Int { state.withLock { $0.queued } }

    /// Lets the workers finish what is queued (or, `refusingQueued`, answer it with the refusal
    /// without running the handler), then joins them. Blocks while a handler runs.
    func stop(refusingQueued: Bool) {
        let threads: [ServerThread] = state.withLock { state in
            state.stopping = true
            state.refusing = state.refusing || refusingQueued
            return state.threads
        }
        for _ in threads { work.signal() }
        for thread in threads { thread.join() }
        state.withLock { $0.threads = [] }
    }

    private func workLoop(_ run: @Sendable (Job, Bool) -> Void) {
        while true {
            work.wait()
            let next: (job: Job?, refusing: Bool, exit: Bool) = state.withLock { state in
                if let job = state.pop() { return (job, state.refusing, false) }
                return (nil, false, state.stopping)
            }
            if let job = next.job { run(job, next.refusing) } else if next.exit { return }
        }
    }
}
