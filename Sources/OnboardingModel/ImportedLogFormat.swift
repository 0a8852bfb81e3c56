/// The kind of log a `log_imported` event summarizes: the names `onboard import --from` takes
/// (docs/importers.md). Codes are positions, so a format is only ever appended: the list holds
/// the identity providers' exports too (`okta`, `entra`, `cloudtrail`, `windows`) so that their
/// codes do not move when their importers arrive.
///
/// ```swift
/// Payload.logImported(format: .sshd, events: 34, appended: 34, skipped: 12, skippedKinds: "9 pam, 3 disconnect",
///                     firstAt: first, lastAt: last)
/// ```
public enum ImportedLogFormat: String, WireEnum { case jsonl, sshd, keycloak, okta, entra, cloudtrail, windows }
