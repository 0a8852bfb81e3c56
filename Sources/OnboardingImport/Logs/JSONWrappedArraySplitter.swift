import OnboardingModel

/// Splits the array held by one member of a JSON object — a CloudTrail log file's
/// `{"Records":[…]}`, Microsoft Graph's `{"@odata.context":"…","value":[…]}` — into its
/// elements, in one streaming pass, as ``JSONArraySplitter`` does for a bare array (which it
/// uses for the array itself, so elements are checked and handed out the same way).
///
/// The other members are skipped whatever they hold (strings with their escapes, nested
/// values), holding nothing but the key being read, so memory stays bounded by one element.
///
/// ```swift
/// var splitter = JSONWrappedArraySplitter(member: "Records")
/// try splitter.feed(chunk) { element in … }   // for each chunk
/// try splitter.finish()
/// ```
struct JSONWrappedArraySplitter {
    /// The member whose array is split.
    let member: String
    private let memberBytes: [UInt8]
    private var inner = JSONArraySplitter()

    private enum Position {
        case beforeObject, beforeKey, inKey, beforeColon, beforeValue, inSkippedValue, inArray, afterValue, afterObject
    }

    private var position = Position.beforeObject
    private var key: [UInt8] = []
    private var keyEscaped = false
    /// Nesting, string and escape state of a skipped value.
    private var depth = 0
    private var inString = false
    private var escaped = false
    private var found = false
    /// Members begun so far.
    private var memberCount = 0
    private var offset: Int64 = 0
    private var byteOrderMarkMatched = 0

    /// A key longer than this is no member name this splitter looks for; it is read to its end
    /// but not kept.
    static let maximumKeyBytes = 256

    init(member: String) {
        precondition(!member.isEmpty && member.utf8.count <= Self.maximumKeyBytes, "a member name of 1…\(Self.maximumKeyBytes) bytes")
        self.member = member
        memberBytes = Array(member.utf8)
    }

    /// Whether input beginning with `firstBytes` is an object with a member `member`: the
    /// object's members are read up to that member's name. An object that ends first, or bytes
    /// that are not such an object, is `false` (JSON Lines, say); a prefix that ends before
    /// either is `true` (no JSON line is that long, and the full read then names what is wrong).
    static func isWrapped(firstBytes: UnsafeRawBufferPointer, member: String) -> Bool {
        var probe = JSONWrappedArraySplitter(member: member)
        for byte in firstBytes {
            do {
                try probe.step(byte) { _ in }
            } catch {
                return false
            }
            probe.offset += 1
            switch probe.position {
            // The member is named: its value decides, and the full read says what is wrong with it.
            case .beforeValue where probe.key == probe.memberBytes: return true
            case .inArray: return true
            case .afterObject: return false
            default: continue
            }
        }
        return probe.position != .beforeObject
    }

    mutating func feed(_ bytes: UnsafeRawBufferPointer, emit: (UnsafeRawBufferPointer) throws -> Void) throws {
        for byte in bytes {
            try step(byte, emit: emit)
            offset += 1
        }
    }

    /// Ends the stream: throws a ``JSONArraySplitterError`` when the object, or the array in
    /// it, is unfinished, or the object has no member `member`.
    func finish() throws(JSONArraySplitterError) {
        if position == .inArray { try inner.finish() }
        guard position == .afterObject else {
            throw JSONArraySplitterError(
                position == .beforeObject
                    ? "the input is empty: expected a JSON object ('{') with a member \"\(member)\""
                    : "the object holding \"\(member)\" is not closed: the input is cut short")
        }
        guard found else { throw JSONArraySplitterError("the object has no member \"\(member)\" holding an array") }
    }

