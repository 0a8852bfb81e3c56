import CSpawn
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A child process for tests, with the part of Foundation's `Process` API the tests use, started
/// with `posix_spawn` (see `onboard_spawn.h` for why not `Process`).
///
/// ```swift
/// let child = ChildProcess()
/// child.executableURL = URL(fileURLWithPath: "/bin/echo")
/// child.arguments = ["hello"]
/// try child.run()
/// child.waitUntilExit()
/// child.terminationStatus   // 0
/// ```
public final class ChildProcess: @unchecked Sendable {
    public enum TerminationReason: Sendable { case exit, uncaughtSignal }

    // Set before `run()` on one thread, as with Process.
    public var executableURL: URL?
    public var arguments: [String]?
    public var environment: [String: String]?
    public var currentDirectoryURL: URL?
    /// A `FileHandle`, a `Pipe` (the child gets its reading end), or nil (`/dev/null`).
    public var standardInput: Any?
    /// A `FileHandle`, a `Pipe` (the child gets its writing end), or nil (this process's).
    public var standardOutput: Any?
    public var standardError: Any?

    private struct State {
        var pid: pid_t = 0
        var status: Int32?
    }
    private let state = Mutex(State())

    public init() {}

    public var processIdentifier: Int32 { state.withLock { $0.pid } }

    public func run() throws {
        guard let executable = executableURL?.path else { throw ChildProcessError("no executableURL") }
        let nullDevice = open("/dev/null", O_RDWR | O_CLOEXEC)
        defer { if nullDevice >= 0 { close(nullDevice) } }
        func descriptor(_ stream: Any?, reading: Bool, inherited: Int32) -> Int32 {
            switch stream {
            case let pipe as Pipe: (reading ? pipe.fileHandleForReading : pipe.fileHandleForWriting).fileDescriptor
            // FileHandle.nullDevice has no descriptor of its own (-1): the child gets /dev/null.
            case let handle as FileHandle: handle.fileDescriptor >= 0 ? handle.fileDescriptor : nullDevice
            default: reading ? nullDevice : inherited
            }
        }
        let input = descriptor(standardInput, reading: true, inherited: 0)
        let output = descriptor(standardOutput, reading: false, inherited: 1)
        let error = descriptor(standardError, reading: false, inherited: 2)
        let argv = [executable] + (arguments ?? [])
        let envp = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
        var pid: pid_t = 0
        let rc = withCStrings(argv) { argvPointers in
            withCStrings(envp) { envpPointers in
                if let directory = currentDirectoryURL?.path {
                    return onboard_spawn(&pid, executable, argvPointers, envpPointers, input, output, error, directory)
                }
                return onboard_spawn(&pid, executable, argvPointers, envpPointers, input, output, error, nil)
            }
        }
        guard rc == 0 else { throw ChildProcessError("cannot start \(executable): \(String(cString: strerror(rc)))") }
        state.withLock { $0.pid = pid }
        // The child holds its ends of the pipes now; the parent's copies would keep them open.
        if let pipe = standardInput as? Pipe { try? pipe.fileHandleForReading.close() }
        if let pipe = standardOutput as? Pipe { try? pipe.fileHandleForWriting.close() }
        if let pipe = standardError as? Pipe, standardError as AnyObject !== standardOutput as AnyObject {
            try? pipe.fileHandleForWriting.close()
        }
    }

    /// Whether the child has not exited yet (reaps it when it has).
    public var isRunning: Bool {
        state.withLock { state in
            guard state.pid > 0, state.status == nil else { return false }
            var status: Int32 = 0
            let reaped = waitpid(state.pid, &status, WNOHANG)
            if reaped == state.pid { state.status = status }
            return reaped == 0
        }
    }

    public func waitUntilExit() {
        let pid = state.withLock { $0.status == nil ? $0.pid : 0 }
        guard pid > 0 else { return }
        var status: Int32 = 0
        var reaped: pid_t
        repeat { reaped = waitpid(pid, &status, 0) } while reaped < 0 && errno == EINTR
        state.withLock { state in
            if state.status == nil && reaped == pid { state.status = status }
        }
    }

    /// Sends SIGTERM.
    public func terminate() {
        let pid = processIdentifier
        if pid > 0 { kill(pid, SIGTERM) }
    }

    /// The exit code, or the signal that ended the child.
    public var terminationStatus: Int32 {
        guard let status = state.withLock({ $0.status }) else { return 0 }
        return exited(status) ? (status >> 8) & 0xFF : status & 0x7F
    }

    public var terminationReason: TerminationReason {
        guard let status = state.withLock({ $0.status }) else { return .exit }
        return exited(status) ? .exit : .uncaughtSignal
    }

    private func exited(_ status: Int32) -> Bool { status & 0x7F == 0 }
}

public struct ChildProcessError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// Calls `body` with a NULL-terminated array of C strings.
private func withCStrings<R>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> R) -> R {
    let pointers = strings.map { strdup($0) } + [nil]
    defer { for pointer in pointers { free(pointer) } }
    return body(pointers)
}
