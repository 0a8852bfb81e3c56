import Testing
@testable import OnboardingModel

@Suite("JSONValue: strict parser and canonical writer")
struct JSONValueTests {
    // MARK: Parsing every kind

    @Test("literals, numbers (kept as written), strings, arrays and objects parse")
    func allKinds() throws {
        #expect(try JSONValue.parse("null") == .null)
        #expect(try JSONValue.parse("true") == .bool(true))
        #expect(try JSONValue.parse("false") == .bool(false))
        #expect(try JSONValue.parse(#""hi""#) == .string("hi"))
        #expect(try JSONValue.parse(#""""#) == .string(""))
        #expect(try JSONValue.parse("[]") == .array([]))
        #expect(try JSONValue.parse("{}") == .object([]))
        #expect(
            try JSONValue.parse(#"[1,"a",null,[true],{"k":false}]"#)
                == .array([.number("1"), .string("a"), .null, .array([.bool(true)]), .object([.init("k", .bool(false))])]))
    }

    @Test(
        "numbers keep their exact text, so nothing is rounded",
        arguments: [
            "0", "-0", "12", "-12", "1.5", "1.50", "1.5e3", "1.5E3", "-1.25e-2", "1E+2",
            "12345678901234567890123", "0.1", "18446744073709551615", "3.141592653589793238462643383279"
        ])
    func numbers(text: String) throws {
        #expect(try JSONValue.parse(text) == .number(text))
        #expect(try JSONValue.parse(" \t\r\n\(text)\n ") == .number(text))
    }

