import Foundation
import OnboardingModel
import OnboardingProjections
import OnboardingStore

extension SyncServer {
    /// Exports written at once: each reads a whole history and holds a handler thread while it
    /// does, so two leave the other handler threads to uploads; more get 503 with Retry-After.
    static let maximumConcurrentExports = 2

    enum ExportFormat: String, CaseIterable {
        case csv, jsonl, ocsf

        var contentType: String {
            switch self {
            case .csv: "text/csv; charset=utf-8"
            case .jsonl, .ocsf: "application/x-ndjson"
            }
        }

        var fileExtension: String {
            switch self {
            case .csv: "csv"
            case .jsonl: "jsonl"
            case .ocsf: "json"
            }
        }
    }

    /// The CSV export's header (docs/sync-protocol.md § Export).
    static let exportCSVHeader = "at,device,seq,user,factor,method,outcome,reason,kind"

    /// `GET /v1/users/{user}/export` and `GET /v1/devices/{device}/export?format=…&<filters>`:
    /// the whole filtered history, oldest first, written to an unlinked temporary file and sent
    /// from it (``ExportFile``); every error is answered before the first byte.
    func export(_ request: SyncRequest, user: String?, device pathDevice: String?) throws -> Reply {
        let (query, others): (HistoryQuery, [String: String])
        switch historyQuery(request, user: user, device: pathDevice, extra: ["format"], takesPages: false) {
        case .failure(let refusal): return .now(refusal.response)
        case .success(let parsed): (query, others) = parsed
        }
        guard let text = others["format"], !text.isEmpty else {
            return .now(failure(.malformed, "query parameter format is required: csv, jsonl or ocsf"))
        }
        guard let format = ExportFormat(rawValue: text) else {
            return .now(failure(.malformed, "query parameter format: format \(ErrorEcho.quoted(text)) must be csv, jsonl or ocsf"))
        }
        if let device = query.device, pathDevice != nil, !(try storage.isEnrolled(device)) {
            return .now(failure(.notFound, "device \(device) is not enrolled"))
        }
        let running = exportsRunning.wrappingAdd(1, ordering: .sequentiallyConsistent).newValue
        defer { exportsRunning.wrappingSubtract(1, ordering: .sequentiallyConsistent) }
        guard running <= Self.maximumConcurrentExports else {
            return .now(failure(.unavailable, "\(Self.maximumConcurrentExports) exports are being written on this server; retry shortly", retryAfter: 5))
        }
        let file = try ExportFile(directory: scratchDirectory)
        try writeExport(query, format: format, to: file)
        let name = Self.downloadName(user ?? pathDevice ?? "history") + "-history." + format.fileExtension
        let disposition =
            "attachment; filename=\"\(name)\"; filename*=UTF-8''\(SyncPaths.percentEncoded((user ?? pathDevice ?? "history") + "-history." + format.fileExtension))"
        return .file(SyncResponse(status: 200, headers: ["content-type": format.contentType, "content-disposition": disposition]), try file.finish())
    }

    /// Where exports are written: ``Options/scratchDirectory``, else the data directory of an
    /// LMDB server, else `$TMPDIR` or `/var/tmp` (on disk where `/tmp` may be memory).
    var scratchDirectory: String {
        options.scratchDirectory ?? dataDirectory ?? ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/var/tmp"
    }

    /// A file name's ASCII form: every byte but `A–Z a–z 0–9 . _ -` as `_` (the header's
    /// `filename*` carries the exact name).
    static func downloadName(_ name: String) -> String {
        String(
            String.UnicodeScalarView(
                name.unicodeScalars.prefix(64).map { scalar in
                    scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || ".-_".unicodeScalars.contains(scalar)) ? scalar : "_"
                }))
    }

    private func writeExport(_ query: HistoryQuery, format: ExportFormat, to file: ExportFile) throws {
        let encoder = OCSFEncoder(product: .init(version: options.productVersion))
        // The user's actions go in among the attempts by fold position (device exports have none).
        var actions = try query.user.map { try actionsInRange(ofUser: $0, query: query) } ?? []
        var index = 0
        func writeActions(before position: HistoryCursor?) throws {
            while index < actions.count, position.map({ actions[index].position < $0 }) ?? true {
                try file.write(Self.exportLine(actions[index], format: format, encoder: encoder))
                index += 1
            }
        }
        if format == .csv { try file.write(Self.exportCSVHeader + "\r\n") }
        var line: [UInt8] = []
        try storage.forEachRecord(query, newestFirst: false) { record in
            guard let attempt = History.attempt(of: record),
                query.admits(factor: attempt.factor, method: attempt.method.name, outcome: attempt.outcome)
            else { return true }
            // By time across devices, by seq on one: actions go where their time falls.
            try writeActions(before: HistoryCursor(at: attempt.at, device: attempt.device, seq: attempt.seq))
            switch format {
            case .csv: try file.write(Self.csvRow(attempt))
            case .jsonl: try file.write(SyncWire.encode(Self.attemptValue(attempt)) + [0x0A])
            case .ocsf:
                line.removeAll(keepingCapacity: true)
                if encoder.appendLine(record, to: &line) { try file.write(line) }
            }
            return true
        }
        try writeActions(before: nil)
        actions.removeAll()
    }

    /// The user's actions in the query's time range and factors.
    private func actionsInRange(ofUser user: String, query: HistoryQuery) throws -> [ServerAction] {
        try storage.actions(ofUser: user).filter { action in
            if let since = query.since, action.at < since { return false }
            if let until = query.until, action.at >= until { return false }
            if let factors = query.factors, let factor = action.factor, !factors.contains(factor) { return false }
            return true
        }
    }

    private static func exportLine(_ action: ServerAction, format: ExportFormat, encoder: OCSFEncoder) -> [UInt8] {
        switch format {
        case .csv:
            return Array(
                csvLine([
                    action.at.iso8601, action.device ?? "", "", action.user ?? "", action.factor?.rawValue ?? "", "", "",
                    action.reason ?? "", "action:" + action.kind.rawValue
                ]).utf8)
        case .jsonl:
            return SyncWire.encode(.object([.init("action", action.jsonValue)])) + [0x0A]
        case .ocsf:
            // A user's actions are clears (revocations name a device, not a user).
            return SyncWire.encode(
                encoder.unlockEvent(
                    id: action.id, sequence: action.seq, at: action.at, actor: action.actor,
                    user: action.user, factor: action.factor?.rawValue, reason: action.reason)) + [0x0A]
        }
    }

    static func csvRow(_ attempt: History.Attempt) -> String {
        csvLine([
            attempt.at.iso8601, attempt.device, String(attempt.seq), attempt.user ?? "", attempt.factor.rawValue, attempt.method.name,
            attempt.outcome.rawValue, attempt.reason ?? "", "attempt"
        ])
    }

    /// One CSV record, RFC 4180: CRLF at the end, a cell with a comma, quote, CR or LF quoted
    /// with its quotes doubled, and — against spreadsheet formula injection — a cell that
    /// starts with `=`, `+`, `-`, `@`, a tab or a CR prefixed with `'`.
    static func csvLine(_ cells: [String]) -> String {
        cells.map(csvCell).joined(separator: ",") + "\r\n"
    }

    static func csvCell(_ text: String) -> String {
        var cell = text
        if let first = cell.unicodeScalars.first, "=+-@\t\r".unicodeScalars.contains(first) { cell = "'" + cell }
        if cell.unicodeScalars.contains(where: { $0 == "," || $0 == "\"" || $0 == "\r" || $0 == "\n" }) {
            cell = "\"" + cell.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        }
        return cell
    }
}
