import Foundation
import Testing
@testable import OnboardingImport
import OnboardingModel
import TestSupport

@Suite struct JSONArraySplitterTests {
    /// The elements of `bytes`, fed in pieces of `pieces` bytes (the last may be shorter).
    static func split(_ bytes: [UInt8], pieces: Int = Int.max, limit: Int = JSONArraySplitter.defaultMaximumElementBytes) throws -> [String] {
        try split(bytes, cuts: stride(from: 0, to: bytes.count, by: max(1, min(pieces, bytes.count))).map { $0 }, limit: limit)
    }

    /// The elements of `bytes`, fed in chunks that start at `cuts` (sorted offsets).
    static func split(_ bytes: [UInt8], cuts: [Int], limit: Int = JSONArraySplitter.defaultMaximumElementBytes) throws -> [String] {
        var splitter = JSONArraySplitter(maximumElementBytes: limit)
        var elements: [String] = []
        let bounds = cuts + [bytes.count]
        for (start, end) in zip(bounds, bounds.dropFirst()) where start < end {
            try Array(bytes[start..<end]).withUnsafeBytes { chunk in
                try splitter.feed(chunk) { elements.append(String(decoding: $0, as: UTF8.self)) }
            }
        }
        let count = try splitter.finish()
        #expect(count == elements.count)
        return elements
    }

    static func split(_ text: String, pieces: Int = Int.max) throws -> [String] {
        try split(Array(text.utf8), pieces: pieces)
    }

    /// The message of the error splitting `text` throws, `nil` when it throws none.
    static func failure(_ text: String, limit: Int = JSONArraySplitter.defaultMaximumElementBytes) -> String? {
        failure(Array(text.utf8), limit: limit)
    }

    static func failure(_ bytes: [UInt8], limit: Int = JSONArraySplitter.defaultMaximumElementBytes) -> String? {
        do {
            _ = try split(bytes, limit: limit)
            return nil
        } catch let error as JSONArraySplitterError {
            return error.message
        } catch {
            return "unexpected \(error)"
        }
    }

