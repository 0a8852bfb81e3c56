import Foundation
import OnboardingModel

/// What an import reads (docs/importers.md).
///
/// ```swift
/// var importer = EventImporter(storePath: "lab.lmdb")
/// importer.format = .sshd(year: nil, timeZone: TimeZone(identifier: "Europe/Berlin")!)
/// let summary = try importer.run(try ImportInput(path: "/var/log/auth.log"))
/// ```
public enum ImportFormat: Sendable, Equatable {
    /// The store's own JSON Lines (docs/events.md): every line an event, every line checked.
    case jsonl
    /// OpenSSH `sshd` lines, as syslog or `journalctl` writes them. Syslog's timestamps carry no
    /// year and no zone: `year` is the first line's year (`nil`: inferred so that the last line
    /// is not after the file's modification time), `timeZone` the zone the times were written in.
    case sshd(year: Int?, timeZone: TimeZone)
    /// Keycloak's events, as the admin REST API answers them: one JSON array, or one event
    /// object per line.
    case keycloak

    /// The name `onboard import --from` takes.
    public var name: String {
        switch self {
        case .jsonl: "jsonl"
        case .sshd: "sshd"
        case .keycloak: "keycloak"
        }
    }

    /// The format a `log_imported` event names (its code is fixed in ``ImportedLogFormat``).
    var loggedFormat: ImportedLogFormat {
        switch self {
        case .jsonl: .jsonl
        case .sshd: .sshd
        case .keycloak: .keycloak
        }
    }

    /// Whether lines that are not events are skipped and counted (a foreign log) rather than
    /// refused (the store's own format, where every line must be an event).
    var skipsForeignLines: Bool { self != .jsonl }
}
