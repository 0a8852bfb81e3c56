import Foundation
import OnboardingModel
import OnboardingStore

/// `onboard log`: the log, one readable line per event, optionally following new ones.
enum LogCommand {
    static let followOption = OptionSpec(name: "follow", valueName: nil, help: "keep running and print new events as they are appended")

    static let spec = CommandSpec(
        name: "log",
        summary: "print the log readably, optionally following new events",
        arguments: "",
        details: ["Columns: seq, time (UTC), device, user, type, payload fields."],
        options: [.store, followOption, ExportCommand.sinceOption],
        argumentCount: 0...0,
        run: run)

    /// How often `--follow` looks for new events: quick enough to feel live, rare enough to cost nothing.
    static let followPollInterval: TimeInterval = 0.2

    static func run(_ invocation: Invocation) throws(CLIError) -> Int32 {
        let store = try OnboardTool.openStore(invocation, writable: false)
        defer { store.close() }
        var next = UInt64(try invocation.positiveInteger("since-seq") ?? 1)
        if let point = try? store.prunedThrough(), next <= point.seq {
            Output.error("onboard log: seq 1…\(point.seq) were pruned; the log starts at \(point.firstKeptSeqText)")
        }
        var output = Output.standardOutput()
        var exhausted = false
        while true {
            do {
                try store.forEachRecord(from: next) { record in
                    output.line(EventText.line(record))
                    // A record at seq 2^64 − 1 (a damaged store) is the last there can be.
                    guard record.seq < .max else {
                        exhausted = true
                        return false
                    }
                    next = record.seq + 1
                    return true
                }
            } catch {
                output.flush()
                throw CLIError(CLIError(error).exitCode, "onboard log: \(error.message)")
            }
            output.flush()
            guard invocation.has("follow"), !exhausted else { return ExitCode.success }
            Thread.sleep(forTimeInterval: followPollInterval)
        }
    }
}
