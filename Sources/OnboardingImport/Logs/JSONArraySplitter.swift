import Foundation
import OnboardingModel

/// Splits one JSON array (`[ {...}, {...} ]`, as Keycloak's admin REST API answers, pretty-printed
/// over many lines or on one huge line) into its top-level elements, in one streaming pass over
/// chunks cut anywhere. It holds one element at most, so memory is bounded by
/// ``maximumElementBytes`` whatever the size of the array.
///
/// It reads only the array's structure: strings (with their escapes, so `]`, `,` or `{` inside
/// one split nothing) and the nesting of `[]` and `{}`. Each element is left for its parser to
/// judge. Elements are handed out as one line: a tab, line feed or carriage return between
/// tokens becomes a space (the same JSON), and a raw line feed or carriage return inside a string
/// (never valid JSON) becomes U+001A SUBSTITUTE, which keeps it invalid without breaking the line.
///
/// ```swift
/// var splitter = JSONArraySplitter()
/// try splitter.feed(chunk) { element in lines.append(parser.parse(element)) }   // for each chunk
/// try splitter.finish()
/// ```
public struct JSONArraySplitter {
    /// The longest element kept: the limit of one JSON line.
    public static let defaultMaximumElementBytes = Limits.maximumJSONLineBytes
    static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]
    /// Bytes read per chunk by ``convert(from:to:)``.
    static let readChunkBytes = 1 << 20

    public let maximumElementBytes: Int
    /// Elements handed out so far.
    public private(set) var elementCount = 0

    private enum Position: Equatable {
        /// Before `[` (a byte order mark and whitespace allowed).
        case beforeArray
        /// After `[`: an element or `]`.
        case afterOpening
        /// After `,`: an element.
        case afterComma
        /// Inside an element.
        case inElement
        /// After an element: `,` or `]`.
        case afterElement
        /// After `]`: only whitespace.
        case afterArray
    }

    private var position = Position.beforeArray
    /// Bytes of the stream seen so far, for messages.
    private var offset: Int64 = 0
    private var element: [UInt8] = []
    /// Open `[` and `{` of the element.
    private var depth = 0
    private var inString = false
    private var escaped = false
    /// Whether the element's last byte is a space that stands for whitespace between tokens.
    private var endsWithSpace = false
    /// Where the element began (1-based), for messages.
    private var elementStart: Int64 = 0
    /// Bytes of a byte order mark at the start of the stream.
    private var byteOrderMarkMatched = 0

    public init(maximumElementBytes: Int = JSONArraySplitter.defaultMaximumElementBytes) {
        precondition(maximumElementBytes > 0, "an element needs room for a byte")
        self.maximumElementBytes = maximumElementBytes
    }

    /// Reads the next chunk, calling `emit` with each element that ends in it (the bytes are
    /// valid only during the call). Throws a ``JSONArraySplitterError`` when the bytes are not
    /// an array or an element is too long, and what `emit` throws.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer, emit: (UnsafeRawBufferPointer) throws -> Void) throws {
        for byte in bytes {
            try step(byte, emit: emit)
            offset += 1
        }
    }

    /// Ends the stream: throws a ``JSONArraySplitterError`` if the array or its last element is
    /// unfinished. Returns the number of elements.
    @discardableResult
    public func finish() throws(JSONArraySplitterError) -> Int {
        switch position {
        case .afterArray: return elementCount
        case .beforeArray: throw JSONArraySplitterError("the input is empty: expected a JSON array ('[')")
        case .inElement:
            throw JSONArraySplitterError("the array ends inside element \(elementCount + 1)\(inString ? " (in a string)" : ""): the input is cut short")
        case .afterOpening:
            throw JSONArraySplitterError("the array is not closed: no element or ']' after its '['")
        case .afterComma, .afterElement:
            throw JSONArraySplitterError("the array is not closed: no ']' after element \(elementCount)")
        }
    }

    /// Whether the array's closing `]` was read.
    var isFinished: Bool { position == .afterArray }

    /// Whether input beginning with `firstBytes` is a JSON array rather than JSON Lines: its
    /// first byte after a byte order mark and whitespace is `[`. Pass at least up to the first
    /// byte that is not whitespace; a prefix of only whitespace is `false`.
    public static func isArray(firstBytes: some Collection<UInt8>) -> Bool {
        var rest = firstBytes[...]
        if rest.starts(with: byteOrderMark) { rest = rest.dropFirst(byteOrderMark.count) }
        return rest.first { !isWhitespace($0) } == UInt8(ascii: "[")
    }

    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }
}

// MARK: - The state machine

extension JSONArraySplitter {
    private mutating func step(_ byte: UInt8, emit: (UnsafeRawBufferPointer) throws -> Void) throws {
        switch position {
        case .beforeArray: try stepBeforeArray(byte)
        case .afterOpening where byte == UInt8(ascii: "]"): position = .afterArray
        case .afterOpening, .afterComma: try startElement(byte, emit: emit)
        case .inElement: try stepInElement(byte, emit: emit)
        case .afterElement: try stepAfterElement(byte)
        case .afterArray:
            guard Self.isWhitespace(byte) else { throw unexpected(byte, "after the array's closing ']'") }
        }
    }

