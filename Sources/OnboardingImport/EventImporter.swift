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
///    in the store, and running the same import again resumes (stored events are skipped).
///
/// ```swift
/// var importer = EventImporter(storePath: "onboarding.lmdb")
/// let summary = try importer.run(try ImportInput(path: "events.jsonl"))
/// ```
public struct EventImporter {
    /// Events per write transaction by default: commits of 100,000 events keep the import's
    /// memory near 200 MiB (the store's batch, its LMDB dirty pages) while the fsync per commit
    /// costs nothing against the events' own work.
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
    /// Called every ``progressIntervalLines`` lines and after every commit.
    public var progress: ((ImportProgress) -> Void)?
    /// Ids the repeat check keeps in memory before it spills (tests make it spill early).
    var idBufferEntries = RepeatedIDFinder.defaultBufferEntries

    public init(storePath: String, storeOptions: OnboardingStore.Options = OnboardingStore.Options(),
                commitEvents: Int = EventImporter.defaultCommitEvents) {
        precondition(commitEvents >= 1, "a commit holds at least one event")
        self.storePath = storePath
        self.storeOptions = storeOptions
        self.commitEvents = commitEvents
    }

    public func run(_ input: ImportInput) throws(ImportError) -> ImportSummary {
        // The existing store, for the checks; a missing one is created only to append.
        var store = try openStore(create: false)
        defer { store?.close() }

        let checked = try check(input, store: store)
        var summary = ImportSummary()
        summary.events = checked.events
        summary.repeats = checked.repeats
        summary.repeatExamples = checked.repeatExamples
        // An input without events creates no store.
        guard checked.events > 0 else { return summary }
        if store == nil { store = try openStore(create: true) }
        try append(input, checked: checked, to: store!, summary: &summary)
        return summary
    }

    func openStore(create: Bool) throws(ImportError) -> OnboardingStore? {
        var options = storeOptions
        options.readOnly = false
        options.createIfMissing = create
        do {
            return try OnboardingStore.open(at: storePath, options: options)
        } catch where error.code == .storeMissing && !create {
            return nil
        } catch {
            throw ImportError(.store, error.message, storeError: error)
        }
    }
}
