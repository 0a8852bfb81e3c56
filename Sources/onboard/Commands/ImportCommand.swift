import Foundation
import OnboardingImport
import OnboardingModel
import OnboardingStore

/// `onboard import`: append a JSONL file, every line checked before anything is written.
enum ImportCommand {
    static let commitEveryOption = OptionSpec(
        name: "commit-every", valueName: "N",
        help: "events per commit (default \(EventImporter.defaultCommitEvents)); memory grows with N")

    static let clockSkewOption = OptionSpec(
        name: "max-clock-skew", valueName: "SECONDS|none",
        help: "refuse events dated more than this after the clock (default 300); none takes any time, e.g. a log whose clock is known wrong")

    static let fromOption = OptionSpec(
        name: "from", valueName: "FORMAT",
        help:
            "what FILE is: jsonl, the store's JSON Lines (default); sshd, OpenSSH log lines (syslog or journalctl); keycloak, Keycloak's event JSON; okta, Okta's System Log; entra, Entra ID sign-in logs; cloudtrail, AWS CloudTrail; windows, Windows Security events (wevtutil XML or winlogbeat JSON) (docs/importers.md)"
    )

    static let yearOption = OptionSpec(
        name: "year", valueName: "YYYY",
        help: "--from sshd: the year of the first line's syslog timestamp (default: inferred so that the last line is not after the file's modification time)")

    static let timeZoneOption = OptionSpec(
        name: "timezone", valueName: "ZONE",
        help:
            "--from sshd: the zone local syslog times were written in, e.g. Europe/Berlin or UTC (default: this machine's); times with an offset keep it. --from keycloak: the Keycloak server's zone, for the end of a lockout (default: UTC)"
    )

    static let sshdModeOption = OptionSpec(
        name: "sshd-mode", valueName: "normal|aggressive",
        help:
            "--from sshd: normal reads sign-in attempts and the server's cuts (fail2ban's default mode); aggressive also pre-authentication abuse as sign_in_aborted events (fail2ban's ddos, extra and aggressive modes)"
    )

    static let deviceOption = OptionSpec(
        name: "device", valueName: "ID",
        help: "device id of a store created by this command (default: random); with --from a log also the device of records that name no host")

    static let jsonOption = OptionSpec(
        name: "json", valueName: nil,
        help: "print the summary as one JSON object on stdout instead of text (docs/importers.md § The summary)")

    static let spec = CommandSpec(
        name: "import",
        summary: "append events from JSONL, or from a real sshd, Keycloak, Okta, Entra ID, CloudTrail or Windows log (- for stdin), every line checked first",
        arguments: "FILE|-",
        details: [
            "Every line is checked before anything is written: a malformed line, an unknown type or",
            "field, a missing or wrongly typed field, a field that looks like a secret, an id used for",
            "two different events, a \"seq\" other than the one the store assigns, or a time more than",
            "--max-clock-skew after the clock (an event that cannot have happened yet) stops the import",
            "with the line number, and nothing from the file is appended. Events already in the store",
            "(same id and content) are skipped, so re-importing a file appends nothing; so are lines",
            "that repeat an earlier line's event. The checked events are then appended N per commit:",
            "a file of up to N events in one transaction; of a larger one, a failed commit (disk full,",
            "crash) keeps the commits before it, and a rerun resumes. The file is read as a stream",
            "(stdin is copied to a temporary file to be read twice); a line has at most 64 KiB.",
            "",
            "--from sshd|keycloak|okta|entra|cloudtrail|windows maps a real authentication log to",
            "events: failed, throttled and successful sign-ins with their user and client address,",
            "and the locks the identity provider enforced (account_locked), on the device that is the",
            "host (sshd, Windows), the realm (Keycloak) or the account (CloudTrail), or --device for",
            "records that name none (Okta, Entra ID). Records that are not authentication are counted",
            "by kind and reported with their first line numbers, never fatal. The import's last commit",
            "also appends a log_imported event on the store's device: what it read, appended and left",
            "out, which onboard lab reports. Each event's id is made from its record, so importing the",
            "same log again appends nothing (and no second summary)."
        ],
        options: [
            .store, deviceOption, fromOption, yearOption, timeZoneOption, sshdModeOption, commitEveryOption, .durability, clockSkewOption,
            jsonOption
        ],
        argumentCount: 1...1,
        run: run)

