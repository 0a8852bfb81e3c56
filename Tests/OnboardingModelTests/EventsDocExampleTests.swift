import Foundation
import Testing
@testable import OnboardingModel

/// The example lines of docs/events.md are canonical JSON events: each decodes, re-encodes to the
/// same bytes, and every type of the vocabulary has at least one.
@Suite("docs/events.md: every example is a canonical event, every type has one")
struct EventsDocExampleTests {
    static func exampleLines() throws -> [String] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/events.md")
        return try String(contentsOf: url, encoding: .utf8).split(separator: "\n").map(String.init)
            .filter { $0.hasPrefix(#"{"id":"#) }
    }

    @Test func examplesAreCanonicalAndCoverEveryType() throws {
        let lines = try Self.exampleLines()
        var types: Set<EventType> = []
        for line in lines {
            let decoded = try EventJSON.decode(line: line)
            #expect(EventJSON.encode(decoded.event, seq: decoded.seq) == line)
            types.insert(decoded.event.type)
        }
        #expect(types == Set(EventType.allCases), "types without an example: \(Set(EventType.allCases).subtracting(types).map(\.rawValue).sorted())")
    }

    @Test("the examples of schema 2 are written at schema 2; the others at schema 1")
    func examplesShowBothSchemas() throws {
        var schemas: [String: Set<UInt8>] = [:]
        for line in try Self.exampleLines() {
            let event = try EventJSON.decode(line: line).event
            schemas[event.type.rawValue, default: []].insert(event.type.schemaVersion(holding: event.payload.fieldValues))
        }
        #expect(schemas["sign_in_started"] == [1, 2])
        #expect(schemas["field_edited"] == [1])
    }
}
