import OnboardingModel

/// Reads Windows events as XML — `wevtutil qe Security /f:xml` (concatenated
/// `<Event xmlns=…>` elements), `Get-WinEvent … | ForEach-Object { $_.ToXml() }`, or the same
/// inside a root element — in one streaming pass, and hands each `<Event>` out as one JSON line
/// in the shape winlogbeat writes (`@timestamp`, `winlog.event_id`, `winlog.computer_name`,
/// `winlog.event_data`), so that ``WindowsSecurityParser`` reads both forms alike.
///
/// A reader of our own, small and bounded, rather than an XML library: it reads only what these
/// exports hold (elements, attributes, text, comments, processing instructions, the five
/// predefined entities and character references) and refuses a document type declaration, so no
/// entity can expand. An `<Event>` is at most ``maximumEventBytes``; one that is longer or cannot
/// be read becomes a line with ``errorMember``, which the parser counts as skipped.
///
/// ```swift
/// var reader = WindowsEventXMLReader()
/// try reader.feed(chunk) { line in … }   // for each chunk
/// try reader.finish()
/// ```
struct WindowsEventXMLReader {
    /// The longest `<Event>` element kept: the limit of one JSON line (an event of the Security
    /// log is a few kilobytes).
    static let maximumEventBytes = Limits.maximumJSONLineBytes
    /// The member of a line that stands for an event that could not be read.
    static let errorMember = "xml_error"
    /// The `EventData` items kept (the parser reads no other).
    static let keptData: Set<String> = ["TargetUserName", "TargetDomainName", "IpAddress", "SubStatus", "Status", "LogonType"]
    /// Nesting deeper than this is no Windows event.
    static let maximumDepth = 16

    private enum Position {
        /// Between elements: text is ignored.
        case outside
        /// After `<`, reading a markup's first bytes.
        case markup
        /// Inside a comment, processing instruction or other tag that is not `<Event`, to its end.
        case skipping(end: [UInt8])
        /// Inside an `<Event>`, until `</Event>`.
        case inEvent
        /// Inside an `<Event>` longer than the limit: dropped until `</Event>`.
        case inLongEvent
    }

    private var position = Position.outside
    private var markup: [UInt8] = []
    private var event: [UInt8] = []
    /// How much of `</Event>` the last bytes matched, while skipping a long event.
    private var closeMatched = 0
    private var skipMatched = 0
    private var offset: Int64 = 0
    /// Events handed out.
    private(set) var eventCount = 0
    private static let eventClose = Array("</Event>".utf8)

    mutating func feed(_ bytes: UnsafeRawBufferPointer, emit: (UnsafeRawBufferPointer) throws -> Void) throws {
        for byte in bytes {
            try step(byte, emit: emit)
            offset += 1
        }
    }

    /// Ends the stream: throws a ``JSONArraySplitterError`` when it ends inside an event.
    func finish() throws(JSONArraySplitterError) {
        switch position {
        case .inEvent, .inLongEvent: throw JSONArraySplitterError("the XML ends inside event \(eventCount + 1): the input is cut short")
        case .outside, .markup, .skipping: return
        }
    }

