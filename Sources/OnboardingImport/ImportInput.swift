import Foundation
#if canImport(Glibc)
    import Glibc
#endif

/// The JSONL an import reads: a file, or standard input.
///
/// An import reads its input more than once (checked first, appended second), which a pipe
/// cannot do: a pipe, terminal or other stream is copied to a ``ScratchFile`` (an unlinked
/// temporary file, so disk rather than memory) as the first pass reads it, and read again from
/// there. A regular file — also one given as stdin with `<` — is read again in place; if it
/// changes between the passes the import stops rather than append what was not checked.
///
/// ```swift
/// let input = try ImportInput(path: "events.jsonl")   // or ImportInput.standardInput()
/// ```
public final class ImportInput {
    /// How messages name the input: its path, or `-` for stdin.
    public let name: String
    private let descriptor: Int32
    private let ownsDescriptor: Bool
    /// Where a regular file's bytes start (stdin may already have been read from).
    private let startOffset: Int64
    /// `nil` for a regular file.
    private var spool: ScratchFile?
    private let isRegularFile: Bool
    /// The size when the first pass began, for a regular file (progress and the change check).
    public let sizeBytes: Int64?
    private var checkedState: FileState?
    /// When a regular file was last written (`nil` for a stream): the latest an sshd log's last
    /// line can be, for the year of syslog's timestamps.
    public var modificationDate: Date? {
        if preparedFrom != nil { return originalModificationDate }
        guard isRegularFile, let state = Self.state(of: descriptor) else { return nil }
        return Date(timeIntervalSince1970: Double(state.modifiedSeconds) + Double(state.modifiedNanoseconds) / 1e9)
    }

