import OnboardingModel
import OnboardingStore

/// `onboard stats`: what is in the store.
enum StatsCommand {
    static let spec = CommandSpec(
        name: "stats",
        summary: "device id, event count, head seq and hash, file size, counts per type",
        arguments: "",
        details: [],
        options: [.store, .json],
        argumentCount: 0...0,
        run: run)

    static func run(_ invocation: Invocation) throws(CLIError) -> Int32 {
        let store = try OnboardTool.openStore(invocation, writable: false)
        defer { store.close() }
        let stats: StoreStats
        do { stats = try store.stats() } catch { throw CLIError(CLIError(error).exitCode, "onboard stats: \(error.message)") }
        if invocation.has("json") {
            let counts = JSONValue.object(stats.countsByType.map { .init($0.type.rawValue, .number(String($0.count))) })
            let value = JSONValue.object([
                .init("store", .string(store.path)),
                .init("device", .string(stats.deviceID)),
                .init("format_version", .number(String(stats.formatVersion))),
                .init("events", .number(String(stats.eventCount))),
                .init("users", .number(String(stats.userCount))),
                .init("head_seq", .number(String(stats.headSeq))),
                .init("head_hash", .string(stats.headHash.hex)),
                .init("first_at", stats.firstAt.map { .string($0.iso8601) } ?? .null),
                .init("last_at", stats.lastAt.map { .string($0.iso8601) } ?? .null),
                .init("file_size_bytes", .number(String(stats.fileSizeBytes))),
                .init("used_bytes", .number(String(stats.usedBytes))),
                .init("map_size_bytes", .number(String(stats.mapSizeBytes))),
                .init("pruned_through_seq", stats.prunedThrough.map { .number(String($0.seq)) } ?? .null),
                .init("pruned_through_hash", stats.prunedThrough.map { .string($0.hash.hex) } ?? .null),
                .init("types", counts)
            ])
            var writer = JSONWriter()
            writer.append(value)
            print(writer.text)
            return ExitCode.success
        }
        var lines = [
            "store       \(store.path)",
            "device      \(stats.deviceID)",
            "format      \(stats.formatVersion)",
            "events      \(stats.eventCount)",
            "users       \(stats.userCount)",
            "head        seq \(stats.headSeq)  \(stats.headHash.hex)",
            "time span   \(stats.firstAt?.iso8601 ?? "-") … \(stats.lastAt?.iso8601 ?? "-")",
            "pruned      " + (stats.prunedThrough.map { "seq 1…\($0.seq) (the log starts at \($0.firstKeptSeqText))" } ?? "nothing"),
            "file size   \(stats.fileSizeBytes) bytes (\(stats.usedBytes) used, map \(stats.mapSizeBytes))"
        ]
        if !stats.countsByType.isEmpty {
            lines.append("by type")
            let width = stats.countsByType.map(\.type.rawValue.count).max() ?? 0
            for (type, count) in stats.countsByType {
                lines.append("  " + type.rawValue + String(repeating: " ", count: width - type.rawValue.count + 2) + String(count))
            }
        }
        print(lines.joined(separator: "\n"))
        return ExitCode.success
    }
}
