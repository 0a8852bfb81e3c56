import Foundation
import OnboardingImport

/// The progress of a long import on one line of a terminal's stderr, rewritten in place
/// (`\r`); each phase ends its line before the next begins.
final class ImportProgressLine {
    private var phase: ImportProgress.Phase?

    func show(_ progress: ImportProgress) {
        if let phase, phase != progress.phase { FileHandle.standardError.write(Data("\n".utf8)) }
        phase = progress.phase
        let text: String
        switch progress.phase {
        case .dating:
            text = "import: dated \(progress.lines) lines\(percent(progress.bytes, of: progress.totalBytes))"
        case .checking:
            text = "import: checked \(progress.lines) lines\(percent(progress.bytes, of: progress.totalBytes))"
        case .checkingAgain:
            text = "import: checking seqs again, \(progress.lines) lines\(percent(progress.bytes, of: progress.totalBytes))"
        case .appending:
            text = "import: committed \(progress.committedEvents) / \(progress.totalEvents) events"
        }
        FileHandle.standardError.write(Data("\r\(text)".utf8))
    }

    /// Ends the line, if one was shown.
    func end() {
        if phase != nil { FileHandle.standardError.write(Data("\n".utf8)) }
        phase = nil
    }

    private func percent(_ done: Int64, of total: Int64?) -> String {
        guard let total, total > 0 else { return "" }
        return " (\(min(100, done * 100 / total)) %)"
    }
}
