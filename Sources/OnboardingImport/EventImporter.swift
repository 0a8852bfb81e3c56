import Foundation
import OnboardingModel
import OnboardingStore

/// Appends the events of a JSONL input to a store, checked first and streamed, with memory
/// bounded by the commit size whatever the input's size (docs/events.md, "Import rules").
///
/// 1. **Check** (nothing is written, no store is created): every line is read and decoded; the
///    bad ones are listed. Each event is checked against the store as it is (``StoreCheck``),
///    and every id is noted (``RepeatedIDFinder``).
/// 2. **Repeats**: lines whose id an earlier line has are read again and compared: the same
///    event is a repeat (skipped), another event under the same id is a bad line.
/// 3. **Append**: the input is read again and its events appended ``commitEvents`` at a time.
///    An input of at most that many events is one transaction; a larger one is several, each
///    whole, so a crash, a full disk or another writer in between leaves a prefix of the input
///    in the store, and running the same import again resumes (stored events are skipped). An
///    input whose events are all stored already writes nothing.
///
/// ```swift
/// let importer = EventImporter(storePath: "onboarding.lmdb")
/// let summary = try importer.run(try ImportInput(path: "events.jsonl"))
/// ```
public struct EventImporter {
    /// Events per write transaction by default. A commit of 100,000 events holds about 60 MiB
    /// (the events, the store's batch, LMDB's dirty pages; measured against commits of 1,000:
    /// 116 against 56 MiB of anonymous memory for 200,000 events), and its fsync costs nothing
    /// against the events' own work (the whole import, decoding twice, outruns the store appending
    /// the same events 1,000 per commit: `import_jsonl_full_vs_append_batch1000` in
    /// docs/benchmarks.md).
    public static let defaultCommitEvents = 100_000
    /// Bad lines (and repeats) listed by name; one screenful is enough to see the pattern.
    public static let maximumReportedLines = 20
    /// Progress is reported every this many lines.
    public static let progressIntervalLines = 50_000

    public var storePath: String
    /// How the store is opened (durability, device id of a new store, migration progress);
    /// `readOnly` and `createIfMissing` are set by the importer.
    public var storeOptions: OnboardingStore.Options
    public var commitEvents: Int
    /// What the input is: the store's JSON Lines, or a foreign log whose authentication lines
    /// are mapped to events (docs/importers.md). A foreign line that names no host gets
    /// `storeOptions.deviceID` as its device.
    public var format: ImportFormat = .jsonl
    /// Called every ``progressIntervalLines`` lines and after every commit.
    public var progress: ((ImportProgress) -> Void)?
    /// Ids the repeat check keeps in memory before it spills (tests make it spill early).
    var idBufferEntries = RepeatedIDFinder.defaultBufferEntries
    /// What earlier Keycloak events say about later ones, by line of the prepared input
    /// (``JSONLogInput``): set by ``run(_:)`` for every pass.
    var keycloakHints: [Int: KeycloakEventParser.Hint] = [:]

    public init(
        storePath: String, storeOptions: OnboardingStore.Options = OnboardingStore.Options(),
        commitEvents: Int = EventImporter.defaultCommitEvents
    ) {
        precondition(commitEvents >= 1, "a commit holds at least one event")
        self.storePath = storePath
        self.storeOptions = storeOptions
        self.commitEvents = commitEvents
    }

    public func run(_ given: ImportInput) throws(ImportError) -> ImportSummary {
        guard format.recordLog != nil else { return try run(given, preparedSkips: SkippedLines()) }
        // A log of JSON records: one per line and oldest first, from a scratch file.
        let prepared = try JSONLogInput.prepare(given, format: format)
        var importer = self
        importer.keycloakHints = prepared.keycloakHints
        return try importer.run(prepared.input, preparedSkips: prepared.skipped)
    }

    private func run(_ input: ImportInput, preparedSkips: SkippedLines) throws(ImportError) -> ImportSummary {
        // The check reads the store as it is, read-only: a refused import leaves it untouched
        // (a writable open and close may write a snapshot, sign the head, make a signing key).
        let checked: CheckedInput
        do {
            var startYear: Int?
            var firstPass = true
            if case .sshd(let year, let timeZone, _) = format {
                if let year { startYear = year } else { startYear = try inferStartYear(of: input, timeZone: timeZone) }
                firstPass = year != nil
            }
            let reading = try openStoreForChecking()
            defer { reading?.close() }
            checked = try check(input, store: reading, startYear: startYear, firstPass: firstPass)
        }
        var summary = ImportSummary()
        summary.skippedLines = checked.skipped.merging(preparedSkips)
        summary.startYear = checked.startYear
        summary.events = checked.events
        summary.repeats = checked.repeats
        summary.repeatExamples = checked.repeatExamples
        // An input without events creates no store; one whose events are all stored writes nothing.
        guard checked.events > 0 else { return summary }
        guard !checked.allStored else {
            summary.alreadyStored = checked.events - checked.repeats
            return summary
        }
        let store = try openStore(readOnly: false, create: true)
        defer { store.close() }
        try append(input, checked: checked, to: store, summary: &summary)
        return summary
    }

    /// The decoder of one pass over the input.
    func lineDecoder(startYear: Int?) -> LineDecoder {
        LineDecoder(format: format, startYear: startYear, defaultDevice: storeOptions.deviceID, keycloakHints: keycloakHints)
    }

    /// The year of an sshd log's first line, for syslog timestamps that carry none: a first pass
    /// counts the turns of the year (December, then January), and the last line is dated no
    /// later than the file's modification time (now, for stdin).
    func inferStartYear(of input: ImportInput, timeZone: TimeZone) throws(ImportError) -> Int {
        var inference = YearInference()
        var reporter = ProgressReporter(progress, phase: .dating, totalBytes: input.sizeBytes)
        try JSONLReader.read(from: try input.firstPassReader()) { line throws(ImportError) in
            reporter.line(line)
            guard case .text(let bytes) = line.content, let text = String(validating: bytes, as: UTF8.self) else { return }
            inference.note(text)
        }
        return inference.startYear(endingBy: input.modificationDate ?? Date(), timeZone: timeZone)
    }

    /// The existing store, read-only (migrated first if an older format needs it), or `nil`.
    func openStoreForChecking() throws(ImportError) -> OnboardingStore? {
        do {
            return try openStore(readOnly: true, create: false)
        } catch  where error.storeError?.code == .storeMissing {
            return nil
        } catch  where error.storeError?.code == .needsMigration {
            // The append would migrate it anyway; the check must read it in the current format.
            try openStore(readOnly: false, create: false).close()
            return try openStore(readOnly: true, create: false)
        }
    }

    func openStore(readOnly: Bool, create: Bool) throws(ImportError) -> OnboardingStore {
        var options = storeOptions
        options.readOnly = readOnly
        options.createIfMissing = create
        do {
            return try OnboardingStore.open(at: storePath, options: options)
        } catch {
            throw ImportError(.store, error.message, storeError: error)
        }
    }
}
