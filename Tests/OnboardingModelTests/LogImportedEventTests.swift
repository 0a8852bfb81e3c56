import Foundation
import Testing
@testable import OnboardingModel

/// `log_imported` (docs/events.md § Imports): an import's summary names no user, its counts fit
/// four bytes, and the JSON codec refuses what the schema refuses, with the field's name.
@Suite struct LogImportedEventTests {
    static let valid =
        #"{"id":"5d2e8a41-93c7-4f0b-b6a2-7e1c9d4f3a58","device":"lab-1","at":"2026-12-01T09:00:00.000Z","user":null,"session":null,"type":"log_imported","format":"sshd","events":34,"appended":34,"skipped":46,"skipped_kinds":"34 not sshd, 12 pam","first_at":"2026-11-28T10:00:00.000Z","last_at":"2026-11-28T11:00:09.000Z"}"#

    static func replacing(_ member: String, with value: String) -> String {
        let pattern = try! Regex(#""\#(member)":("[^"]*"|[^,}]*)"#)
        return valid.replacing(pattern, with: "\"\(member)\":\(value)")
    }

    @Test func theDocumentedEventDecodesAndReEncodesToItsBytes() throws {
        let decoded = try EventJSON.decode(line: Self.valid)
        #expect(EventJSON.encode(decoded.event, seq: nil) == Self.valid)
        #expect(decoded.event.payload.fieldValues.count == 7)
    }

    @Test(
        "hostile values are refused naming the field",
        arguments: [
            ("user", #""alice""#, "user"),
            ("events", "-1", "events"), ("appended", "4294967296", "appended"), ("skipped", "18446744073709551615", "skipped"),
            ("events", "1.5", "events"), ("events", #""34""#, "events"), ("format", #""syslog""#, "format"),
            ("format", "null", "format"), ("skipped_kinds", #""""#, "skipped_kinds"), ("skipped_kinds", #""a\u0007b""#, "skipped_kinds"),
            ("first_at", #""10000-01-01T00:00:00.000Z""#, "first_at"), ("last_at", "0", "last_at")
        ])
    func hostileValues(member: String, value: String, field: String) {
        let line = Self.replacing(member, with: value)
        #expect(line != Self.valid, "the replacement took")
        do {
            _ = try EventJSON.decode(line: line)
            Issue.record("accepted: \(line)")
        } catch {
            #expect(error.field == field, "\(line): \(error)")
        }
        // The fast path agrees: it declines what the reference decoder refuses.
        #expect(Array(line.utf8).withUnsafeBytes { EventJSON.fastDecode($0) } == nil)
    }

    @Test func theCountsTakeZeroAndTheirLargestValue() throws {
        let line = Self.replacing("events", with: "4294967295").replacingOccurrences(of: #""appended":34"#, with: #""appended":0"#)
        let decoded = try EventJSON.decode(line: line)
        guard case let .logImported(_, events, appended, _, _, _, _) = decoded.event.payload else {
            Issue.record("not a log_imported: \(decoded.event.type)")
            return
        }
        #expect(events == Payload.maximumImportCount && appended == 0)
        // Binary: the same bytes back, through both decoders.
        let record = RecordCodec.encode(decoded.event, seq: 1, previousHash: .zero)
        #expect(try RecordCodec.decode(record, expectedSeq: 1).event == decoded.event)
    }

    @Test func aSummaryNamingAUserIsRefusedAlsoInTheBinaryForm() {
        var event = try! EventJSON.decode(line: Self.valid).event
        event.user = "alice"
        #expect(throws: EventValidationError.self) { try event.validate() }
        // Written by a build that did not check (sealed with alice's key): refused on reading.
        let record = RecordCodec.encode(event, seq: 1, previousHash: .zero)
        #expect((try? RecordCodec.decode(record, expectedSeq: 1)) == nil)
    }
}
