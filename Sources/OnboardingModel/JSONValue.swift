/// A parsed JSON value that keeps object members in their written order and numbers as their
/// exact text, so the event codec decides what a number may be and nothing is rounded.
///
/// ```swift
/// let value = try JSONValue.parse(#"{"type":"signed_out","reason":"user"}"#)
/// value["type"]?.stringValue // "signed_out"
/// ```
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    /// The number's literal text, e.g. `"12"` or `"1.5e3"`.
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([Member])

    public struct Member: Sendable, Equatable {
        public var key: String
        public var value: JSONValue
        public init(_ key: String, _ value: JSONValue) {
            self.key = key
            self.value = value
        }
    }

    /// The member named `key` of an object.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    public var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// A short name of the value's kind, for error messages.
    public var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

/// Malformed JSON, with the 1-based column where it went wrong.
public struct JSONSyntaxError: Error, Sendable, CustomStringConvertible {
    public let column: Int
    public let message: String
    public var description: String { "malformed JSON at column \(column): \(message)" }
}

extension JSONValue {
    /// An object's members, looked up by key. Objects here are small (an event has about ten
    /// members), so a scan beats hashing; the parser refuses duplicate keys, so the first
    /// member of a name is its only one.
    public struct Members: Sendable {
        public let list: [Member]

        public init(_ list: [Member]) { self.list = list }

        public subscript(key: String) -> JSONValue? {
            for member in list where member.key == key { return member.value }
            return nil
        }
    }

    /// How a strict reader finds an object: its members, or what is wrong with it, which the
    /// reader words in its own error (with its own path).
    public enum StrictObject: Sendable {
        case members(Members)
        /// The value is not an object; its ``kindName``.
        case notAnObject(String)
        /// A key not in the allowed list: the first one.
        case unknownKey(String)
    }

    /// The one strict members reader: the members of this object if every key is in `allowed`.
    /// Event lines, sync bodies, lockout policies and projection snapshots all read their objects
    /// through it.
    public func strictObject(allowed: [String]) -> StrictObject {
        guard case .object(let list) = self else { return .notAnObject(kindName) }
        for member in list where !allowed.contains(member.key) { return .unknownKey(member.key) }
        return .members(Members(list))
    }
}

extension JSONValue {
    /// Nesting deeper than this is refused: events are flat, and a bound keeps the recursive
    /// parser's stack small on hostile input.
    public static let maximumDepth = 16

    /// Parses exactly one JSON value (surrounding whitespace allowed). Duplicate object keys are
    /// refused, since different readers would disagree on which one counts.
    public static func parse(_ text: String) throws(JSONSyntaxError) -> JSONValue {
        var parser = JSONParser(bytes: Array(text.utf8))
        return try parser.parseDocument()
    }

    public static func parse(bytes: [UInt8]) throws(JSONSyntaxError) -> JSONValue {
        var parser = JSONParser(bytes: bytes)
        return try parser.parseDocument()
    }
}

private struct JSONParser {
    let bytes: [UInt8]
    var index = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    func fail(_ message: String) -> JSONSyntaxError {
        JSONSyntaxError(column: index + 1, message: message)
    }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    mutating func parseDocument() throws(JSONSyntaxError) -> JSONValue {
        skipWhitespace()
        let value = try parseValue(depth: 0)
        skipWhitespace()
        guard index == bytes.count else { throw fail("unexpected text after the value") }
        return value
    }

