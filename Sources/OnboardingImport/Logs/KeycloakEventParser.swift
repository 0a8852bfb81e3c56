import Foundation
import OnboardingModel

/// Reads one Keycloak event, as the admin REST API represents it (`EventRepresentation`: `time`
/// in milliseconds since 1970, `type`, `realmId`, `clientId`, `userId`, `sessionId`, `ipAddress`,
/// `error` and the string map `details`), and maps it to the vocabulary
/// (docs/importers.md § Keycloak events has the table).
///
/// Members it does not read are allowed, since Keycloak adds some across versions (`id`, say).
/// It never throws and never traps: what is not an authentication event, or cannot be read, is
/// ``AuthLogLine/skipped(_:)`` with one of the kinds of ``Skip``.
///
/// ```swift
/// let line = #"{"time":1796289240000,"type":"LOGOUT","realmId":"acme","userId":"3f1c…"}"#
/// var text = line
/// let parsed = text.withUTF8 { KeycloakEventParser().parse(UnsafeRawBufferPointer($0)) }
/// // .event(AuthLogEvent(at: 2026-12-03T09:14:00.000Z, host: "acme", user: "3f1c…", payload: .signedOut(reason: .user)))
/// ```
public struct KeycloakEventParser: Sendable, JSONAuthLogParser {
    /// The kinds of skipped elements, as the import's summary counts them.
    public enum Skip {
        /// Not one JSON value: malformed, not UTF-8, nested too deep, or with a key given twice
        /// (readers disagree on which of two counts, so neither is trusted).
        public static let notJSON = "not JSON"
        /// JSON, but not an object with a string `type`.
        public static let notAnEventObject = "not an event object"
        /// A type that is not a sign-in, sign-out, password or registration event
        /// (`CODE_TO_TOKEN`, `REFRESH_TOKEN`, `CLIENT_LOGIN`, …).
        public static let notAuthentication = "not authentication"
        /// A `LOGIN_ERROR` refused before any credential was checked (`expired_code`,
        /// `cookie_not_found`, `invalid_client_credentials`, …, or no `error` at all).
        public static let loginErrorWithoutCredentialCheck = "login error without a credential check"
        /// A `LOGIN_ERROR` of `user_disabled`: the account is disabled (by an administrator, or
        /// by a permanent brute-force lockout; the event does not say which).
        public static let disabledAccount = "disabled account"
        /// A sign-in with a credential the vocabulary has no method for (WebAuthn, say).
        public static let otherCredential = "other credential type"
        /// `time` missing, not an integer, negative, or past ``Timestamp/maximum``.
        public static let unreadableTime = "unreadable time"
        /// A `realmId` that is not a valid device id.
        public static let unreadableRealm = "unreadable realm"
        /// A user (the typed `details.username`, else `userId`) that is not a valid user id.
        public static let unreadableUser = "unreadable user"
        /// A `USER_DISABLED_BY_TEMPORARY_LOCKOUT` whose `details.not_before` is missing or is no
        /// time: a lock whose end is unknown would read as permanent.
        public static let unreadableLockEnd = "unreadable lock end"
    }

    /// What the events before this one in time order say about it (``KeycloakNames``): the
    /// user name seen earlier for its `userId`, and for a refused attempt the end of the
    /// temporary lockout in force. Found once, before the import's passes, so that every pass
    /// (and the repeat check, which reads one event alone) maps the event the same way.
    public struct Hint: Sendable, Equatable {
        /// The `details.username` of an earlier event of the same `userId`.
        public var user: String?
        /// The `not_before` of the last temporary lockout of the same `userId`, when it is
        /// after the event's time.
        public var retryAfter: Timestamp?

        public init(user: String? = nil, retryAfter: Timestamp? = nil) {
            self.user = user
            self.retryAfter = retryAfter
        }
    }

    /// The zone in which the Keycloak server writes a lockout's end (`details.not_before`).
    public let timeZone: TimeZone

    public init(timeZone: TimeZone = TimeZone(identifier: "UTC")!) {
        self.timeZone = timeZone
    }

    /// Parses one JSON object's bytes (one element of the admin API's array, or one JSON line).
    public func parse(_ element: UnsafeRawBufferPointer) -> AuthLogLine {
        parse(element, hint: nil)
    }

