import OnboardingModel
import OnboardingProjections
import OnboardingStore

/// `onboard history`: sign-in attempts and sessions of a user (from the by_user index) or of a
/// device, filtered and paged.
enum HistoryCommand {
    static let userOption = OptionSpec(name: "user", valueName: "U", help: "the user (needed unless --device is given)")
    static let deviceOption = OptionSpec(name: "device", valueName: "ID", help: "only this device (default: all)")
    static let sinceOption = OptionSpec(name: "since", valueName: "ISO8601", help: "from this time (inclusive)")
    static let untilOption = OptionSpec(name: "until", valueName: "ISO8601", help: "before this time (exclusive)")
    static let outcomeOption = OptionSpec(
        name: "outcome", valueName: "LIST",
        help: "only these outcomes: succeeded (or success), failed, throttled; comma-separated")
    static let factorOption = OptionSpec(name: "factor", valueName: "LIST", help: "only these factors: password, second_factor")
    static let methodOption = OptionSpec(
        name: "method", valueName: "LIST",
        help: "only these methods: \(HistoryQuery.methodNames.joined(separator: ", "))")
    static let limitOption = OptionSpec(name: "limit", valueName: "N", help: "at most N attempts per page (default: all)")
    static let cursorOption = OptionSpec(name: "cursor", valueName: "C", help: "continue after the page that printed this next cursor")
    static let formatOption = OptionSpec(name: "format", valueName: "table|json|csv", help: "output format (default: table)")

    static let spec = CommandSpec(
        name: "history",
        summary: "sign-in attempts with outcomes, and sessions with durations, filtered and paged",
        arguments: "",
        details: [
            "With --user, reads only the user's records through the by_user index, never the whole log;",
            "with only --device, reads the log from the cursor until the page is full.",
            "Pages are in log order; a page with more after it prints its next cursor (JSON: next_cursor;",
            "table: last line; CSV: on stderr). Pass it to --cursor with the same filters for the next page."
        ],
        options: [
            .store, userOption, deviceOption, sinceOption, untilOption, outcomeOption, factorOption, methodOption,
            limitOption, cursorOption, formatOption, .json
        ],
        argumentCount: 0...0,
        run: run)

    static let csvHeader = "kind,seq,at,device,factor,method,outcome,reason,start,end,duration_ms,second_factor,end_reason,user"

    static func run(_ invocation: Invocation) throws(CLIError) -> Int32 {
        var format = invocation.values["format"] ?? "table"
        guard ["table", "json", "csv"].contains(format) else {
            throw .usage("onboard history: --format must be table, json or csv, got \"\(format)\"")
        }
        if invocation.has("json") {
            guard invocation.values["format"] == nil || format == "json" else {
                throw .usage("onboard history: --json and --format \(format) contradict each other; give one")
            }
            format = "json"
        }
        var parameters: [String: String] = [:]
        for name in HistoryQuery.parameterNames {
            if let value = invocation.values[name] { parameters[name] = value }
        }
        let query: HistoryQuery
        do { query = try HistoryQuery(parameters: parameters) } catch {
            if error.parameter == "user" && parameters["user"] == nil {
                throw .usage("onboard history: --user or --device is required; usage: \(spec.usage)")
            }
            throw .usage("onboard history: --\(error.parameter): \(error.message)")
        }
        let store = try OnboardTool.openStore(invocation, writable: false)
        defer { store.close() }
        let history: History
        do { history = try store.history(query) } catch {
            throw CLIError(CLIError(error).exitCode, "onboard history: \(error.message)")
        }
        switch format {
        case "json":
            printJSON(history.jsonValue)
        case "csv":
            print(csv(history))
            if let next = history.nextCursor { Output.error("next page: --cursor \(next.token)") }
        default:
            printTable(history, showUser: query.user == nil)
        }
        return ExitCode.success
    }

    /// One row per attempt, then one per session; fields quoted as RFC 4180 asks.
    static func csv(_ history: History) -> String {
        var lines = [csvHeader]
        for attempt in history.attempts {
            lines.append(
                [
                    "attempt", String(attempt.seq), attempt.at.iso8601, attempt.device, attempt.factor.rawValue,
                    attempt.method.name, attempt.outcome.rawValue, attempt.reason ?? "", "", "", "", "", "", attempt.user ?? ""
                ]
                .map(ExportCommand.csvField).joined(separator: ","))
        }
        for session in history.sessions {
            lines.append(
                [
                    "session", String(session.seq), "", session.device, "", session.method.rawValue, "", "", session.start.iso8601,
                    session.end?.iso8601 ?? "", session.durationMilliseconds.map(String.init) ?? "",
                    session.secondFactor ? "true" : "false", session.endReason ?? "", session.user ?? ""
                ]
                .map(ExportCommand.csvField).joined(separator: ","))
        }
        return lines.joined(separator: "\n")
    }

    static func printTable(_ history: History, showUser: Bool) {
        func user(_ name: String?) -> [String] { showUser ? [name ?? "-"] : [] }
        let userHeader = showUser ? ["USER"] : []
        print(history.user.map { "attempts of \($0): \(history.attempts.count)" } ?? "attempts: \(history.attempts.count)")
        if !history.attempts.isEmpty {
            print(
                Table.render(
                    header: ["SEQ", "AT", "DEVICE"] + userHeader + ["FACTOR", "METHOD", "OUTCOME", "REASON"],
                    rows: history.attempts.map {
                        [String($0.seq), $0.at.iso8601, $0.device] + user($0.user) + [$0.factor.rawValue, $0.method.name, $0.outcome.rawValue, $0.reason ?? ""]
                    }))
        }
        print("sessions: \(history.sessions.count)")
        if !history.sessions.isEmpty {
            print(
                Table.render(
                    header: ["DEVICE"] + userHeader + ["START", "END", "DURATION", "METHOD", "2FA", "ENDED BY"],
                    rows: history.sessions.map {
                        [$0.device] + user($0.user) + [
                            $0.start.iso8601, $0.end?.iso8601 ?? "open",
                            $0.durationMilliseconds.map { DurationWords.words(milliseconds: $0) } ?? "-",
                            $0.method.rawValue, $0.secondFactor ? "yes" : "no", $0.endReason ?? "-"
                        ]
                    }))
        }
        if let next = history.nextCursor { print("next page: --cursor \(next.token)") }
    }
}
