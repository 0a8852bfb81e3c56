import Foundation
import OnboardingModel

/// A log of JSON records made ready for an import: one record per line, oldest first. Every
/// JSON format shares it (Keycloak, Okta, Entra ID, CloudTrail, Windows), whatever form the file
/// takes:
///
/// - one JSON array (``JSONArraySplitter`` reads it, also pretty-printed or on one huge line);
/// - an object holding the array under one member (CloudTrail's `{"Records":[…]}`, Microsoft
///   Graph's `{"value":[…]}`: ``JSONWrappedArraySplitter``), for the formats that have one;
/// - XML `<Event>` elements, for Windows (``WindowsEventXMLReader`` makes each a JSON line);
/// - one JSON object per line, read as it is.
///
/// Logs come newest first (Keycloak's and Okta's APIs, Graph) or in any order, and the lockout
/// replays an import in its order: the records are put in time order (a stable sort, so records
/// of one millisecond keep their order in the file), written to a scratch file, and the import
/// reads that. Memory holds 24 bytes per record, never the records. A file whose first byte is
/// none of these forms' stops the import with one line naming what was expected.
///
/// ```swift
/// let prepared = try JSONLogInput.prepare(input, format: .okta)
/// // prepared.input: the records one per line, oldest first
/// ```
enum JSONLogInput {
    struct Prepared {
        let input: ImportInput
        /// Records dropped before the import's passes (longer than a line may be), by kind, with
        /// their line numbers in the file.
        let skipped: SkippedLines
        /// Keycloak's hints, by line of the prepared input (``KeycloakNames``); empty for the
        /// other formats.
        let keycloakHints: [Int: KeycloakEventParser.Hint]
    }

    private struct Element {
        var time: Int64
        var offset: Int64
        var length: Int32
        /// The line of the file, or for an array the record's number (from 1): fits the padding
        /// after `length`, so a record still takes 24 bytes.
        var line: Int32
    }

    /// The form of the file, from its first bytes.
    private enum Form {
        case array, wrapped(String), xml, lines
    }

    static func prepare(_ input: ImportInput, format: ImportFormat) throws(ImportError) -> Prepared {
        guard let log = format.recordLog else { preconditionFailure("\(format.name) is not a log of JSON records") }
        let raw = try ScratchFile(purpose: "the records of \(input.name)")
        var elements: [Element] = []
        var skipped = SkippedLines()
        var failure: ImportError?
        func keep(_ bytes: UnsafeRawBufferPointer, line: Int) {
            guard failure == nil else { return }
            let time: Int64
            if case .event(let event) = log.parser.parse(bytes) { time = event.at.millisecondsSince1970 } else { time = .min }
            elements.append(Element(time: time, offset: raw.size, length: Int32(bytes.count), line: Int32(clamping: line)))
            do throws(ImportError) { try raw.append(bytes) } catch { failure = error }
        }

        let read = try input.firstPassReader()
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: JSONLReader.readChunkBytes, alignment: 16)
        defer { chunk.deallocate() }
        var count = try read(chunk)
        let head = UnsafeRawBufferPointer(rebasing: chunk[..<count])
        let form = try Self.form(of: head, log: log, name: input.name)
        switch form {
        case .array, .wrapped, .xml:
            var splitter = Splitter(form)
            do {
                while count > 0 {
                    try splitter.feed(UnsafeRawBufferPointer(rebasing: chunk[..<count])) { element in keep(element, line: elements.count + 1) }
                    if let failure { throw failure }
                    count = try read(chunk)
                }
                try splitter.finish()
            } catch let error as ImportError {
                throw error
            } catch {
                throw ImportError(.invalidInput, "\(input.name): \(error); nothing was imported")
            }
        case .lines:
            // One record per line: the first chunk was read already, so it is handed out first.
            var first: UnsafeRawBufferPointer? = head
            let rest: (UnsafeMutableRawBufferPointer) throws(ImportError) -> Int = { buffer throws(ImportError) in
                if let pending = first {
                    first = nil
                    precondition(pending.count <= buffer.count, "the first chunk fits the reader's buffer")
                    buffer.copyMemory(from: pending)
                    return pending.count
                }
                return try read(buffer)
            }
            try JSONLReader.read(from: rest) { line throws(ImportError) in
                switch line.content {
                case .text(let bytes): keep(bytes, line: line.number)
                case .tooLong(let isValidUTF8): skipped.add(isValidUTF8 ? "too long" : "not UTF-8", line: line.number)
                }
                if let failure { throw failure }
            }
        }
        if let failure { throw failure }

