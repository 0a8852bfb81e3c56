import OnboardingModel

/// The envelope fields every identity provider's JSON log gives in its own place and spelling,
/// read one way for all of them (``OktaLogParser``, ``EntraSignInParser``,
/// ``CloudTrailLoginParser``, ``WindowsSecurityParser``): a time as ISO 8601 text, a user, a
/// device and a client address. Each returns `nil` for a value the import cannot use, and the
/// parser skips the record with the kind that says which.
enum AuthLogFields {
    /// An ISO 8601 time with its offset (`2026-12-03T09:14:00Z`, `…00.1234567Z`, `…00+01:00`):
    /// the fraction cut to milliseconds, within ``Timestamp/minimum`` … ``Timestamp/maximum``.
    /// A time without an offset is refused: the log's zone is not known.
    static func time(_ value: JSONValue?) -> Timestamp? {
        guard let text = value?.stringValue, text.utf8.count <= maximumTimeBytes else { return nil }
        var scanner = ByteScanner(Substring(text))
        guard let at = SyslogTimestamp.readISO(&scanner), scanner.rest.isEmpty else { return nil }
        return at
    }

    /// A time's text is at most this long: 19 characters, a fraction of at most 9 digits and an
    /// offset. Longer text is not a time, and is not scanned.
    static let maximumTimeBytes = 40

    /// A user as the log names it: a JSON string that is a valid user id (``Event/validate(userID:)``:
    /// not empty, no control character, at most ``Limits/maximumUserBytes``). `.absent` for no
    /// value, an empty string or JSON null; `.unreadable` for any other value.
    static func user(_ value: JSONValue?) -> Field {
        name(value) { (try? Event.validate(userID: $0)) != nil }
    }

    /// A device as the log names it (a host, a tenant, an account): as ``user(_:)``, checked as
    /// a device id (letters, digits and `- _ . :`, at most ``Limits/maximumDeviceBytes``).
    static func device(_ value: JSONValue?) -> Field {
        name(value) { (try? Event.validate(deviceID: $0)) != nil }
    }

    private static func name(_ value: JSONValue?, isValid: (String) -> Bool) -> Field {
        switch value {
        case nil, .null?: return .absent
        case .string(let name)?:
            if name.isEmpty { return .absent }
            return isValid(name) ? .value(name) : .unreadable
        default: return .unreadable
        }
    }

    /// A client address: one IP address literal made canonical (``ClientAddress/canonical(_:)``),
    /// `nil` for anything else (absent, a host name, `-`, a list).
    static func address(_ value: JSONValue?) -> String? {
        value?.stringValue.flatMap { ClientAddress.canonical($0) }
    }

    /// A value that may be absent, or there and unusable.
    enum Field: Equatable {
        case absent
        case unreadable
        case value(String)

        var name: String? {
            if case .value(let name) = self { return name }
            return nil
        }
    }
}
