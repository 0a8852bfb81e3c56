import Foundation
import OnboardingModel

/// A log to check the OCSF export on: the realistic traffic `onboard generate` writes, and the
/// events it never writes (every type and every choice of the vocabulary, users with and without
/// a profile, events without a user, the extreme times, awkward text), as JSONL to import.
enum OCSFCorpus {
    /// Each scenario of `onboard generate --help`, so every kind of traffic it knows is in the log.
    static let scenarios = ["mixed", "honest", "brute_force", "stuffing", "spraying", "shared_device"]
    /// Events per scenario: every type a scenario emits shows up well before this many, and
    /// six scenarios stay a few seconds of validation.
    static let eventsPerScenario = 700

    /// The `onboard generate` arguments of one scenario: the same log every run, and a seed of
    /// its own (the same seed gives the same event ids in every scenario).
    static func generateArguments(_ scenario: String, seed: Int, output: String) -> [String] {
        [
            "generate", "--events", String(eventsPerScenario), "--seed", String(seed), "--scenario", scenario,
            "--users", "25", "--devices", "6", "--output", output
        ]
    }

    /// A user who is added (has a profile) and later forgotten, then seen again.
    static let profiledForgotten = "ada.lovelace"
    /// A user without a profile who is forgotten.
    static let plainForgotten = "carol"

    /// A pseudonym literal, as an erased record reads back and re-imports.
    static let pseudonym = "~0123456789abcdef0123456789abcdef"

    static let users: [String?] = [
        nil, profiledForgotten, "bob@example.org", plainForgotten, nil, "Zoë Ångström 👩‍⚕️", "يوسف\u{200F}", pseudonym,
        String(repeating: "é", count: Limits.maximumUserBytes / 2),
        "quote\"back\\slash/ \u{2028}\u{2029}\u{202E}\u{FEFF}"
    ]

    /// Text that must come through escaped or untouched: quotes and backslashes, the Unicode
    /// line and paragraph separators, bidirectional and zero-width format characters, astral
    /// characters, and the longest text a field takes.
    static let texts = [
        "Cheffe \"A\" \\ aile nord/sud <b>&amp;</b>",
        "line\u{2028}separator\u{2029}paragraph\u{00A0}nbsp",
        "\u{202E}desrever\u{202C} \u{200E}mark\u{200F} zero\u{200B}width \u{FEFF}bom",
        "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 👩‍⚕️ 🇫🇷 漢字 ‏שלום‎",
        String(repeating: "漢", count: Limits.maximumTextBytes / 3)
    ]

    /// The first and last instants the vocabulary takes, the edges of the epoch, and now-ish.
    static let times = [
        Timestamp.minimum, Timestamp.maximum, Timestamp(millisecondsSince1970: -1), Timestamp(millisecondsSince1970: 0),
        Timestamp(millisecondsSince1970: 1_796_054_400_123)
    ]

    static let devices = ["kiosk-7", "phone.A_1:x", String(repeating: "d", count: Limits.maximumDeviceBytes)]

    /// Every type in the vocabulary, each as many times as its largest choice has names (so
    /// every name of every choice appears) and at least twice (a flag both ways, an optional
    /// field present and absent), cycling through the users, times, devices and texts above.
    static func unusualEvents() -> [String] {
        var lines: [String] = []
        var index = 0
        for type in EventType.allCases {
            let variants = type.fields.reduce(2) { most, spec in
                switch spec.kind {
                case .choice(let names), .choices(let names, _): max(most, names.count)
                default: most
                }
            }
            for variant in 0..<variants {
                index += 1
                lines.append(line(type, variant: variant, index: index))
            }
        }
        return lines
    }

    /// Events for the profiled user after they were forgotten: they read as the pseudonym too.
    static func afterForgetting() -> [String] {
        [EventType.signInStarted, .signInFailed, .signInSucceeded, .userProfileUpdated, .signedOut].enumerated().map { offset, type in
            var members = envelope(index: 10_000 + offset, user: profiledForgotten, type: type)
            members.append(contentsOf: fields(type, variant: offset))
            return text(members)
        }
    }

    /// Events with a C0 or C1 control character or DEL in the user or a text field, each of
    /// which the log must refuse.
    static func controlCharacterEvents() -> [String] {
        ["\u{01}", "\u{1F}", "\u{7F}", "\u{85}", "\u{9F}"].enumerated().flatMap { offset, control in
            var withUser = envelope(index: 20_000 + offset, user: "eve\(control)", type: .passcodeSet)
            withUser.append(contentsOf: fields(.passcodeSet, variant: 0))
            var inText = envelope(index: 20_100 + offset, user: "eve", type: .userProfileUpdated)
            inText.append(.init("display_name", .string("Eve\(control)Adams")))
            return [text(withUser), text(inText)]
        }
    }

    private static func line(_ type: EventType, variant: Int, index: Int) -> String {
        // The profiled user's profile is added first, so later events find it; a user_forgotten
        // names its user by the pseudonym only, a log_imported names none.
        let user =
            switch type {
            case _ where index == 1: profiledForgotten
            case .userForgotten: pseudonym
            case .logImported: nil as String?
            default: users[index % users.count]
            }
        var members = envelope(index: index, user: user, type: type)
        members.append(contentsOf: fields(type, variant: variant))
        return text(members)
    }

    private static func envelope(index: Int, user: String?, type: EventType) -> [JSONValue.Member] {
        var members: [JSONValue.Member] = [
            .init("id", .string(uuid(index))),
            .init("device", .string(devices[index % devices.count])),
            .init("at", .string(times[index % times.count].iso8601))
        ]
        if let user { members.append(.init("user", .string(user))) }
        if index % 3 != 0 { members.append(.init("session", .string(uuid(1_000_000 + index / 4)))) }
        members.append(.init("type", .string(type.rawValue)))
        return members
    }

    private static func fields(_ type: EventType, variant: Int) -> [JSONValue.Member] {
        var members: [JSONValue.Member] = []
        for spec in type.fields {
            if spec.isOptional && variant % 2 == 1 { continue }
            let value: JSONValue =
                switch spec.kind {
                case .text where spec.name == ClientAddress.fieldName: .string(["203.0.113.7", "2001:db8::7"][variant % 2])
                case .text: .string(texts[variant % texts.count])
                case .choice(let names): .string(names[variant % names.count])
                case .flag: .bool(variant % 2 == 0)
                case .instant: .string(times[(variant + 1) % times.count].iso8601)
                case .count(let range): .number(String([range.lowerBound, range.upperBound][variant % 2]))
                case .choices(let names, _): .array([names[variant % names.count], names[(variant + 1) % names.count]].map(JSONValue.string))
                }
            members.append(.init(spec.name, value))
        }
        return members
    }

    private static func uuid(_ number: Int) -> String {
        String(format: "00000000-0000-4000-8000-%012x", number)
    }

    private static func text(_ members: [JSONValue.Member]) -> String {
        var writer = JSONWriter()
        writer.append(.object(members))
        return writer.text
    }
}
