// Fuzzes the identity providers' log readers of `onboard import --from okta|entra|cloudtrail|
// windows|keycloak` (docs/importers.md): `OktaLogParser`, `EntraSignInParser`,
// `CloudTrailLoginParser`, `WindowsSecurityParser`, `WindowsEventXMLReader` with
// `XMLEventFields`, `JSONWrappedArraySplitter`, Keycloak's lockout events with `KeycloakNames`'
// hints and `KeycloakLocalTime`, and what the import makes of a record (`LineDecoder`).
//
// Byte 0 picks the mode; the rest is the input.
//   bits 0-2: 0 Okta record, 1 Entra ID record, 2 CloudTrail record, 3 winlogbeat record,
//             4 Windows XML stream, 5 wrapped array (bit 3: "value", else "Records"),
//             6 Keycloak events one per line with hints, 7 Keycloak's `not_before` time
//   bits 3-4 (mode 7): the zone (UTC, Europe/Berlin, Pacific/Chatham, Australia/Lord_Howe)
//   bit 6: the import has a default device (`--device kiosk-7`)
//
// Properties: nothing traps. A parser reads the same bytes the same way every time. Every event
// has `at` within Timestamp's years, a host that is nil or a device id, a user that is nil or a
// user id, a client address that is nil or canonical, and an `until` within Timestamp's years;
// an event comes only from bytes Foundation's JSON parser reads as an object (or refuses only for
// a number beyond a double's range). LineDecoder reads what the parser reads, and its event is
// valid, with a version-8 id, and survives `EventJSON.encode` → decode. The XML reader and the
// wrapped splitter give the same records and error whole, in two chunks and a byte at a time;
// every line the XML reader makes is a JSON object Foundation reads; an object Foundation reads
// whose member holds an array splits into as many elements. A Keycloak `not_before` read is
// within Timestamp's years.
import Foundation
import FuzzEntry
import FuzzSupport
@testable import OnboardingImport
import OnboardingModel

private let target = "FuzzIdentityLog"

