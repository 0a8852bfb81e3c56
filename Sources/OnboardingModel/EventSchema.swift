/// The event schema in one place: for every ``EventType``, its payload fields in their canonical
/// (JSON and binary) order, each with the schema of its type that added it, and for a choice the
/// schema that added each run of its values.
///
/// Everything else is derived from this table, once: ``EventType/fields``,
/// ``EventType/fields(schema:)`` and ``EventType/schemaVersion``, which types seal personal
/// fields at which schema (``EventType/hasPersonalFields(schema:)``), the field order of
/// ``Payload/fieldValues`` (checked against it by `EventSchemaTests`), the JSON codec's field
/// lists, and the fast record decoder's per-schema layouts (`EventSchema.Layout`). The fixed
/// part of the record envelope is `RecordEnvelope`.
///
/// Adding an event type: a case at the end of ``EventType``, its `Payload` case (and that
/// enum's three mappings), its row in `EventType.definition` below, the projections that read
/// it, and the docs (docs/events.md, docs/format.md, docs/openapi.yaml); `EventSchemaTests`
/// fails until every one of them knows it.
public struct EventSchema: Sendable {
    /// One payload field as the table declares it.
    public struct Field: Sendable {
        /// The field as the type's newest schema has it (every choice value).
        public let spec: FieldSpec
        /// The schema of the type that added the field (1 for a field every schema has). A field
        /// a later schema adds is optional and comes after the fields of the schemas before.
        public let since: UInt8
        /// For a choice: `schema → first code` when that schema added the values from that code
        /// on (`[2: 5]`: schema 1 knows codes 0…4).
        public let valuesAdded: [UInt8: Int]

        /// How many of the choice's values schema `version` knows (`nil` for a field of another
        /// kind). A list of choices knows all its values: none is added by a later schema yet.
        func knownValueCount(at version: UInt8) -> Int? {
            if case .choices(let names, _) = spec.kind { return names.count }
            guard case .choice(let names) = spec.kind else { return nil }
            return valuesAdded.filter { $0.key > version }.map(\.value).min() ?? names.count
        }

        /// The field as schema `version` has it (its choice values cut to those it knows).
        func spec(at version: UInt8) -> FieldSpec {
            guard case .choice(let names) = spec.kind, let known = knownValueCount(at: version), known < names.count else { return spec }
            return FieldSpec(name: spec.name, kind: .choice(Array(names.prefix(known))), isOptional: spec.isOptional)
        }
    }

    public let type: EventType
    /// The fields of the newest schema, as declared.
    public let fields: [Field]
    /// The newest schema of the type's payload layout.
    public let version: UInt8
    /// The fields of every schema, oldest first.
    let schemas: [[FieldSpec]]
    /// Bit `s` set when schema `s` holds personal fields.
    let personalSchemaMask: UInt32
    /// The fast decoder's layout of every schema, oldest first.
    let layouts: [Layout]

    /// The JSON name (`type` member).
    public var wireName: String { type.rawValue }
    /// The two-byte type code of the record body.
    public var code: UInt16 { type.code }

    init(_ type: EventType, _ fields: [Field]) {
        self.type = type
        self.fields = fields
        let version = fields.reduce(UInt8(1)) { max($0, $1.since, $1.valuesAdded.keys.max() ?? 1) }
        self.version = version
        // A new schema only appends optional fields (docs/format.md § Versioning).
        for (earlier, later) in zip(fields, fields.dropFirst()) {
            precondition(earlier.since <= later.since, "\(type.rawValue).\(later.spec.name): a schema appends its fields after the older ones")
        }
        for field in fields where field.since > 1 {
            precondition(field.spec.isOptional, "\(type.rawValue).\(field.spec.name): a field a later schema adds is optional")
        }
        let schemas = (1...version).map { schema in fields.filter { $0.since <= schema }.map { $0.spec(at: schema) } }
        self.schemas = schemas
        var mask: UInt32 = 0
        for (index, specs) in schemas.enumerated() where specs.contains(where: \.isPersonal) { mask |= 1 << UInt32(index + 1) }
        personalSchemaMask = mask
        layouts = (1...version).map { Layout(fields, schema: $0) }
    }

    /// One schema's fields as the fast decoder reads them: plain values, no arrays of names.
    struct Layout: Sendable {
        struct Slot: Sendable {
            enum Kind: UInt8, Sendable { case text, choice, flag, instant, count, choices }
            let kind: Kind
            let isOptional: Bool
            /// Whether the schema holds the field (an older schema reads a newer field as absent).
            let isPresent: Bool
            /// A present value makes the record need this schema: the field is new in it.
            let isNew: Bool
            /// A choice code at or past this needs this schema (the schema before knew fewer).
            let firstNewCode: Int
            /// Choice codes below this are valid at this schema.
            let knownValueCount: Int
            /// A count's range; for a list of choices, how many values it may hold.
            let range: ClosedRange<Int>
            /// A present value is left to the reference decoder (the client address: checked there).
            let declinesWhenPresent: Bool
        }
        let slots: [Slot]
        let schema: UInt8