    static func run(_ invocation: Invocation) throws(CLIError) -> Int32 {
        let source = invocation.arguments[0]
        let commitEvery = try invocation.positiveInteger("commit-every") ?? EventImporter.defaultCommitEvents
        let durability = try invocation.durability()
        let format = try format(invocation)
        let input: ImportInput
        do {
            input = source == "-" ? try ImportInput.standardInput() : try ImportInput(path: source)
        } catch {
            throw cliError(error)
        }

        var options = OnboardingStore.Options()
        if let text = invocation.values["max-clock-skew"] {
            if text == "none" {
                options.maximumClockSkewMilliseconds = nil
            } else {
                guard let seconds = Int64(text), (0...Int64(ServeCommand.maximumClockSkewSeconds)).contains(seconds) else {
                    throw .usage(
                        "onboard import: --max-clock-skew must be a whole number of seconds from 0 to \(ServeCommand.maximumClockSkewSeconds), or none, got \"\(text)\""
                    )
                }
                options.maximumClockSkewMilliseconds = seconds * 1000
            }
        }
        options.durability = durability
        options.deviceID = invocation.values["device"]
        let storePath = invocation.storePath
        options.migrationProgress = { done, total in
            if total >= 10_000 { Output.error("migrating \(storePath) to format 2: \(done)/\(total) records") }
        }
        var importer = EventImporter(storePath: storePath, storeOptions: options, commitEvents: commitEvery)
        importer.format = format
        let progressLine = ImportProgressLine()
        if Output.standardErrorIsTerminal { importer.progress = { progressLine.show($0) } }

        let summary: ImportSummary
        do {
            summary = try importer.run(input)
        } catch {
            progressLine.end()
            throw cliError(error)
        }
        progressLine.end()

        if invocation.has("json") {
            var writer = JSONWriter()
            writer.append(summary.json(format: importer.format, input: source))
            print(writer.text)
            return ExitCode.success
        }
        for (index, line) in skippedLines(summary.skippedLines).enumerated() {
            Output.error(index == 0 ? "onboard import: \(source): \(line)" : line)
        }
        if case .sshd(let year, let zone, _) = importer.format, let first = summary.startYear {
            // As the user named it: Foundation calls UTC "GMT".
            let zoneName = invocation.values["timezone"] ?? zone.identifier
            Output.error(
                "onboard import: \(source): syslog times read in \(zoneName), the first line in \(first)\(year == nil ? " (inferred; give --year to choose)" : "")"
            )
        }
        for example in summary.repeatExamples {
            Output.error(
                "onboard import: \(source): line \(example.line) repeats the id of line \(example.firstLine) with the same content: skipped as a repeat within the file"
            )
        }
        if summary.repeats > summary.repeatExamples.count {
            Output.error("onboard import: \(source): … and \(summary.repeats - summary.repeatExamples.count) more lines repeat an earlier line")
        }
        let repeats = summary.repeats == 1 ? "1 repeat within the file was skipped" : "\(summary.repeats) repeats within the file were skipped"
        if summary.events == 0 {
            print(
                importer.format == .jsonl
                    ? "nothing to import: \(source) has no events"
                    : "nothing to import: \(source) has no \(importer.format.name) authentication lines; check --from")
        } else if summary.appended == 0 {
            var line = "nothing new to import: all \(summary.events - summary.repeats) events of \(source) are already in the store"
            if summary.repeats > 0 { line += "; \(repeats)" }
            print(line)
        } else {
            var line = "imported \(summary.appended) events (seq \(summary.firstSeq!)–\(summary.lastSeq!))"
            if summary.alreadyStored > 0 { line += "; \(summary.alreadyStored) already in the store were skipped" }
            if summary.repeats > 0 { line += "; \(repeats)" }
            if let seq = summary.summarySeq { line += "; the import's summary is seq \(seq) (log_imported)" }
            print(line)
        }
        return ExitCode.success
    }

