import Foundation
import OnboardingLab
import OnboardingModel
import OnboardingProjections
import OnboardingStore

/// `onboard lab compare|sweep`: a log replayed under many lockout policies (docs/lab.md).
enum LabCommand {
    static let policiesOption = OptionSpec(
        name: "policies", valueName: "NAME|FILE[,…]",
        help: "compare: the policies to replay (default: every preset); presets by name, custom policies as JSON files")
    static let acrossDevicesOption = OptionSpec(
        name: "across-devices", valueName: nil, help: "key by (user, factor) across devices, as the sync server does (default: per device)")
    static let limitOption = OptionSpec(name: "limit", valueName: "LOW..HIGH", help: "sweep: the tier limits to try, e.g. 3..20")
    static let windowOption = OptionSpec(
        name: "window", valueName: "LOW..HIGH",
        help: "sweep: the tier windows to try, e.g. 1m..1h (s, m, h, d)")
    static let stepsOption = OptionSpec(name: "steps", valueName: "N", help: "sweep: windows to try, spaced geometrically (default 8, at most 64)")
    static let weightOption = OptionSpec(
        name: "honest-minute-weight", valueName: "GUESSES",
        help: "sweep: guesses one honest lockout minute is worth when recommending (default 1)")
    static let writePolicyOption = OptionSpec(
        name: "write-policy", valueName: "FILE",
        help: "sweep: write the recommended policy there, ready for --policy")
    static let reportOption = OptionSpec(
        name: "report", valueName: "FILE",
        help: "write an HTML report there (charts, a timeline; names users and addresses: keep it local)")

    static let spec = CommandSpec(
        name: "lab",
        summary: "replay a log under many lockout policies: compare them, or sweep a grid for the best",
        arguments: "compare|sweep [FILE.jsonl]",
        details: [
            "Reads the store (--store) or an exported JSONL file and replays its sign-in attempts under",
            "each policy as if it had been enforced: a refused attempt counts nowhere. For each policy:",
            "attackers' guesses let through, honest users locked out and for how long, lockouts per day,",
            "and time to the first lock of each attack. Honest and attacker traffic come from a generated",
            "workload's device names, else from the heuristic of docs/lab.md. sweep tries every limit of",
            "--limit with each window of --window, prints the Pareto frontier of (guesses, honest",
            "minutes) and recommends the frontier policy of least guesses + weight × honest minutes."
        ],
        options: [
            .store, policiesOption, acrossDevicesOption, limitOption, windowOption, stepsOption, weightOption,
            writePolicyOption, reportOption, .json
        ],
        argumentCount: 1...2,
        run: run)