    /// Identity and version of a regular file: if any differs, the file was replaced or written.
    private struct FileState: Equatable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modifiedSeconds: Int
        var modifiedNanoseconds: Int
    }

    /// Opens the file at `path`.
    public convenience init(path: String) throws(ImportError) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let reason =
                switch errno {
                case ENOENT, ENOTDIR: "no such file"
                case EACCES, EPERM: "permission denied"
                default: String(cString: strerror(errno))
                }
            throw ImportError(.inputUnavailable, "cannot read \(path): \(reason)")
        }
        try self.init(name: path, descriptor: descriptor, ownsDescriptor: true)
    }

    /// Standard input.
    public static func standardInput() throws(ImportError) -> ImportInput {
        try ImportInput(name: "-", descriptor: STDIN_FILENO, ownsDescriptor: false)
    }

    /// What a prepared input reads: the scratch file stays open while the input lives.
    private var preparedFrom: ScratchFile?
    /// The modification time of the input a prepared one was made from.
    private var originalModificationDate: Date?
    /// For a prepared input whose lines are in another order than `original`'s: by line − 1,
    /// the line (or array element) of `original` it holds.
    private var sourceLines: [Int32]?

    /// An input that reads `scratch` (written whole before this) under `original`'s name.
    /// - Parameter sourceLines: when `scratch` holds one line per line (or element) of
    ///   `original`, reordered: by line − 1, the number in `original` (``sourceLine(_:)``).
    convenience init(prepared scratch: ScratchFile, from original: ImportInput, sourceLines: [Int32]? = nil) throws(ImportError) {
        try self.init(name: original.name, descriptor: scratch.descriptor, ownsDescriptor: false)
        preparedFrom = scratch
        originalModificationDate = original.modificationDate
        self.sourceLines = sourceLines
    }

    /// The number in the file the user gave of line `number` of this input: the same, but for
    /// a prepared input that reordered the file's lines (Keycloak's, sorted oldest first).
    func sourceLine(_ number: Int) -> Int {
        guard let sourceLines, number >= 1, number <= sourceLines.count else { return number }
        return Int(sourceLines[number - 1])
    }

    private init(name: String, descriptor: Int32, ownsDescriptor: Bool) throws(ImportError) {
        self.name = name
        self.descriptor = descriptor
        self.ownsDescriptor = ownsDescriptor
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            let reason = String(cString: strerror(errno))
            if ownsDescriptor { close(descriptor) }
            throw ImportError(.inputUnavailable, "cannot read \(name): \(reason)")
        }
        let type = status.st_mode & S_IFMT
        if type == S_IFDIR {
            if ownsDescriptor { close(descriptor) }
            throw ImportError(.inputUnavailable, "cannot read \(name): it is a directory")
        }
        isRegularFile = type == S_IFREG
        if isRegularFile {
            let position = lseek(descriptor, 0, SEEK_CUR)
            startOffset = position > 0 ? Int64(position) : 0
            sizeBytes = max(0, Int64(status.st_size) - startOffset)
        } else {
            startOffset = 0
            sizeBytes = nil
        }
    }

    deinit {
        if ownsDescriptor { close(descriptor) }
    }

    private static func state(of descriptor: Int32) -> FileState? {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return nil }
        return FileState(
            device: UInt64(status.st_dev), inode: UInt64(status.st_ino), size: Int64(status.st_size),
            modifiedSeconds: Int(status.st_mtim.tv_sec), modifiedNanoseconds: Int(status.st_mtim.tv_nsec))
    }

    /// A reader for the first pass: the input from its start, copied to the spool on the way
    /// unless it can be read again in place.
    func firstPassReader() throws(ImportError) -> (UnsafeMutableRawBufferPointer) throws(ImportError) -> Int {
        if isRegularFile {
            checkedState = Self.state(of: descriptor)
            return positionalReader()
        }
        let spool = try ScratchFile(purpose: "a copy of \(name == "-" ? "stdin" : name)")
        self.spool = spool
        let descriptor = descriptor
        let name = name
        return { buffer throws(ImportError) in
            while true {
                let count = Glibc.read(descriptor, buffer.baseAddress!, buffer.count)
                if count < 0 {
                    if errno == EINTR { continue }
                    throw ImportError(.inputOutput, "cannot read \(name == "-" ? "stdin" : name): \(String(cString: strerror(errno)))")
                }
                if count > 0 { try spool.append(UnsafeRawBufferPointer(rebasing: buffer[..<count])) }
                return count
            }
        }
    }

    /// A reader for a later pass: the bytes the first pass read, from the start. Throws if a
    /// regular file was changed or replaced since the first pass began.
    func rereader() throws(ImportError) -> (UnsafeMutableRawBufferPointer) throws(ImportError) -> Int {
        try checkUnchanged()
        if let spool {
            var offset: Int64 = 0
            return { buffer throws(ImportError) in
                let count = try spool.read(at: offset, into: buffer)
                offset += Int64(count)
                return count
            }
        }
        return positionalReader()
    }

    private func positionalReader() -> (UnsafeMutableRawBufferPointer) throws(ImportError) -> Int {
        var offset = startOffset
        let descriptor = descriptor
        let name = name
        return { buffer throws(ImportError) in
            let count = try ScratchFile.read(descriptor, at: offset, into: buffer, what: name)
            offset += Int64(count)
            return count
        }
    }

    /// The `length` bytes at `offset` of the stream (a line the first pass saw).
    func bytes(at offset: Int64, length: Int) throws(ImportError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: length)
        var failure: ImportError?
        let read = bytes.withUnsafeMutableBytes { buffer -> Int in
            do throws(ImportError) {
                if let spool { return try spool.read(at: offset, into: buffer) }
                return try ScratchFile.read(descriptor, at: startOffset + offset, into: buffer, what: name)
            } catch {
                failure = error
                return 0
            }
        }
        if let failure { throw failure }
        guard read == length else { throw changed() }
        return bytes
    }

    func checkUnchanged() throws(ImportError) {
        guard isRegularFile else { return }
        guard let checkedState, Self.state(of: descriptor) == checkedState else { throw changed() }
    }

    func changed() -> ImportError {
        ImportError(
            .inputOutput,
            "\(name) changed while it was being imported (it was written to or replaced after its lines were checked); import a copy that nothing writes to")
    }
}