    @Test("objects keep members in written order; subscript, stringValue and kindName")
    func objectOrderAndAccessors() throws {
        let value = try JSONValue.parse(#" { "z" : 1 , "a" : "x" , "m" : [ ] } "#)
        guard case .object(let members) = value else {
            Issue.record("expected an object, got \(value)")
            return
        }
        #expect(members.map(\.key) == ["z", "a", "m"])
        #expect(value["a"]?.stringValue == "x")
        #expect(value["z"] == .number("1"))
        #expect(value["z"]?.stringValue == nil)
        #expect(value["missing"] == nil)
        #expect(JSONValue.array([])["a"] == nil)
        #expect(JSONValue.null.kindName == "null")
        #expect(JSONValue.bool(true).kindName == "a boolean")
        #expect(JSONValue.number("1").kindName == "a number")
        #expect(JSONValue.string("").kindName == "a string")
        #expect(JSONValue.array([]).kindName == "an array")
        #expect(JSONValue.object([]).kindName == "an object")
    }

    // MARK: Strings and escapes

    @Test(
        "every simple escape decodes",
        arguments: [
            (#""\"""#, "\""), (#""\\""#, "\\"), (#""\/""#, "/"), (#""\b""#, "\u{08}"), (#""\f""#, "\u{0C}"),
            (#""\n""#, "\n"), (#""\r""#, "\r"), (#""\t""#, "\t"),
            (#""\u0041""#, "A"), (#""\u00e9""#, "é"), (#""\u00E9""#, "é"), (#""\u0000""#, "\u{0}"),
            (#""\u001F""#, "\u{1F}"), (#""\u2028""#, "\u{2028}"), (#""\uFFFF""#, "\u{FFFF}"),
            (#""\u05e9\u05dc\u05d5\u05dd""#, "שלום"), (#""\u6f22\u5b57""#, "漢字")
        ])
    func escapes(json: String, expected: String) throws {
        let value = try JSONValue.parse(json)
        #expect(value.stringValue.map { Array($0.unicodeScalars) } == Array(expected.unicodeScalars))
    }

    @Test(
        "surrogate pairs join into one astral scalar",
        arguments: [
            (#""\ud83d\ude00""#, "😀"), (#""\uD834\uDD1E""#, "𝄞"), (#""\uDBFF\uDFFF""#, "\u{10FFFF}"),
            (#""\uD800\uDC00""#, "\u{10000}"), (#""a\ud83d\udc69\u200d\ud83d\udcbbb""#, "a👩‍💻b")
        ])
    func surrogatePairs(json: String, expected: String) throws {
        let value = try JSONValue.parse(json)
        #expect(value.stringValue.map { Array($0.unicodeScalars) } == Array(expected.unicodeScalars))
    }

    @Test("raw UTF-8 of every script passes through untouched")
    func rawUnicode() throws {
        let text = "é e\u{301} 😀 👩‍💻 🇫🇷 שלום مرحبا \u{200F} 漢字 한국어 𝄞 \u{2028} \u{FEFF}"
        let value = try JSONValue.parse("\"\(text)\"")
        #expect(value.stringValue.map { Array($0.utf8) } == Array(text.utf8))
    }

    // MARK: Refusals, with the column

    @Test(
        "malformed input is refused with the 1-based byte column and a reason",
        arguments: [
            (#"{"a":1,"a":2}"#, 8, #"duplicate key "a""#),
            (#"{"a":{"b":1,"b":2}}"#, 13, #"duplicate key "b""#),
            ("{} x", 4, "unexpected text after the value"),
            ("[1,2]]", 6, "unexpected text after the value"),
            ("1 2", 3, "unexpected text after the value"),
            ("01", 2, "unexpected text after the value"),
            ("\"a\tb\"", 3, "control character in string (escape it)"),
            ("\"a\nb\"", 3, "control character in string (escape it)"),
            ("\"\u{0}\"", 2, "control character in string (escape it)"),
            ("", 1, "unexpected end of input"),
            ("   ", 4, "unexpected end of input"),
            (#"{"a":"#, 6, "unexpected end of input"),
            (#""abc"#, 5, "unterminated string"),
            (#""abc\"#, 6, "unterminated escape"),
            (#"{"a" 1}"#, 6, "expected ':' after key"),
            ("{a:1}", 2, "expected a quoted key"),
            (#"{"a":1,}"#, 8, "expected a quoted key"),
            ("[1,]", 4, "unexpected character ']'"),
            ("[1 2]", 4, "expected ',' or ']'"),
            (#"{"a":1 "b":2}"#, 8, "expected ',' or '}'"),
            (#"{"a":1"#, 7, "unterminated object"),
            ("[1", 3, "unterminated array"),
            ("-", 2, "expected a digit"),
            ("-a", 2, "expected a digit"),
            ("1.", 3, "expected a digit after '.'"),
            ("1.e5", 3, "expected a digit after '.'"),
            ("1e", 3, "expected an exponent digit"),
            ("1e+", 4, "expected an exponent digit"),
            (".5", 1, "unexpected character '.'"),
            ("+1", 1, "unexpected character '+'"),
            ("NaN", 1, "unexpected character 'N'"),
            ("Infinity", 1, "unexpected character 'I'"),
            ("tru", 1, "expected 'true'"),
            ("nul", 1, "expected 'null'"),
            ("falsy", 1, "expected 'false'"),
            ("'a'", 1, "unexpected character '''"),
            (#""\x""#, 4, #"invalid escape '\x'"#),
            (#""\u12""#, 4, #"incomplete \u escape"#),
            (#""\u12"#, 4, #"incomplete \u escape"#),
            (#""\u12g4""#, 6, #"invalid hex digit in \u escape"#),
            (#""\ud83d""#, 8, #"unpaired surrogate in \u escape"#),
            (#""\ud83dx""#, 8, #"unpaired surrogate in \u escape"#),
            (#""\ud83d\u0041""#, 14, #"unpaired surrogate in \u escape"#),
            (#""\ude00""#, 8, #"unpaired surrogate in \u escape"#)
        ])
    func refusals(json: String, column: Int, message: String) {
        let error = #expect(throws: JSONSyntaxError.self) { try JSONValue.parse(json) }
        #expect(error?.column == column, "column for \(json)")
        #expect(error?.message == message, "message for \(json)")
        #expect(error?.description == "malformed JSON at column \(column): \(message)")
    }

    @Test("nesting up to 16 levels is accepted, a 17th is refused", arguments: ["[", "{\"k\":"])
    func depthLimit(opener: String) throws {
        let closer = opener == "[" ? "]" : "}"
        #expect(JSONValue.maximumDepth == 16)
        func nested(_ levels: Int) -> String {
            opener == "["
                ? String(repeating: "[", count: levels) + String(repeating: "]", count: levels)
                : String(repeating: opener, count: levels - 1) + "{}" + String(repeating: closer, count: levels - 1)
        }
        _ = try JSONValue.parse(nested(16))
        let error = #expect(throws: JSONSyntaxError.self) { try JSONValue.parse(nested(17)) }
        #expect(error?.message == "nested deeper than 16 levels")
        // Thousands of levels are refused cleanly, without exhausting the stack.
        let deep = #expect(throws: JSONSyntaxError.self) { try JSONValue.parse(nested(100_000)) }
        #expect(deep?.message == "nested deeper than 16 levels")
    }

    @Test(
        "invalid UTF-8 is refused",
        arguments: [
            [0x22, 0xFF, 0x22], // 0xFF never appears in UTF-8
            [0x22, 0xC0, 0xAF, 0x22], // overlong "/"
            [0x22, 0xE2, 0x82, 0x22], // truncated sequence
            [0x22, 0xED, 0xA0, 0x80, 0x22], // encoded surrogate
            [0x22, 0x80, 0x22], // lone continuation byte
            [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22] // above U+10FFFF
        ] as [[UInt8]])
    func invalidUTF8InString(bytes: [UInt8]) {
        let error = #expect(throws: JSONSyntaxError.self) { try JSONValue.parse(bytes: bytes) }
        #expect(error?.message == "string is not valid UTF-8")
        #expect(error.map { (1...bytes.count + 1).contains($0.column) } == true)
    }

    @Test("bytes that are not JSON outside strings are refused at their column")
    func invalidBytesOutsideString() {
        let error = #expect(throws: JSONSyntaxError.self) { try JSONValue.parse(bytes: [0x5B, 0xFF, 0x5D]) }
        #expect(error?.column == 2)
        let bom = #expect(throws: JSONSyntaxError.self) { try JSONValue.parse(bytes: [0xEF, 0xBB, 0xBF, 0x7B, 0x7D]) }
        #expect(bom?.column == 1)
    }

    @Test("parse(bytes:) and parse(_:) agree")
    func bytesAndStringAgree() throws {
        let text = #"{"a":["é",1.5,null,true],"b":{"c":"😀"}}"#
        #expect(try JSONValue.parse(bytes: Array(text.utf8)) == JSONValue.parse(text))
    }

    // MARK: Writer

    @Test("the writer escapes only quote, backslash and control characters")
    func writerEscaping() {
        var writer = JSONWriter()
        writer.append(string: "q\" b\\ s/ n\n r\r t\t b\u{08} f\u{0C} nul\u{0} us\u{1F} del\u{7F} é 😀 \u{2028} שלום")
        #expect(writer.text == #""q\" b\\ s/ n\n r\r t\t b\b f\f nul\u0000 us\u001f del"# + "\u{7F} é 😀 \u{2028} שלום\"")
    }

    @Test("every control character is written escaped and parses back", arguments: 0..<0x20)
    func controlCharacters(code: Int) throws {
        let text = "a" + String(Character(Unicode.Scalar(UInt8(code)))) + "b"
        var bytes: [UInt8] = []
        JSONWriter.appendQuoted(text, to: &bytes)
        #expect(!bytes.contains { $0 < 0x20 })
        #expect(try JSONValue.parse(bytes: bytes) == .string(text))
    }

    @Test("values are written compactly, in member order")
    func writerCompacts() throws {
        let parsed = try JSONValue.parse(#" { "b" : [ 1 , 2.50 , true , null , -0 ] , "a" : { } , "s" : "x\u0041" } "#)
        var writer = JSONWriter()
        writer.append(parsed)
        #expect(writer.text == #"{"b":[1,2.50,true,null,-0],"a":{},"s":"xA"}"#)
        #expect(writer.bytes == Array(writer.text.utf8))
        var raw = JSONWriter()
        raw.append(raw: "{}")
        #expect(raw.text == "{}")
    }

    @Test("random values survive write then parse, and writing is idempotent")
    func randomRoundTrip() throws {
        let seed = testSeed(fallback: 0x15_0A_1E)
        var rng = SplitMix64(seed: seed)
        var generator = EventGenerator(seed: seed ^ 0xFFFF)
        func value(depth: Int) -> JSONValue {
            switch rng.below(depth >= 6 ? 4 : 6) {
            case 0: return .null
            case 1: return .bool(rng.bool())
            case 2: return .number(rng.element(of: ["0", "-1", "3.25", "1e9", "-2.5E-3", String(rng.next())]))
            case 3:
                var text = generator.text(maximumBytes: 64)
                if rng.chance(1, in: 4) { text += String(Character(Unicode.Scalar(UInt8(rng.below(0x20))))) }
                return .string(text)
            case 4: return .array((0..<rng.below(5)).map { _ in value(depth: depth + 1) })
            default:
                var keys = Set<String>()
                var members: [JSONValue.Member] = []
                for _ in 0..<rng.below(5) {
                    let key = generator.text(maximumBytes: 12)
                    if keys.insert(key).inserted { members.append(.init(key, value(depth: depth + 1))) }
                }
                return .object(members)
            }
        }
        for iteration in 0..<2_000 {
            let original = value(depth: 0)
            var writer = JSONWriter()
            writer.append(original)
            let reparsed: JSONValue
            do { reparsed = try JSONValue.parse(bytes: writer.bytes) } catch {
                Issue.record("seed \(seed) iteration \(iteration): \(error) for \(writer.text)")
                return
            }
            var again = JSONWriter()
            again.append(reparsed)
            guard reparsed == original, again.bytes == writer.bytes else {
                Issue.record("seed \(seed) iteration \(iteration): round trip changed \(writer.text)")
                return
            }
        }
    }
}
