import Foundation
import OnboardingModel

/// Keycloak's events made ready for an import: one event per line, oldest first.
///
/// The admin REST API answers one JSON array (``JSONArraySplitter`` reads it, also
/// pretty-printed), newest first; a file of one event object per line is read as it is. The
/// lockout replays an import in its order, so the events are put in time order (a stable sort:
/// events of one millisecond keep their order in the file), written to a scratch file, and the
/// import reads that. Memory holds 24 bytes per event, never the events, and 4 more for the
/// line (or array element) each sorted event came from, which a skipped line is reported by.
enum KeycloakInput {
    struct Prepared {
        let input: ImportInput
        /// Lines dropped before the import's passes (longer than a line may be), by kind, with
        /// their line numbers in the file.
        let skipped: SkippedLines
    }

    private struct Element {
        var time: Int64
        var offset: Int64
        var length: Int32
        /// The line of the file, or for an array the element's number (from 1): fits the
        /// padding after `length`, so an element still takes 24 bytes.
        var line: Int32
    }

    static func prepare(_ input: ImportInput) throws(ImportError) -> Prepared {
        let raw = try ScratchFile(purpose: "the events of \(input.name)")
        var elements: [Element] = []
        var skipped = SkippedLines()
        let parser = KeycloakEventParser()
        var failure: ImportError?
        func keep(_ bytes: UnsafeRawBufferPointer, line: Int) {
            guard failure == nil else { return }
            let time: Int64
            if case .event(let event) = parser.parse(bytes) { time = event.at.millisecondsSince1970 } else { time = .min }
            elements.append(Element(time: time, offset: raw.size, length: Int32(bytes.count), line: Int32(clamping: line)))
            do throws(ImportError) { try raw.append(bytes) } catch { failure = error }
        }

        let read = try input.firstPassReader()
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: JSONLReader.readChunkBytes, alignment: 16)
        defer { chunk.deallocate() }
        var count = try read(chunk)
        let head = UnsafeRawBufferPointer(rebasing: chunk[..<count])
        if JSONArraySplitter.isArray(firstBytes: head) {
            var splitter = JSONArraySplitter()
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
        } else {
            // One event per line: the first chunk was read already, so it is handed out first.
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

        // Oldest first; unreadable events (time .min) first of all, where the import skips them.
        let order = elements.indices.sorted { a, b in
            elements[a].time != elements[b].time ? elements[a].time < elements[b].time : a < b
        }
        let lines = try ScratchFile(purpose: "the events of \(input.name) in time order")
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Limits.maximumJSONLineBytes + 1, alignment: 16)
        defer { buffer.deallocate() }
        for index in order {
            let element = elements[index]
            let length = Int(element.length)
            guard try raw.read(at: element.offset, into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<length])) == length else {
                throw ImportError(.inputOutput, "cannot read back the events of \(input.name) from a temporary file")
            }
            buffer[length] = 0x0A
            try lines.append(UnsafeRawBufferPointer(rebasing: buffer[...length]))
        }
        return Prepared(
            input: try ImportInput(prepared: lines, from: input, sourceLines: order.map { elements[$0].line }), skipped: skipped)
    }
}