    /// Parses one event with what the events before it said (``Hint``).
    public func parse(_ element: UnsafeRawBufferPointer, hint: Hint?) -> AuthLogLine {
        guard let value = try? JSONValue.parse(bytes: Array(element)) else { return .skipped(Skip.notJSON) }
        guard case .object(let list) = value else { return .skipped(Skip.notAnEventObject) }
        let members = JSONValue.Members(list)
        guard let type = members["type"]?.stringValue else { return .skipped(Skip.notAnEventObject) }
        let details = Details(members["details"])
        let mapping = Self.mapping(type: type, error: members["error"]?.stringValue, details: details)
        if case .skipped(let kind) = mapping { return .skipped(kind) }
        guard let at = Self.time(members["time"]) else { return .skipped(Skip.unreadableTime) }
        guard let host = Self.realm(members["realmId"]) else { return .skipped(Skip.unreadableRealm) }
        let typed = details["username"].flatMap { $0.isEmpty ? nil : $0 } ?? hint?.user
        guard let user = Self.user(typed: typed, id: members["userId"]?.stringValue) else {
            return .skipped(Skip.unreadableUser)
        }
        let address = members["ipAddress"]?.stringValue.flatMap { ClientAddress.canonical($0) }
        var end: Timestamp?
        switch mapping {
        case .throttled:
            // The lock's end when the event or the lockout before it gives one, else its own time.
            end = details["not_before"].flatMap { KeycloakLocalTime.instant($0, timeZone: timeZone) } ?? hint?.retryAfter
        case .locked(permanent: false):
            guard let notBefore = details["not_before"].flatMap({ KeycloakLocalTime.instant($0, timeZone: timeZone) }) else {
                return .skipped(Skip.unreadableLockEnd)
            }
            end = notBefore
        default: break
        }
        // `nil` only for a skipped mapping, which returned above.
        guard let payload = mapping.payload(at: at, end: end, clientAddress: address) else { return .skipped(Skip.notAuthentication) }
        return .event(AuthLogEvent(at: at, host: host.value, user: user.value, payload: payload))
    }
}

// MARK: - Type and error

extension KeycloakEventParser {
    /// What an event's type and error map to, before its time and address are read.
    enum Mapping: Equatable {
        case succeeded(SignInMethod, secondFactor: Bool)
        case failed(SignInFailureReason)
        case secondFactorFailed(SecondFactorMethod)
        /// Refused by Keycloak's brute-force detector: throttled until the lock's end when it is
        /// known, else the event's own time.
        case throttled
        /// Locked by Keycloak's brute-force detector: until `details.not_before`, or for good.
        case locked(permanent: Bool)
        /// A payload that carries neither time nor address.
        case plain(Payload)
        case skipped(String)

        func payload(at: Timestamp, end: Timestamp?, clientAddress: String?) -> Payload? {
            switch self {
            case let .succeeded(method, secondFactor):
                .signInSucceeded(method: method, secondFactor: secondFactor, clientAddress: clientAddress)
            case .failed(let reason): .signInFailed(method: .password, reason: reason, clientAddress: clientAddress)
            case .secondFactorFailed(let method): .secondFactorFailed(method: method, clientAddress: clientAddress)
            case .throttled: .signInThrottled(method: .password, retryAfter: end.map { max($0, at) } ?? at, clientAddress: clientAddress)
            case .locked: .accountLocked(source: .keycloak, until: end, clientAddress: clientAddress)
            case .plain(let payload): payload
            case .skipped: nil
            }
        }
    }

    static func mapping(type: String, error: String?, details: Details) -> Mapping {
        switch type {
        case "LOGIN": return loginMapping(details)
        case "LOGIN_ERROR": return loginErrorMapping(error: error, details: details)
        case "LOGOUT": return .plain(.signedOut(reason: .user))
        case "UPDATE_PASSWORD": return .plain(.passwordChanged(forced: false))
        case "RESET_PASSWORD": return .plain(.passwordResetRequested(route: resetRoute(typed: details["username"])))
        case "REGISTER": return .plain(.accountCreated)
        case "USER_DISABLED_BY_TEMPORARY_LOCKOUT": return .locked(permanent: false)
        case "USER_DISABLED_BY_PERMANENT_LOCKOUT": return .locked(permanent: true)
        default: return .skipped(Skip.notAuthentication)
        }
    }

    /// A successful sign-in: brokered through an identity provider when `identity_provider` is
    /// given, else with a password; with a second factor when `credential_type` names one.
    static func loginMapping(_ details: Details) -> Mapping {
        let secondFactor = details["credential_type"].flatMap(secondFactorMethod) != nil
        guard let provider = details["identity_provider"], !provider.isEmpty else {
            return .succeeded(.password, secondFactor: secondFactor)
        }
        return .succeeded(brokeredMethod(provider), secondFactor: secondFactor)
    }

