import OnboardingModel

/// The block of docs/openapi.yaml that describes events, generated from the vocabulary
/// (``EventType/allCases`` and each type's ``FieldSpec``s) so the schema an upload is checked
/// against is the one the decoder applies: one object schema per type, envelope included
/// (OpenAPI 3.0's `additionalProperties` does not see through `allOf`), exact fields,
/// `additionalProperties: false`. `OpenAPIDocumentTests` fails when the document's block
/// differs and prints this text to paste.
enum OpenAPIEventSchemas {
    static let begin = "    # BEGIN generated event schemas"
    static let end = "    # END generated event schemas"

    /// Characters that may stand in a user id or a text field: everything but the control
    /// characters (Unicode Cc) that ``Event`` refuses.
    static let noControl = #"[^\x00-\x1f\x7f-\x9f]"#
    /// Printable ASCII: one byte each, so a bound in characters is the bound in bytes.
    static let printableASCII = #"[\x20-\x7e]"#
    /// UTF-8 writes a scalar in at most 4 bytes: so many characters always fit the byte bound.
    static let maximumBytesPerScalar = 4

    /// A JSON Schema pattern for 1…`bytes` bytes of UTF-8 without a control character. A regular
    /// expression counts characters, not bytes, so it is exact for ASCII (up to `bytes`
    /// characters) and stricter than the rule for other text (up to `bytes / 4` characters).
    static func boundedText(bytes: Int) -> String {
        "'^(?:\(printableASCII){1,\(bytes)}|\(noControl){1,\(bytes / maximumBytesPerScalar)})$'"
    }

    static let uuidPattern = "'^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$'"

    /// `sign_in_failed` → `SignInFailedEvent`.
    static func schemaName(_ type: EventType) -> String {
        type.rawValue.split(separator: "_").map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined() + "Event"
    }

