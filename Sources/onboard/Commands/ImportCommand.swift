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

    static let spec = CommandSpec(
        name: "import",
        summary: "append events from a JSONL file (- for stdin), every line checked first",
        arguments: "FILE.jsonl|-",
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
        ],
        options: [.store, RecordCommand.deviceOption, commitEveryOption, .durability, clockSkewOption],
        argumentCount: 1...1,
        run: run)

    static func run(_ invocation: Invocation) throws(CLIError) -> Int32 {
        let source = invocation.arguments[0]
        let commitEvery = try invocation.positiveInteger("commit-every") ?? EventImporter.defaultCommitEvents
        let durability = try invocation.durability()
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
                    throw .usage("onboard import: --max-clock-skew must be a whole number of seconds from 0 to \(ServeCommand.maximumClockSkewSeconds), or none, got \"\(text)\"")
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

        for example in summary.repeatExamples {
            Output.error("onboard import: \(source): line \(example.line) repeats the id of line \(example.firstLine) with the same content: skipped as a repeat within the file")
        }
        if summary.repeats > summary.repeatExamples.count {
            Output.error("onboard import: \(source): … and \(summary.repeats - summary.repeatExamples.count) more lines repeat an earlier line")
        }
        let repeats = summary.repeats == 1 ? "1 repeat within the file was skipped" : "\(summary.repeats) repeats within the file were skipped"
        if summary.events == 0 {
            print("nothing to import: \(source) has no events")
        } else if summary.appended == 0 {
            var line = "nothing new to import: all \(summary.events - summary.repeats) events of \(source) are already in the store"
            if summary.repeats > 0 { line += "; \(repeats)" }
            print(line)
        } else {
            var line = "imported \(summary.appended) events (seq \(summary.firstSeq!)–\(summary.lastSeq!))"
            if summary.alreadyStored > 0 { line += "; \(summary.alreadyStored) already in the store were skipped" }
            if summary.repeats > 0 { line += "; \(repeats)" }
            print(line)
        }
        return ExitCode.success
    }

    static func cliError(_ error: ImportError) -> CLIError {
        let code: Int32 = switch error.kind {
        case .invalidInput: ExitCode.dataError
        case .inputUnavailable: ExitCode.noInput
        case .inputOutput: ExitCode.ioError
        case .store: error.storeError.map { CLIError($0).exitCode } ?? ExitCode.ioError
        }
        return CLIError(code, "onboard import: \(error.message)")
    }
}