    static func run(_ invocation: Invocation) throws(CLIError) -> Int32 {
        let mode = invocation.arguments[0]
        guard mode == "compare" || mode == "sweep" else {
            throw .usage("onboard lab: the first argument is compare or sweep, got \(ErrorEcho.quoted(mode))")
        }
        let sweepOnly = ["limit", "window", "steps", "honest-minute-weight", "write-policy"].filter { invocation.values[$0] != nil }
        if mode == "compare", let option = sweepOnly.first { throw .usage("onboard lab compare: --\(option) is a sweep option") }
        if mode == "sweep", invocation.values["policies"] != nil { throw .usage("onboard lab sweep: --policies is a compare option") }
        let grid = mode == "sweep" ? try sweepGrid(invocation) : nil
        let weight =
            try invocation.values["honest-minute-weight"].map { text throws(CLIError) -> Double in
                guard let value = Double(text), value.isFinite, value >= 0, value <= 1_000_000 else {
                    throw .usage("onboard lab sweep: --honest-minute-weight must be a number from 0 to 1000000, got \(ErrorEcho.quoted(text))")
                }
                return value
            } ?? 1
        let policies = mode == "compare" ? try comparedPolicies(invocation) : []

        let log = try readLog(invocation)
        guard !log.inputs.isEmpty else {
            throw CLIError(ExitCode.dataError, "onboard lab \(mode): the log has no sign-in attempt to replay (\(log.eventCount) events)")
        }
        let across = invocation.has("across-devices")
        let banner =
            "\(log.inputs.count) attempts of \(log.eventCount) events over \(format(log.days)) days; parties: "
            + (log.truth == .generated ? "the generated workload's ground truth" : "the heuristic of docs/lab.md")
            + "; hash checks: off"
        if let grid {
            let sweep = LabSweep.run(log, grid: grid, honestMinuteWeight: weight, acrossDevices: across) { done, total in
                if total >= 20, done % max(1, total / 10) == 0 || done == total { Output.error("lab sweep: \(done)/\(total) policies") }
            }
            if let path = invocation.values["report"] {
                var trace = LabTrace()
                _ = LabReplay.run(log, policy: sweep.recommendedPolicy, acrossDevices: across, trace: &trace)
                try writeReport(
                    LabReport.sweep(log: log, source: source(invocation), sweep: sweep, trace: trace, acrossDevices: across),
                    to: path, mode: mode)
            }
            if let path = invocation.values["write-policy"] {
                do { try Data((sweep.recommendedPolicy.json + "\n").utf8).write(to: URL(fileURLWithPath: path), options: .atomic) } catch {
                    throw CLIError(ExitCode.cannotCreate, "onboard lab sweep: cannot write \(path): \(error.localizedDescription)")
                }
            }
            if invocation.has("json") {
                printJSON(
                    .object([
                        .init("log", logJSON(log)),
                        .init("results", .array(sweep.results.map(resultJSON))),
                        .init("frontier", .array(sweep.frontier.map { .string(sweep.results[$0].policy) })),
                        .init("recommended", sweep.recommendedPolicy.jsonValue)
                    ]))
                return ExitCode.success
            }
            print(banner)
            for line in importLines(log) { print(line) }
            print("\(sweep.results.count) policies; the Pareto frontier of (guesses let through, honest lockout minutes):")
            print(table(sweep.frontier.map { sweep.results[$0] }))
            print("recommended (least guesses + \(format(weight)) × honest minutes): \(sweep.recommendedPolicy.name)")
            if let path = invocation.values["write-policy"] { print("wrote \(path): onboard lockout --policy \(path)") }
            if let path = invocation.values["report"] { print(reportLine(path)) }
            return ExitCode.success
        }
        var results: [LabResult] = []
        if let path = invocation.values["report"] {
            var trace = LabTrace()
            results.append(LabReplay.run(log, policy: policies[0], acrossDevices: across, trace: &trace))
            results += policies.dropFirst().map { LabReplay.run(log, policy: $0, acrossDevices: across) }
            try writeReport(
                LabReport.compare(log: log, source: source(invocation), results: results, trace: trace, acrossDevices: across),
                to: path, mode: mode)
        } else {
            results = policies.map { LabReplay.run(log, policy: $0, acrossDevices: across) }
        }
        if invocation.has("json") {
            printJSON(.object([.init("log", logJSON(log)), .init("results", .array(results.map(resultJSON)))]))
            return ExitCode.success
        }
        print(banner)
        for line in importLines(log) { print(line) }
        print(table(results))
        let attacks = Set(results.flatMap { $0.attacks.map(\.name) }).sorted()
        if !attacks.isEmpty {
            print("")
            print("time to the first lock, per attack:")
            let rows = attacks.map { name in
                [name]
                    + results.map { result in
                        result.attacks.first { $0.name == name }?.timeToFirstLockMilliseconds.map(duration) ?? "never"
                    }
            }
            print(Table.render(header: ["ATTACK"] + results.map(\.policy), rows: rows))
        }
        if let path = invocation.values["report"] { print("", reportLine(path), separator: "\n") }
        return ExitCode.success
    }

    /// The report's name for the log: the file, or the store.
    static func source(_ invocation: Invocation) -> String {
        invocation.arguments.count == 2 ? invocation.arguments[1] : "store " + invocation.storePath
    }

