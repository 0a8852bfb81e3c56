import Foundation
import OnboardingModel
import OnboardingStore

/// `onboard record`: append one event.
enum RecordCommand {
    static let deviceOption = OptionSpec(
        name: "device", valueName: "ID",
        help: "device id of a store created by this command (default: random)")

    static let spec = CommandSpec(
        name: "record",
        summary: "append one event given as JSON (argument or stdin)",
        arguments: "[JSON|-]",
        details: [
            "Appends one event and prints it as stored (canonical JSON with its seq).",
            "\"id\", \"device\" and \"at\" may be left out: a new UUID, the store's device id and the",
            "current time are used. Re-recording an event with the same id and content writes nothing.",
            "",
            "Example:",
            "  onboard record '{\"type\":\"sign_in_failed\",\"user\":\"alice\",\"method\":\"password\",\"reason\":\"invalid_password\"}'"
        ],
        options: [.store, deviceOption, .durability],
        argumentCount: 0...1,
        run: run)

    static func run(_ invocation: Invocation) throws(CLIError) -> Int32 {
        let text: String
        if let argument = invocation.arguments.first, argument != "-" {
            text = argument
        } else {
            let data = FileHandle.standardInput.readDataToEndOfFile()
            text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard !text.isEmpty else {
                throw .usage("onboard record: no event given; pass one JSON object as the argument or on stdin")
            }
        }
        let store = try OnboardTool.openStore(
            invocation, writable: true, deviceID: invocation.values["device"],
            durability: invocation.durability())
        defer { store.close() }
        let defaults = EventJSON.Defaults(id: UUID(), device: store.deviceID, at: Clock.now())
        let decoded: EventJSON.Decoded
        do {
            decoded = try EventJSON.decode(line: text, defaults: defaults)
        } catch {
            throw CLIError(ExitCode.dataError, "onboard record: \(error)")
        }
        let result: AppendResult
        do {
            result = try store.appendBlocking([decoded.event], claimedSeqs: [decoded.seq])[0]
        } catch {
            throw CLIError(CLIError(error).exitCode, "onboard record: \(error.message)")
        }
        print(EventJSON.encode(decoded.event, seq: result.seq))
        if result.isDuplicate {
            Output.error("already recorded at seq \(result.seq); nothing written")
        }
        return ExitCode.success
    }
}

/// The wall clock, read only at the command-line edge; the model and store take time as input.
enum Clock {
    static func now() -> Timestamp {
        Timestamp.now
    }
}