    static let small = #"[{"a":"],[{\""},{"b":[1,{"c":"\\"}]} , "x,y" ,7,null]"#
    static let smallElements = [#"{"a":"],[{\""}"#, #"{"b":[1,{"c":"\\"}]}"#, #""x,y""#, "7", "null"]

    @Test("a small array is split the same with a chunk boundary at every byte offset, and with two anywhere")
    func everyBoundary() throws {
        let bytes = Array(Self.small.utf8)
        #expect(try Self.split(bytes) == Self.smallElements)
        for cut in 0...bytes.count {
            #expect(try Self.split(bytes, cuts: [0, cut]) == Self.smallElements, "cut at \(cut)")
        }
        for first in stride(from: 0, through: bytes.count, by: 3) {
            for second in first...bytes.count {
                #expect(try Self.split(bytes, cuts: [0, first, second]) == Self.smallElements, "cuts at \(first), \(second)")
            }
        }
        #expect(try Self.split(bytes, pieces: 1) == Self.smallElements)
    }

    @Test("brackets, braces, commas and quotes inside strings split nothing; escapes are followed")
    func stringsAndEscapes() throws {
        let text = #"[{"u":"],[{\"","v":"\\"},{"w":"\\\"]}","x":"\u005d\/"},"}{]["]"#
        #expect(try Self.split(text, pieces: 1) == [#"{"u":"],[{\"","v":"\\"}"#, #"{"w":"\\\"]}","x":"\u005d\/"}"#, #""}{][""#])
        for (index, element) in try Self.split(text).enumerated() where index < 2 {
            #expect((try? JSONValue.parse(element)) != nil, "element \(index + 1) is JSON")
        }
    }

    @Test("a pretty-printed array: each element on one line, runs of whitespace between tokens one space")
    func prettyPrinted() throws {
        let text = "[\n  {\n    \"time\": 1,\r\n\t\"type\": \"LOGOUT\",\n    \"details\": {\n      \"note\": \"a  b\"\n    }\n  },\n  {}\n]\n"
        let elements = try Self.split(text)
        #expect(elements == [#"{ "time": 1, "type": "LOGOUT", "details": { "note": "a  b" } }"#, "{}"])
    }

    @Test("the pretty-printed fixture splits into its 35 events, one line each, at any chunk size", arguments: [1, 7, 4096, Int.max])
    func fixture(pieces: Int) throws {
        let elements = try Self.split(KeycloakFixtures.stuffingAndHonest, pieces: pieces)
        #expect(elements.count == 35)
        #expect(elements.allSatisfy { !$0.contains("\n") && !$0.contains("\t") && !$0.contains("\r") })
        #expect(elements.allSatisfy { (try? JSONValue.parse($0)) != nil })
    }

    @Test("empty arrays, whitespace around the array and a byte order mark at the start")
    func emptyAndAround() throws {
        #expect(try Self.split("[]").isEmpty)
        #expect(try Self.split(" \r\n\t[ \n ]\n\n").isEmpty)
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
        #expect(try Self.split(bom + Array("[{}]".utf8), pieces: 1) == ["{}"])
        #expect(Self.failure(bom + bom + Array("[{}]".utf8))?.contains("byte 4") == true)
        #expect(Self.failure([0xEF, 0xBB] + Array("[{}]".utf8))?.contains("part of a byte order mark") == true)
        #expect(Self.failure(Array(" ".utf8) + bom + Array("[{}]".utf8)) != nil)
    }

    @Test("an unterminated array or element is an error at the end that says what is unfinished")
    func unterminated() {
        #expect(Self.failure("") == "the input is empty: expected a JSON array ('[')")
        #expect(Self.failure("  \n") == "the input is empty: expected a JSON array ('[')")
        #expect(Self.failure("[") == "the array is not closed: no element or ']' after its '['")
        #expect(Self.failure(" [ \n") == "the array is not closed: no element or ']' after its '['")
        #expect(Self.failure(#"[{"a":1}"#) == "the array is not closed: no ']' after element 1")
        #expect(Self.failure(#"[{"a":1},"#) == "the array is not closed: no ']' after element 1")
        #expect(Self.failure(#"[{"a":1},{"b":[2"#) == "the array ends inside element 2: the input is cut short")
        #expect(Self.failure(#"[{"a":"],"#) == "the array ends inside element 1 (in a string): the input is cut short")
        #expect(Self.failure(#"[{"a":"\"#) == "the array ends inside element 1 (in a string): the input is cut short")
        #expect(Self.failure("[12") == "the array ends inside element 1: the input is cut short")
    }

    @Test(
        "input that is not one array is an error naming the byte",
        arguments: [
            (#"{"a":1}"#, "unexpected '{' at byte 1 where the array's '[' should be"),
            (#"[,{}]"#, "unexpected ',' at byte 2 where element 1 should begin"),
            (#"[{},]"#, "unexpected ']' at byte 5 where element 2 should begin"),
            (#"[{}{}]"#, "unexpected '{' at byte 4 after element 1 (expected ',' or ']')"),
            (#"[{} {}]"#, "unexpected '{' at byte 5 after element 1 (expected ',' or ']')"),
            (#"[1 2]"#, "unexpected '2' at byte 4 after element 1 (expected ',' or ']')"),
            (#"[{}] x"#, "unexpected 'x' at byte 6 after the array's closing ']'"),
            (#"[{}][{}]"#, "unexpected '[' at byte 5 after the array's closing ']'"),
            ("[}]", "unexpected '}' at byte 2 where element 1 should begin"),
            ("[1}]", "unexpected '}' at byte 3 after element 1 (expected ',' or ']')"),
            ("\u{1}[]", "unexpected byte 0x1 at byte 1 where the array's '[' should be")
        ])
    func notAnArray(text: String, message: String) {
        #expect(Self.failure(text) == message)
    }

    @Test("an element over the limit is refused with its number and where it began; one at the limit is kept")
    func oversized() throws {
        #expect(try Self.split(Array(#"[{"a":"123456"}]"#.utf8), limit: 14) == [#"{"a":"123456"}"#])
        #expect(Self.failure(#"[{}, {"a":"1234567"}]"#, limit: 14) == "element 2 (from byte 6) is longer than the limit of 14 bytes")
        let big = "[" + KeycloakFixtures.login + ",\n" + #"{"details":{"pad":""# + String(repeating: "x", count: 70_000) + #""}}]"#
        #expect(Self.failure(big) == "element 2 (from byte \(KeycloakFixtures.login.utf8.count + 4)) is longer than the limit of 65536 bytes")
    }

    @Test("indentation does not count against the limit: whitespace runs are kept as one space")
    func indentationIsFree() throws {
        let text = "[{" + String(repeating: " ", count: 100) + "\"a\":" + String(repeating: "\n", count: 100) + "1}]"
        #expect(try Self.split(Array(text.utf8), limit: 10) == [#"{ "a": 1}"#])
    }

    @Test("a raw line break inside a string (not JSON) stays invalid but cannot break the line")
    func rawLineBreakInString() throws {
        let elements = try Self.split("[{\"type\":\"LOG\nIN\",\"x\":\"a\r\tb\"}]")
        #expect(elements == ["{\"type\":\"LOG\u{1A}IN\",\"x\":\"a\u{1A}\tb\"}"])
        let parsed = Array(elements[0].utf8).withUnsafeBytes { KeycloakEventParser().parse($0) }
        #expect(parsed == .skipped(KeycloakEventParser.Skip.notJSON))
    }

    @Test("an error thrown by emit stops the split and reaches the caller")
    func emitThrows() {
        struct Stop: Error {}
        var splitter = JSONArraySplitter()
        var seen = 0
        var caught: (any Error)?
        do {
            try Array("[1,2,3]".utf8).withUnsafeBytes { bytes in
                try splitter.feed(bytes) { _ in
                    seen += 1
                    if seen == 2 { throw Stop() }
                }
            }
        } catch {
            caught = error
        }
        #expect(caught is Stop)
        #expect(seen == 2)
    }

    @Test(
        "isArray: the first byte after a byte order mark and whitespace is '['",
        arguments: [
            ("[", true), (" \n\t\r[{", true), ("\u{FEFF}[", true), ("\u{FEFF} \n[", true),
            ("{\"time\":1}", false), ("\n{", false), ("", false), ("   \n", false), ("\u{FEFF}{", false),
            ("x[", false)
        ])
    func isArray(text: String, expected: Bool) {
        #expect(JSONArraySplitter.isArray(firstBytes: Array(text.utf8)) == expected)
        #expect(JSONArraySplitter.isArray(firstBytes: text.utf8) == expected)
    }

    @Test("convert writes each element on its own line and returns the count; the lines parse as the elements do")
    func convert() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let inputPath = try directory.write("events.json", KeycloakFixtures.stuffingAndHonest)
        let outputPath = try directory.write("events.jsonl", "")
        let input = try FileHandle(forReadingFrom: URL(fileURLWithPath: inputPath))
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        let count = try JSONArraySplitter.convert(from: input, to: output)
        try input.close()
        try output.close()
        #expect(count == 35)
        let text = try String(contentsOfFile: outputPath, encoding: .utf8)
        #expect(text.hasSuffix("}\n"))
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
        #expect(lines == (try Self.split(KeycloakFixtures.stuffingAndHonest)))
        let parser = KeycloakEventParser()
        let fromLines = lines.map { line in Array(line.utf8).withUnsafeBytes { parser.parse($0) } }
        #expect(fromLines == (try KeycloakEventParserTests.parsedArrayFixture()))
    }

    @Test("convert of an array larger than its read chunk, on one line: every element, in order")
    func convertLarge() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let count = 5000
        let element = KeycloakFixtures.login
        let inputPath = try directory.write("one-line.json", "[" + Array(repeating: element, count: count).joined(separator: ",") + "]")
        let outputPath = try directory.write("out.jsonl", "")
        let input = try FileHandle(forReadingFrom: URL(fileURLWithPath: inputPath))
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        defer {
            try? input.close()
            try? output.close()
        }
        #expect(try JSONArraySplitter.convert(from: input, to: output) == count)
        let data = try Data(contentsOf: URL(fileURLWithPath: outputPath))
        #expect(data.count == count * (element.utf8.count + 1))
        #expect(data.prefix(element.utf8.count) == Data(element.utf8))
    }

    @Test("convert of an unterminated array throws the splitter's error")
    func convertUnterminated() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let inputPath = try directory.write("cut.json", "[" + KeycloakFixtures.login + ",\n  {\"time\": 17")
        let outputPath = try directory.write("out.jsonl", "")
        let input = try FileHandle(forReadingFrom: URL(fileURLWithPath: inputPath))
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        defer {
            try? input.close()
            try? output.close()
        }
        #expect(throws: JSONArraySplitterError("the array ends inside element 2: the input is cut short")) {
            try JSONArraySplitter.convert(from: input, to: output)
        }
    }
}