    /// Writes `report` to `path` atomically (a temporary file renamed over it): a reader sees
    /// the old file or the whole new one. A failure is one line and exit 73.
    static func writeReport(_ report: LabReport, to path: String, mode: String) throws(CLIError) {
        do { try Data(report.html.utf8).write(to: URL(fileURLWithPath: path), options: .atomic) } catch {
            let reason = error.localizedDescription.split(whereSeparator: \.isNewline).joined(separator: " ")
            throw CLIError(ExitCode.cannotCreate, "onboard lab \(mode): cannot write the report \(ErrorEcho.quoted(path)): \(reason)")
        }
    }

    static func reportLine(_ path: String) -> String {
        "wrote the report \(path): it shows user names and addresses, keep it local"
    }

    static func table(_ results: [LabResult]) -> String {
        Table.render(
            header: ["POLICY", "GUESSES LET THROUGH", "ATTACKS REFUSED", "HONEST LOCKED OUT", "HONEST MINUTES", "LOCKOUTS/DAY"],
            rows: results.map { result in
                [
                    result.policy, String(result.guessesLetThrough), String(result.attackerAttemptsRefused),
                    "\(result.honestUsersLockedOut) / \(result.honestUsers)", format(result.honestLockoutMinutes),
                    format(result.lockoutsPerDay)
                ]
            })
    }

    static func format(_ value: Double) -> String { String(format: value < 10 ? "%.2f" : "%.1f", value) }

    static func duration(_ milliseconds: Int64) -> String {
        if milliseconds < 1000 { return "\(milliseconds) ms" }
        if milliseconds < 120_000 { return "\(milliseconds / 1000) s" }
        if milliseconds < 7_200_000 { return "\(milliseconds / 60_000) min" }
        return "\(milliseconds / 3_600_000) h"
    }

    /// What each import of a foreign log left out, one line each (at most
    /// ``LabImport/maximumListed``).
    static func importLines(_ log: LabLog) -> [String] {
        var lines = log.imports.prefix(LabImport.maximumListed).map { "import: " + $0.sentence }
        if log.imports.count > LabImport.maximumListed { lines.append("import: … and \(log.imports.count - LabImport.maximumListed) more imports") }
        return lines
    }

    static func logJSON(_ log: LabLog) -> JSONValue {
        .object([
            .init("events", .number(String(log.eventCount))), .init("attempts", .number(String(log.inputs.count))),
            .init("days", .number(format(log.days))), .init("parties", .string(log.truth.rawValue)),
            .init("hash_checks", .bool(false)),
            .init("imports", .array(log.imports.map(importJSON)))
        ])
    }

    /// One `log_imported` event, with its fields' names (docs/lab.md § What the imports left out).
    static func importJSON(_ summary: LabImport) -> JSONValue {
        .object([
            .init("at", .string(summary.at.iso8601)), .init("device", .string(summary.device)),
            .init("format", .string(summary.format.rawValue)), .init("events", .number(String(summary.events))),
            .init("appended", .number(String(summary.appended))), .init("skipped", .number(String(summary.skipped))),
            .init("skipped_kinds", summary.skippedKinds.map { .string($0) } ?? .null),
            .init("first_at", .string(summary.firstAt.iso8601)), .init("last_at", .string(summary.lastAt.iso8601)),
            .init("sentence", .string(summary.sentence))
        ])
    }

    static func resultJSON(_ result: LabResult) -> JSONValue {
        .object([
            .init("policy", .string(result.policy)),
            .init("guesses_let_through", .number(String(result.guessesLetThrough))),
            .init("attacker_attempts_refused", .number(String(result.attackerAttemptsRefused))),
            .init("honest_users", .number(String(result.honestUsers))),
            .init("honest_users_locked_out", .number(String(result.honestUsersLockedOut))),
            .init("honest_lockout_ms", .number(String(result.honestLockoutMilliseconds))),
            .init("lockouts", .number(String(result.lockouts))),
            .init(
                "attacks",
                .array(
                    result.attacks.map { attack in
                        .object([
                            .init("name", .string(attack.name)), .init("attempts", .number(String(attack.attempts))),
                            .init("guesses_let_through", .number(String(attack.guessesLetThrough))),
                            .init("time_to_first_lock_ms", attack.timeToFirstLockMilliseconds.map { .number(String($0)) } ?? .null)
                        ])
                    }))
        ])
    }