        init(_ fields: [Field], schema: UInt8) {
            self.schema = schema
            slots = fields.map { field in
                let kind: Slot.Kind
                var range = 0...0
                switch field.spec.kind {
                case .text: kind = .text
                case .choice: kind = .choice
                case .flag: kind = .flag
                case .instant: kind = .instant
                case .count(let bounds): kind = .count; range = bounds
                case .choices(_, let maximumCount): kind = .choices; range = 1...maximumCount
                }
                let known = field.knownValueCount(at: schema) ?? 0
                let before = schema > 1 ? field.knownValueCount(at: schema - 1) ?? 0 : 0
                return Slot(
                    kind: kind, isOptional: field.spec.isOptional, isPresent: field.since <= schema,
                    isNew: schema > 1 && field.since == schema, firstNewCode: schema > 1 && field.since < schema ? before : Int.max,
                    knownValueCount: known, range: range,
                    declinesWhenPresent: field.spec.name == ClientAddress.fieldName)
            }
        }
    }

    /// Every type's schema, in type-code order: the one table.
    static let table: [EventSchema] = EventType.allCases.map { EventSchema($0, $0.definition) }
}

extension EventType {
    /// The type's row of ``EventSchema``: its payload fields in stored order. A switch, so that
    /// a type without a row does not compile.
    fileprivate var definition: [EventSchema.Field] {
        switch self {
        case .userAdded:
            [
                .text("display_name"), .text("subtitle", optional: true), .text("image_ref", optional: true),
                .choice("passcode_policy", PasscodePolicy.self), .count("passcode_min_length", 1...64)
            ]
        case .userProfileUpdated:
            [.text("display_name", optional: true), .text("subtitle", optional: true), .text("image_ref", optional: true)]
        case .userSelected: []
        case .userRemoved: [.choice("reason", UserRemovalReason.self)]
        case .passcodeSet, .passcodeChanged, .passcodeResetStarted, .passcodeResetCompleted: []
        case .biometricEnabled: [.choice("kind", BiometricKind.self)]
        case .biometricDisabled: []
        case .signInStarted:
            [.choice("method", SignInMethod.self), .choice("identifier_kind", IdentifierKind.self, optional: true, since: 2)]
        // Schema 2 of the sign-in types adds the client's network address (docs/events.md §
        // Client address): personal data, sealed with the user's key like the profile's text.
        case .signInFailed:
            [.choice("method", SignInMethod.self), .choice("reason", SignInFailureReason.self), .clientAddress]
        case .signInThrottled: [.choice("method", SignInMethod.self), .instant("retry_after"), .clientAddress]
        case .secondFactorRequired: [.choice("method", SecondFactorMethod.self)]
        case .secondFactorFailed: [.choice("method", SecondFactorMethod.self), .clientAddress]
        case .secondFactorSucceeded: [.choice("method", SecondFactorMethod.self)]
        case .signInSucceeded: [.choice("method", SignInMethod.self), .flag("second_factor"), .clientAddress]
        case .signedOut: [.choice("reason", SignOutReason.self)]
        case .captchaPresented: [.choice("purpose", CaptchaPurpose.self)]
        case .captchaFailed, .captchaPassed, .captchaAlternativesViewed: []
        case .passwordResetRequested: [.choice("route", ResetRoute.self)]
        case .temporaryPasswordSent: []
        case .passwordChanged: [.flag("forced")]
        case .accountCreationStarted: []
        case .fieldValidated:
            [.choice("field", FormField.self, valuesAdded: [2: 5]), .choice("result", ValidationResult.self, valuesAdded: [2: 6])]
        case .accountCreationFailed:
            [
                .choice("field", FormField.self, optional: true, valuesAdded: [2: 5]),
                .choice("reason", AccountCreationFailureReason.self, valuesAdded: [2: 7])
            ]
        case .accountCreated: []
        case .lockoutCleared: [.choice("reason", LockoutClearReason.self)]
        case .userForgotten: []
        case .fieldEdited: [.choice("field", FormField.self), .flag("filled"), .flag("valid", optional: true)]
        case .accountCreationSubmitted, .passwordResetStarted: []
        case .passwordResetFailed: [.choice("reason", PasswordResetFailureReason.self)]
        case .userSwitchOpened, .userSwitchClosed: []
        case .signInOptionsShown:
            [.choices("options", SignInOption.self, maximumCount: SignInOption.maximumShown), .choice("platform", DevicePlatform.self, optional: true)]
        // Its client address is schema 2, as on the other sign-in types, so it is written, sealed,
        // erased and scanned by the same rules (a record without one stays at schema 1).
        case .signInAborted: [.choice("reason", SignInAbortReason.self), .clientAddress]
        // `until` absent: a permanent lock, lifted only by an administrator. The client address
        // comes with schema 2 as on the sign-in types, so that the machinery built for it (a
        // personal section only when an address is present, the lockout scan's offsets, an
        // erased address read back as such) holds unchanged.
        case .accountLocked: [.choice("source", AccountLockSource.self), .instant("until", optional: true), .clientAddress]
        // The counts are stored in 4 bytes: an import past 4,294,967,295 lines records that many.
        // The skipped kinds are text only because the kinds are open-ended (each parser names its
        // own); they are fixed phrases of the parsers, never text of the log (docs/importers.md).
        case .logImported:
            [
                .choice("format", ImportedLogFormat.self), .count("events", 0...Payload.maximumImportCount),
                .count("appended", 0...Payload.maximumImportCount), .count("skipped", 0...Payload.maximumImportCount),
                .text("skipped_kinds", optional: true), .instant("first_at"), .instant("last_at")
            ]
        }
    }
}