    static func loginErrorMapping(error: String?, details: Details) -> Mapping {
        switch error {
        case "invalid_user_credentials"?:
            // The OTP form reports a wrong code as `invalid_user_credentials` naming the OTP
            // credential it checked (`selected_credential_id`), without a `credential_type`.
            if details["credential_type"] == nil, details["selected_credential_id"] != nil { return .secondFactorFailed(.totp) }
            guard let credential = details["credential_type"], credential != "password" else { return .failed(.invalidPassword) }
            guard let method = secondFactorMethod(credential) else { return .skipped(Skip.otherCredential) }
            return .secondFactorFailed(method)
        case "user_not_found"?: return .failed(.unknownUser)
        case "invalid_totp"?, "invalid_otp"?: return .secondFactorFailed(.totp)
        case "user_temporarily_disabled"?: return .throttled
        case "user_disabled"?: return .skipped(Skip.disabledAccount)
        default: return .skipped(Skip.loginErrorWithoutCredentialCheck)
        }
    }

    /// The second factor of a Keycloak credential type (`otp`: TOTP or HOTP from an
    /// authenticator app; `recovery-authn-codes`), `nil` for any other type.
    static func secondFactorMethod(_ credentialType: String) -> SecondFactorMethod? {
        switch credentialType {
        case "otp", "totp", "hotp": .totp
        case "recovery-authn-codes": .recoveryCode
        default: nil
        }
    }

    /// The method of a sign-in brokered by an identity provider, by its alias.
    static func brokeredMethod(_ alias: String) -> SignInMethod {
        switch alias.lowercased() {
        case "google": .google
        case "apple": .apple
        default: .other
        }
    }

    /// How the account of a reset was named: by email when what was typed holds an `@`
    /// (Keycloak's form takes a username or an email), else by username.
    static func resetRoute(typed: String?) -> ResetRoute {
        typed?.contains("@") == true ? .email : .username
    }
}

// MARK: - Envelope

extension KeycloakEventParser {
    /// A value that may be absent, as opposed to `nil` for unreadable.
    struct Present<Value> {
        var value: Value?
    }

    /// `time`: an integer of milliseconds since 1970 within ``Timestamp``'s years, `nil`
    /// otherwise (missing, a string, a fraction or exponent, negative, or too large).
    static func time(_ value: JSONValue?) -> Timestamp? {
        guard case .number(let text)? = value, let milliseconds = nonNegativeInteger(text),
            milliseconds <= Timestamp.maximum.millisecondsSince1970
        else { return nil }
        return Timestamp(millisecondsSince1970: milliseconds)
    }

    /// The value of a JSON number's text made only of digits, `nil` for any other text or one
    /// that overflows `Int64`.
    static func nonNegativeInteger(_ text: String) -> Int64? {
        guard !text.isEmpty, text.utf8.count <= 19 else { return nil }
        var value: Int64 = 0
        for byte in text.utf8 {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let (times10, overflowA) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowB) = times10.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
            guard !overflowA, !overflowB else { return nil }
            value = sum
        }
        return value
    }

    /// `realmId` as the device: absent (or null) is no device, one that is not a valid device
    /// id is unreadable (`nil`), so that an event is never silently moved to `--device`.
    static func realm(_ value: JSONValue?) -> Present<String>? {
        switch value {
        case nil, .null?: return Present(value: nil)
        case .string(let realm)?:
            guard (try? Event.validate(deviceID: realm)) != nil else { return nil }
            return Present(value: realm)
        default: return nil
        }
    }

    /// The user: what was typed (`details.username`), else the account's `userId`; neither
    /// (or both empty) is no user, one that is not a valid user id is unreadable (`nil`).
    static func user(typed: String?, id: String?) -> Present<String>? {
        let chosen = [typed, id].lazy.compactMap { $0 }.first { !$0.isEmpty }
        guard let chosen else { return Present(value: nil) }
        guard (try? Event.validate(userID: chosen)) != nil else { return nil }
        return Present(value: chosen)
    }

    /// `details`: Keycloak's map of strings. A member that is not a string is ignored, and
    /// `details` that is not an object is none.
    struct Details {
        let members: JSONValue.Members

        init(_ value: JSONValue?) {
            if case .object(let list)? = value {
                members = JSONValue.Members(list)
            } else {
                members = JSONValue.Members([])
            }
        }

        subscript(key: String) -> String? { members[key]?.stringValue }
    }
}