    private mutating func step(_ byte: UInt8, emit: (UnsafeRawBufferPointer) throws -> Void) throws {
        switch position {
        case .beforeObject:
            if Int64(byteOrderMarkMatched) == offset, byteOrderMarkMatched < 3, byte == JSONArraySplitter.byteOrderMark[byteOrderMarkMatched] {
                byteOrderMarkMatched += 1
                return
            }
            if JSONArraySplitter.isWhitespace(byte) { return }
            guard byte == UInt8(ascii: "{") else { throw unexpected(byte, "where the object's '{' should be") }
            position = .beforeKey
        case .beforeKey:
            if JSONArraySplitter.isWhitespace(byte) { return }
            if byte == UInt8(ascii: "}"), memberCount == 0 {
                position = .afterObject // `{}`: `finish()` says the member is missing
                return
            }
            guard byte == UInt8(ascii: "\"") else { throw unexpected(byte, "where a member's name should begin") }
            memberCount += 1
            key.removeAll(keepingCapacity: true)
            keyEscaped = false
            position = .inKey
        case .inKey:
            if keyEscaped {
                keyEscaped = false
            } else if byte == UInt8(ascii: "\\") {
                keyEscaped = true
            } else if byte == UInt8(ascii: "\"") {
                position = .beforeColon
                return
            }
            if key.count <= Self.maximumKeyBytes { key.append(byte) }
        case .beforeColon:
            if JSONArraySplitter.isWhitespace(byte) { return }
            guard byte == UInt8(ascii: ":") else { throw unexpected(byte, "after a member's name (expected ':')") }
            position = .beforeValue
        case .beforeValue:
            if JSONArraySplitter.isWhitespace(byte) { return }
            if key == memberBytes {
                guard !found else { throw JSONArraySplitterError("the member \"\(member)\" is given twice (at byte \(offset + 1))") }
                guard byte == UInt8(ascii: "[") else { throw unexpected(byte, "where the array of \"\(member)\" should begin") }
                found = true
                position = .inArray
                try withUnsafeBytes(of: byte) { try inner.feed($0, emit: emit) }
                return
            }
            position = .inSkippedValue
            depth = 0
            inString = false
            escaped = false
            try skip(byte)
        case .inSkippedValue:
            try skip(byte)
        case .inArray:
            try withUnsafeBytes(of: byte) { try inner.feed($0, emit: emit) }
            if inner.isFinished { position = .afterValue }
        case .afterValue:
            if JSONArraySplitter.isWhitespace(byte) { return }
            switch byte {
            case UInt8(ascii: ","):
                key.removeAll(keepingCapacity: true)
                position = .beforeKey
            case UInt8(ascii: "}"): position = .afterObject
            default: throw unexpected(byte, "after a member's value (expected ',' or '}')")
            }
        case .afterObject:
            guard JSONArraySplitter.isWhitespace(byte) else { throw unexpected(byte, "after the object's closing '}'") }
        }
    }

    /// A byte of a member's value that is not the array: followed only as far as where it ends.
    private mutating func skip(_ byte: UInt8) throws(JSONArraySplitterError) {
        if inString {
            if escaped {
                escaped = false
            } else if byte == UInt8(ascii: "\\") {
                escaped = true
            } else if byte == UInt8(ascii: "\"") {
                inString = false
                if depth == 0 { position = .afterValue }
            }
            return
        }
        switch byte {
        case UInt8(ascii: "\""): inString = true
        case UInt8(ascii: "["), UInt8(ascii: "{"): depth += 1
        case UInt8(ascii: "]"), UInt8(ascii: "}"):
            if depth == 0 {
                // The end of a scalar value, and of the object.
                guard byte == UInt8(ascii: "}") else { throw unexpected(byte, "in a member's value") }
                position = .afterObject
                return
            }
            depth -= 1
            if depth == 0 { position = .afterValue }
        case UInt8(ascii: ",") where depth == 0:
            key.removeAll(keepingCapacity: true)
            position = .beforeKey
        default: return
        }
    }

    private func unexpected(_ byte: UInt8, _ place: String) -> JSONArraySplitterError {
        JSONArraySplitterError("unexpected \(JSONArraySplitter.shown(byte)) at byte \(offset + 1) \(place)")
    }
}
