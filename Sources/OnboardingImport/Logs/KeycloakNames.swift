import Foundation
import OnboardingModel

/// Finds, in one pass over Keycloak's events in time order, what an event cannot say itself
/// (``KeycloakEventParser/Hint``): the user name of an event that names its user only by `userId`
/// (a `LOGOUT`, a brute-force lockout: they carry no `details.username`), taken from an earlier
/// event of the same `userId` that gave one; and the end of the temporary lockout in force when
/// an attempt was refused (`user_temporarily_disabled`), from the lockout event before it.
///
/// "Earlier" is in time order, the order the import appends in: an event only ever takes a name
/// from one before it, as a person reading the log top to bottom would. The hints are keyed by
/// the event's line in the time-ordered input, so every pass maps an event alike — the repeat
/// check too, which reads one event alone. Memory holds one entry per user seen and one per
/// hinted event.
///
/// ```swift
/// var names = KeycloakNames(timeZone: zone)
/// for (line, bytes) in eventsInTimeOrder { names.note(bytes, line: line) }
/// names.hints[3] // Hint(user: "maria.lopez", retryAfter: nil)
/// ```
struct KeycloakNames {
    let timeZone: TimeZone
    /// Per line (1-based, in time order), what the events before it said.
    private(set) var hints: [Int: KeycloakEventParser.Hint] = [:]
    /// The last user name each `userId` was seen with.
    private var names: [String: String] = [:]
    /// The end of each `userId`'s last temporary lockout.
    private var lockEnds: [String: Timestamp] = [:]

    init(timeZone: TimeZone) {
        self.timeZone = timeZone
    }

    /// Reads the event on `line` (the events must come in time order).
    mutating func note(_ element: UnsafeRawBufferPointer, line: Int) {
        guard let value = try? JSONValue.parse(bytes: Array(element)), case .object = value,
            let userID = value["userId"]?.stringValue, !userID.isEmpty
        else { return }
        let typed = value["details"]?["username"]?.stringValue
        var hint = KeycloakEventParser.Hint()
        if let typed, !typed.isEmpty {
            names[userID] = typed
        } else if let known = names[userID] {
            hint.user = known
        }
        let type = value["type"]?.stringValue
        if type == "USER_DISABLED_BY_TEMPORARY_LOCKOUT",
            let end = value["details"]?["not_before"]?.stringValue.flatMap({ KeycloakLocalTime.instant($0, timeZone: timeZone) })
        {
            lockEnds[userID] = end
        } else if type == "LOGIN_ERROR", value["error"]?.stringValue == "user_temporarily_disabled", let end = lockEnds[userID],
            let at = KeycloakEventParser.time(value["time"]), end > at
        {
            hint.retryAfter = end
        }
        if hint != KeycloakEventParser.Hint() { hints[line] = hint }
    }
}
