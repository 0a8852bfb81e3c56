import Foundation
import Testing
@testable import OnboardingModel

/// The JSON line decoder's fast path must accept only what the reference decoder accepts and
/// decode it to the same event; `decode(lineBytes:)` must answer exactly as `decode(line:)` does,
/// errors included, for any bytes.
@Suite("EventJSON fast line decoder")
struct EventJSONFastDecodeTests {
    /// What a decoder answered, comparable: the event and seq, or the error's text.
    enum Outcome: Equatable, CustomStringConvertible {
        case decoded(Event, UInt64?)
        case refused(String)

        var description: String {
            switch self {
            case .decoded(let event, let seq): "decoded \(event.type.rawValue) seq \(seq.map(String.init) ?? "-")"
            case .refused(let message): "refused: \(message)"
            }
        }
    }

    /// The reference: the line as text (refused as import refuses it when it is not UTF-8), then
    /// the generic `JSONValue` decoder.
    static func reference(_ bytes: [UInt8]) -> Outcome {
        guard let text = String(validating: bytes, as: UTF8.self) else { return .refused("is not valid UTF-8") }
        do {
            let decoded = try EventJSON.decode(line: text)
            return .decoded(decoded.event, decoded.seq)
        } catch {
            return .refused(error.description)
        }
    }

    static func lineBytes(_ bytes: [UInt8]) -> Outcome {
        bytes.withUnsafeBytes { raw -> Outcome in
            do throws(EventValidationError) {
                let decoded = try EventJSON.decode(lineBytes: raw)
                return .decoded(decoded.event, decoded.seq)
            } catch {
                return .refused(error.description)
            }
        }
    }

    static func fast(_ bytes: [UInt8]) -> EventJSON.Decoded? {
        bytes.withUnsafeBytes { EventJSON.fastDecode($0) }
    }

    /// Checks one line; returns a description of the disagreement, if any.
    static func disagreement(_ bytes: [UInt8]) -> String? {
        let expected = reference(bytes)
        if let decoded = fast(bytes), expected != .decoded(decoded.event, decoded.seq) {
            return "the fast path decoded a line the reference answers with \(expected)"
        }
        let got = lineBytes(bytes)
        return got == expected ? nil : "decode(lineBytes:) answered \(got), decode(line:) \(expected)"
    }

    @Test("every event of every type: the fast path decodes the canonical line to the same event")
    func canonicalLinesTakeTheFastPath() {
        let seed = testSeed(fallback: 0xFA57_DEC0)
        var generator = EventGenerator(seed: seed)
        var fastCount = 0
        for iteration in 0..<3_000 {
            let event = generator.event(of: EventType.allCases[iteration % EventType.allCases.count])
            let seq: UInt64? = generator.rng.chance(1, in: 3) ? nil : (generator.rng.chance(1, in: 8) ? .max : generator.rng.next() | 1)
            let bytes = Array(EventJSON.encode(event, seq: seq).utf8)
            let context = "seed \(seed) (replay with ONBOARDING_TEST_SEED=\(seed)), iteration \(iteration)"
            if let problem = Self.disagreement(bytes) {
                Issue.record("\(context): \(problem)\n\(String(decoding: bytes, as: UTF8.self))")
                return
            }
            // Without escapes or a list of choices (an array: the reference decoder's), the export
            // form never needs the reference decoder.
            let hasList = event.type.fields.contains { if case .choices = $0.kind { true } else { false } }
            if !bytes.contains(UInt8(ascii: "\\")) && !hasList {
                guard let decoded = Self.fast(bytes) else {
                    Issue.record("\(context): the fast path gave up on a canonical line\n\(String(decoding: bytes, as: UTF8.self))")
                    return
                }
                #expect(decoded.event == event && decoded.seq == seq, "\(context)")
                fastCount += 1
            }
        }
        #expect(fastCount > 1_000, "most generated lines have no escape, so most took the fast path")
    }

    @Test("every refusal of the reference decoder is answered the same", arguments: EventJSONTests.refusals)
    func refusalsAgree(_ refusal: EventJSONTests.Refusal) {
        let bytes = Array(refusal.line.utf8)
        #expect(Self.fast(bytes) == nil, "the fast path must not accept \(refusal.line)")
        #expect(Self.lineBytes(bytes) == Self.reference(bytes))
    }