    /// The skipped lines as stderr says them: one line for one kind, else a heading and one
    /// indented line per kind, most common first, each with its first line numbers (at most
    /// ``SkippedLines/maximumFirstLines``; `…` when there are more).
    static func skippedLines(_ skipped: SkippedLines) -> [String] {
        let total = skipped.total
        guard total > 0 else { return [] }
        let heading = total == 1 ? "skipped 1 line that is not an authentication event" : "skipped \(total) lines that are not authentication events"
        let kinds = skipped.kinds.map { kind in
            let more = kind.count > kind.firstLines.count ? ", …" : ""
            let lines = kind.firstLines.map(String.init).joined(separator: ", ")
            return "\(kind.count) \(kind.kind) (line\(kind.count == 1 ? "" : "s") \(lines)\(more))"
        }
        if kinds.count == 1 { return ["\(heading): \(kinds[0])"] }
        return ["\(heading):"] + kinds.map { "  " + $0 }
    }

    /// `--from`, `--year` and `--timezone`, checked against one another.
    static func format(_ invocation: Invocation) throws(CLIError) -> ImportFormat {
        let from = invocation.values["from"] ?? "jsonl"
        if from != "sshd", invocation.values["year"] != nil {
            throw .usage("onboard import: --year applies to --from sshd only (syslog times), not --from \(from)")
        }
        if from != "sshd", invocation.values["sshd-mode"] != nil {
            throw .usage("onboard import: --sshd-mode applies to --from sshd only, not --from \(from)")
        }
        if from != "sshd", from != "keycloak", invocation.values["timezone"] != nil {
            throw .usage("onboard import: --timezone applies to --from sshd and keycloak only (local times), not --from \(from)")
        }
        switch from {
        case "jsonl": return .jsonl
        case "keycloak": return .keycloak(timeZone: try zone(invocation) ?? TimeZone(identifier: "UTC")!)
        case "okta": return .okta
        case "entra": return .entra
        case "cloudtrail": return .cloudtrail
        case "windows": return .windows
        case "sshd":
            var year: Int?
            if let text = invocation.values["year"] {
                guard let value = Int(text), (1970...9999).contains(value) else {
                    throw .usage("onboard import: --year must be a year from 1970 to 9999, got \(ErrorEcho.quoted(text))")
                }
                year = value
            }
            var mode = SSHDMode.normal
            if let text = invocation.values["sshd-mode"] {
                guard let named = SSHDMode(rawValue: text) else {
                    throw .usage("onboard import: --sshd-mode must be normal or aggressive, got \(ErrorEcho.quoted(text))")
                }
                mode = named
            }
            return .sshd(year: year, timeZone: try zone(invocation) ?? TimeZone.current, mode: mode)
        default:
            throw .usage(
                "onboard import: --from must be \(ImportFormat.names.dropLast().joined(separator: ", ")) or \(ImportFormat.names.last!), got \(ErrorEcho.quoted(from))"
            )
        }
    }

    /// `--timezone`, `nil` when not given.
    static func zone(_ invocation: Invocation) throws(CLIError) -> TimeZone? {
        guard let name = invocation.values["timezone"] else { return nil }
        guard let named = TimeZone(identifier: name) else {
            throw .usage("onboard import: --timezone \(ErrorEcho.quoted(name)) is not a time zone; give an IANA name such as Europe/Berlin, or UTC")
        }
        return named
    }

    static func cliError(_ error: ImportError) -> CLIError {
        let code: Int32 =
            switch error.kind {
            case .invalidInput: ExitCode.dataError
            case .inputUnavailable: ExitCode.noInput
            case .inputOutput: ExitCode.ioError
            case .store: error.storeError.map { CLIError($0).exitCode } ?? ExitCode.ioError
            }
        return CLIError(code, "onboard import: \(error.message)")
    }
}
