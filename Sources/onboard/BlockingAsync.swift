import Dispatch
import Synchronization

/// Runs async work from the synchronous command line and waits for it. The command-line thread
/// blocks on a semaphore; the work runs on Swift's cooperative pool.
func runBlocking<T: Sendable, E: Error>(_ work: @escaping @Sendable () async throws(E) -> T) -> Result<T, E> {
    let box = Mutex<Result<T, E>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        let result: Result<T, E>
        do throws(E) { result = .success(try await work()) } catch { result = .failure(error) }
        box.withLock { $0 = result }
        done.signal()
    }
    done.wait()
    return box.withLock { $0 }!
}
