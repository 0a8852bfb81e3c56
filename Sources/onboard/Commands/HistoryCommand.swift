import OnboardingModel
import OnboardingProjections
import OnboardingStore

/// `onboard history`: one user's sign-in attempts and sessions, from the by_user index.
enum HistoryCommand {
    static let userOption = OptionSpec(name: "user", valueName: "U", help: "the user (required)")
    static let deviceOption = OptionSpec(name: "device", valueName: "ID", help: "only this device (default: all)")
    static let sinceOption = OptionSpec(name: "since", valueName: "ISO8601", help: "from this time (inclusive)")
    static let untilOption = OptionSpec(name: "until", valueName: "ISO8601", help: "before this time (exclusive)")
    static let formatOption = OptionSpec(name: "format", valueName: "table|json|csv", help: "output format (default: table)")

    static let spec = CommandSpec(
        name: "history",
        summary: "a user's sign-in attempts with outcomes, and sessions with durations",
        arguments: "",
        details: ["Reads only the user's records through the by_user index, never the whole log."],
        options: [.store, userOption, deviceOption, sinceOption, untilOption, formatOption],
        argumentCount: 0...0,
        run: run)

    static func run(_ invocation: Invocation) throws(CLIError) -> Int32 {
        guard let user = invocation.values["user"], !user.isEmpty else {
            throw .usage("onboard history: --user is required; usage: \(spec.usage)")
        }
        let format = invocation.values["format"] ?? "table"
        guard ["table", "json", "csv"].contains(format) else {
            throw .usage("onboard history: --format must be table, json or csv, got \"\(format)\"")
        }
        let since = try invocation.time("since")
        let until = try invocation.time("until")
        let store = try OnboardTool.openStore(invocation, writable: false)
        defer { store.close() }
        let history: History
        do { history = try store.history(user: user, device: invocation.values["device"], since: since, until: until) } catch {
            throw CLIError(CLIError(error).exitCode, "onboard history: \(error.message)")
        }
        switch format {
        case "json":
            printJSON(history.jsonValue)
        case "csv":
            var lines = ["kind,seq,at,device,factor,method,outcome,reason,start,end,duration_ms,second_factor,end_reason"]
            for attempt in history.attempts {
                lines.append(["attempt", String(attempt.seq), attempt.at.iso8601, attempt.device, attempt.factor.rawValue,
                              attempt.method, attempt.outcome.rawValue, attempt.reason ?? "", "", "", "", "", ""]
                    .map(ExportCommand.csvField).joined(separator: ","))
            }
            for session in history.sessions {
                lines.append(["session", "", "", session.device, "", session.method.rawValue, "", "", session.start.iso8601,
                              session.end?.iso8601 ?? "", session.durationMilliseconds.map(String.init) ?? "",
                              session.secondFactor ? "true" : "false", session.endReason ?? ""]
                    .map(ExportCommand.csvField).joined(separator: ","))
            }
            print(lines.joined(separator: "\n"))
        default:
            print("attempts of \(user): \(history.attempts.count)")
            if !history.attempts.isEmpty {
                print(Table.render(header: ["SEQ", "AT", "DEVICE", "FACTOR", "METHOD", "OUTCOME", "REASON"], rows: history.attempts.map {
                    [String($0.seq), $0.at.iso8601, $0.device, $0.factor.rawValue, $0.method, $0.outcome.rawValue, $0.reason ?? ""]
                }))
            }
            print("sessions: \(history.sessions.count)")
            if !history.sessions.isEmpty {
                print(Table.render(header: ["DEVICE", "START", "END", "DURATION", "METHOD", "2FA", "ENDED BY"], rows: history.sessions.map {
                    [$0.device, $0.start.iso8601, $0.end?.iso8601 ?? "open", $0.durationMilliseconds.map { DurationWords.words(milliseconds: $0) } ?? "-",
                     $0.method.rawValue, $0.secondFactor ? "yes" : "no", $0.endReason ?? "-"]
                }))
            }
        }
        return ExitCode.success
    }
}
