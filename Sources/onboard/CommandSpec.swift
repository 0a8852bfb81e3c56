import OnboardingModel
import OnboardingStore

/// One option of a command: `--name VALUE` (or `--name=VALUE`) when `valueName` is set, a flag otherwise.
struct OptionSpec: Sendable {
    let name: String
    let valueName: String?
    let help: String

    static let store = OptionSpec(
        name: "store", valueName: "PATH",
        help: "the store directory (default: $ONBOARD_STORE or ./onboarding.lmdb)")
    static let durability = OptionSpec(
        name: "durability", valueName: "full|relaxed",
        help: "full (default): durable on return; relaxed: no fsync per commit (survives a crash, not a power loss)")
    static let json = OptionSpec(name: "json", valueName: nil, help: "print JSON instead of text")
    static let at = OptionSpec(name: "at", valueName: "ISO8601", help: "evaluate at this UTC time, e.g. 2026-11-29T16:00:00Z (default: now)")
    static let device = OptionSpec(name: "device", valueName: "ID", help: "the device (default: the store's own device id)")
}

/// One `onboard` command: its help text, what it accepts, and what it runs.
struct CommandSpec: Sendable {
    let name: String
    /// One line for `onboard --help`.
    let summary: String
    /// Positional arguments as shown in the usage line, e.g. `FILE.jsonl`.
    let arguments: String
    /// Lines of explanation shown by `--help` under the usage line.
    let details: [String]
    let options: [OptionSpec]
    /// How many positional arguments it takes.
    let argumentCount: ClosedRange<Int>
    let run: @Sendable (Invocation) throws(CLIError) -> Int32

    var usage: String {
        var parts = ["onboard", name]
        if !arguments.isEmpty { parts.append(arguments) }
        for option in options {
            parts.append(option.valueName.map { "[--\(option.name) \($0)]" } ?? "[--\(option.name)]")
        }
        return parts.joined(separator: " ")
    }

    var help: String {
        var lines = ["onboard \(name) — \(summary)", "", "Usage: \(usage)"]
        if !details.isEmpty {
            lines.append("")
            lines.append(contentsOf: details)
        }
        lines.append("")
        lines.append("Options:")
        let rows =
            options.map { option in
                ("--\(option.name)" + (option.valueName.map { " \($0)" } ?? ""), option.help)
            } + [("-h, --help", "show this help")]
        let width = rows.map(\.0.count).max() ?? 0
        for (left, right) in rows {
            lines.append("  " + left + String(repeating: " ", count: width - left.count + 3) + right)
        }
        return lines.joined(separator: "\n")
    }
}

/// A parsed command line.
struct Invocation: Sendable {
    let command: CommandSpec
    var values: [String: String] = [:]
    var flags: Set<String> = []
    var arguments: [String] = []
    let environment: [String: String]

    /// `--store`, else `$ONBOARD_STORE`, else `./onboarding.lmdb`.
    var storePath: String {
        if let path = values["store"], !path.isEmpty { return path }
        if let path = environment["ONBOARD_STORE"], !path.isEmpty { return path }
        return "./onboarding.lmdb"
    }

    func has(_ flag: String) -> Bool { flags.contains(flag) }

    /// `--durability`, `.full` when absent.
    func durability() throws(CLIError) -> Durability {
        guard let text = values["durability"] else { return .full }
        guard let durability = Durability(rawValue: text) else {
            throw .usage("onboard \(command.name): --durability must be full or relaxed, got \"\(text)\"")
        }
        return durability
    }

    /// A time option (`--at`, `--since`, …), or `nil` when absent.
    func time(_ name: String) throws(CLIError) -> Timestamp? {
        guard let text = values[name] else { return nil }
        do { return try Timestamp(iso8601: text) } catch {
            throw .usage("onboard \(command.name): --\(name): \(error)")
        }
    }

    /// A positive whole-number option, or `nil` when absent.
    func positiveInteger(_ name: String) throws(CLIError) -> Int? {
        guard let text = values[name] else { return nil }
        guard let value = Int(text), value > 0 else {
            throw .usage("onboard \(command.name): --\(name) needs a whole number above 0, got \"\(text)\"")
        }
        return value
    }

    /// Parses `arguments` (after the command name) against `command`.
    static func parse(
        _ arguments: [String], for command: CommandSpec,
        environment: [String: String]
    ) throws(CLIError) -> Invocation? {
        var invocation = Invocation(command: command, environment: environment)
        var index = 0
        var optionsEnded = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if optionsEnded || !argument.hasPrefix("-") || argument == "-" {
                invocation.arguments.append(argument)
                continue
            }
            if argument == "--" { optionsEnded = true; continue }
            if argument == "-h" || argument == "--help" { return nil }
            guard argument.hasPrefix("--") else {
                throw .usage("onboard \(command.name): unknown option \(argument); see onboard \(command.name) --help")
            }
            var name = String(argument.dropFirst(2))
            var inlineValue: String?
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            guard let option = command.options.first(where: { $0.name == name }) else {
                throw .usage("onboard \(command.name): unknown option --\(name); see onboard \(command.name) --help")
            }
            if let valueName = option.valueName {
                if let inlineValue {
                    invocation.values[name] = inlineValue
                } else {
                    guard index < arguments.count else {
                        throw .usage("onboard \(command.name): --\(name) needs a value (\(valueName))")
                    }
                    invocation.values[name] = arguments[index]
                    index += 1
                }
            } else {
                guard inlineValue == nil else { throw .usage("onboard \(command.name): --\(name) takes no value") }
                invocation.flags.insert(name)
            }
        }
        guard command.argumentCount.contains(invocation.arguments.count) else {
            let expected = command.arguments.isEmpty ? "no arguments" : command.arguments
            throw .usage("onboard \(command.name): expected \(expected), got \(invocation.arguments.count) argument(s); usage: \(command.usage)")
        }
        return invocation
    }
}
