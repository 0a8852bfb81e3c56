#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Buffered writing to stdout and stderr; export streams millions of lines through it.
struct Output {
    /// Flush when the buffer passes this: large enough to amortise write(2), small enough to
    /// keep memory flat during a long export.
    static let flushThresholdBytes = 256 * 1024
    private var buffer: [UInt8] = []
    let descriptor: Int32

    static func standardOutput() -> Output { Output(descriptor: STDOUT_FILENO) }

    init(descriptor: Int32) {
        self.descriptor = descriptor
        buffer.reserveCapacity(Output.flushThresholdBytes + 4096)
    }

    mutating func write(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= Output.flushThresholdBytes { flush() }
    }

    mutating func write(bytes: [UInt8]) {
        buffer.append(contentsOf: bytes)
        if buffer.count >= Output.flushThresholdBytes { flush() }
    }

    mutating func line(_ text: String = "") {
        write(text)
        write("\n")
    }

    mutating func flush() {
        var offset = 0
        while offset < buffer.count {
            let written = buffer.withUnsafeBytes { bytes in
                posixWrite(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                break
            }
            offset += written
        }
        buffer.removeAll(keepingCapacity: true)
    }

    /// One line on stderr, unbuffered.
    static func error(_ text: String) {
        var output = Output(descriptor: STDERR_FILENO)
        output.line(text)
        output.flush()
    }

    static var standardErrorIsTerminal: Bool { isatty(STDERR_FILENO) == 1 }
    static var standardOutputIsTerminal: Bool { isatty(STDOUT_FILENO) == 1 }
}

private func posixWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
        return Glibc.write(descriptor, bytes, count)
    #else
        return Darwin.write(descriptor, bytes, count)
    #endif
}
