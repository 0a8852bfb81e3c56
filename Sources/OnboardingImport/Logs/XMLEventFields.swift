/// The fields of one Windows `<Event>` element that ``WindowsSecurityParser`` reads, taken from
/// its XML by ``read(_:)``: `System/EventID`, `System/TimeCreated/@SystemTime`,
/// `System/Computer`, and the `EventData/Data` items named in
/// ``WindowsEventXMLReader/keptData``.
///
/// The reader knows elements, attributes (quoted with `"` or `'`), text, comments, processing
/// instructions and CDATA sections, and decodes `&lt; &gt; &amp; &quot; &apos;` and character
/// references (`&#65;`, `&#x41;`); any other entity, a tag that does not close, or an end tag
/// that does not match its start is an error.
///
/// ```swift
/// var fields = XMLEventFields()
/// try fields.read(Array("<Event><System><EventID>4740</EventID></System></Event>".utf8))
/// fields.eventID // "4740"
/// ```
struct XMLEventFields {
    var eventID: String?
    var systemTime: String?
    var computer: String?
    var data: [(name: String, value: String)] = []

    struct Failure: Error {
        let message: String
    }

    /// Reads one element (its bytes, `<Event` to `</Event>`).
    mutating func read(_ bytes: [UInt8]) throws(Failure) {
        var stack: [String] = []
        var text: [UInt8] = []
        var dataName: String?
        var index = 0
        func fail(_ reason: String) -> Failure { Failure(message: "\(reason) (at byte \(index + 1) of event)") }
        while index < bytes.count {
            let byte = bytes[index]
            guard byte == UInt8(ascii: "<") else {
                text.append(byte)
                index += 1
                continue
            }
            if bytes[index...].starts(with: "<!--".utf8) {
                guard let end = Self.find(Array("-->".utf8), in: bytes, from: index + 4) else { throw fail("a comment does not end") }
                index = end
                continue
            }
            if bytes[index...].starts(with: "<![CDATA[".utf8) {
                guard let end = Self.find(Array("]]>".utf8), in: bytes, from: index + 9) else { throw fail("a CDATA section does not end") }
                text += bytes[(index + 9)..<(end - 3)]
                index = end
                continue
            }
            if bytes[index...].starts(with: "<?".utf8) {
                guard let end = Self.find(Array("?>".utf8), in: bytes, from: index + 2) else { throw fail("a processing instruction does not end") }
                index = end
                continue
            }
            if bytes[index...].starts(with: "<!".utf8) { throw fail("a declaration inside an event") }
            guard let close = bytes[index...].firstIndex(of: UInt8(ascii: ">")) else { throw fail("a tag does not close") }
            let tag = Array(bytes[(index + 1)..<close])
            index = close + 1
            if tag.first == UInt8(ascii: "/") {
                // `</Data >`: spaces may follow the name.
                let name = String(decoding: tag.dropFirst().prefix { !Self.isSpace($0) }, as: UTF8.self)
                guard stack.last == name else { throw fail("the end tag </\(name)> closes no <\(name)>") }
                let value = try Self.decode(text)
                try note(end: stack, value: value, dataName: dataName)
                if name == "Data" { dataName = nil }
                stack.removeLast()
                text.removeAll()
                continue
            }
            let selfClosing = tag.last == UInt8(ascii: "/")
            let (name, attributes) = try Self.parseTag(selfClosing ? Array(tag.dropLast()) : tag)
            guard stack.count < WindowsEventXMLReader.maximumDepth else { throw fail("nested deeper than \(WindowsEventXMLReader.maximumDepth) elements") }
            text.removeAll()
            let path = stack + [name]
            if path == ["Event", "System", "TimeCreated"] { systemTime = attributes["SystemTime"] }
            if name == "Data" { dataName = attributes["Name"] }
            if !selfClosing { stack.append(name) }
        }
        guard stack.isEmpty else { throw fail("<\(stack.last ?? "")> is not closed") }
    }

