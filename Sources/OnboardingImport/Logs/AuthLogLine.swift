import OnboardingModel

/// What one line (or one JSON element) of a foreign authentication log says, as a log parser
/// reads it (``SSHDLogParser``, ``KeycloakEventParser``). Parsers never throw: a line that is not
/// authentication, or that cannot be read, is ``skipped(_:)`` with the kind of line it is, and
/// the import counts and reports those kinds (docs/importers.md).
public enum AuthLogLine: Equatable, Sendable {
    /// An authentication event, mapped to the vocabulary (docs/events.md).
    case event(AuthLogEvent)
    /// A line that is not an authentication event, by kind: a short, stable, lowercase phrase
    /// such as `"not sshd"`, `"session"` or `"unreadable timestamp"`, shown in the summary as
    /// "skipped 12 lines: 9 not sshd, 3 session".
    case skipped(String)
}

/// One authentication event read from a foreign log: the envelope's fields that such a log
/// carries, and the payload it maps to. The importer gives it an id (derived from the line, so
/// that importing the same file again appends nothing) and turns it into an ``Event``.
public struct AuthLogEvent: Equatable, Sendable {
    /// When it happened (UTC).
    public var at: Timestamp
    /// The device: the host that wrote the line (sshd), or the realm (Keycloak). `nil` when the
    /// line names none; the import then needs `--device`.
    public var host: String?
    /// The user the attempt named, as the log spells it (`nil` when it names none).
    public var user: String?
    /// The payload; a sign-in event carries the client address in it (canonical, or `nil` when
    /// the log gives none or gives a host name).
    public var payload: Payload

    public init(at: Timestamp, host: String?, user: String?, payload: Payload) {
        self.at = at
        self.host = host
        self.user = user
        self.payload = payload
    }
}
