import Foundation
import OnboardingModel
import OnboardingStore

/// `onboard import`: append a JSONL file, atomically by default.
enum ImportCommand {
    static let commitEveryOption = OptionSpec(
        name: "commit-every", valueName: "N",
        help: "commit every N events instead of all at once (for files too large for one transaction; a rerun resumes)")

    static let spec = CommandSpec(
        name: "import",
        summary: "append events from a JSONL file (- for stdin), all or nothing",
        arguments: "FILE.jsonl|-",
        details: [
            "Every line is checked before anything is written: a malformed line, an unknown type or",
            "field, a missing or wrongly typed field, or a field that looks like a secret stops the",
            "import with the line number and the field, and nothing from the file is appended.",
            "Events already in the store (same id and content) are skipped, so re-importing a file",
            "appends nothing. A \"seq\", when present, must be the seq the store assigns.",
        ],
        options: [.store, RecordCommand.deviceOption, commitEveryOption, .durability],
        argumentCount: 1...1,
        run: run)

    /// Stop listing bad lines after this many; one screenful is enough to see the pattern.
    static let maximumReportedErrors = 20
    /// Progress is shown on a terminal every this many lines.
    static let progressIntervalLines = 50_000

    struct ParsedLine {
        let lineNumber: Int
        let decoded: EventJSON.Decoded
    }

    static func run(_ invocation: Invocation) throws(CLIError) -> Int32 {
        let source = invocation.arguments[0]
        let commitEvery = try invocation.positiveInteger("commit-every")
        let durability = try invocation.durability()
        let data = try readInput(source)
        let lines = try parse(data, source: source)
        guard !lines.isEmpty else {
            print("nothing to import: \(source) has no events")
            return ExitCode.success
        }

        try refuseLaterStart(lines, path: invocation.storePath, source: source)
        let store = try OnboardTool.openStore(invocation, writable: true, deviceID: invocation.values["device"],
                                              durability: durability)
        defer { store.close() }
        let chunkSize = commitEvery ?? lines.count
        var appended = 0
        var duplicates = 0
        var firstSeq: UInt64?
        var lastSeq: UInt64 = 0
        let showProgress = Output.standardErrorIsTerminal && commitEvery != nil && lines.count > chunkSize
        var start = 0
        while start < lines.count {
            let chunk = lines[start..<min(start + chunkSize, lines.count)]
            let results: [AppendResult]
            do {
                results = try store.appendBlocking(chunk.map(\.decoded.event), claimedSeqs: chunk.map(\.decoded.seq))
            } catch {
                let line = error.batchIndex.map { "line \(chunk[chunk.startIndex + $0].lineNumber): " } ?? ""
                let kept = appended > 0 ? " (\(appended) events of earlier commits were kept; rerun to resume)" : ""
                throw CLIError(CLIError(error).exitCode, "onboard import: \(source): \(line)\(error.message)\(kept)")
            }
            for result in results {
                if result.isDuplicate {
                    duplicates += 1
                } else {
                    appended += 1
                    if firstSeq == nil { firstSeq = result.seq }
                    lastSeq = result.seq
                }
            }
            start += chunk.count
            if showProgress {
                FileHandle.standardError.write(Data("\rimport: committed \(start) / \(lines.count) events".utf8))
            }
        }
        if showProgress { FileHandle.standardError.write(Data("\n".utf8)) }
        if appended == 0 {
            print("nothing new to import: all \(duplicates) events of \(source) are already in the store")
        } else {
            let skipped = duplicates > 0 ? "; \(duplicates) already in the store were skipped" : ""
            print("imported \(appended) events (seq \(firstSeq!)–\(lastSeq))\(skipped)")
        }
        return ExitCode.success
    }