    /// Values a hostile or careless writer puts where the vocabulary expects something else.
    static let hostileValues: [String] = [
        "-1", "0", "-0", "18446744073709551615", "18446744073709551616", "99999999999999999999999", "1e400", "1E2",
        "1.0", "01", "1.", ".5", "+1", "NaN", "Infinity", "true", "false", "null", "[]", "{}", "[1]", #"{"a":1}"#,
        #""""#, #"" ""#, #""\u0000""#, #""\n""#, #""a\"b""#, #""\ud800""#, #""\u00e9""#, #""é""#, "\"\u{7F}\"",
        "\"\u{85}\"", "\"\u{1B}[31m\"", #""0000-01-01T00:00:00Z""#, #""0001-01-01T00:00:00Z""#, #""9999-12-31T23:59:59.999Z""#,
        #""10000-01-01T00:00:00Z""#, #""2026-02-29T00:00:00Z""#, #""2024-02-29T00:00:00Z""#, #""2026-11-29T24:00:00Z""#,
        #""2026-11-29T16:00:00.1234Z""#, #""2026-11-29T16:00:00.Z""#, #""2026-11-29T16:00:00z""#, #""2026-11-29 16:00:00Z""#,
        #""0F8FAD5B-D9CB-469F-A165-70867728950E""#, #""0f8fad5bd9cb469fa16570867728950e""#, #""{0f8fad5b-d9cb-469f-a165-70867728950e}""#,
        #""0f8fad5b-d9cb-469f-a165-70867728950g""#, #""0f8fad5b_d9cb-469f-a165-70867728950e""#, #""0f8fad5b-d9cb-469f-a165-70867728950e ""#,
        #""password""#, #""Password""#, #""invalid_password""#, #""numeric""#, #""~0123456789abcdef0123456789abcdef""#,
        #""~0123456789ABCDEF0123456789ABCDEF""#, #""kiosk-7""#, #""kiosk 7""#, "\"\(String(repeating: "k", count: 65))\""
    ]

