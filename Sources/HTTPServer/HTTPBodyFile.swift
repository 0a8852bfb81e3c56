import Synchronization
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A response body sent from an open file instead of memory: libmicrohttpd reads it from offset
/// 0 to ``byteCount`` as the client takes it (`sendfile` on Linux), so an answer of any size costs
/// the server no more memory than a small one. For exports written to an unlinked temporary file.
///
/// The body owns its descriptor: it is handed to libmicrohttpd, which closes it when the answer is
/// done, or closed when the body is dropped unsent.
///
/// ```swift
/// let file = HTTPBodyFile(descriptor: descriptor, byteCount: written)   // owns `descriptor` now
/// return HTTPResponse(status: 200, headers: ["Content-Type": "text/csv"], bodyFile: file)
/// ```
public final class HTTPBodyFile: Sendable, Equatable {
    private let descriptor: Int32
    public let byteCount: Int
    private let handedOver = Atomic<Bool>(false)

    /// Takes ownership of `descriptor`, a regular file open for reading, in blocking mode.
    public init(descriptor: Int32, byteCount: Int) {
        self.descriptor = descriptor
        self.byteCount = byteCount
    }

    deinit {
        if !handedOver.load(ordering: .acquiring) { close(descriptor) }
    }

    /// The descriptor for libmicrohttpd, once; `nil` after it was handed over.
    func take() -> Int32? {
        handedOver.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged ? descriptor : nil
    }

    /// The whole file, for a caller that needs the body in memory (an in-process transport);
    /// `nil` when it cannot be read or was handed over.
    public func readAll() -> [UInt8]? {
        guard !handedOver.load(ordering: .acquiring) else { return nil }
        var bytes = [UInt8](repeating: 0, count: byteCount)
        var offset = 0
        while offset < byteCount {
            let count = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress! + offset, byteCount - offset, off_t(offset)) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return nil }
            offset += count
        }
        return bytes
    }

    public static func == (left: HTTPBodyFile, right: HTTPBodyFile) -> Bool { left === right }
}
