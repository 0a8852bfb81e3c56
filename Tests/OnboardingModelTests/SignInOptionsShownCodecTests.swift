import Foundation
import Testing
@testable import OnboardingModel

/// `sign_in_options_shown` and its list of choices through every codec: the JSON form, the binary
/// record (reference and fast decoders), and what each refuses (docs/events.md §
/// `sign_in_options_shown`, docs/format.md § Lists of choices).
@Suite("sign_in_options_shown: a list of choices through JSON and the binary record")
struct SignInOptionsShownCodecTests {
    /// A canonical line of the type with `options` (raw JSON) and `platform` (raw JSON or absent).
    static func line(options: String?, platform: String? = nil, extra: String = "") -> String {
        var text = #"{"id":"3a0c5e1d-7b2f-4c8e-9d6a-1f4b8e2c7a90","device":"kiosk-7","seq":4,"at":"2026-11-29T16:03:20.000Z","#
        text += #""user":null,"session":null,"type":"sign_in_options_shown""#
        if let options { text += #","options":"# + options }
        if let platform { text += #","platform":"# + platform }
        return text + extra + "}"
    }

    static let allowed = "apple, google, facebook, microsoft, github, other, password, passcode, biometric"

    @Test(
        "JSON → event → binary → event → JSON gives the same bytes, and both binary decoders read the same event",
        arguments: [
            line(options: #"["apple","google","password","biometric"]"#, platform: #""ios""#),
            line(options: #"["google","apple"]"#, platform: #""android""#),
            line(options: #"["other"]"#),
            line(options: #"["biometric","passcode","password","other","github","microsoft","facebook","google","apple"]"#, platform: #""web""#)
        ])
    func roundTrip(line: String) throws {
        let decoded = try EventJSON.decode(line: line)
        for user in [nil, "alice"] as [String?] {
            var event = decoded.event
            event.user = user
            let bytes = RecordCodec.encode(event, seq: 4, previousHash: .zero)
            let record = try RecordCodec.decode(bytes, expectedSeq: 4)
            #expect(record.event == event)
            let body = RecordBytes.body(bytes)
            let fast = body.withUnsafeBytes { RecordCodec.fastDecodeBody($0, users: TestKeys.directory) }
            #expect(fast.map { $0.0 == 4 && $0.1 == event } == true, "the fast decoder reads a list of choices as the reference decoder does")
            if user == nil { #expect(EventJSON.encode(record.event, seq: 4) == line) }
        }
        // The bytes path of the JSON decoder (import's) declines the array and gives the same event.
        let viaBytes = try Array(line.utf8).withUnsafeBytes { raw throws(EventValidationError) in try EventJSON.decode(lineBytes: raw) }
        #expect(viaBytes.event == decoded.event)
    }

    @Test("the payload is a count byte and one code per option, then platform's presence byte and code (docs/format.md)")
    func binaryLayout() {
        let event = Samples.event(.signInOptionsShown(options: [.apple, .google, .password], platform: .ios), user: nil, session: nil)
        let body = RecordCodec.body(of: event, seq: 1, seal: nil)
        #expect(Array(body.suffix(6)) == [0x03, 0x00, 0x01, 0x06, 0x01, 0x00])
        let bare = RecordCodec.body(of: Samples.event(.signInOptionsShown(options: [.biometric]), user: nil, session: nil), seq: 1, seal: nil)
        #expect(Array(bare.suffix(3)) == [0x01, 0x08, 0x00])
        #expect(body.count - bare.count == 3, "two more codes and a platform code")
    }

    struct JSONRefusal: Sendable, CustomTestStringConvertible {
        let line: String
        let message: String
        var testDescription: String { message }
    }

    static let jsonRefusals: [JSONRefusal] = [
        JSONRefusal(line: line(options: #""apple""#), message: "must be an array of names (1–16 of: \(allowed)), got a string"),
        JSONRefusal(line: line(options: #"{"apple":true}"#), message: "must be an array of names (1–16 of: \(allowed)), got an object"),
        JSONRefusal(line: line(options: "[]"), message: "must list at least one of: \(allowed)"),
        JSONRefusal(line: line(options: #"["google","apple","google"]"#), message: #"lists "google" twice; list each option at most once"#),
        JSONRefusal(line: line(options: #"["apple","myspace"]"#), message: #""myspace" is not one of: \#(allowed)"#),
        JSONRefusal(line: line(options: #"["Apple"]"#), message: #""Apple" is not one of: \#(allowed)"#),
        JSONRefusal(line: line(options: #"["apple",1]"#), message: "element 1 must be a string (one of: \(allowed)), got a number"),
        JSONRefusal(line: line(options: "[null]"), message: "element 0 must be a string (one of: \(allowed)), got null"),
        JSONRefusal(line: line(options: #"[["apple"]]"#), message: "element 0 must be a string (one of: \(allowed)), got an array"),
        JSONRefusal(line: line(options: #"[{"name":"apple"}]"#), message: "element 0 must be a string (one of: \(allowed)), got an object"),
        JSONRefusal(
            line: line(options: "[" + Array(repeating: #""apple""#, count: 17).joined(separator: ",") + "]"),
            message: "lists 17 values; at most 16, each of: \(allowed) at most once"),
        // A huge array that still fits in a line: refused by its length, never held as events.
        JSONRefusal(
            line: line(options: "[" + Array(repeating: "1", count: 30_000).joined(separator: ",") + "]"),
            message: "lists 30000 values; at most 16, each of: \(allowed) at most once"),
        JSONRefusal(line: line(options: nil), message: "is required for sign_in_options_shown (an array of 1–16 of: \(allowed), each at most once)"),
        JSONRefusal(line: line(options: "null"), message: "is required for sign_in_options_shown (an array of 1–16 of: \(allowed), each at most once)"),
        JSONRefusal(line: line(options: #"["apple"]"#, platform: #""ios17""#), message: #""ios17" is not one of: ios, android, web, other"#),
        JSONRefusal(line: line(options: #"["apple"]"#, platform: #"["ios"]"#), message: "must be a string, got an array")
    ]

    @Test("a hostile options member is refused naming the field and what is allowed, by both JSON paths", arguments: jsonRefusals)
    func jsonRefusal(_ refusal: JSONRefusal) {
        let field = refusal.line.contains(#""ios17""#) || refusal.line.contains(#""platform":["#) ? "platform" : "options"
        do {
            let decoded = try EventJSON.decode(line: refusal.line)
            Issue.record("accepted: \(decoded.event)")
        } catch {
            #expect(error.field == field)
            #expect(error.message == refusal.message)
        }
        let bytes = Array(refusal.line.utf8)
        let viaBytes: String = bytes.withUnsafeBytes { raw in
            do throws(EventValidationError) { return "accepted: \(try EventJSON.decode(lineBytes: raw).event)" } catch { return error.description }
        }
        #expect(viaBytes == "field \"\(field)\": \(refusal.message)")
    }

    @Test("an array past the line limit, or nested past the depth limit, is refused with a clear error")
    func oversizedInput() {
        let long = Self.line(options: "[" + Array(repeating: #""apple""#, count: 12_000).joined(separator: ",") + "]")
        #expect(long.utf8.count > Limits.maximumJSONLineBytes)
        #expect(throws: EventValidationError.self) { try EventJSON.decode(line: long) }
        do { _ = try EventJSON.decode(line: long) } catch { #expect(error.message == "line is longer than \(Limits.maximumJSONLineBytes) bytes") }
        let deep = Self.line(options: String(repeating: "[", count: 40) + String(repeating: "]", count: 40))
        do {
            _ = try EventJSON.decode(line: deep)
            Issue.record("accepted a list nested 40 deep")
        } catch {
            #expect(error.message.hasSuffix("nested deeper than 16 levels"), "\(error)")
        }
    }

    @Test("an app's own invalid list is refused by validate before it reaches a store")
    func validateRefusesInvalidLists() {
        func message(_ options: [SignInOption]) -> String? {
            do {
                try Samples.event(.signInOptionsShown(options: options, platform: .ios)).validate()
                return nil
            } catch {
                return error.description
            }
        }
        #expect(message([]) == #"field "options": must list 1 to 16 values, got 0"#)
        #expect(message([.apple, .google, .apple]) == #"field "options": lists apple twice; list each value at most once"#)
        #expect(message(Array(repeating: .password, count: 17)) == #"field "options": must list 1 to 16 values, got 17"#)
        #expect(message(SignInOption.allCases) == nil)
    }

    /// Forged payloads (count, codes, platform) under a valid hash, and what the reference decoder says.
    static let binaryRefusals: [(payload: [UInt8], message: String)] = [
        ([0x00, 0x00], "sign_in_options_shown.options holds 0 values, outside 1…16"),
        ([0x11] + [UInt8](0..<17) + [0x00], "sign_in_options_shown.options holds 17 values, outside 1…16"),
        ([0xFF] + [UInt8](repeating: 0, count: 255) + [0x00], "sign_in_options_shown.options holds 255 values, outside 1…16"),
        ([0x01, 0x09, 0x00], "sign_in_options_shown.options has unknown code 9"),
        ([0x02, 0x01, 0x01, 0x00], "sign_in_options_shown.options holds google twice (each value at most once)"),
        ([0x04, 0x00, 0x01, 0x00], "record is truncated in sign_in_options_shown.options (needs 4 bytes, 3 left)"),
        ([0x01], "record is truncated in sign_in_options_shown.options (needs 1 bytes, 0 left)"),
        ([0x01, 0x00], "record is truncated in a byte field (needs 1 bytes, 0 left)"),
        ([0x01, 0x00, 0x02, 0x00], "presence byte of platform is 2, expected 0 or 1"),
        ([0x01, 0x00, 0x01, 0x04], "sign_in_options_shown.platform has unknown code 4"),
        ([0x01, 0x00, 0x00, 0x07], "1 unexpected bytes after the payload")
    ]

    @Test("forged lists are refused by the reference decoder, naming the field; the fast decoder never accepts them")
    func binaryRefusal() {
        let valid = RecordCodecTests.plain(.signInOptionsShown(options: [.apple, .google]))
        #expect(Array(RecordBytes.body(valid).suffix(4)) == [0x02, 0x00, 0x01, 0x00])
        for (payload, message) in Self.binaryRefusals {
            let forged = RecordCodecTests.forged(valid) { body in body = Array(body.dropLast(4)) + payload }
            #expect(RecordCodecTests.refusal(forged) == message, "\(payload.prefix(6))")
            let body = RecordBytes.body(forged)
            #expect(body.withUnsafeBytes { RecordCodec.fastDecodeBody($0, users: TestKeys.directory) } == nil, "\(payload.prefix(6))")
        }
    }

    @Test("the OCSF form keeps the options as an array in `unmapped`, and the type is not sign-in related")
    func ocsf() {
        let payload = Payload.signInOptionsShown(options: [.google, .apple], platform: .ios)
        #expect(OCSFClassification(signInRelated: payload) == nil)
        #expect(OCSFClassification(anyEvent: payload).activityName == "Sign In Options Shown")
        let record = Record(
            seq: 3, event: Samples.event(payload), previousHash: .zero, hash: Digest.hash([1]))
        #expect(OCSFEncoder(product: .init(version: "9.9.9")).event(record) == nil, "skipped by default")
        let value = OCSFEncoder(product: .init(version: "9.9.9"), includesUnrelatedEvents: true).event(record)
        #expect(value?["unmapped"]?["options"] == .array([.string("google"), .string("apple")]))
        #expect(value?["unmapped"]?["platform"] == .string("ios"))
    }
}
