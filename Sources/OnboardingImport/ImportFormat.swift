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
    /// is not after the file's modification time), `timeZone` the zone the times were written in,
    /// `mode` how much is read (``SSHDMode``).
    case sshd(year: Int?, timeZone: TimeZone, mode: SSHDMode = .normal)
    /// Keycloak's events, as the admin REST API answers them: one JSON array, or one event
    /// object per line. `timeZone` is the zone of the Keycloak server, in which it writes the
    /// end of a temporary lockout (`details.not_before`, a local time without an offset).
    case keycloak(timeZone: TimeZone)
    /// Okta's System Log (`/api/v1/logs`): one JSON array, or one event object per line.
    case okta
    /// Microsoft Entra ID sign-in logs: a JSON array (the portal's export), Microsoft Graph's
    /// `{"value":[…]}`, or one sign-in object per line.
    case entra
    /// AWS CloudTrail: a log file's `{"Records":[…]}`, a JSON array, or one record per line.
    case cloudtrail
    /// Windows Security events: `wevtutil qe Security /f:xml` (or `Get-WinEvent` `ToXml()`)
    /// XML, or winlogbeat's JSON, one event per line.
    case windows

    /// The formats `onboard import --from` takes, by name, in the order the help lists them.
    public static let names = ["jsonl", "sshd", "keycloak", "okta", "entra", "cloudtrail", "windows"]

    /// The name `onboard import --from` takes.
    public var name: String {
        switch self {
        case .jsonl: "jsonl"
        case .sshd: "sshd"
        case .keycloak: "keycloak"
        case .okta: "okta"
        case .entra: "entra"
        case .cloudtrail: "cloudtrail"
        case .windows: "windows"
        }
    }

    /// The format a `log_imported` event names (its code is fixed in ``ImportedLogFormat``).
    var loggedFormat: ImportedLogFormat {
        switch self {
        case .jsonl: .jsonl
        case .sshd: .sshd
        case .keycloak: .keycloak
        case .okta: .okta
        case .entra: .entra
        case .cloudtrail: .cloudtrail
        case .windows: .windows
        }
    }

    /// Whether lines that are not events are skipped and counted (a foreign log) rather than
    /// refused (the store's own format, where every line must be an event).
    var skipsForeignLines: Bool { self != .jsonl }

    /// How a format of JSON records (or Windows XML) is read, `nil` for the line formats
    /// (JSONL, sshd): what ``JSONLogInput`` needs to put its records one per line, oldest first.
    var recordLog: RecordLog? {
        switch self {
        case .jsonl, .sshd: nil
        case .keycloak(let zone): RecordLog(title: "Keycloak event JSON", parser: KeycloakEventParser(timeZone: zone))
        case .okta: RecordLog(title: "Okta System Log JSON", parser: OktaLogParser())
        case .entra: RecordLog(title: "Entra ID sign-in JSON", parser: EntraSignInParser(), wrapperMember: "value")
        case .cloudtrail: RecordLog(title: "CloudTrail JSON", parser: CloudTrailLoginParser(), wrapperMember: "Records")
        case .windows: RecordLog(title: "Windows event XML or winlogbeat JSON", parser: WindowsSecurityParser(), readsXML: true)
        }
    }
}
