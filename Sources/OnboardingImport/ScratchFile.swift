import Foundation
#if canImport(Glibc)
    import Glibc
#endif

/// A temporary file that only this process can reach and that vanishes with it, even on
/// `kill -9`: made with `mkstemp` in the temporary directory (`$TMPDIR`) and unlinked at once.
/// Holds what an import must read again but cannot keep in memory (stdin's bytes; the ids of a
/// large file).
///
/// ```swift
/// let spool = try ScratchFile(purpose: "a copy of stdin")
/// try spool.append(bytes)
/// let count = try spool.read(at: 0, into: buffer)
/// ```
final class ScratchFile {
    let descriptor: Int32
    let purpose: String
    private(set) var size: Int64 = 0

    init(purpose: String) throws(ImportError) {
        self.purpose = purpose
        var template = Array((NSTemporaryDirectory() as NSString).appendingPathComponent("onboard-import-XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else {
            throw ImportError(
                .inputOutput,
                "cannot create a temporary file for \(purpose) in \(NSTemporaryDirectory()): \(String(cString: strerror(errno))); set TMPDIR to a writable directory"
            )
        }
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// Appends `bytes` at the end of the file.
    func append(_ bytes: UnsafeRawBufferPointer) throws(ImportError) {
        var done = 0
        while done < bytes.count {
            let written = pwrite(descriptor, bytes.baseAddress! + done, bytes.count - done, off_t(size) + off_t(done))
            if written < 0 {
                if errno == EINTR { continue }
                throw ImportError(
                    .inputOutput,
                    "cannot write the temporary file for \(purpose) in \(NSTemporaryDirectory()): \(String(cString: strerror(errno))); set TMPDIR to a directory with more room"
                )
            }
            done += written
        }
        size += Int64(bytes.count)
    }

    /// Reads up to `buffer.count` bytes at `offset`; fewer only at the end of the file.
    func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws(ImportError) -> Int {
        try ScratchFile.read(descriptor, at: offset, into: buffer, what: "the temporary file for \(purpose)")
    }

    /// `pread` until `buffer` is full or the file ends, retrying interruptions.
    static func read(
        _ descriptor: Int32, at offset: Int64, into buffer: UnsafeMutableRawBufferPointer,
        what: String
    ) throws(ImportError) -> Int {
        var done = 0
        while done < buffer.count {
            let count = pread(descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            if count < 0 {
                if errno == EINTR { continue }
                throw ImportError(.inputOutput, "cannot read \(what): \(String(cString: strerror(errno)))")
            }
            if count == 0 { break }
            done += count
        }
        return done
    }
}
