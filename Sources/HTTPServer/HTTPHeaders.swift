/// An ordered list of HTTP header fields with case-insensitive lookup by name.
///
/// Order and duplicates are kept exactly as received (or as added), because some fields
/// (`Set-Cookie`, `Vary`) legitimately repeat.
///
/// ```swift
/// let headers: HTTPHeaders = ["Content-Type": "application/json"]
/// headers["content-type"]  // "application/json"
/// ```
public struct HTTPHeaders: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    public typealias Element = (name: String, value: String)

    private var fields: [Element]

    public init() { fields = [] }

    public init(_ fields: [(String, String)]) {
        self.fields = fields.map { (name: $0.0, value: $0.1) }
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    /// The value of the first field called `name` (compared case-insensitively), or nil.
    public subscript(name: String) -> String? {
        fields.first { Self.same($0.name, name) }?.value
    }

    /// Every value of the fields called `name`, in order.
    public func values(for name: String) -> [String] {
        fields.filter { Self.same($0.name, name) }.map(\.value)
    }

    /// Appends a field, keeping any existing field with the same name.
    public mutating func add(name: String, value: String) {
        fields.append((name: name, value: value))
    }

    /// Replaces every field called `name` with one field holding `value`.
    public mutating func replaceOrAdd(name: String, value: String) {
        fields.removeAll { Self.same($0.name, name) }
        fields.append((name: name, value: value))
    }

    public var count: Int { fields.count }
    public var isEmpty: Bool { fields.isEmpty }

    public func makeIterator() -> IndexingIterator<[Element]> { fields.makeIterator() }

    public static func == (left: HTTPHeaders, right: HTTPHeaders) -> Bool {
        left.fields.count == right.fields.count
            && zip(left.fields, right.fields).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }

    // Header names are ASCII tokens (RFC 9110 §5.1), so an ASCII case fold is exact.
    private static func same(_ left: String, _ right: String) -> Bool {
        left.utf8.count == right.utf8.count
            && zip(left.utf8, right.utf8).allSatisfy { asciiLower($0) == asciiLower($1) }
    }

    private static func asciiLower(_ byte: UInt8) -> UInt8 {
        (byte >= 0x41 && byte <= 0x5A) ? byte | 0x20 : byte
    }
}
