import Foundation
import OnboardingModel

/// One import of a foreign log into the replayed store, as its `log_imported` event recorded
/// it (docs/importers.md § The summary in the store): the lab says what each import left out,
/// since a lockout replay of a log with holes measures the holes too.
///
/// ```swift
/// let imports = log.imports.map(\.sentence)
/// // ["the sshd import of 2026-12-01 read 34 events of 2026-11-28 and skipped 46 lines: 34 not sshd, 12 pam"]
/// ```
public struct LabImport: Sendable, Hashable {
    /// Imports the reports list one by one; the rest are counted (one line each, a store that
    /// was imported into daily for years would push the results off the screen).
    public static let maximumListed = 20

    /// When the import ran (the event's time), and the device it was recorded on.
    public var at: Timestamp
    public var device: String
    public var format: ImportedLogFormat
    public var events: Int
    public var appended: Int
    public var skipped: Int
    /// `"34 not sshd, 12 pam"`; `nil` when nothing was skipped.
    public var skippedKinds: String?
    public var firstAt: Timestamp
    public var lastAt: Timestamp

    /// The import `event` records, or `nil` for another type.
    public init?(_ event: Event) {
        guard case let .logImported(format, events, appended, skipped, skippedKinds, firstAt, lastAt) = event.payload else { return nil }
        self.at = event.at
        self.device = event.device
        self.format = format
        self.events = events
        self.appended = appended
        self.skipped = skipped
        self.skippedKinds = skippedKinds
        self.firstAt = firstAt
        self.lastAt = lastAt
    }

    /// `the sshd import of 2026-12-01 read 34 events of 2026-11-28 and skipped 46 lines: 34 not
    /// sshd, 12 pam` (days in UTC).
    public var sentence: String {
        let span = Self.day(firstAt) == Self.day(lastAt) ? Self.day(firstAt) : "\(Self.day(firstAt)) to \(Self.day(lastAt))"
        let read = "the \(format.rawValue) import of \(Self.day(at)) read \(events) event\(events == 1 ? "" : "s") of \(span)"
        guard skipped > 0 else { return read + " and skipped no line" }
        return read + " and skipped \(skipped) line\(skipped == 1 ? "" : "s")" + (skippedKinds.map { ": \($0)" } ?? "")
    }

    /// `2026-12-01`: the date part of the time's ISO form.
    static func day(_ time: Timestamp) -> String { String(time.iso8601.prefix(10)) }
}
