// Fuzzes the foreign-log readers of `onboard import --from sshd|keycloak` (docs/importers.md):
// `SSHDLogParser` with `YearInference`, `KeycloakEventParser`, `JSONArraySplitter`, and what the
// import makes of a line (`LineDecoder`: the event id, the default device, `event.validate()`).
//
// Byte 0 picks the mode and its settings; the rest is the input.
//   bits 0-1: 0 sshd, 1 keycloak, 2 splitter, 3 splitter with a small element limit
//   sshd:     bits 2-3 the start year (1970, 2026, 9999, 1) and the inference's reference
//             (the middle of that year), bits 4-5 the zone (UTC, Europe/Berlin, Pacific/Chatham,
//             Australia/Lord_Howe)
//   sshd and keycloak: bit 6 gives the import a default device (`--device kiosk-7`)
//   sshd: bit 7 reads in aggressive mode (`--sshd-mode aggressive`)
//   splitter with a small limit: bits 2-7 the limit minus one (1…64 bytes)
//
// Properties: nothing traps. Every event a parser reads has `at` within Timestamp's years, a host
// that is nil or a device id, a user that is nil or a user id, and a client address that is nil
// or canonical. sshd: an event comes from the line read or an earlier one; a fresh parser reads the
// same lines (and the log's end) the same way; a parser started in the
// year `YearInference` gives never yields an event outside those bounds. Keycloak: an event comes
// only from bytes Foundation's JSON parser reads as an object (or refuses only for a number beyond
// a double's range, which the parser ignores on purpose). LineDecoder: it reads what the
// parser reads; an event is valid, has a version-8 id, survives `EventJSON.encode` → decode, and
// is refused only when it names no device and none is given. Splitter: one chunk, two chunks and
// one byte at a time give the same elements and the same error; a smaller limit only cuts the
// elements short with a limit error; an array Foundation reads (UTF-8, no element over the limit)
// splits without error into as many elements, each of which Foundation reads alone (but for a
// trailing comma, `[1,]`, which Foundation reads and the splitter refuses, as JSON does).
import Foundation
import FuzzEntry
import FuzzSupport
@testable import OnboardingImport
import OnboardingStore

private let target = "FuzzLogLine"

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzLogLine(_ start: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    let all = UnsafeRawBufferPointer(start: start, count: count)
    guard let mode = all.first else { return 0 }
    let check = Check(all: all, input: UnsafeRawBufferPointer(rebasing: all[1...]))
    switch mode & 0x03 {
    case 0: check.sshd(mode)
    case 1: check.keycloak(check.input, defaultDevice: mode & 0x40 != 0 ? FuzzFixtures.device : nil, withDecoder: true)
    case 2: check.splitter(limit: JSONArraySplitter.defaultMaximumElementBytes)
    default: check.splitter(limit: 1 + Int(mode >> 2))
    }
    return 0
}

private let startYears = [1970, 2026, 9999, 1]

private let zones: [TimeZone] = ["UTC", "Europe/Berlin", "Pacific/Chatham", "Australia/Lord_Howe"].map { name in
    guard let zone = TimeZone(identifier: name) else { FuzzCheck.fail(target, "the time zone \(name) is not on this machine") }
    return zone
}

/// The middle of each start year: the reference (the file's modification time) of the inference.
private let references: [Date] = startYears.map { year in
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "UTC")!
    guard let date = calendar.date(from: DateComponents(year: year, month: 6, day: 15, hour: 12)) else {
        FuzzCheck.fail(target, "no reference date in \(year)")
    }
    return date
}

private struct Check {
    /// The whole input, mode byte included (for messages).
    let all: UnsafeRawBufferPointer
    /// The input after the mode byte.
    let input: UnsafeRawBufferPointer

    func fail(_ message: String) -> Never {
        FuzzCheck.fail(target, "\(message)\n  input: \(FuzzCheck.hex(all))")
    }

    // MARK: sshd

