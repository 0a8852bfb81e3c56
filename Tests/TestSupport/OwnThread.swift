import Foundation

/// Runs blocking work (sockets, child processes, sleeps) on a thread created for it, and awaits
/// its result. Neither the Swift cooperative pool (as many threads as cores) nor Dispatch's
/// global queues (which on Linux add a thread only about once a second when theirs block) may
/// be blocked for long: timing-sensitive tests would measure the wait for a thread.
public func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try work() }) }.start()
    }
}

/// Starts `work` on a thread of its own and returns at once.
public func detachThread(_ work: @escaping @Sendable () -> Void) {
    Thread { work() }.start()
}
