import OnboardingImport
import OnboardingStore

/// The properties every foreign-log target checks of an event a parser read (`FuzzLogLine`,
/// `FuzzIdentityLog`): the envelope's rules, which the parsers keep so that an import never
/// stops on a line, and the one disagreement with Foundation's JSON parser that is on purpose.
///
/// ```swift
/// if let problem = AuthLogCheck.problem(with: event) { fail("the Okta event \(problem)") }
/// ```
public enum AuthLogCheck {
    /// What breaks the envelope's rules in `event`, `nil` when nothing does: a time outside
    /// 0001…9999, a host that is no device id, a user that is no user id, a client address that
    /// is not canonical, a lock's end outside 0001…9999.
    public static func problem(with event: AuthLogEvent) -> String? {
        guard event.at >= Timestamp.minimum, event.at <= Timestamp.maximum else {
            return "has a time outside 0001…9999: \(event.at.millisecondsSince1970) ms"
        }
        if let host = event.host, (try? Event.validate(deviceID: host)) == nil {
            return "has a host that is no device id: \(FuzzCheck.hex(Array(host.utf8)))"
        }
        if let user = event.user, (try? Event.validate(userID: user)) == nil {
            return "has a user that is no user id: \(FuzzCheck.hex(Array(user.utf8)))"
        }
        if let address = event.payload.clientAddress, !ClientAddress.isValid(address) {
            return "has a client address that is not canonical: \(FuzzCheck.hex(Array(address.utf8)))"
        }
        if case .accountLocked(_, let until?, _) = event.payload, until < Timestamp.minimum || until > Timestamp.maximum {
            return "is locked until a time outside 0001…9999: \(until.millisecondsSince1970) ms"
        }
        return nil
    }

    /// Whether `element` is JSON holding a number that a double cannot hold (`1e400`, `-1e400`):
    /// Foundation refuses it, which RFC 8259 § 6 lets a reader do, while the parsers ignore the
    /// members they do not read and keep such an event on purpose.
    public static func holdsNumberBeyondDouble(_ element: UnsafeRawBufferPointer) -> Bool {
        func beyond(_ value: JSONValue) -> Bool {
            switch value {
            case .number(let text): !(Double(text)?.isFinite ?? false)
            case .array(let items): items.contains(where: beyond)
            case .object(let members): members.contains { beyond($0.value) }
            case .null, .bool, .string: false
            }
        }
        guard let value = try? JSONValue.parse(bytes: Array(element)) else { return false }
        return beyond(value)
    }
}
