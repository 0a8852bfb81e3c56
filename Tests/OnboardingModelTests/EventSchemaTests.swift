import Foundation
import Testing
@testable import OnboardingModel

/// The schema table (``EventSchema``) is the one place an event type's fields are spelled out:
/// these checks fail when a type is missing from it or from anything that must agree with it —
/// the `Payload` mappings, the fast decoder, the JSON form, and the documents.
@Suite("EventSchema: one table, and every type everywhere")
struct EventSchemaTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func document(_ path: String) throws -> String {
        try String(contentsOf: repository.appendingPathComponent(path), encoding: .utf8)
    }

    @Test("the table has one row per type, in code order, and the type's accessors read it")
    func tableRows() {
        #expect(EventSchema.table.count == EventType.allCases.count)
        for (index, type) in EventType.allCases.enumerated() {
            let row = EventSchema.table[index]
            #expect(row.type == type)
            #expect(row.code == UInt16(index + 1) && EventType(code: row.code) == type)
            #expect(row.wireName == type.rawValue)
            #expect(type.schemaVersion == row.version)
            #expect(type.fields.map(\.name) == row.fields.map(\.spec.name))
            #expect(type.fields(schema: 0) == nil && type.fields(schema: row.version + 1) == nil)
            for schema in 1...row.version {
                guard let specs = type.fields(schema: schema) else {
                    Issue.record("\(type.rawValue) has no schema \(schema)")
                    continue
                }
                // Each schema is a prefix of the newest, with choice values cut to those it knows.
                #expect(specs.map(\.name) == row.fields.filter { $0.since <= schema }.map(\.spec.name))
                #expect(type.hasPersonalFields(schema: schema) == specs.contains(where: \.isPersonal), "\(type.rawValue)@\(schema)")
                #expect(EventSchema.layouts[index][Int(schema) - 1].slots.count == row.fields.count)
            }
            #expect(type.hasPersonalFields == (1...row.version).contains { type.hasPersonalFields(schema: $0) })
        }
    }

    @Test("every type's Payload mappings follow the table: type, field order and kinds, and back")
    func payloadMappings() {
        var generator = EventGenerator(seed: testSeed(fallback: 0x5C4E_3A00_0000_0001))
        for type in EventType.allCases {
            for _ in 0..<50 {
                let payload = generator.payload(of: type)
                #expect(payload.type == type)
                let values = payload.fieldValues
                guard values.count == type.fields.count else {
                    Issue.record("\(type.rawValue): fieldValues has \(values.count) values, the table \(type.fields.count) fields")
                    break
                }
                for (spec, value) in zip(type.fields, values) {
                    switch (spec.kind, value) {
                    case (_, nil): #expect(spec.isOptional, "\(type.rawValue).\(spec.name) is required")
                    case (.text, .text?), (.flag, .flag?), (.instant, .instant?), (.count, .count?): break
                    case (.choice(let names), .choice(let code)?): #expect(Int(code) < names.count)
                    case (.choices(let names, let maximumCount), .choices(let codes)?):
                        #expect((1...maximumCount).contains(codes.count) && codes.allSatisfy { Int($0) < names.count } && Set(codes).count == codes.count)
                    default: Issue.record("\(type.rawValue).\(spec.name): the value \(String(describing: value)) is not of the field's kind")
                    }
                }
                #expect(Payload(type: type, fieldValues: values) == payload)
            }
        }
    }

    @Test("the fast decoder reads every type at every schema, declining only the documented cases")
    func fastDecoderCoverage() {
        for entry in SchemaGoldenTests.payloads {
            let type = entry.payload.type
            for user in [nil, "alice"] as [String?] {
                let event = Event(
                    id: uuid("0f8fad5b-d9cb-469f-a165-70867728950e"), device: "kiosk-7",
                    at: Timestamp(millisecondsSince1970: 1_795_968_000_123),
                    user: type == .userForgotten ? SchemaGoldenTests.forgottenLiteral : user,
                    flow: nil, payload: entry.payload)
                let body = RecordCodec.body(of: event, seq: 9)
                let fast = body.withUnsafeBytes { RecordCodec.fastDecodeBody($0, users: TestKeys.directory) }
                // The documented give-ups: sealed personal fields, and a client address (whose
                // form the reference decoder checks).
                let declines = (event.user != nil && event.hasPersonalFields) || event.payload.clientAddress != nil
                if declines {
                    #expect(fast == nil, "\(entry.name): the fast decoder read what it leaves to the reference decoder")
                } else {
                    #expect(fast.map { $0.0 == 9 && $0.1 == event } == true, "\(entry.name) (user \(user ?? "none")): the fast decoder gave up or misread")
                }
            }
        }
    }

    @Test("every type round trips through the JSON form")
    func jsonRoundTrip() throws {
        for entry in SchemaGoldenTests.payloads {
            // `log_imported` names no user.
            let event = SchemaGoldenTests.event(entry.payload, entry.payload.type == .logImported ? .anonymous : .user)
            let line = EventJSON.encode(event, seq: 3)
            let back = try EventJSON.decode(line: line)
            #expect(back.event == event && back.seq == 3, "\(entry.name)")
        }
    }

    @Test("every type is in docs/events.md, docs/format.md and docs/openapi.yaml")
    func documents() throws {
        let events = try Self.document("docs/events.md")
        let format = try Self.document("docs/format.md")
        let openAPI = try Self.document("docs/openapi.yaml")
        for type in EventType.allCases {
            let name = type.rawValue
            #expect(events.contains("#### `\(name)`"), "docs/events.md has no section for \(name)")
            #expect(events.contains("`\(name)`"), "docs/events.md's summary misses \(name)")
            let hexCode = "0x" + String(repeating: "0", count: 4 - String(type.code, radix: 16).count) + String(type.code, radix: 16)
            #expect(
                format.contains("| \(type.code) | `\(hexCode)` | `\(name)` | \(type.schemaVersion) |"),
                "docs/format.md's event type table has no row for \(name) (code \(type.code), schema \(type.schemaVersion))")
            #expect(openAPI.contains("enum: [\(name)]"), "docs/openapi.yaml has no event schema for \(name)")
        }
    }
}