    func sshd(_ mode: UInt8) {
        let yearIndex = Int(mode >> 2) & 3
        let year = startYears[yearIndex]
        let zone = zones[Int(mode >> 4) & 3]
        let defaultDevice = mode & 0x40 != 0 ? FuzzFixtures.device : nil
        let sshdMode: SSHDMode = mode & 0x80 != 0 ? .aggressive : .normal

        var lines: [UnsafeRawBufferPointer] = []
        var lineStart = 0
        for (index, byte) in input.enumerated() where byte == 0x0A {
            lines.append(UnsafeRawBufferPointer(rebasing: input[lineStart..<index]))
            lineStart = index + 1
        }
        lines.append(UnsafeRawBufferPointer(rebasing: input[lineStart...]))
        let texts = lines.map { String(validating: $0, as: UTF8.self) }
        // The parser takes any String; a line that is not UTF-8 is read with replacements.
        let strings = zip(lines, texts).map { line, text in text ?? String(decoding: line, as: UTF8.self) }

        var parser = SSHDLogParser(startYear: year, timeZone: zone, mode: sshdMode)
        let first = strings.enumerated().map { number, line in parser.read(line, number: number + 1) }
        let open = parser.finish()
        for (number, reading) in first.enumerated() {
            for found in reading.events {
                checkFields(found.event, "sshd line \(found.line) (start year \(year), \(zone.identifier))")
                // An event comes from the line read or an earlier one (one that waited).
                guard found.line >= 1, found.line <= number + 1 else { fail("sshd line \(number + 1) gave an event of line \(found.line)") }
            }
        }
        var fresh = SSHDLogParser(startYear: year, timeZone: zone, mode: sshdMode)
        for (number, line) in strings.enumerated() {
            let again = fresh.read(line, number: number + 1)
            guard again == first[number] else {
                fail("a fresh parser reads sshd line \(number + 1) otherwise\n  first: \(first[number])\n  again: \(again)")
            }
        }
        guard fresh.finish() == open else { fail("a fresh parser ends the log otherwise") }

        var inference = YearInference()
        for line in strings { inference.note(line) }
        var inferenceAgain = YearInference()
        for line in strings { inferenceAgain.note(line) }
        guard inference == inferenceAgain else { fail("YearInference noted the same lines otherwise") }
        let inferred = inference.startYear(endingBy: references[yearIndex], timeZone: zone)
        var inferredParser = SSHDLogParser(startYear: inferred, timeZone: zone, mode: sshdMode)
        for (number, line) in strings.enumerated() {
            for found in inferredParser.read(line, number: number + 1).events {
                checkFields(found.event, "sshd line \(found.line) in the inferred start year \(inferred) (\(zone.identifier))")
            }
        }

        // What the import makes of each line, against a parser that sees the lines it sees.
        var decoder = LineDecoder(format: .sshd(year: nil, timeZone: zone, mode: sshdMode), startYear: year, defaultDevice: defaultDevice)
        var reference = SSHDLogParser(startYear: year, timeZone: zone, mode: sshdMode)
        for (index, line) in lines.enumerated() {
            let decoding = decoder.decode(line, line: index + 1)
            guard let text = texts[index] else {
                guard case .skipped("not UTF-8") = decoding else { fail("sshd line \(index + 1) is not UTF-8, and the import read \(decoding)") }
                continue
            }
            let expected = reference.read(text, number: index + 1)
            checkSSHDDecoding(decoding, of: expected, defaultDevice: defaultDevice, "sshd line \(index + 1)")
        }
        let ended = reference.finish()
        guard case .several(let none, let skipped) = decoder.finish(), none.isEmpty, skipped.map({ $0.kind }) == ended.skipped,
            skipped.map({ $0.line }) == ended.skippedLines
        else {
            fail("the import ends the sshd log otherwise than the parser")
        }
    }

    /// What the import made of one sshd line against the parser's reading of it.
    func checkSSHDDecoding(_ decoding: LineDecoding, of reading: SSHDLineReading, defaultDevice: String?, _ what: String) {
        switch decoding {
        case .event:
            guard reading.events.count == 1, reading.skipped.isEmpty else { fail("\(what): the import read one event, the parser \(reading)") }
            checkDecoding(decoding, of: .event(reading.events[0].event), defaultDevice: defaultDevice, what)
        case .skipped(let kind):
            guard reading.events.isEmpty, reading.skipped == [kind] else { fail("\(what): the import skipped it as \(kind), the parser read \(reading)") }
        case .invalid(let message), .invalidLine(_, let message):
            guard reading.events.contains(where: { $0.event.host == nil }), defaultDevice == nil else {
                fail("\(what): the import refuses an event the parser read: \(message)")
            }
        case .several(let events, let skipped):
            guard skipped.map({ $0.kind }) == reading.skipped, skipped.map({ $0.line }) == reading.skippedLines, events.count == reading.events.count
            else {
                fail("\(what): the import read \(events.count) events and \(skipped), the parser \(reading)")
            }
            for (found, expected) in zip(events, reading.events) {
                guard found.line == expected.line else { fail("\(what): an event of line \(expected.line) given to line \(found.line)") }
                checkDecoding(.event(found.decoded), of: .event(expected.event), defaultDevice: defaultDevice, what)
            }
            guard Set(events.map(\.decoded.event.id)).count == events.count else { fail("\(what): two events of one reading share an id") }
        }
    }