extension EventSchema.Field {
    static func text(_ name: String, optional: Bool = false, since: UInt8 = 1) -> Self {
        Self(spec: FieldSpec(name: name, kind: .text, isOptional: optional), since: since, valuesAdded: [:])
    }
    static func choice<E: WireEnum>(
        _ name: String, _ type: E.Type, optional: Bool = false, since: UInt8 = 1,
        valuesAdded: [UInt8: Int] = [:]
    ) -> Self {
        Self(spec: FieldSpec(name: name, kind: .choice(E.wireNames), isOptional: optional), since: since, valuesAdded: valuesAdded)
    }
    static func flag(_ name: String, optional: Bool = false, since: UInt8 = 1) -> Self {
        Self(spec: FieldSpec(name: name, kind: .flag, isOptional: optional), since: since, valuesAdded: [:])
    }
    static func instant(_ name: String, optional: Bool = false) -> Self {
        Self(spec: FieldSpec(name: name, kind: .instant, isOptional: optional), since: 1, valuesAdded: [:])
    }
    static func count(_ name: String, _ range: ClosedRange<Int>) -> Self {
        Self(spec: FieldSpec(name: name, kind: .count(range), isOptional: false), since: 1, valuesAdded: [:])
    }
    /// A required list of 1…`maximumCount` distinct values of `E`, in the order given. The
    /// stored form has one byte for the count and one per code, hence the bounds.
    static func choices<E: WireEnum>(_ name: String, _ type: E.Type, maximumCount: Int) -> Self {
        precondition((1...Int(UInt8.max)).contains(maximumCount), "\(name): a list holds 1…255 values (one count byte)")
        precondition(E.allCases.count <= Int(UInt8.max) + 1, "\(name): each value is stored as one byte")
        return Self(spec: FieldSpec(name: name, kind: .choices(E.wireNames, maximumCount: maximumCount), isOptional: false), since: 1, valuesAdded: [:])
    }
    /// The client's network address on a sign-in event (schema 2): optional text that must be an
    /// IPv4 or IPv6 address in its canonical form (``ClientAddress``).
    static let clientAddress = text(ClientAddress.fieldName, optional: true, since: 2)
}

extension EventSchema {
    /// The types by code − 1: the array the decoder indexes per record.
    static let types: [EventType] = table.map(\.type)
    /// Each type's layouts by schema − 1.
    static let layouts: [[Layout]] = table.map(\.layouts)
    /// The same slots in one allocation the fast decoder reads without retaining an array.
    static let fastSlots = FastSlots(layouts)

    /// Every layout's slots, copied once into memory that is never freed (the table lives as long
    /// as the process), found by (type code, schema).
    struct FastSlots: @unchecked Sendable {
        private let slots: UnsafeMutablePointer<Layout.Slot>
        /// Where the slots of (code − 1, schema − 1) start: index (code − 1) × `schemas` + schema − 1.
        private let starts: UnsafeMutablePointer<Int>
        private let counts: UnsafeMutablePointer<Int>
        private let schemas: Int

        init(_ layouts: [[Layout]]) {
            schemas = layouts.map(\.count).max() ?? 1
            let all = layouts.flatMap { $0 }.flatMap(\.slots)
            slots = .allocate(capacity: max(all.count, 1))
            slots.initialize(from: all, count: all.count)
            starts = .allocate(capacity: layouts.count * schemas)
            counts = .allocate(capacity: layouts.count * schemas)
            (starts + 0).initialize(repeating: 0, count: layouts.count * schemas)
            (counts + 0).initialize(repeating: 0, count: layouts.count * schemas)
            var next = 0
            for (type, byType) in layouts.enumerated() {
                for (schema, layout) in byType.enumerated() {
                    starts[type * schemas + schema] = next
                    counts[type * schemas + schema] = layout.slots.count
                    next += layout.slots.count
                }
            }
        }

        /// The slots of schema `schema` (1…the type's newest) of the type with code `code`.
        @inline(__always)
        func slots(code: UInt16, schema: UInt8) -> UnsafeBufferPointer<Layout.Slot> {
            let index = (Int(code) - 1) * schemas + Int(schema) - 1
            return UnsafeBufferPointer(start: slots + starts[index], count: counts[index])
        }
    }
}
