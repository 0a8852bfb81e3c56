import CMicroHTTPD
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A POSIX thread of the server's own (the acceptor, the handler workers) that `stop()` can join.
///
/// Foundation's `Thread` cannot be joined and gives no error when the system is out of threads;
/// the server must know both (a failed start is an error, not a trap, and `stop()` returns only
/// when no server thread can call back into freed state).
final class ServerThread: @unchecked Sendable {
    // Written once by `start` before the thread is visible to anyone else, read by `join`.
    private var thread: pthread_t
    private var joined = false

    private init(thread: pthread_t) { self.thread = thread }

    /// Starts `body` on a new thread named `name` (15 bytes at most on Linux), or returns the
    /// `pthread_create` error number.
    static func start(name: String, _ body: @escaping @Sendable () -> Void) -> Result<ServerThread, StartError> {
        let box = Unmanaged.passRetained(Box(name: name, body: body)).toOpaque()
        #if canImport(Glibc)
            var thread = pthread_t()
            let rc = pthread_create(
                &thread, nil,
                { argument in
                    guard let argument else { return nil }
                    Unmanaged<Box>.fromOpaque(argument).takeRetainedValue().run()
                    return nil
                }, box)
            guard rc == 0 else {
                Unmanaged<Box>.fromOpaque(box).release()
                return .failure(StartError(code: rc))
            }
            return .success(ServerThread(thread: thread))
        #else
            var thread: pthread_t?
            let rc = pthread_create(
                &thread, nil,
                { argument in
                    Unmanaged<Box>.fromOpaque(argument).takeRetainedValue().run()
                    return nil
                }, box)
            guard rc == 0, let thread else {
                Unmanaged<Box>.fromOpaque(box).release()
                return .failure(StartError(code: rc))
            }
            return .success(ServerThread(thread: thread))
        #endif
    }

    /// Waits for the thread to finish. Call once, from another thread.
    func join() {
        guard !joined else { return }
        joined = true
        _ = pthread_join(thread, nil)
    }

    /// `pthread_create` failed (usually EAGAIN: the process or system is out of threads).
    struct StartError: Error {
        let code: Int32
        var message: String { String(cString: strerror(code)) }
    }

    private final class Box {
        let name: String
        let body: @Sendable () -> Void
        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }

        func run() {
            #if canImport(Glibc)
                onboard_name_thread(String(name.utf8.prefix(15)) ?? "onboard-http")
            #else
                _ = pthread_setname_np(name)
            #endif
            body()
        }
    }
}
