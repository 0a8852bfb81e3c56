/// Calls the importer's progress closure every ``EventImporter/progressIntervalLines`` lines.
struct ProgressReporter {
    private let progress: ((ImportProgress) -> Void)?
    private var state: ImportProgress
    private var nextReport = EventImporter.progressIntervalLines

    init(_ progress: ((ImportProgress) -> Void)?, phase: ImportProgress.Phase, totalBytes: Int64?) {
        self.progress = progress
        state = ImportProgress(phase: phase, lines: 0, bytes: 0, totalBytes: totalBytes, committedEvents: 0, totalEvents: 0)
    }

    mutating func line(_ line: JSONLLine) {
        guard let progress, line.number >= nextReport else { return }
        nextReport = line.number + EventImporter.progressIntervalLines
        state.lines = line.number
        state.bytes = line.offset
        progress(state)
    }
}