    // MARK: Keycloak

    func keycloak(_ element: UnsafeRawBufferPointer, defaultDevice: String?, withDecoder: Bool) {
        let parser = KeycloakEventParser()
        let read = parser.parse(element)
        guard parser.parse(element) == read else { fail("the Keycloak parser reads the same element otherwise") }
        if case .event(let found) = read {
            checkFields(found, "the Keycloak event")
            do {
                let object = try JSONSerialization.jsonObject(with: Data(element), options: [])
                guard object is [String: Any] else {
                    fail("the Keycloak parser read an event from JSON that Foundation reads as no object\n  element: \(FuzzCheck.hex(element))")
                }
            } catch {
                // Foundation refuses a number beyond a double's range (`1e400`), which RFC 8259
                // § 6 lets a reader do; the parser ignores members it does not read and checks
                // `time` itself, and keeps such an event on purpose
                // (KeycloakEventParserTests.largeInput). Any other refusal is a disagreement.
                guard AuthLogCheck.holdsNumberBeyondDouble(element) else {
                    fail("the Keycloak parser read an event from bytes Foundation's JSON parser refuses: \(error)\n  element: \(FuzzCheck.hex(element))")
                }
            }
        }
        guard withDecoder else { return }
        var decoder = LineDecoder(format: .keycloak(timeZone: TimeZone(identifier: "UTC")!), startYear: nil, defaultDevice: defaultDevice)
        checkDecoding(decoder.decode(element, line: 1), of: read, defaultDevice: defaultDevice, "the Keycloak event")
    }

    // MARK: Shared

    /// The envelope's rules, which the parsers check so that the import never stops on a line.
    func checkFields(_ event: AuthLogEvent, _ what: String) {
        if let problem = AuthLogCheck.problem(with: event) { fail("\(what) \(problem)") }
    }

    /// What the import made of a line, against what its parser read.
    func checkDecoding(_ decoding: LineDecoding, of read: AuthLogLine, defaultDevice: String?, _ what: String) {
        switch (read, decoding) {
        case (.skipped(let kind), .skipped(let decodedKind)):
            guard kind == decodedKind else { fail("\(what): the parser skipped it as \(kind), the import as \(decodedKind)") }
        case (.event(let found), .invalid(let message)):
            guard found.host == nil, defaultDevice == nil else {
                fail("\(what): the import refuses the event the parser read: \(message)\n  event: \(found)")
            }
        case (.event(let found), .event(let decoded)):
            let event = decoded.event
            guard decoded.seq == nil, event.device == found.host ?? defaultDevice, event.at == found.at, event.user == found.user,
                event.flow == nil, event.payload == found.payload
            else {
                fail("\(what): the import made another event of it\n  parsed: \(found)\n  import: \(EventJSON.encode(event, seq: nil))")
            }
            checkEvent(event, what)
        default:
            fail("\(what): the parser read \(read), the import \(decoding)")
        }
    }

    /// An event the import appends: valid, with a version-8 id, and the same after its JSON line.
    func checkEvent(_ event: Event, _ what: String) {
        do { try event.validate() } catch { fail("\(what): the import made an invalid event: \(error)") }
        let id = event.id.uuid
        guard id.6 >> 4 == 8, id.8 >> 6 == 0b10 else { fail("\(what): the event id \(event.id) is no version-8 UUID") }
        let line = EventJSON.encode(event, seq: nil)
        let decoded: EventJSON.Decoded
        do { decoded = try EventJSON.decode(line: line) } catch {
            fail("\(what): the event's line does not decode: \(error)\n  line: \(line)")
        }
        guard decoded.event == event, decoded.seq == nil else { fail("\(what): the event's line decodes to another event\n  line: \(line)") }
        let fast = Array(line.utf8).withUnsafeBytes { try? EventJSON.decode(lineBytes: $0) }
        guard let fast, fast.event == event, fast.seq == nil else {
            fail("\(what): the import's reader of lines does not read the event's line back\n  line: \(line)")
        }
    }

    // MARK: Splitter

    struct Split: Equatable {
        var elements: [[UInt8]] = []
        /// The error's message, `nil` when the array was read to its end.
        var failure: String?
    }