    /// Pieces inserted at random places: structure, whitespace, bytes that are not JSON or not UTF-8.
    static let fragments: [[UInt8]] =
        [
            "{", "}", "[", "]", ",", ":", "\"", "\\", " ", "\t", "\r", "\n", "\u{0}", "\u{1F}", "\u{7F}", "-", "e", ".", "0", "9",
            #","seq":-1"#, #","seq":18446744073709551616"#, #","seq":1e400"#, #","seq":7"#, #","id":"0f8fad5b-d9cb-469f-a165-70867728950e""#,
            #","type":"captcha_passed""#, #","user":null"#, #","x":1"#, #","password":"hunter2""#, #","at":"0000-01-01T00:00:00Z""#,
            #","at":"10000-01-01T00:00:00Z""#, #","display_name":"x""#, #","method":"password""#, "\u{FEFF}"
        ].map { Array($0.utf8) } + [[0x80], [0xFF], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xEF, 0xBB, 0xBF], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82]]

    /// Lines to mutate: canonical lines of every type, and the hand-written base lines.
    static func seeds(_ generator: inout EventGenerator) -> [[UInt8]] {
        var lines = EventType.allCases.map { type -> [UInt8] in
            let event = generator.event(of: type)
            return Array(EventJSON.encode(event, seq: generator.rng.chance(1, in: 2) ? nil : 5).utf8)
        }
        for type in ["sign_in_failed", "sign_in_succeeded", "sign_in_throttled", "user_added", "password_changed", "captcha_passed"] {
            lines.append(Array(EventJSONTests.line(type: type).utf8))
        }
        return lines
    }

    static func mutate(_ line: [UInt8], _ rng: inout SplitMix64) -> [UInt8] {
        var bytes = line
        for _ in 0...rng.below(3) {
            guard !bytes.isEmpty else { break }
            let position = rng.below(bytes.count + 1)
            switch rng.below(6) {
            case 0: // a byte replaced
                if position < bytes.count { bytes[position] = rng.element(of: Self.fragments.filter { $0.count == 1 })[0] }
            case 1: // bytes removed
                let end = min(bytes.count, position + 1 + rng.below(8))
                if position < end { bytes.removeSubrange(position..<end) }
            case 2: // a fragment inserted
                bytes.insert(contentsOf: rng.element(of: Self.fragments), at: position)
            case 3: // a member's value replaced by a hostile one
                let colons = bytes.indices.filter { bytes[$0] == UInt8(ascii: ":") }
                guard let colon = colons.isEmpty ? nil : rng.element(of: colons) else { break }
                var end = colon + 1
                if end < bytes.count, bytes[end] == UInt8(ascii: "\"") {
                    end += 1
                    while end < bytes.count, bytes[end] != UInt8(ascii: "\"") { end += 1 }
                    end = min(end + 1, bytes.count)
                } else {
                    while end < bytes.count, bytes[end] != UInt8(ascii: ","), bytes[end] != UInt8(ascii: "}") { end += 1 }
                }
                bytes.replaceSubrange((colon + 1)..<end, with: Array(rng.element(of: Self.hostileValues).utf8))
            case 4: // a member repeated elsewhere
                let commas = bytes.indices.filter { bytes[$0] == UInt8(ascii: ",") }
                guard commas.count >= 2 else { break }
                let first = rng.below(commas.count - 1)
                let member = Array(bytes[commas[first]..<commas[first + 1]])
                bytes.insert(contentsOf: member, at: commas[rng.below(commas.count)])
            default: // cut short
                bytes.removeSubrange(position...)
            }
        }
        return bytes
    }

    @Test("mutated lines: decode(lineBytes:) answers exactly as decode(line:), and the fast path accepts only what it accepts")
    func mutatedLinesAgree() {
        let seed = testSeed(fallback: 0xBAD1_1E55)
        var generator = EventGenerator(seed: seed)
        var rng = SplitMix64(seed: seed ^ 0x5EED)
        var accepted = 0
        for round in 0..<40 {
            let lines = Self.seeds(&generator)
            for (index, line) in lines.enumerated() {
                for attempt in 0..<25 {
                    let bytes = Self.mutate(line, &rng)
                    if let problem = Self.disagreement(bytes) {
                        Issue.record(
                            "seed \(seed) (replay with ONBOARDING_TEST_SEED=\(seed)), round \(round), line \(index), attempt \(attempt): \(problem)\nbytes: \(hex(bytes))"
                        )
                        return
                    }
                    if Self.fast(bytes) != nil { accepted += 1 }
                }
            }
        }
        // Some mutations keep the line valid (a member moved, a value swapped for a valid one):
        // the fast path must have decoded some of them, or the comparison above proves little.
        #expect(accepted > 100)
    }

    @Test("members in any order take the fast path; whitespace and escapes fall back and still decode")
    func orderWhitespaceAndEscapes() throws {
        let reordered =
            #"{"type":"sign_in_failed","reason":"invalid_password","seq":12,"method":"password","session":null,"user":"alice","at":"2026-11-29T16:00:00.1Z","device":"kiosk-7","id":"0F8FAD5B-D9CB-469F-A165-70867728950E"}"#
        let fast = try #require(Self.fast(Array(reordered.utf8)))
        #expect(fast.seq == 12)
        #expect(
            EventJSON.encode(fast.event, seq: fast.seq)
                == #"{"id":"0f8fad5b-d9cb-469f-a165-70867728950e","device":"kiosk-7","seq":12,"at":"2026-11-29T16:00:00.100Z","user":"alice","session":null,"type":"sign_in_failed","method":"password","reason":"invalid_password"}"#
        )
        for variant in [
            reordered.replacingOccurrences(of: ",", with: " , "),
            reordered.replacingOccurrences(of: "alice", with: #"al\u0069ce"#)
        ] {
            let bytes = Array(variant.utf8)
            #expect(Self.fast(bytes) == nil)
            #expect(Self.lineBytes(bytes) == .decoded(fast.event, 12))
        }
    }

    @Test("bytes that are not UTF-8 are refused as such, wherever they are")
    func invalidUTF8() {
        let line = Array(EventJSONTests.line(type: "captcha_passed").utf8)
        for position in [0, 1, 10, line.count - 1] {
            var bytes = line
            bytes.insert(0xFF, at: position)
            #expect(Self.lineBytes(bytes) == .refused("is not valid UTF-8"))
        }
    }
}
