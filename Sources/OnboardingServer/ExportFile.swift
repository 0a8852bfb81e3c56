import Foundation
import HTTPServer

#if canImport(Glibc)
    import Glibc
#endif

/// Where an export is written before it is sent: a temporary file that is unlinked as soon as it
/// is made (nothing is left behind, whatever happens to the process), filled through a small
/// buffer, then handed to the HTTP layer as the answer's body (``HTTPBodyFile``). The server
/// holds no more than the buffer of an export of any size.
///
/// ```swift
/// let file = try ExportFile(directory: "/var/tmp")
/// try file.write(Array("at,device\r\n".utf8))
/// let body = try file.finish()   // HTTPBodyFile, byteCount == 11
/// ```
final class ExportFile {
    /// 64 KiB between writes: a few hundred lines per system call.
    static let bufferBytes = 64 << 10

    private let descriptor: Int32
    private var buffer: [UInt8] = []
    private var written = 0
    private var handedOver = false

    init(directory: String) throws(ExportFileError) {
        var template = Array(((directory as NSString).appendingPathComponent("onboard-export-XXXXXX")).utf8CString)
        let descriptor = mkstemp(&template)
        guard descriptor >= 0 else { throw ExportFileError(errno: errno) }
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        self.descriptor = descriptor
        buffer.reserveCapacity(Self.bufferBytes)
    }

    deinit {
        if !handedOver { close(descriptor) }
    }

    func write(_ bytes: [UInt8]) throws(ExportFileError) {
        buffer.append(contentsOf: bytes)
        if buffer.count >= Self.bufferBytes { try flush() }
    }

    func write(_ text: String) throws(ExportFileError) { try write(Array(text.utf8)) }

    private func flush() throws(ExportFileError) {
        var offset = 0
        while offset < buffer.count {
            let count = buffer.withUnsafeBytes { writeBytes(descriptor, $0.baseAddress! + offset, buffer.count - offset) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw ExportFileError(errno: errno) }
            offset += count
        }
        written += buffer.count
        buffer.removeAll(keepingCapacity: true)
    }

    /// The whole file as an answer's body; the file is the body's from now on.
    func finish() throws(ExportFileError) -> HTTPBodyFile {
        try flush()
        handedOver = true
        return HTTPBodyFile(descriptor: descriptor, byteCount: written)
    }
}

// A free function: inside ``ExportFile`` the name `write` means its own.
private func writeBytes(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int { write(descriptor, bytes, count) }

/// An export could not be written to its temporary file (the scratch directory is full, gone or
/// not writable): a resource of the server's, answered 503; the detail goes to its log only.
struct ExportFileError: Error, CustomStringConvertible {
    let errno: Int32
    var description: String { "the export's temporary file cannot be written: \(String(cString: strerror(errno)))" }
}