    static func comparedPolicies(_ invocation: Invocation) throws(CLIError) -> [LockoutPolicy] {
        guard let list = invocation.values["policies"] else { return LockoutPolicy.presets }
        var policies: [LockoutPolicy] = []
        for name in list.split(separator: ",", omittingEmptySubsequences: false).map(String.init) {
            guard !name.isEmpty else { throw .usage("onboard lab compare: --policies has an empty entry in \(ErrorEcho.quoted(list))") }
            policies.append(try LockoutCommand.loadPolicy(name, command: "lab compare", option: "--policies"))
        }
        return policies
    }

    static func sweepGrid(_ invocation: Invocation) throws(CLIError) -> LabSweep.Grid {
        guard let limitText = invocation.values["limit"], let windowText = invocation.values["window"] else {
            throw .usage("onboard lab sweep: --limit LOW..HIGH and --window LOW..HIGH are required, e.g. --limit 3..20 --window 1m..1h")
        }
        let limits = try range(limitText, option: "limit", maximum: 1_000) { Int($0) }
        let windows = try range(windowText, option: "window", maximum: 366 * 86_400, parse: seconds)
        let steps = try invocation.positiveInteger("steps") ?? 8
        guard steps <= 64 else { throw .usage("onboard lab sweep: --steps must be from 1 to 64, got \(steps)") }
        let grid = LabSweep.Grid(limits: limits, windowSeconds: windows, windowSteps: steps)
        guard grid.policies.count <= 10_000 else {
            throw .usage("onboard lab sweep: the grid has \(grid.policies.count) policies; at most 10000 (narrow --limit or --steps)")
        }
        return grid
    }

    static func range(_ text: String, option: String, maximum: Int, parse: (String) -> Int?) throws(CLIError) -> ClosedRange<Int> {
        let parts = text.components(separatedBy: "..")
        guard parts.count == 2, let low = parse(parts[0]), let high = parse(parts[1]), low >= 1, low <= high, high <= maximum else {
            throw .usage(
                "onboard lab sweep: --\(option) must be LOW..HIGH with 1 ≤ LOW ≤ HIGH ≤ \(maximum)\(option == "window" ? " seconds (e.g. 1m..1h)" : ""), got \(ErrorEcho.quoted(text))"
            )
        }
        return low...high
    }

    /// `90`, `90s`, `5m`, `2h`, `1d`: whole seconds.
    static func seconds(_ text: String) -> Int? {
        let units: [Character: Int] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        var digits = Substring(text), unit = 1
        if let last = text.last, let size = units[last] { digits = digits.dropLast(); unit = size }
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), digits.count <= 9, let number = Int(digits) else { return nil }
        return number * unit
    }

    /// The store's events, or a JSONL file's (one event per line, as `onboard export` writes).
    static func readLog(_ invocation: Invocation) throws(CLIError) -> LabLog {
        if invocation.arguments.count == 2 {
            let path = invocation.arguments[1]
            guard let data = FileManager.default.contents(atPath: path) else {
                throw CLIError(ExitCode.noInput, "onboard lab: cannot read \(ErrorEcho.quoted(path)); give an exported JSONL file")
            }
            var events: [Event] = []
            var lineNumber = 0
            for line in String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false) {
                lineNumber += 1
                if line.allSatisfy(\.isWhitespace) { continue }
                do { events.append(try EventJSON.decode(line: String(line)).event) } catch {
                    throw CLIError(ExitCode.dataError, "onboard lab: \(path) line \(lineNumber): \(error)")
                }
            }
            return LabLog(events: events)
        }
        let store = try OnboardTool.openStore(invocation, writable: false)
        defer { store.close() }
        do {
            let log = try LabLog(store: store)
            if log.damagedRecords > 0 {
                Output.error("onboard lab: \(log.damagedRecords) records could not be read and are left out; run onboard verify")
            }
            return log
        } catch {
            throw CLIError(CLIError(error).exitCode, "onboard lab: \(error.message)")
        }
    }
}
