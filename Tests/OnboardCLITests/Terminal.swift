import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Runs the real `onboard` with its stderr on a pseudo-terminal, for what it shows only to a
/// person watching (progress lines).
enum Terminal {
    struct Result {
        let status: Int32
        /// Everything written to the terminal (the line discipline turns `\n` into `\r\n`).
        let output: String
    }

    static func run(_ arguments: [String]) throws -> Result {
        // /dev/ptmx by hand: the Glibc module does not export posix_openpt, grantpt, unlockpt or
        // ptsname (they need _XOPEN_SOURCE); the ioctls are Linux's own (asm-generic/ioctls.h).
        let master = open("/dev/ptmx", O_RDWR | O_NOCTTY)
        guard master >= 0 else { throw TestFailure("cannot open /dev/ptmx: \(String(cString: strerror(errno)))") }
        defer { close(master) }
        var unlock: CInt = 0
        var number: CInt = 0
        let setLock: UInt = 0x4004_5431 // TIOCSPTLCK
        let getNumber: UInt = 0x8004_5430 // TIOCGPTN
        guard ioctl(master, setLock, &unlock) == 0, ioctl(master, getNumber, &number) == 0 else {
            throw TestFailure("cannot unlock the pseudo-terminal: \(String(cString: strerror(errno)))")
        }
        let name = "/dev/pts/\(number)"
        let terminal = open(name, O_RDWR | O_NOCTTY)
        guard terminal >= 0 else { throw TestFailure("cannot open \(name): \(String(cString: strerror(errno)))") }

        // Read on a thread of its own: a terminal whose buffer fills blocks its writer.
        let received = Mutex<[UInt8]>([])
        let finished = DispatchSemaphore(value: 0)
        let reader = Thread {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(master, $0.baseAddress!, $0.count) }
                if count < 0 && errno == EINTR { continue }
                // EIO once the last writer has closed the terminal.
                guard count > 0 else { break }
                received.withLock { $0 += buffer[..<count] }
            }
            finished.signal()
        }
        reader.start()

        let process = ChildProcess()
        process.executableURL = CLI.binary
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["ONBOARD_STORE"] = nil
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle(fileDescriptor: terminal, closeOnDealloc: false)
        do {
            try process.run()
        } catch {
            close(terminal)
            throw error
        }
        close(terminal)
        process.waitUntilExit()
        finished.wait()
        return Result(status: process.terminationStatus, output: String(decoding: received.withLock { $0 }, as: UTF8.self))
    }
}