private let zones: [TimeZone] = ["UTC", "Europe/Berlin", "Pacific/Chatham", "Australia/Lord_Howe"].map { name in
    guard let zone = TimeZone(identifier: name) else { FuzzCheck.fail(target, "the time zone \(name) is not on this machine") }
    return zone
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzIdentityLog(_ start: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    let all = UnsafeRawBufferPointer(start: start, count: count)
    guard let mode = all.first else { return 0 }
    let check = IdentityCheck(all: all, input: UnsafeRawBufferPointer(rebasing: all[1...]))
    let device = mode & 0x40 != 0 ? FuzzFixtures.device : nil
    switch mode & 0x07 {
    case 0: check.record(check.input, OktaLogParser(), .okta, defaultDevice: device)
    case 1: check.record(check.input, EntraSignInParser(), .entra, defaultDevice: device)
    case 2: check.record(check.input, CloudTrailLoginParser(), .cloudtrail, defaultDevice: device)
    case 3: check.record(check.input, WindowsSecurityParser(), .windows, defaultDevice: device)
    case 4: check.xml(defaultDevice: device)
    case 5: check.wrapped(member: mode & 0x08 != 0 ? "value" : "Records", defaultDevice: device)
    case 6: check.keycloak(defaultDevice: device)
    default: check.keycloakTime(zone: zones[Int(mode >> 3) & 3])
    }
    return 0
}

private struct IdentityCheck {
    let all: UnsafeRawBufferPointer
    let input: UnsafeRawBufferPointer

    func fail(_ message: String) -> Never {
        FuzzCheck.fail(target, "\(message)\n  input: \(FuzzCheck.hex(all))")
    }

    // MARK: One record

    func record(_ element: UnsafeRawBufferPointer, _ parser: some JSONAuthLogParser, _ format: ImportFormat, defaultDevice: String?) {
        let read = parser.parse(element)
        guard parser.parse(element) == read else { fail("the \(format.name) parser reads the same record otherwise") }
        if case .event(let found) = read {
            checkFields(found, "the \(format.name) event")
            checkFoundationReadsAnObject(element, format.name)
        }
        var decoder = LineDecoder(format: format, startYear: nil, defaultDevice: defaultDevice)
        checkDecoding(decoder.decode(element, line: 1), of: read, defaultDevice: defaultDevice, "the \(format.name) record")
    }

    func checkFoundationReadsAnObject(_ element: UnsafeRawBufferPointer, _ name: String) {
        do {
            guard try JSONSerialization.jsonObject(with: Data(element), options: []) is [String: Any] else {
                fail("the \(name) parser read an event from JSON that Foundation reads as no object")
            }
        } catch {
            guard AuthLogCheck.holdsNumberBeyondDouble(element) else {
                fail("the \(name) parser read an event from bytes Foundation's JSON parser refuses: \(error)")
            }
        }
    }

    // MARK: Windows XML

    struct Read: Equatable {
        var records: [[UInt8]] = []
        var failure: String?
    }

    /// What `reader` makes of the input fed in the chunks that start at `cuts` (sorted offsets,
    /// the first 0): the XML reader, or the wrapped splitter.
    func read(_ reader: some StreamSplitter, cuts: [Int]) -> Read {
        var reader = reader
        var read = Read()
        let bounds = cuts + [input.count]
        do {
            for (start, end) in zip(bounds, bounds.dropFirst()) where start < end {
                try reader.feed(UnsafeRawBufferPointer(rebasing: input[start..<end])) { read.records.append(Array($0)) }
            }
            try reader.finish()
        } catch let error as JSONArraySplitterError {
            read.failure = error.message
        } catch {
            fail("\(type(of: reader)) threw something other than a JSONArraySplitterError: \(error)")
        }
        return read
    }

    func xml(defaultDevice: String?) {
        let whole = read(WindowsEventXMLReader(), cuts: [0])
        let cut = input.isEmpty ? 0 : (Int(input[0]) &* 257 &+ Int(input[input.count - 1])) % (input.count + 1)
        guard read(WindowsEventXMLReader(), cuts: [0, cut]) == whole else { fail("split in two at byte \(cut), the XML reads otherwise") }
        guard read(WindowsEventXMLReader(), cuts: Array(0..<input.count)) == whole else { fail("fed one byte at a time, the XML reads otherwise") }
        for record in whole.records.prefix(64) {
            guard record.count <= Limits.maximumJSONLineBytes else { fail("the XML reader made a line of \(record.count) bytes") }
            guard (try? JSONSerialization.jsonObject(with: Data(record), options: [])) is [String: Any] else {
                fail("the XML reader made a line that is no JSON object: \(FuzzCheck.hex(record))")
            }
            record.withUnsafeBytes { self.record($0, WindowsSecurityParser(), .windows, defaultDevice: defaultDevice) }
        }
    }

    // MARK: Wrapped array

    func wrapped(member: String, defaultDevice: String?) {
        let whole = read(JSONWrappedArraySplitter(member: member), cuts: [0])
        let cut = input.isEmpty ? 0 : (Int(input[0]) &* 131 &+ Int(input[input.count - 1])) % (input.count + 1)
        guard read(JSONWrappedArraySplitter(member: member), cuts: [0, cut]) == whole else { fail("split in two at byte \(cut), the object splits otherwise") }
        guard read(JSONWrappedArraySplitter(member: member), cuts: Array(0..<input.count)) == whole else {
            fail("fed one byte at a time, the object splits otherwise")
        }
        _ = JSONWrappedArraySplitter.isWrapped(firstBytes: input, member: member)
        let parser: any JSONAuthLogParser = member == "value" ? EntraSignInParser() : CloudTrailLoginParser()
        for element in whole.records.prefix(64) {
            element.withUnsafeBytes { record($0, parser, member == "value" ? .entra : .cloudtrail, defaultDevice: defaultDevice) }
        }
        // Differential: an object Foundation reads, whose member holds an array, named once.
        guard input.count <= Limits.maximumJSONLineBytes, !input.contains(0), let text = String(validating: input, as: UTF8.self),
            text.components(separatedBy: "\"\(member)\"").count == 2,
            let object = (try? JSONSerialization.jsonObject(with: Data(input), options: [])) as? [String: Any],
            let array = object[member] as? [Any]
        else { return }
        // A trailing comma (`[1,]`, `{"a":1,}`) Foundation reads and JSON refuses.
        guard whole.failure == nil || whole.failure?.contains("']'") == true || whole.failure?.contains("'}'") == true else {
            fail("the wrapped splitter refuses an object Foundation reads: \(whole.failure ?? "")")
        }
        guard whole.failure != nil || whole.records.count == array.count else {
            fail("the wrapped splitter found \(whole.records.count) elements where Foundation reads \(array.count)")
        }
    }

    // MARK: Keycloak

    func keycloak(defaultDevice: String?) {
        var lines: [UnsafeRawBufferPointer] = []
        var lineStart = 0
        for (index, byte) in input.enumerated() where byte == 0x0A {
            lines.append(UnsafeRawBufferPointer(rebasing: input[lineStart..<index]))
            lineStart = index + 1
        }
        lines.append(UnsafeRawBufferPointer(rebasing: input[lineStart...]))
        lines = Array(lines.prefix(64))
        let zone = zones[input.count % zones.count]
        var names = KeycloakNames(timeZone: zone)
        for (index, line) in lines.enumerated() { names.note(line, line: index + 1) }
        let parser = KeycloakEventParser(timeZone: zone)
        var decoder = LineDecoder(format: .keycloak(timeZone: zone), startYear: nil, defaultDevice: defaultDevice, keycloakHints: names.hints)
        for (index, line) in lines.enumerated() {
            let hint = names.hints[index + 1]
            if hint?.user?.isEmpty == true { fail("line \(index + 1) takes an empty name from an earlier event") }
            let read = parser.parse(line, hint: hint)
            guard parser.parse(line, hint: hint) == read else { fail("the Keycloak parser reads line \(index + 1) otherwise with the same hint") }
            if case .event(let found) = read {
                checkFields(found, "Keycloak line \(index + 1)")
                if let retry = hint?.retryAfter, case .signInThrottled(_, let after, _) = found.payload, after < found.at {
                    fail("line \(index + 1) retries after \(after.iso8601), before its own time (hint \(retry.iso8601))")
                }
            }
            checkDecoding(decoder.decode(line, line: index + 1), of: read, defaultDevice: defaultDevice, "Keycloak line \(index + 1)")
        }
    }

    func keycloakTime(zone: TimeZone) {
        guard let text = String(validating: input, as: UTF8.self) else { return }
        guard let at = KeycloakLocalTime.instant(text, timeZone: zone) else { return }
        guard at >= Timestamp.minimum, at <= Timestamp.maximum else { fail("not_before \(text) reads as \(at.millisecondsSince1970) ms") }
        guard KeycloakLocalTime.instant(text, timeZone: zone) == at else { fail("not_before \(text) reads otherwise a second time") }
    }

    // MARK: Shared

    func checkFields(_ event: AuthLogEvent, _ what: String) {
        if let problem = AuthLogCheck.problem(with: event) { fail("\(what) \(problem)") }
    }

    func checkDecoding(_ decoding: LineDecoding, of read: AuthLogLine, defaultDevice: String?, _ what: String) {
        switch (read, decoding) {
        case (.skipped(let kind), .skipped(let decodedKind)):
            guard kind == decodedKind else { fail("\(what): the parser skipped it as \(kind), the import as \(decodedKind)") }
        case (.event(let found), .invalid(let message)):
            guard found.host == nil, defaultDevice == nil else { fail("\(what): the import refuses the event the parser read: \(message)") }
        case (.event(let found), .event(let decoded)):
            let event = decoded.event
            guard decoded.seq == nil, event.device == found.host ?? defaultDevice, event.at == found.at, event.flow == nil, event.payload == found.payload,
                event.user == found.user.flatMap({ UserRef.isLiteral($0) ? nil : $0 })
            else { fail("\(what): the import made another event of it\n  parsed: \(found)\n  import: \(EventJSON.encode(event, seq: nil))") }
            do { try event.validate() } catch { fail("\(what): the import made an invalid event: \(error)") }
            let id = event.id.uuid
            guard id.6 >> 4 == 8, id.8 >> 6 == 0b10 else { fail("\(what): the event id \(event.id) is no version-8 UUID") }
            let line = EventJSON.encode(event, seq: nil)
            guard let back = try? EventJSON.decode(line: line), back.event == event else {
                fail("\(what): the event's line does not read back\n  line: \(line)")
            }
        default:
            fail("\(what): the parser read \(read), the import \(decoding)")
        }
    }
}

/// A streaming reader of records: fed chunks cut anywhere, then finished.
private protocol StreamSplitter {
    mutating func feed(_ bytes: UnsafeRawBufferPointer, emit: (UnsafeRawBufferPointer) throws -> Void) throws
    func finish() throws
}

extension WindowsEventXMLReader: StreamSplitter {}
extension JSONWrappedArraySplitter: StreamSplitter {}

/// See ``FuzzEntry``: SwiftPM's entry point for this executable, handed to libFuzzer's driver.
@_cdecl("FuzzIdentityLog_main")
public func fuzzIdentityLogMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    FuzzEntry.run(argc, argv, fuzzIdentityLog)
}