    /// Notes the text of an element that ends, when it is one of the fields.
    private mutating func note(end path: [String], value: String, dataName: String?) throws(Failure) {
        switch path {
        case ["Event", "System", "EventID"]: eventID = value
        case ["Event", "System", "Computer"]: computer = value
        case ["Event", "EventData", "Data"]:
            if let dataName, WindowsEventXMLReader.keptData.contains(dataName), !data.contains(where: { $0.name == dataName }) {
                data.append((dataName, value))
            }
        default: break
        }
    }

    /// A start tag's name and attributes (`Name='TargetUserName'`, `SystemTime="…"`).
    static func parseTag(_ tag: [UInt8]) throws(Failure) -> (String, [String: String]) {
        var index = 0
        let isSpace = Self.isSpace
        while index < tag.count, !isSpace(tag[index]) { index += 1 }
        let name = String(decoding: tag[..<index], as: UTF8.self)
        guard !name.isEmpty else { throw Failure(message: "a tag without a name") }
        var attributes: [String: String] = [:]
        while true {
            while index < tag.count, isSpace(tag[index]) { index += 1 }
            guard index < tag.count else { break }
            let start = index
            while index < tag.count, tag[index] != UInt8(ascii: "="), !isSpace(tag[index]) { index += 1 }
            let key = String(decoding: tag[start..<index], as: UTF8.self)
            while index < tag.count, isSpace(tag[index]) { index += 1 }
            guard index < tag.count, tag[index] == UInt8(ascii: "=") else { throw Failure(message: "the attribute \(key) of <\(name)> has no value") }
            index += 1
            while index < tag.count, isSpace(tag[index]) { index += 1 }
            guard index < tag.count, tag[index] == UInt8(ascii: "\"") || tag[index] == UInt8(ascii: "'") else {
                throw Failure(message: "the attribute \(key) of <\(name)> is not quoted")
            }
            let quote = tag[index]
            index += 1
            let valueStart = index
            while index < tag.count, tag[index] != quote { index += 1 }
            guard index < tag.count else { throw Failure(message: "the attribute \(key) of <\(name)> does not end") }
            attributes[key] = try decode(Array(tag[valueStart..<index]))
            index += 1
        }
        return (name, attributes)
    }

    /// Text with its entities and character references decoded; not UTF-8, an unknown entity
    /// or a reference to no character is an error.
    static func decode(_ bytes: [UInt8]) throws(Failure) -> String {
        guard let whole = String(validating: bytes, as: UTF8.self) else { throw Failure(message: "text that is not UTF-8") }
        guard whole.contains("&") else { return whole }
        var text = whole[...]
        var decoded = ""
        while let ampersand = text.firstIndex(of: "&") {
            decoded += text[..<ampersand]
            guard let semicolon = text[ampersand...].prefix(maximumReferenceBytes).firstIndex(of: ";") else {
                throw Failure(message: "an '&' that starts no entity")
            }
            let entity = text[text.index(after: ampersand)..<semicolon]
            switch entity {
            case "lt": decoded += "<"
            case "gt": decoded += ">"
            case "amp": decoded += "&"
            case "quot": decoded += "\""
            case "apos": decoded += "'"
            default:
                let scalar: UInt32?
                if entity.hasPrefix("#x") || entity.hasPrefix("#X") {
                    scalar = UInt32(entity.dropFirst(2), radix: 16)
                } else if entity.hasPrefix("#") {
                    scalar = UInt32(entity.dropFirst(), radix: 10)
                } else {
                    throw Failure(message: "the entity &\(entity.prefix(8)); is not one of XML's five")
                }
                guard let scalar, let character = Unicode.Scalar(scalar) else { throw Failure(message: "a character reference to no character") }
                decoded.unicodeScalars.append(character)
            }
            text = text[text.index(after: semicolon)...]
        }
        return decoded + text
    }

    /// The longest entity or character reference read, `&` to `;` (`&#x10FFFF;` is 10).
    static let maximumReferenceBytes = 12

    static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

    /// The index just past the first `pattern` in `bytes` at or after `start`.
    static func find(_ pattern: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard start <= bytes.count, pattern.count <= bytes.count else { return nil }
        var index = start
        while index + pattern.count <= bytes.count {
            if bytes[index..<(index + pattern.count)].elementsEqual(pattern) { return index + pattern.count }
            index += 1
        }
        return nil
    }
}