        // Oldest first; unreadable records (time .min) first of all, where the import skips them.
        let order = elements.indices.sorted { a, b in
            elements[a].time != elements[b].time ? elements[a].time < elements[b].time : a < b
        }
        var names: KeycloakNames?
        if case .keycloak(let zone) = format { names = KeycloakNames(timeZone: zone) }
        let lines = try ScratchFile(purpose: "the records of \(input.name) in time order")
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Limits.maximumJSONLineBytes + 1, alignment: 16)
        defer { buffer.deallocate() }
        for (position, index) in order.enumerated() {
            let element = elements[index]
            let length = Int(element.length)
            guard try raw.read(at: element.offset, into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<length])) == length else {
                throw ImportError(.inputOutput, "cannot read back the records of \(input.name) from a temporary file")
            }
            names?.note(UnsafeRawBufferPointer(rebasing: buffer[..<length]), line: position + 1)
            buffer[length] = 0x0A
            try lines.append(UnsafeRawBufferPointer(rebasing: buffer[...length]))
        }
        return Prepared(
            input: try ImportInput(prepared: lines, from: input, sourceLines: order.map { elements[$0].line }), skipped: skipped,
            keycloakHints: names?.hints ?? [:])
    }

    /// What the first bytes say the file is; an empty file (or only whitespace) is lines, of
    /// which there are none. Any other first byte is not this log: one line says what was expected.
    private static func form(of head: UnsafeRawBufferPointer, log: RecordLog, name: String) throws(ImportError) -> Form {
        var rest = head[...]
        // PowerShell's `>` and `Out-File` write UTF-16 with a byte order mark.
        if rest.starts(with: [0xFF, 0xFE]) || rest.starts(with: [0xFE, 0xFF]) {
            throw ImportError(
                .invalidInput,
                "\(name): not \(log.title): it is UTF-16 (it starts with a UTF-16 byte order mark); convert it to UTF-8, e.g. iconv -f UTF-16 -t UTF-8, or write it with Out-File -Encoding utf8; nothing was imported"
            )
        }
        if rest.starts(with: JSONArraySplitter.byteOrderMark) { rest = rest.dropFirst(JSONArraySplitter.byteOrderMark.count) }
        switch rest.first(where: { !JSONArraySplitter.isWhitespace($0) }) {
        case nil: return .lines
        case UInt8(ascii: "[")?: return .array
        case UInt8(ascii: "{")?:
            if let member = log.wrapperMember, JSONWrappedArraySplitter.isWrapped(firstBytes: head, member: member) { return .wrapped(member) }
            return .lines
        case UInt8(ascii: "<")? where log.readsXML: return .xml
        case let byte?:
            throw ImportError(
                .invalidInput,
                "\(name): not \(log.title): it starts with \(JSONArraySplitter.shown(byte)), expected \(log.expected); nothing was imported")
        }
    }

    /// The streaming reader of a form that is not lines.
    private struct Splitter {
        private var array: JSONArraySplitter?
        private var wrapped: JSONWrappedArraySplitter?
        private var xml: WindowsEventXMLReader?

        init(_ form: Form) {
            switch form {
            case .array, .lines: array = JSONArraySplitter()
            case .wrapped(let member): wrapped = JSONWrappedArraySplitter(member: member)
            case .xml: xml = WindowsEventXMLReader()
            }
        }

        mutating func feed(_ bytes: UnsafeRawBufferPointer, emit: (UnsafeRawBufferPointer) throws -> Void) throws {
            if array != nil { try array!.feed(bytes, emit: emit) }
            if wrapped != nil { try wrapped!.feed(bytes, emit: emit) }
            if xml != nil { try xml!.feed(bytes, emit: emit) }
        }

        func finish() throws {
            try array?.finish()
            try wrapped?.finish()
            try xml?.finish()
        }
    }
}