    static func reference(_ name: String) -> String { ##"$ref: "#/components/schemas/\##(name)""## }

    static func flowList(_ items: [String]) -> String { "[" + items.joined(separator: ", ") + "]" }

    static var block: String {
        var lines = [
            begin + " (Tests/OnboardingServerTests/OpenAPIEventSchemas.swift, from EventType):",
            "    # do not edit by hand; OpenAPIDocumentTests prints the block to paste when the vocabulary changes.",
            "    UUID:",
            "      type: string",
            "      description: 8-4-4-4-12 hex digits, either case (written lowercase).",
            "      pattern: \(uuidPattern)",
            "      example: 0f8fad5b-d9cb-469f-a165-70867728950e",
            "    UserID:",
            "      type: string",
            "      description: >-",
            "        A user id: 1–\(Limits.maximumUserBytes) bytes of UTF-8 without a control character (U+0000–U+001F,",
            "        U+007F–U+009F). A pattern counts characters, not bytes: this one is exact for ASCII ids",
            "        (up to \(Limits.maximumUserBytes) characters) and takes other ids up to \(Limits.maximumUserBytes / maximumBytesPerScalar) characters, which always fit;",
            "        the server also takes longer non-ASCII ids that fit in \(Limits.maximumUserBytes) bytes.",
            "      pattern: \(boundedText(bytes: Limits.maximumUserBytes))",
            "      example: alice",
            "    EventUser:",
            "      type: string",
            "      nullable: true",
            "      description: The account (a user id as in UserID), null or absent when not known yet.",
            "      pattern: \(boundedText(bytes: Limits.maximumUserBytes))",
            "    ForgottenUser:",
            "      type: string",
            "      description: A user's pseudonym literal, `~` and 32 lowercase hex digits (never the readable id).",
            "      pattern: '^~[0-9a-f]{32}$'",
            "    EventSession:",
            "      type: string",
            "      nullable: true",
            "      description: The onboarding flow instance (a UUID), null or absent when there is none.",
            "      pattern: \(uuidPattern)",
            "    EventSeq:",
            "      type: integer",
            "      minimum: 1",
            "      maximum: \(UInt64.max)",
            "      description: The event's place in its device's log (required in an upload), 1 … 2^64 − 1.",
            "    Event:",
            "      description: >-",
            "        One event in its JSON form (docs/events.md): the envelope `id`, `device`, `seq`, `at`,",
            "        `user`, `session`, `type` and exactly the payload fields of the type; an optional field",
            "        may be null or absent. Members in any order; a key at most once.",
            "      oneOf:"
        ]
        lines += EventType.allCases.map { "        - " + reference(schemaName($0)) }
        lines += ["      discriminator:", "        propertyName: type", "        mapping:"]
        lines += EventType.allCases.map { ##"          \##($0.rawValue): "#/components/schemas/\##(schemaName($0))""## }
        for type in EventType.allCases { lines += schema(type) }
        lines.append(end)
        return lines.joined(separator: "\n") + "\n"
    }

    static func schema(_ type: EventType) -> [String] {
        let forgotten = type == .userForgotten
        let required =
            ["id", "device", "seq", "at"] + (forgotten ? ["user"] : []) + ["type"]
            + type.fields.filter { !$0.isOptional }.map(\.name)
        var lines = [
            "    \(schemaName(type)):",
            "      type: object",
            "      description: \"`\(type.rawValue)` (docs/events.md § `\(type.rawValue)`).\"",
            "      required: \(flowList(required))",
            "      additionalProperties: false",
            "      properties:",
            "        id:", "          " + reference("UUID"),
            "        device:", "          " + reference("DeviceID"),
            "        seq:", "          " + reference("EventSeq"),
            "        at:", "          " + reference("Timestamp"),
            "        user:"
        ]
        lines += userProperty(type).map { "          " + $0 }
        lines += [
            "        session:", "          " + reference("EventSession"),
            "        type:", "          type: string", "          enum: [\(type.rawValue)]"
        ]
        for field in type.fields {
            lines.append("        \(field.name):")
            lines += property(field).map { "          " + $0 }
        }
        return lines
    }

    /// The envelope's `user` of `type`: a pseudonym for `user_forgotten`, always null for
    /// `log_imported` (an import's summary names no one: OpenAPI 3.0's way to say "only null" is a
    /// nullable type whose enum is `[null]`), else an optional user id.
    static func userProperty(_ type: EventType) -> [String] {
        switch type {
        case .userForgotten: [reference("ForgottenUser")]
        case .logImported: ["type: string", "nullable: true", "enum: [null]", "description: Always null or absent, since an import's summary names no user."]
        default: [reference("EventUser")]
        }
    }

    /// One payload field. An optional field may be null (the decoder reads null as absent):
    /// `nullable`, and `null` among the names of a choice (OpenAPI 3.0 keeps `enum` strict).
    static func property(_ field: FieldSpec) -> [String] {
        let nullable = field.isOptional ? ["nullable: true"] : []
        switch field.kind {
        case .text where field.name == ClientAddress.fieldName:
            // Canonical IPv4 exactly (no leading zeros); canonical IPv6, which the server accepts
            // too, has no regular expression short enough to be worth writing here.
            let octet = "(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
            return ["type: string"] + nullable + [
                "pattern: '^\(octet)(?:\\.\(octet)){3}$'",
                "description: The client's address in canonical form (docs/events.md § Client address). The pattern is IPv4's; canonical IPv6 (RFC 5952) is accepted as well."
            ]
        case .text:
            return ["type: string"] + nullable + [
                "pattern: \(boundedText(bytes: Limits.maximumTextBytes))",
                "description: 1–\(Limits.maximumTextBytes) bytes of UTF-8 without a control character (see UserID on bytes and characters)."
            ]
        case .choice(let names):
            return ["type: string"] + nullable + ["enum: \(flowList(names + (field.isOptional ? ["null"] : [])))"]
        case .flag:
            return ["type: boolean"] + nullable
        case .instant where field.isOptional:
            // OpenAPI 3.0 cannot make a reference nullable; a `nullable` schema of `allOf` the
            // reference can (`account_locked.until`).
            return ["nullable: true", "allOf:", "  - " + reference("Timestamp")]
        case .instant:
            return [reference("Timestamp")]
        case .count(let range):
            return ["type: integer"] + nullable + ["minimum: \(range.lowerBound)", "maximum: \(range.upperBound)"]
        case .choices(let names, let maximumCount):
            // Lists are never optional in the vocabulary (FieldSpec.choices): no `nullable`.
            return [
                "type: array", "minItems: 1", "maxItems: \(maximumCount)", "uniqueItems: true", "items:", "  type: string",
                "  enum: \(flowList(names))"
            ]
        }
    }
}