    /// Splits `input` fed in the chunks that start at `cuts` (sorted offsets, the first 0).
    func split(cuts: [Int], limit: Int) -> Split {
        var splitter = JSONArraySplitter(maximumElementBytes: limit)
        var split = Split()
        let bounds = cuts + [input.count]
        do {
            for (start, end) in zip(bounds, bounds.dropFirst()) where start < end {
                try splitter.feed(UnsafeRawBufferPointer(rebasing: input[start..<end])) { element in
                    guard element.count <= limit else { fail("the splitter handed out an element of \(element.count) bytes, over its limit of \(limit)") }
                    split.elements.append(Array(element))
                }
            }
            let count = try splitter.finish()
            guard count == split.elements.count, splitter.elementCount == count else {
                fail("the splitter counted \(count) elements (elementCount \(splitter.elementCount)) and handed out \(split.elements.count)")
            }
        } catch let error as JSONArraySplitterError {
            split.failure = error.message
        } catch {
            fail("the splitter threw something other than a JSONArraySplitterError: \(error)")
        }
        return split
    }

    /// Whether `failure` is the splitter refusing a `]` right after the `,` that follows the
    /// last of `elements` elements: a trailing comma, which Foundation's parser reads (`[1,]` as
    /// `[1]`) and the splitter refuses as JSON does (JSONArraySplitterTests pins it).
    func isTrailingComma(_ failure: String, elements: Int) -> Bool {
        let prefix = "unexpected ']' at byte "
        let suffix = " where element \(elements + 1) should begin"
        guard failure.hasPrefix(prefix), failure.hasSuffix(suffix),
            let byte = Int(failure.dropFirst(prefix.count).dropLast(suffix.count)), (1...input.count).contains(byte),
            input[byte - 1] == UInt8(ascii: "]")
        else { return false }
        let before = input[..<(byte - 1)].last { !JSONArraySplitter.isWhitespace($0) }
        return before == UInt8(ascii: ",")
    }

    func splitter(limit: Int) {
        let whole = split(cuts: [0], limit: limit)
        let cut = input.isEmpty ? 0 : (Int(input[0]) &* 257 &+ Int(input[input.count - 1])) % (input.count + 1)
        let halves = split(cuts: [0, cut], limit: limit)
        guard halves == whole else {
            fail(
                "split in two at byte \(cut), the array splits otherwise\n  whole: \(whole.elements.count) elements, \(whole.failure ?? "no error")\n  two:   \(halves.elements.count) elements, \(halves.failure ?? "no error")"
            )
        }
        let bytewise = split(cuts: Array(0..<input.count), limit: limit)
        guard bytewise == whole else {
            fail(
                "fed one byte at a time, the array splits otherwise\n  whole: \(whole.elements.count) elements, \(whole.failure ?? "no error")\n  bytes: \(bytewise.elements.count) elements, \(bytewise.failure ?? "no error")"
            )
        }

        let defaultLimit = JSONArraySplitter.defaultMaximumElementBytes
        guard limit == defaultLimit else {
            // A smaller limit only stops the split early, at an element over it.
            let unlimited = split(cuts: [0], limit: defaultLimit)
            guard whole != unlimited else { return }
            guard let failure = whole.failure, failure.contains("is longer than the limit of \(limit) bytes"),
                unlimited.elements.starts(with: whole.elements)
            else {
                fail(
                    "with a limit of \(limit) bytes the array splits otherwise than with \(defaultLimit)\n  small: \(whole.elements.count) elements, \(whole.failure ?? "no error")\n  large: \(unlimited.elements.count) elements, \(unlimited.failure ?? "no error")"
                )
            }
            return
        }
        // Each element is also an event to the Keycloak parser (the import's next step).
        for element in whole.elements.prefix(64) {
            element.withUnsafeBytes { keycloak($0, defaultDevice: FuzzFixtures.device, withDecoder: false) }
        }
        // Differential: an array Foundation reads. UTF-8 without NUL (Foundation would also read
        // UTF-16 and UTF-32), and no element can exceed the limit when the whole input fits it.
        guard input.count <= defaultLimit, !input.contains(0), String(validating: input, as: UTF8.self) != nil,
            let array = (try? JSONSerialization.jsonObject(with: Data(input), options: [])) as? [Any]
        else { return }
        if let failure = whole.failure, !isTrailingComma(failure, elements: array.count) {
            fail("the splitter refuses an array of \(array.count) elements that Foundation reads: \(failure)")
        }
        guard whole.elements.count == array.count else {
            fail("the splitter found \(whole.elements.count) elements in an array where Foundation reads \(array.count)")
        }
        for (index, element) in whole.elements.enumerated() {
            guard (try? JSONSerialization.jsonObject(with: Data(element), options: [.fragmentsAllowed])) != nil else {
                fail("element \(index + 1) as split is JSON Foundation refuses: \(FuzzCheck.hex(element))")
            }
        }
    }
}

/// See ``FuzzEntry``: SwiftPM's entry point for this executable, handed to libFuzzer's driver.
@_cdecl("FuzzLogLine_main")
public func fuzzLogLineMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    FuzzEntry.run(argc, argv, fuzzLogLine)
}