    private mutating func step(_ byte: UInt8, emit: (UnsafeRawBufferPointer) throws -> Void) throws {
        switch position {
        case .outside:
            if byte == UInt8(ascii: "<") {
                markup = [byte]
                position = .markup
            }
        case .markup:
            markup.append(byte)
            try classifyMarkup(emit: emit)
        case .skipping(let end):
            skipMatched = byte == end[skipMatched] ? skipMatched + 1 : (byte == end[0] ? 1 : 0)
            if skipMatched == end.count {
                skipMatched = 0
                position = .outside
            }
        case .inEvent:
            event.append(byte)
            if byte == UInt8(ascii: ">"), event.count >= Self.eventClose.count, event.suffix(Self.eventClose.count).elementsEqual(Self.eventClose) {
                eventCount += 1
                let line = Self.line(fromEvent: event)
                event.removeAll(keepingCapacity: true)
                position = .outside
                try line.withUnsafeBytes { try emit($0) }
            } else if event.count > Self.maximumEventBytes {
                event.removeAll(keepingCapacity: true)
                closeMatched = 0
                position = .inLongEvent
            }
        case .inLongEvent:
            closeMatched = byte == Self.eventClose[closeMatched] ? closeMatched + 1 : (byte == Self.eventClose[0] ? 1 : 0)
            if closeMatched == Self.eventClose.count {
                eventCount += 1
                position = .outside
                let line = Self.errorLine("the event is longer than \(Self.maximumEventBytes) bytes")
                try line.withUnsafeBytes { try emit($0) }
            }
        }
    }

    /// Decides what a markup is once enough of its first bytes are known: a comment, a
    /// processing instruction, a declaration, an `<Event>`, or another tag.
    private mutating func classifyMarkup(emit: (UnsafeRawBufferPointer) throws -> Void) throws {
        let text = markup
        let last = text[text.count - 1]
        if text.count == 2, last == UInt8(ascii: "?") {
            position = .skipping(end: Array("?>".utf8))
            return
        }
        if text.starts(with: Array("<!".utf8)) {
            if text.elementsEqual("<!--".utf8) {
                position = .skipping(end: Array("-->".utf8))
                return
            }
            guard text.count >= 9 || Self.endsName(last) else { return }
            if text.starts(with: Array("<!DOCTYPE".utf8)) || text.starts(with: Array("<!ENTITY".utf8)) {
                throw JSONArraySplitterError(
                    "the XML declares a document type or entity (at byte \(offset + 1)); an event export has none, and entities are never expanded")
            }
            position = .skipping(end: text.starts(with: Array("<![CDATA[".utf8)) ? Array("]]>".utf8) : [UInt8(ascii: ">")])
            return
        }
        if Self.endsName(last), text.count > 2 {
            if text.count == 7, text.starts(with: Array("<Event".utf8)), last != UInt8(ascii: "/") {
                event = text
                position = .inEvent
            } else {
                // Another tag (a root such as `<Events>`, or its end): skipped to its `>`.
                position = last == UInt8(ascii: ">") ? .outside : .skipping(end: [UInt8(ascii: ">")])
            }
            return
        }
        if text.count == 2, Self.endsName(last) {
            position = .outside // `< ` or `<>`: not markup
        } else if text.count > Self.maximumNameBytes {
            position = .skipping(end: [UInt8(ascii: ">")])
        }
    }

    /// A tag name longer than this is no name this reader looks for.
    static let maximumNameBytes = 64

    private static func endsName(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: ">") || byte == UInt8(ascii: "/") || JSONArraySplitter.isWhitespace(byte)
    }

    static func errorLine(_ reason: String) -> [UInt8] {
        var writer = JSONWriter()
        writer.append(.object([.init(errorMember, .string(reason))]))
        return writer.bytes
    }

    /// The JSON line of one `<Event>…</Event>`, or an error line.
    static func line(fromEvent bytes: [UInt8]) -> [UInt8] {
        var fields = XMLEventFields()
        do {
            try fields.read(bytes)
        } catch {
            return errorLine(error.message)
        }
        var winlog: [JSONValue.Member] = []
        if let id = fields.eventID { winlog.append(.init("event_id", .string(id))) }
        if let computer = fields.computer { winlog.append(.init("computer_name", .string(computer))) }
        winlog.append(.init("event_data", .object(fields.data.map { JSONValue.Member($0.name, .string($0.value)) })))
        var members: [JSONValue.Member] = []
        if let time = fields.systemTime { members.append(.init("@timestamp", .string(time))) }
        members.append(.init("winlog", .object(winlog)))
        var writer = JSONWriter()
        writer.append(.object(members))
        return writer.bytes
    }
}
