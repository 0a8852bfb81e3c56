import Foundation

/// Runs blocking work (child processes) on a thread of its own: on 2 cores, a test that blocks
/// a thread of Swift's cooperative pool can starve the tests running beside it.
enum OwnThread {
    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result(catching: body)) }.start()
        }
    }
}