    private mutating func stepBeforeArray(_ byte: UInt8) throws(JSONArraySplitterError) {
        // A byte order mark only at the very start of the stream, and only whole.
        if Int64(byteOrderMarkMatched) == offset, byteOrderMarkMatched < Self.byteOrderMark.count,
            byte == Self.byteOrderMark[byteOrderMarkMatched]
        {
            byteOrderMarkMatched += 1
            return
        }
        if byteOrderMarkMatched > 0, byteOrderMarkMatched < Self.byteOrderMark.count {
            throw JSONArraySplitterError("the input starts with part of a byte order mark, and then byte \(offset + 1) is \(Self.shown(byte))")
        }
        if Self.isWhitespace(byte) { return }
        guard byte == UInt8(ascii: "[") else { throw unexpected(byte, "where the array's '[' should be") }
        position = .afterOpening
    }

    private mutating func startElement(_ byte: UInt8, emit: (UnsafeRawBufferPointer) throws -> Void) throws {
        if Self.isWhitespace(byte) { return }
        switch byte {
        case UInt8(ascii: ","), UInt8(ascii: "]"), UInt8(ascii: "}"), UInt8(ascii: ":"):
            throw unexpected(byte, "where element \(elementCount + 1) should begin")
        default:
            position = .inElement
            elementStart = offset + 1
            try stepInElement(byte, emit: emit)
        }
    }

    private mutating func stepInElement(_ byte: UInt8, emit: (UnsafeRawBufferPointer) throws -> Void) throws {
        if inString {
            try append(stringByte(byte))
            endsWithSpace = false
            return
        }
        switch byte {
        case UInt8(ascii: "\""):
            inString = true
            try append(byte)
        case UInt8(ascii: "["), UInt8(ascii: "{"):
            depth += 1
            try append(byte)
        case UInt8(ascii: "]"), UInt8(ascii: "}"):
            if depth == 0 {
                // The end of a scalar element (a '}' is refused after it).
                try endElement(emit: emit)
                try stepAfterElement(byte)
                return
            }
            depth -= 1
            try append(byte)
            if depth == 0 { try endElement(emit: emit) }
        case UInt8(ascii: ",") where depth == 0:
            try endElement(emit: emit)
            try stepAfterElement(byte)
            return
        case 0x20, 0x09, 0x0A, 0x0D:
            if depth == 0 {
                try endElement(emit: emit)
            } else if !endsWithSpace {
                // A run of whitespace between tokens is one space: the same JSON, and a
                // pretty-printed element's indentation does not count against the limit.
                try append(0x20)
                endsWithSpace = true
            }
            return
        default:
            try append(byte)
        }
        endsWithSpace = false
    }

    /// A byte inside a string, as kept: tracks escapes and the closing quote.
    private mutating func stringByte(_ byte: UInt8) -> UInt8 {
        if escaped {
            escaped = false
        } else if byte == UInt8(ascii: "\\") {
            escaped = true
        } else if byte == UInt8(ascii: "\"") {
            inString = false
        }
        return byte == 0x0A || byte == 0x0D ? 0x1A : byte
    }

    private mutating func stepAfterElement(_ byte: UInt8) throws(JSONArraySplitterError) {
        switch byte {
        case 0x20, 0x09, 0x0A, 0x0D: return
        case UInt8(ascii: ","): position = .afterComma
        case UInt8(ascii: "]"): position = .afterArray
        default: throw unexpected(byte, "after element \(elementCount) (expected ',' or ']')")
        }
    }

    private mutating func append(_ byte: UInt8) throws(JSONArraySplitterError) {
        guard element.count < maximumElementBytes else {
            throw JSONArraySplitterError("element \(elementCount + 1) (from byte \(elementStart)) is longer than the limit of \(maximumElementBytes) bytes")
        }
        element.append(byte)
    }

    private mutating func endElement(emit: (UnsafeRawBufferPointer) throws -> Void) throws {
        elementCount += 1
        position = .afterElement
        endsWithSpace = false
        defer { element.removeAll(keepingCapacity: true) }
        try element.withUnsafeBytes { try emit($0) }
    }

    private func unexpected(_ byte: UInt8, _ place: String) -> JSONArraySplitterError {
        JSONArraySplitterError("unexpected \(Self.shown(byte)) at byte \(offset + 1) \(place)")
    }

    /// A byte for a message: a printable ASCII character as itself, any other by its value.
    static func shown(_ byte: UInt8) -> String {
        (0x21...0x7E).contains(byte) ? "'\(Unicode.Scalar(byte))'" : "byte 0x\(String(byte, radix: 16, uppercase: true))"
    }
}

// MARK: - Files

extension JSONArraySplitter {
    /// Reads a JSON array from `input` to its end and writes each element to `output` as one
    /// line (JSON Lines, `\n` after each), so an import can read an array file as it reads
    /// JSONL. Returns the number of elements. Throws a ``JSONArraySplitterError`` when the input
    /// is not one array or an element is too long, and what reading or writing throws.
    public static func convert(from input: FileHandle, to output: FileHandle) throws -> Int {
        var splitter = JSONArraySplitter()
        var pending: [UInt8] = []
        pending.reserveCapacity(readChunkBytes + defaultMaximumElementBytes + 1)
        while let chunk = try input.read(upToCount: readChunkBytes), !chunk.isEmpty {
            try chunk.withUnsafeBytes { bytes in
                try splitter.feed(bytes) { element in
                    pending.append(contentsOf: element)
                    pending.append(0x0A)
                }
            }
            if pending.count >= readChunkBytes {
                try output.write(contentsOf: pending)
                pending.removeAll(keepingCapacity: true)
            }
        }
        try splitter.finish()
        if !pending.isEmpty { try output.write(contentsOf: pending) }
        return splitter.elementCount
    }
}

/// Input that is not one JSON array, or an element over the limit; the message says where.
public struct JSONArraySplitterError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String

    init(_ message: String) { self.message = message }

    public var description: String { message }
}
