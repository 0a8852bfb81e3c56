import Foundation
import OnboardingModel
import OnboardingProjections
import Testing

/// docs/openapi.yaml held to the code: its event schemas are the ones the vocabulary generates,
/// and every pattern it gives a request value accepts what the server's own parser accepts —
/// exactly, or (user ids and texts, where a pattern counts characters and the rule bytes) never
/// more. Patterns are matched with JSON Schema's semantics: the whole string, `$` only at its end.
@Suite struct OpenAPIDocumentTests {
    static func document() throws -> String {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/openapi.yaml")
        return try String(contentsOf: url, encoding: .utf8)
    }

    /// The `pattern` of the component `name` (a schema or a parameter, at four spaces), as the
    /// single-quoted YAML scalar it is written as.
    static func pattern(of name: String) throws -> NSRegularExpression {
        let lines = try document().split(separator: "\n", omittingEmptySubsequences: false)
        let start = try #require(lines.firstIndex(of: "    \(name):"), "docs/openapi.yaml has no component \(name)")
        var index = start + 1
        while index < lines.count, lines[index].hasPrefix("     ") || lines[index].isEmpty {
            let text = lines[index].drop { $0 == " " }
            if text.hasPrefix("pattern: '"), text.hasSuffix("'") {
                let quoted = text.dropFirst("pattern: '".count).dropLast()
                var pattern = quoted.replacingOccurrences(of: "''", with: "'")
                // JSON Schema's `$` (ECMA-262) is the end of the string; ICU's also matches before
                // a final line terminator, which would stop the search short of other branches.
                if pattern.hasSuffix("$") { pattern = String(pattern.dropLast()) + #"\z"# }
                return try NSRegularExpression(pattern: pattern)
            }
            index += 1
        }
        Issue.record("component \(name) of docs/openapi.yaml has no single-quoted pattern")
        return try NSRegularExpression(pattern: "(?!)")
    }

    /// JSON Schema's `pattern` on a string that the pattern anchors with `^…$` (read with `\z`):
    /// it matches when the match covers the whole string.
    static func matches(_ pattern: NSRegularExpression, _ text: String) -> Bool {
        let whole = NSRange(text.startIndex..., in: text)
        return pattern.firstMatch(in: text, range: whole)?.range == whole
    }

    /// Every scalar but the surrogates, for character-by-character comparisons.
    static let allScalars: [Unicode.Scalar] = (0...0x10FFFF).compactMap { value in
        value % 0x100 == 0 || value < 0x3100 || (0xFE00...0xFFFF).contains(value) ? Unicode.Scalar(value) : nil
    }

    // MARK: The generated block

    @Test func theEventSchemasAreTheOnesTheVocabularyGenerates() throws {
        let document = try Self.document()
        let expected = OpenAPIEventSchemas.block
        let lines = document.split(separator: "\n", omittingEmptySubsequences: false)
        let begin = lines.firstIndex { $0.hasPrefix(OpenAPIEventSchemas.begin) }
        let end = lines.firstIndex { $0 == OpenAPIEventSchemas.end }
        guard let begin, let end, begin < end else {
            Issue.record("docs/openapi.yaml has no generated event block under components.schemas; paste:\n\(expected)")
            return
        }
        let actual = lines[begin...end].joined(separator: "\n") + "\n"
        if actual != expected, ProcessInfo.processInfo.environment["ONBOARD_REGENERATE_OPENAPI"] == "1" {
            // After a vocabulary change: `ONBOARD_REGENERATE_OPENAPI=1 swift test --filter OpenAPIDocumentTests`
            // rewrites the block; review the diff of docs/openapi.yaml before committing it.
            let rewritten = (lines[..<begin] + [Substring(expected.dropLast())] + lines[(end + 1)...]).joined(separator: "\n")
            let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("docs/openapi.yaml")
            try rewritten.write(to: url, atomically: true, encoding: .utf8)
            return
        }
        #expect(actual == expected, "docs/openapi.yaml's event schemas differ from the vocabulary; replace the block with:\n\(expected)")
        // An instant is a reference, which OpenAPI 3.0 cannot make nullable: an optional one
        // (`account_locked.until`) is a nullable `allOf` of it.
        for field in EventType.allCases.flatMap(\.fields) {
            guard case .instant = field.kind else { continue }
            let property = OpenAPIEventSchemas.property(field)
            #expect(property.contains("nullable: true") == field.isOptional, "\(field.name): \(property)")
            #expect(property.contains { $0.contains(OpenAPIEventSchemas.reference("Timestamp")) }, "\(field.name): \(property)")
        }
    }

    // MARK: Patterns against the parsers

    /// Every calendar shape around the rules (month lengths, leap years by 4, 100 and 400, years
    /// 0000 and 10000), times at and past their bounds, fractions of 0–4 digits, other suffixes.
    @Test func theTimestampPatternIsExactlyTheParser() throws {
        let pattern = try Self.pattern(of: "Timestamp")
        var samples: [String] = []
        let years = ["0000", "0001", "0004", "0096", "0100", "0400", "1582", "1900", "1970", "2000", "2024", "2026", "2100", "2400", "9996", "9999"]
        for year in years {
            for month in 0...13 {
                for day in 0...32 { samples.append(String(format: "%@-%02d-%02dT00:00:00Z", year, month, day)) }
            }
        }
        samples += (0...9999).map { String(format: "%04d-02-29T12:00:00.000Z", $0) }
        for time in ["00:00:00", "23:59:59", "24:00:00", "23:60:00", "23:59:60", "9:00:00", "09:0:00", "ab:cd:ef"] {
            for fraction in ["", ".", ".1", ".12", ".123", ".1234", ".12a"] {
                for suffix in ["Z", "z", "", "+00:00", "Z\n", "ZZ", " Z"] { samples.append("2026-11-29T" + time + fraction + suffix) }
            }
        }
        samples += [
            "", "2026-11-29", "2026-11-29 16:00:00Z", "+2026-11-29T16:00:00Z", "2026-1-29T16:00:00Z", "10000-01-01T00:00:00Z",
            "２０２６-11-29T16:00:00Z", "2026-11-29T16:00:00.١٢٣Z", "\n2026-11-29T16:00:00Z"
        ]
        for sample in samples {
            let parses = (try? Timestamp(iso8601: sample)) != nil
            #expect(Self.matches(pattern, sample) == parses, "\(sample.debugDescription): the parser says \(parses)")
        }
    }

    /// The document writes the time pattern out where OpenAPI 3.0 cannot reuse it (a filter that
    /// may be empty, a nullable time): each copy is the Timestamp's.
    @Test func everyTimePatternIsTheTimestampPattern() throws {
        let timestamp = try Self.pattern(of: "Timestamp").pattern
        let body = String(timestamp.dropFirst().dropLast(2)) // without ^ and \z
        #expect(try Self.pattern(of: "NullableTimestamp").pattern == timestamp)
        for filter in ["HistorySince", "HistoryUntil"] {
            #expect(try Self.pattern(of: filter).pattern == "^(?:" + body + ")?\\z", "\(filter)")
        }
    }

    @Test func theDevicePatternIsExactlyTheValidator() throws {
        let pattern = try Self.pattern(of: "DeviceID")
        var samples = Self.allScalars.map { "a" + String($0) }
        samples += ["", "x", String(repeating: "x", count: Limits.maximumDeviceBytes), String(repeating: "x", count: Limits.maximumDeviceBytes + 1)]
        for sample in samples {
            let valid = (try? Event.validate(deviceID: sample)) != nil
            #expect(Self.matches(pattern, sample) == valid, "\(sample.debugDescription)")
        }
    }

    /// Exact for ASCII and single characters; never more than the validator for the rest.
    @Test(arguments: [("UserID", Limits.maximumUserBytes), ("EventUser", Limits.maximumUserBytes)])
    func theUserPatternAcceptsOnlyValidIds(name: String, bytes: Int) throws {
        try Self.checkBoundedText(try Self.pattern(of: name), bytes: bytes) { (try? Event.validate(userID: $0)) != nil }
    }

    @Test func theTextPatternAcceptsOnlyValidTexts() throws {
        let document = try Self.document()
        let text = OpenAPIEventSchemas.boundedText(bytes: Limits.maximumTextBytes)
        #expect(document.contains("pattern: " + text), "the text fields' pattern is generated")
        let pattern = try NSRegularExpression(pattern: String(text.dropFirst().dropLast().dropLast()) + #"\z"#)
        let probe = Event(
            id: UUID(), device: "kiosk-7", at: Timestamp(millisecondsSince1970: 0), user: nil, flow: nil,
            payload: .userProfileUpdated(displayName: nil, subtitle: nil, imageRef: nil))
        try Self.checkBoundedText(pattern, bytes: Limits.maximumTextBytes) { text in
            var event = probe
            event.payload = .userProfileUpdated(displayName: text, subtitle: nil, imageRef: nil)
            return (try? event.validate()) != nil
        }
    }

    static func checkBoundedText(_ pattern: NSRegularExpression, bytes: Int, valid: (String) -> Bool) throws {
        for scalar in allScalars {
            let sample = "a" + String(scalar)
            #expect(matches(pattern, sample) == valid(sample), "\(sample.debugDescription)")
        }
        let characters = bytes / OpenAPIEventSchemas.maximumBytesPerScalar
        for (sample, exact) in [
            ("", true), (String(repeating: "x", count: bytes), true), (String(repeating: "x", count: bytes + 1), true),
            (String(repeating: "😀", count: characters), true), (String(repeating: "😀", count: characters + 1), true),
            (String(repeating: "é", count: characters + 1), false), ("é" + String(repeating: "x", count: bytes - 2), false)
        ] {
            let matched = matches(pattern, sample)
            if exact {
                #expect(matched == valid(sample), "\(sample.utf8.count) bytes, \(sample.count) characters")
            } else {
                #expect(!matched && valid(sample), "stricter than the rule: \(sample.utf8.count) bytes, \(sample.count) characters")
            }
        }
    }

    /// The event decoder's ids and sessions (Foundation's parser behind a shape check).
    @Test func theUUIDPatternIsExactlyTheEventDecoder() throws {
        let pattern = try Self.pattern(of: "UUID")
        let valid = "0f8fad5b-d9cb-469f-a165-70867728950e"
        var samples = [
            valid, valid.uppercased(), "0F8fad5b-D9cb-469f-a165-70867728950E", "", "{\(valid)}", valid + " ", " " + valid,
            valid.replacingOccurrences(of: "-", with: ""), String(valid.dropLast()), valid + "0", valid + "\n",
            "0f8fad5bd-9cb-469f-a165-70867728950e", "00000000-0000-0000-0000-000000000000"
        ]
        samples += Self.allScalars.prefix(0x3100).map { valid.replacingOccurrences(of: "0e", with: "0" + String($0)) }
        for sample in samples {
            let event = #"{"id":"\#(sample)","device":"kiosk-7","at":"2026-11-29T16:00:00Z","type":"user_selected"}"#
            let decodes = (try? EventJSON.decode(line: event)) != nil
            #expect(Self.matches(pattern, sample) == decodes, "\(sample.debugDescription)")
        }
    }

    @Test func theHashAndKeyPatternsAreExactlyTheHexDecoder() throws {
        for name in ["Hash", "HexKey"] {
            let pattern = try Self.pattern(of: name)
            let hex = String(repeating: "0123456789abcdef", count: 4)
            var samples = [hex, hex.uppercased(), String(hex.dropLast()), hex + "0", hex + "00", "", hex + "\n"]
            samples += Self.allScalars.prefix(0x3100).map { String(hex.dropLast()) + String($0) }
            for sample in samples {
                #expect(Self.matches(pattern, sample) == (Digest(hex: sample) != nil), "\(name): \(sample.debugDescription)")
            }
        }
    }

    /// `outcome`, `factor`, `method`: comma lists whose items the server trims of white space
    /// (Foundation's set, tried character by character); empty is no filter.
    @Test(arguments: [
        ("HistoryOutcome", "outcome", "failed", "throttled"), ("HistoryFactor", "factor", "password", "second_factor"),
        ("HistoryMethod", "method", "totp", "recovery_code")
    ])
    func theListPatternsAreExactlyTheQueryParser(component: String, parameter: String, first: String, second: String) throws {
        let pattern = try Self.pattern(of: component)
        var samples = [
            "", ",", " ", first, second, "\(first),\(second)", "\(first),", ",\(first)", "\(first),,\(second)", "\(first) \(second)",
            first.uppercased(), first + first, "\(first);\(second)", "\(first), \(second) ", "  \(first)\t,\t\(second)  "
        ]
        samples += (HistoryQuery.outcomeNames + ["success"] + LockoutFactor.wireNames + HistoryQuery.methodNames).map { "\(first),\($0)" }
        samples += Self.allScalars.flatMap { scalar in ["\(scalar)\(first)", "\(first),\(scalar)\(second)\(scalar)", "\(first)\(scalar)"] }
        for sample in samples {
            let parses = (try? HistoryQuery(parameters: ["user": "alice", parameter: sample])) != nil
            #expect(Self.matches(pattern, sample) == parses, "\(parameter)=\(sample.debugDescription)")
        }
    }

    /// Empty is no filter for every history parameter; otherwise a device id (checked like a path
    /// device, SyncServer+History), a time or an issued cursor.
    @Test func theDeviceTimeAndCursorFiltersAreExactlyTheServersRules() throws {
        func query(_ parameter: String, _ value: String) -> Bool {
            (try? HistoryQuery(parameters: ["user": "alice", parameter: value])) != nil
        }
        let device: (String) -> Bool = { $0.isEmpty || (try? Event.validate(deviceID: $0)) != nil }
        for (component, accepts, samples) in [
            ("HistoryDevice", device, ["", "kiosk-7", "a b", String(repeating: "x", count: 64), String(repeating: "x", count: 65), "é", "a/b"]),
            ("HistorySince", { query("since", $0) }, ["", "2026-11-29T16:00:00Z", "2024-02-29T00:00:00.5Z", "2025-02-29T00:00:00Z", "2026-11-29", " "]),
            ("HistoryUntil", { query("until", $0) }, ["", "9999-12-31T23:59:59.999Z", "2026-11-29T16:00:00.1234Z", "0000-01-01T00:00:00Z"]),
            (
                "HistoryCursor", { query("cursor", $0) },
                [
                    "", HistoryCursor(at: Timestamp(millisecondsSince1970: 0), device: "kiosk-7", seq: 1).token,
                    HistoryCursor(at: Timestamp.maximum, device: String(repeating: "x", count: 64), seq: UInt64.max).token
                ]
            )
        ] as [(String, (String) -> Bool, [String])] {
            let pattern = try Self.pattern(of: component)
            for sample in samples {
                #expect(Self.matches(pattern, sample) == accepts(sample), "\(component): \(sample.debugDescription)")
            }
        }
    }

    /// A cursor is opaque: the pattern is the shape every issued cursor has (so a client may
    /// check it), and nothing outside it is ever accepted.
    @Test func theCursorPatternHoldsEveryIssuedCursorAndNothingTheServerTakesLiesOutsideIt() throws {
        let pattern = try Self.pattern(of: "HistoryCursor")
        let issued = HistoryCursor(at: Timestamp(millisecondsSince1970: 1_795_968_000_123), device: "kiosk-7", seq: 2).token
        var samples = Self.allScalars.prefix(0x3100).map { String(issued.dropLast()) + String($0) }
        samples += [String(repeating: "A", count: 513), issued + "\n", issued + "="]
        for sample in samples where !Self.matches(pattern, sample) {
            #expect(HistoryCursor(token: sample) == nil, "\(sample.debugDescription) is accepted but outside the pattern")
        }
        #expect(Self.matches(pattern, issued))
    }
}