    /// An export of a pruned store (or from --since-seq) starts after seq 1: its records link to
    /// ones this store does not have, so it cannot be imported with its seqs.
    static func refuseLaterStart(_ lines: [ParsedLine], path: String, source: String) throws(CLIError) {
        guard let first = lines.first, let claimed = first.decoded.seq, claimed > 1 else { return }
        // Read before the writable open, which would create a store the refusal leaves behind.
        var options = OnboardingStore.Options()
        options.readOnly = true
        options.createIfMissing = false
        var head: UInt64 = 0
        do {
            let store = try OnboardingStore.open(at: path, options: options)
            defer { store.close() }
            head = try store.head().seq
            if try store.seq(of: first.decoded.event.id) != nil { return } // a re-import: duplicates
        } catch where error.code == .storeMissing {
            head = 0
        } catch {
            throw CLIError(CLIError(error).exitCode, "onboard import: \(error.message)")
        }
        guard claimed > head + 1 else { return }
        throw CLIError(ExitCode.dataError, "onboard import: \(source): line \(first.lineNumber): the file starts at seq \(claimed) but this store's next seq is \(head + 1): it is an export of a pruned store (or one made with --since-seq) and the events before it are not in this store; nothing was imported — the sync server keeps the full history, export that instead")
    }

    static func readInput(_ source: String) throws(CLIError) -> Data {
        if source == "-" { return FileHandle.standardInput.readDataToEndOfFile() }
        do {
            return try Data(contentsOf: URL(fileURLWithPath: source))
        } catch {
            var isDirectory: ObjCBool = false
            let exists = FileManager.default.fileExists(atPath: source, isDirectory: &isDirectory)
            let reason = !exists ? "no such file" : (isDirectory.boolValue ? "it is a directory" : "permission denied")
            throw CLIError(ExitCode.noInput, "onboard import: cannot read \(source): \(reason)")
        }
    }

    /// Parses and validates every line; throws listing the bad lines, so nothing is written.
    static func parse(_ data: Data, source: String) throws(CLIError) -> [ParsedLine] {
        var parsed: [ParsedLine] = []
        var errors: [String] = []
        var errorCount = 0
        var seenIDs: [UUID: Int] = [:]
        let showProgress = Output.standardErrorIsTerminal && data.count > 8 << 20
        var lineNumber = 0
        data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
            var lineStart = 0
            while lineStart < bytes.count {
                var lineEnd = lineStart
                while lineEnd < bytes.count && bytes[lineEnd] != 0x0A { lineEnd += 1 }
                lineNumber += 1
                var contentEnd = lineEnd
                if contentEnd > lineStart && bytes[contentEnd - 1] == 0x0D { contentEnd -= 1 }
                let slice = UnsafeRawBufferPointer(rebasing: bytes[lineStart..<contentEnd])
                lineStart = lineEnd + 1
                if slice.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
                if showProgress && lineNumber % progressIntervalLines == 0 {
                    FileHandle.standardError.write(Data("\rimport: checked \(lineNumber) lines".utf8))
                }
                func fail(_ message: String) {
                    errorCount += 1
                    if errors.count < maximumReportedErrors { errors.append("line \(lineNumber): \(message)") }
                }
                guard let text = String(validating: slice, as: UTF8.self) else {
                    fail("is not valid UTF-8")
                    continue
                }
                do throws(EventValidationError) {
                    let decoded = try EventJSON.decode(line: text)
                    if let earlier = seenIDs[decoded.event.id], parsed[earlier].decoded.event != decoded.event {
                        fail("event id \(decoded.event.id.uuidString.lowercased()) was used on line \(parsed[earlier].lineNumber) for a different event")
                        continue
                    }
                    seenIDs[decoded.event.id] = parsed.count
                    parsed.append(ParsedLine(lineNumber: lineNumber, decoded: decoded))
                } catch {
                    fail(error.description)
                }
            }
        }
        if showProgress { FileHandle.standardError.write(Data("\n".utf8)) }
        guard errors.isEmpty else {
            var message = "onboard import: \(source): \(errors[0]); nothing was imported"
            if errorCount > 1 {
                message += " (\(errorCount - 1) more bad line\(errorCount == 2 ? "" : "s") below)"
                message += errors.dropFirst().map { "\n  " + $0 }.joined()
                if errorCount > errors.count { message += "\n  … and \(errorCount - errors.count) more" }
            }
            throw CLIError(ExitCode.dataError, message)
        }
        return parsed
    }
}
