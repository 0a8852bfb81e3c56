import OnboardingModel

/// Reads one event of Okta's System Log, as its API answers it (`GET /api/v1/logs`, the
/// `LogEvent` object: `published`, `eventType`, `actor.alternateId`, `client.ipAddress`,
/// `outcome.result` and `outcome.reason`, `debugContext.debugData`), and maps it to the
/// vocabulary (docs/importers.md § Okta System Log has the table).
///
/// ```swift
/// let line = #"{"published":"2026-12-03T09:14:00.000Z","eventType":"user.account.lock","actor":{"alternateId":"maria@acme.example"}}"#
/// // .event(AuthLogEvent(at: …09:14:00Z, host: nil, user: "maria@acme.example", payload: .accountLocked(source: .okta)))
/// ```
struct OktaLogParser: JSONAuthLogParser {
    enum Skip {
        /// `user.session.start` failed for a reason that checked no password (a policy denial,
        /// a network zone, `GENERAL_NONSUCCESS`, …), or an outcome that is neither success nor
        /// failure (`SKIPPED`, `UNKNOWN`).
        static let otherOutcome = "other outcome"
    }

    /// What an event type and outcome map to.
    enum Mapping: Equatable {
        case payload(Payload)
        /// A payload that takes the client address (and, for a throttle, the event's time).
        case failed(SignInFailureReason)
        case throttled
        case succeeded
        case secondFactorFailed(SecondFactorMethod)
        case locked
        case skipped(String)
    }

    func parse(_ element: UnsafeRawBufferPointer) -> AuthLogLine {
        guard let value = try? JSONValue.parse(bytes: Array(element)) else { return .skipped(AuthLogSkip.notJSON) }
        guard case .object = value, let type = value["eventType"]?.stringValue else { return .skipped(AuthLogSkip.notARecord) }
        let mapping = Self.mapping(
            type: type, result: value["outcome"]?["result"]?.stringValue, reason: value["outcome"]?["reason"]?.stringValue,
            factor: value["debugContext"]?["debugData"]?["factor"]?.stringValue)
        if case .skipped(let kind) = mapping { return .skipped(kind) }
        guard let at = AuthLogFields.time(value["published"]) else { return .skipped(AuthLogSkip.unreadableTime) }
        let user = AuthLogFields.user(value["actor"]?["alternateId"])
        guard user != .unreadable else { return .skipped(AuthLogSkip.unreadableUser) }
        let address = AuthLogFields.address(value["client"]?["ipAddress"])
        let payload: Payload
        switch mapping {
        case .payload(let plain): payload = plain
        case .failed(let reason): payload = .signInFailed(method: .password, reason: reason, clientAddress: address)
        case .throttled: payload = .signInThrottled(method: .password, retryAfter: at, clientAddress: address)
        case .succeeded: payload = .signInSucceeded(method: .password, secondFactor: false, clientAddress: address)
        case .secondFactorFailed(let method): payload = .secondFactorFailed(method: method, clientAddress: address)
        case .locked: payload = .accountLocked(source: .okta, until: nil, clientAddress: address)
        case .skipped(let kind): return .skipped(kind)
        }
        return .event(AuthLogEvent(at: at, host: nil, user: user.name, payload: payload))
    }

    static func mapping(type: String, result: String?, reason: String?, factor: String?) -> Mapping {
        switch (type, result) {
        case ("user.session.start", "SUCCESS"?): return .succeeded
        case ("user.session.start", "FAILURE"?):
            switch reason {
            case "INVALID_CREDENTIALS"?: return .failed(.invalidPassword)
            // Okta's "no such user": `VERIFICATION_ERROR` is what a sign-in to a name that
            // matches no account reports.
            case "UNKNOWN_USER"?, "VERIFICATION_ERROR"?: return .failed(.unknownUser)
            // Refused because the account is locked: whatever the password.
            case "LOCKED_OUT"?: return .throttled
            default: return .skipped(Skip.otherOutcome)
            }
        case ("user.session.start", _): return .skipped(Skip.otherOutcome)
        case ("user.authentication.auth_via_mfa", "FAILURE"?): return .secondFactorFailed(secondFactorMethod(factor))
        case ("user.authentication.auth_via_mfa", "SUCCESS"?): return .payload(.secondFactorSucceeded(method: secondFactorMethod(factor)))
        case ("user.authentication.auth_via_mfa", _): return .skipped(Skip.otherOutcome)
        case ("user.account.lock", _): return .locked
        case ("user.session.end", _): return .payload(.signedOut(reason: .user))
        default: return .skipped(AuthLogSkip.notAuthentication)
        }
    }

    /// The second factor of Okta's `debugData.factor` name: SMS and email by name, any other
    /// (an authenticator app's code, Okta Verify) as `totp`.
    static func secondFactorMethod(_ factor: String?) -> SecondFactorMethod {
        guard let factor = factor?.uppercased() else { return .totp }
        if factor.contains("SMS") { return .sms }
        if factor.contains("EMAIL") { return .email }
        return .totp
    }
}
