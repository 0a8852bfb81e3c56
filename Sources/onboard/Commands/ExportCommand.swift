import OnboardingModel
import OnboardingStore

/// `onboard export`: the log as JSONL (byte-identical to what `import` reads) or CSV.
enum ExportCommand {
    static let formatOption = OptionSpec(name: "format", valueName: "jsonl|csv", help: "output format (default: jsonl)")
    static let sinceOption = OptionSpec(name: "since-seq", valueName: "N", help: "start at seq N (default: 1)")

    static let spec = CommandSpec(
        name: "export",
        summary: "write the log to stdout as JSONL or CSV",
        arguments: "",
        details: [
            "JSONL: one canonical event per line, in seq order; `onboard import` of it into an empty",
            "store and `onboard export` again gives the same bytes.",
            "CSV: seq,id,device,at,user,session,type,details (details = the payload as JSON).",
        ],
        options: [.store, formatOption, sinceOption],
        argumentCount: 0...0,
        run: run)

    static let csvHeader = "seq,id,device,at,user,session,type,details"

    static func run(_ invocation: Invocation) throws(CLIError) -> Int32 {
        let format = invocation.values["format"] ?? "jsonl"
        guard format == "jsonl" || format == "csv" else {
            throw .usage("onboard export: --format must be jsonl or csv, got \"\(format)\"")
        }
        let since = UInt64(try invocation.positiveInteger("since-seq") ?? 1)
        let store = try OnboardTool.openStore(invocation, writable: false)
        defer { store.close() }
        var output = Output.standardOutput()
        if format == "csv" { output.line(csvHeader) }
        var line: [UInt8] = []
        do {
            try store.forEachRecord(from: since) { record in
                line.removeAll(keepingCapacity: true)
                if format == "jsonl" {
                    EventJSON.encode(record.event, seq: record.seq, into: &line)
                    line.append(0x0A)
                    output.write(bytes: line)
                } else {
                    output.line(csvRow(record))
                }
                return true
            }
        } catch {
            output.flush()
            throw CLIError(CLIError(error).exitCode, "onboard export: \(error.message)")
        }
        output.flush()
        return ExitCode.success
    }

    static func csvRow(_ record: Record) -> String {
        let event = record.event
        return [String(record.seq), event.id.uuidString.lowercased(), event.device, event.at.iso8601,
                event.user ?? "", event.session?.uuidString.lowercased() ?? "", event.type.rawValue,
                EventJSON.encodePayload(event.payload)].map(csvField).joined(separator: ",")
    }

    /// RFC 4180: quote a field holding a comma, quote or line break; double inner quotes.
    static func csvField(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