    mutating func parseValue(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        guard depth < JSONValue.maximumDepth else { throw fail("nested deeper than \(JSONValue.maximumDepth) levels") }
        guard index < bytes.count else { throw fail("unexpected end of input") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth)
        case UInt8(ascii: "["): return try parseArray(depth: depth)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try parseLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try parseLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try parseLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw fail(unexpectedCharacter())
        }
    }

    /// Names the byte at `index` that cannot start a value. A printable ASCII character is shown
    /// as itself; anything else by its code point (or as a byte, when it is not UTF-8), so the
    /// message never carries a control character or half of a multi-byte character.
    func unexpectedCharacter() -> String {
        let byte = bytes[index]
        switch byte {
        case 0x20...0x7E: return "unexpected character '\(Unicode.Scalar(byte))'"
        case 0x00..<0x20, 0x7F: return "unexpected control character \(ErrorEcho.codePoint(UInt32(byte)))"
        default:
            var iterator = bytes[index...].makeIterator()
            var decoder = UTF8()
            guard case .scalarValue(let scalar) = decoder.decode(&iterator) else {
                return "unexpected byte 0x\(String(byte, radix: 16, uppercase: true)) (not UTF-8)"
            }
            if scalar == "\u{FEFF}" {
                return "unexpected byte order mark (U+FEFF; one is allowed only at the very start of a file)"
            }
            return "unexpected character \(ErrorEcho.codePoint(scalar.value))"
        }
    }

    mutating func parseLiteral(_ literal: String) throws(JSONSyntaxError) {
        let expected = Array(literal.utf8)
        guard bytes.count - index >= expected.count,
            Array(bytes[index..<index + expected.count]) == expected
        else {
            throw fail("expected '\(literal)'")
        }
        index += expected.count
    }

    mutating func parseObject(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        index += 1
        var members: [JSONValue.Member] = []
        /// The keys so far, once there are too many to compare one by one (events have ~10).
        var seen: Set<String>?
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw fail("expected a quoted key") }
            let keyColumn = index
            let key = try parseString()
            let duplicate: Bool
            if seen != nil {
                duplicate = !seen!.insert(key).inserted
            } else {
                duplicate = members.contains { $0.key == key }
                if members.count >= 16 { seen = Set(members.map(\.key) + [key]) }
            }
            guard !duplicate else {
                throw JSONSyntaxError(column: keyColumn + 1, message: "duplicate key \(ErrorEcho.quoted(key))")
            }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw fail("expected ':' after key") }
            index += 1
            skipWhitespace()
            members.append(.init(key, try parseValue(depth: depth + 1)))
            skipWhitespace()
            guard index < bytes.count else { throw fail("unterminated object") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
            throw fail("expected ',' or '}'")
        }
    }

    mutating func parseArray(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue(depth: depth + 1))
            skipWhitespace()
            guard index < bytes.count else { throw fail("unterminated array") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(elements) }
            throw fail("expected ',' or ']'")
        }
    }

    mutating func parseNumber() throws(JSONSyntaxError) -> JSONValue {
        let start = index
        func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { throw fail("expected a digit") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw fail("expected a digit after '.'") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw fail("expected an exponent digit") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        return .number(String(decoding: bytes[start..<index], as: UTF8.self))
    }

    mutating func parseHex4() throws(JSONSyntaxError) -> UInt32 {
        guard bytes.count - index >= 4 else { throw fail("incomplete \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case 0x30...0x39: digit = UInt32(byte - 0x30)
            case 0x41...0x46: digit = UInt32(byte - 0x41 + 10)
            case 0x61...0x66: digit = UInt32(byte - 0x61 + 10)
            default: throw fail("invalid hex digit in \\u escape")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    mutating func parseString() throws(JSONSyntaxError) -> String {
        index += 1 // opening quote
        let start = index
        // Most strings hold no escape: up to the closing quote they are made from the input's
        // bytes at once (ASCII needs no validation), not byte by byte.
        var high: UInt8 = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let end = index
                index += 1
                return try bytes.withUnsafeBufferPointer { buffer throws(JSONSyntaxError) -> String in
                    let slice = UnsafeBufferPointer(rebasing: buffer[start..<end])
                    if high < 0x80 {
                        return String(unsafeUninitializedCapacity: slice.count) {
                            _ = $0.initialize(fromContentsOf: slice); return slice.count
                        }
                    }
                    guard let text = String(validating: slice, as: UTF8.self) else { throw fail("string is not valid UTF-8") }
                    return text
                }
            }
            if byte == UInt8(ascii: "\\") || byte < 0x20 { break }
            high |= byte
            index += 1
        }
        var output = Array(bytes[start..<index])
        while true {
            guard index < bytes.count else { throw fail("unterminated string") }
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let text = String(validating: output, as: UTF8.self) else {
                    throw fail("string is not valid UTF-8")
                }
                return text
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count else { throw fail("unterminated escape") }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""): output.append(0x22)
                case UInt8(ascii: "\\"): output.append(0x5C)
                case UInt8(ascii: "/"): output.append(0x2F)
                case UInt8(ascii: "b"): output.append(0x08)
                case UInt8(ascii: "f"): output.append(0x0C)
                case UInt8(ascii: "n"): output.append(0x0A)
                case UInt8(ascii: "r"): output.append(0x0D)
                case UInt8(ascii: "t"): output.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try parseHex4()
                    if (0xD800...0xDBFF).contains(scalar) {
                        guard bytes.count - index >= 2, bytes[index] == UInt8(ascii: "\\"),
                            bytes[index + 1] == UInt8(ascii: "u")
                        else { throw fail("unpaired surrogate in \\u escape") }
                        index += 2
                        let low = try parseHex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw fail("unpaired surrogate in \\u escape") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(scalar) {
                        throw fail("unpaired surrogate in \\u escape")
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw fail("invalid \\u escape") }
                    output.append(contentsOf: Array(String(Character(unicode)).utf8))
                default:
                    throw fail("invalid escape '\\\(Unicode.Scalar(escape))'")
                }
            case 0x00..<0x20:
                throw fail("control character in string (escape it)")
            default:
                output.append(byte)
                index += 1
            }
        }
    }
}

/// Writes canonical JSON: members in the order given, no whitespace, only the escapes JSON
/// requires (`"`, `\`, control characters), UTF-8 kept as is.
public struct JSONWriter {
    public private(set) var bytes: [UInt8] = []

    public init() {}

    public mutating func append(raw text: String) { bytes.append(contentsOf: text.utf8) }

    public mutating func append(string text: String) {
        JSONWriter.appendQuoted(text, to: &bytes)
    }

    public static func appendQuoted(_ text: String, to bytes: inout [UInt8]) {
        bytes.append(0x22)
        for byte in text.utf8 {
            switch byte {
            case 0x22: bytes.append(contentsOf: [0x5C, 0x22])
            case 0x5C: bytes.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: bytes.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0x08: bytes.append(contentsOf: [0x5C, UInt8(ascii: "b")])
            case 0x0C: bytes.append(contentsOf: [0x5C, UInt8(ascii: "f")])
            case 0x00..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            default: bytes.append(byte)
            }
        }
        bytes.append(0x22)
    }

    /// Writes any value canonically.
    public mutating func append(_ value: JSONValue) {
        switch value {
        case .null: append(raw: "null")
        case .bool(let flag): append(raw: flag ? "true" : "false")
        case .number(let text): append(raw: text)
        case .string(let text): append(string: text)
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            for (offset, element) in elements.enumerated() {
                if offset > 0 { bytes.append(UInt8(ascii: ",")) }
                append(element)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            bytes.append(UInt8(ascii: "{"))
            for (offset, member) in members.enumerated() {
                if offset > 0 { bytes.append(UInt8(ascii: ",")) }
                append(string: member.key)
                bytes.append(UInt8(ascii: ":"))
                append(member.value)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    public var text: String { String(decoding: bytes, as: UTF8.self) }
}
