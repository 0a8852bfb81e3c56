import Foundation
import OnboardingModel

/// Splits a byte stream into lines in one pass, holding at most one read chunk and one line, so
/// memory stays the same whatever the size of the stream or of its lines.
///
/// A line ends at `\n`; a `\r` before it is dropped (files written on Windows). The last line
/// needs no newline. Blank lines (only spaces and tabs) are counted but not handed out. A UTF-8
/// byte order mark is skipped at the very start of the stream, and only there. A line longer
/// than ``maximumLineBytes`` is not kept: it is checked for blankness and UTF-8 as it goes by
/// and handed out as ``JSONLLine/Content/tooLong(isValidUTF8:)``.
///
/// ```swift
/// let totals = try JSONLReader.read(from: { buffer in try input.read(into: buffer) }) { line in
///     if case .text(let bytes) = line.content { … }
/// }
/// ```
enum JSONLReader {
    /// Bytes asked of the input per read: large enough that the system call's cost vanishes
    /// against the decoding of ~4,000 lines, small enough to stay in the L2 cache's reach.
    static let readChunkBytes = 1 << 20
    /// The longest line kept (and decoded): the documented limit of one JSON line.
    static let maximumLineBytes = Limits.maximumJSONLineBytes
    static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// Reads the stream to its end, or to `byteLimit` bytes, through `read` (which fills the
    /// buffer it is given, or part of it, and returns 0 at the end), calling `body` for each line
    /// that is not blank. Returns the bytes read and the lines counted.
    @discardableResult
    static func read(
        byteLimit: Int64? = nil,
        from read: (UnsafeMutableRawBufferPointer) throws(ImportError) -> Int,
        _ body: (JSONLLine) throws(ImportError) -> Void
    ) throws(ImportError) -> (bytes: Int64, lines: Int) {
        // A whole line (and its `\r`) plus a chunk: a line that began at the end of one chunk is
        // completed by the next read without growing the buffer.
        let capacity = maximumLineBytes + 2 + readChunkBytes
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 16)
        defer { buffer.deallocate() }
        let base = buffer.baseAddress!

        var start = 0 // first unconsumed byte
        var scanned = 0 // bytes before this hold no newline
        var end = 0 // end of the bytes read
        var streamOffsetOfBuffer: Int64 = 0
        var totalRead: Int64 = 0
        var atEnd = false
        var lineNumber = 0
        var longLine: LongLine?

        func fill() throws(ImportError) {
            var room = capacity - end
            if let byteLimit { room = Int(min(Int64(room), byteLimit - totalRead)) }
            guard room > 0 else {
                atEnd = true
                return
            }
            let count = try read(UnsafeMutableRawBufferPointer(start: base + end, count: room))
            precondition(count >= 0 && count <= room, "a read returned \(count) bytes for room for \(room)")
            if count == 0 { atEnd = true }
            end += count
            totalRead += Int64(count)
        }

        func deliver(_ lineStart: Int, _ lineEnd: Int) throws(ImportError) {
            lineNumber += 1
            var contentEnd = lineEnd
            if contentEnd > lineStart && buffer[contentEnd - 1] == 0x0D { contentEnd -= 1 }
            let content = UnsafeRawBufferPointer(start: base + lineStart, count: contentEnd - lineStart)
            let offset = streamOffsetOfBuffer + Int64(lineStart)
            if content.count > maximumLineBytes {
                var tracker = LongLine()
                tracker.feed(UnsafeRawBufferPointer(start: base + lineStart, count: lineEnd - lineStart))
                if !tracker.isBlank { try body(JSONLLine(number: lineNumber, offset: offset, content: .tooLong(isValidUTF8: tracker.utf8.isValid))) }
                return
            }
            if content.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return }
            try body(JSONLLine(number: lineNumber, offset: offset, content: .text(content)))
        }

        func finishLongLine() throws(ImportError) {
            guard let tracker = longLine else { return }
            longLine = nil
            lineNumber += 1
            if !tracker.isBlank {
                try body(JSONLLine(number: lineNumber, offset: tracker.offset, content: .tooLong(isValidUTF8: tracker.utf8.isValid)))
            }
        }

        // The byte order mark can only be recognised with three bytes in hand.
        while end < byteOrderMark.count && !atEnd { try fill() }
        if end >= byteOrderMark.count && buffer[0] == byteOrderMark[0] && buffer[1] == byteOrderMark[1] && buffer[2] == byteOrderMark[2] {
            start = byteOrderMark.count
            scanned = start
        }

        while true {
            if scanned < end, let found = memchr(base + scanned, 0x0A, end - scanned) {
                let newline = base.distance(to: UnsafeMutableRawPointer(found))
                if longLine != nil {
                    longLine!.feed(UnsafeRawBufferPointer(start: base + start, count: newline - start))
                    try finishLongLine()
                } else {
                    try deliver(start, newline)
                }
                start = newline + 1
                scanned = start
                continue
            }
            scanned = end
            if longLine != nil {
                longLine!.feed(UnsafeRawBufferPointer(start: base + start, count: end - start))
                start = end
            } else if end - start > maximumLineBytes + 1 {
                // Too long even if its last byte is the `\r` of a `\r\n`: stop keeping it.
                var tracker = LongLine()
                tracker.offset = streamOffsetOfBuffer + Int64(start)
                tracker.feed(UnsafeRawBufferPointer(start: base + start, count: end - start))
                longLine = tracker
                start = end
            }
            if atEnd {
                if longLine != nil {
                    try finishLongLine()
                } else if start < end {
                    try deliver(start, end)
                }
                return (totalRead, lineNumber)
            }
            if start > 0 {
                // Keep the unfinished line at the front; what is before it is done.
                let kept = end - start
                if kept > 0 { memmove(base, base + start, kept) }
                streamOffsetOfBuffer += Int64(start)
                end = kept
                scanned -= start
                start = 0
            }
            try fill()
        }
    }
}

/// What is known of a line too long to keep: where it began, whether it is blank so far (spaces
/// and tabs, and a `\r` only as its last byte), and whether it is UTF-8 so far.
private struct LongLine {
    var offset: Int64 = 0
    var isBlank = true
    private var pendingCarriageReturn = false
    var utf8 = UTF8Validator()

    mutating func feed(_ bytes: UnsafeRawBufferPointer) {
        utf8.feed(bytes)
        guard isBlank else { return }
        for byte in bytes {
            if pendingCarriageReturn {
                // A `\r` with more after it is content, not the line ending.
                isBlank = false
                return
            }
            switch byte {
            case 0x20, 0x09: continue
            case 0x0D: pendingCarriageReturn = true
            default:
                isBlank = false
                return
            }
        }
    }
}
