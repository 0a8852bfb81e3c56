import OnboardingModel
import OnboardingStore

/// `onboard export`: the log as JSONL (byte-identical to what `import` reads), CSV, or OCSF
/// Authentication events for a SIEM.
enum ExportCommand {
    /// The output formats, in the order help and errors list them.
    enum Format: String, CaseIterable {
        case jsonl, csv, ocsf
    }

    static let formatOption = OptionSpec(name: "format", valueName: "jsonl|csv|ocsf", help: "output format (default: jsonl)")
    static let sinceOption = OptionSpec(name: "since-seq", valueName: "N", help: "start at seq N (default: 1)")
    static let allEventsOption = OptionSpec(
        name: "all-events", valueName: nil,
        help: "with --format ocsf: also events that are not sign-in related, as activity Other (99)")

    static let spec = CommandSpec(
        name: "export",
        summary: "write the log to stdout as JSONL, CSV or OCSF",
        arguments: "",
        details: [
            "JSONL: one canonical event per line, in seq order; `onboard import` of it into an empty",
            "store and `onboard export` again gives the same bytes.",
            "CSV: seq,id,device,at,user,session,type,details (details = the payload as JSON).",
            "OCSF: each sign-in related event as one OCSF \(OCSFSchema.version) Authentication event",
            "(class_uid \(OCSFSchema.classUID)) per line, for a SIEM; other events are skipped unless",
            "--all-events. The mapping is in docs/audit.md.",
            "A pruned store's export starts after its prune point (said on stderr); import refuses it",
            "into a store whose next seq is not that seq."
        ],
        options: [.store, formatOption, sinceOption, allEventsOption],
        argumentCount: 0...0,
        run: run)

    static let csvHeader = "seq,id,device,at,user,session,type,details"

    static func run(_ invocation: Invocation) throws(CLIError) -> Int32 {
        let formatName = invocation.values["format"] ?? Format.jsonl.rawValue
        guard let format = Format(rawValue: formatName) else {
            let valid = Format.allCases.map(\.rawValue).joined(separator: ", ")
            throw .usage("onboard export: unknown --format \"\(formatName)\"; valid formats: \(valid)")
        }
        if invocation.has("all-events") && format != .ocsf {
            throw .usage("onboard export: --all-events only applies to --format ocsf (the \(format.rawValue) export always has every event)")
        }
        let since = UInt64(try invocation.positiveInteger("since-seq") ?? 1)
        let store = try OnboardTool.openStore(invocation, writable: false)
        defer { store.close() }
        if let point = try? store.prunedThrough(), since <= point.seq {
            // On stderr: the JSONL stays exactly what import reads.
            Output.error(
                "onboard export: seq 1…\(point.seq) of this store were pruned; the export starts at \(point.firstKeptSeqText), whose record links to \(point.hash.hex) (the sync server keeps the full history)"
            )
        }
        var output = Output.standardOutput()
        if format == .csv { output.line(csvHeader) }
        let ocsf = OCSFEncoder(
            product: .init(version: OnboardTool.version),
            includesUnrelatedEvents: invocation.has("all-events"))
        var line: [UInt8] = []
        do {
            try store.forEachRecord(from: since) { record in
                line.removeAll(keepingCapacity: true)
                switch format {
                case .jsonl:
                    EventJSON.encode(record.event, seq: record.seq, into: &line)
                    line.append(0x0A)
                    output.write(bytes: line)
                case .csv:
                    output.line(csvRow(record))
                case .ocsf:
                    if ocsf.appendLine(record, to: &line) { output.write(bytes: line) }
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
        return [
            String(record.seq), event.id.uuidString.lowercased(), event.device, event.at.iso8601,
            event.user ?? "", event.flow?.uuidString.lowercased() ?? "", event.type.rawValue,
            EventJSON.encodePayload(event.payload)
        ].map(csvField).joined(separator: ",")
    }

    /// RFC 4180: quote a field holding a comma, quote or line break; double inner quotes.
    static func csvField(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
