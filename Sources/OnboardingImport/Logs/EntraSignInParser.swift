import OnboardingModel

/// Reads one Microsoft Entra ID sign-in, as the sign-in logs' JSON export and Microsoft Graph
/// (`GET /auditLogs/signIns`, the `signIn` resource) represent it: `createdDateTime`,
/// `userPrincipalName`, `ipAddress`, `status.errorCode` (0 for a success, else the AADSTS code),
/// `authenticationRequirement` and `mfaDetail.authMethod`; it maps it to the vocabulary
/// (docs/importers.md § Microsoft Entra ID sign-ins has the table).
///
/// ```swift
/// let line = #"{"createdDateTime":"2026-12-03T09:14:00Z","userPrincipalName":"maria@acme.example","ipAddress":"198.51.100.23","status":{"errorCode":50126}}"#
/// // .event(AuthLogEvent(…, payload: .signInFailed(method: .password, reason: .invalidPassword, clientAddress: "198.51.100.23")))
/// ```
struct EntraSignInParser: JSONAuthLogParser {
    enum Skip {
        /// An error code that is no credential check: a sign-in interrupted for consent, a
        /// "stay signed in?" prompt, a conditional access block, an expired session, ….
        static let otherError = "other sign-in error"
        /// `status.errorCode` missing, or not a whole number.
        static let unreadableStatus = "unreadable status"
    }

    /// What an AADSTS error code means to the vocabulary: one row per code (docs/importers.md
    /// has the same table); a code not here is ``Skip/otherError``.
    enum Outcome: Equatable {
        case succeeded
        case failed(SignInFailureReason)
        /// Refused by smart lockout: the account (or the address) is locked for a while; the
        /// sign-in log does not say until when.
        case throttled
        case secondFactorRequired
        case secondFactorFailed
    }

    static let outcomes: [Int64: Outcome] = [
        0: .succeeded,
        50126: .failed(.invalidPassword), // invalid user name or password
        50034: .failed(.unknownUser), // the account does not exist in the directory
        50053: .throttled, // locked by smart lockout (or a blocked address)
        50074: .secondFactorRequired, // strong authentication required
        50076: .secondFactorRequired, // MFA required by a location or policy
        500121: .secondFactorFailed // the second factor failed or was not completed
    ]

    func parse(_ element: UnsafeRawBufferPointer) -> AuthLogLine {
        guard let value = try? JSONValue.parse(bytes: Array(element)) else { return .skipped(AuthLogSkip.notJSON) }
        guard case .object = value, value["createdDateTime"] != nil || value["status"] != nil else { return .skipped(AuthLogSkip.notARecord) }
        guard case .number(let text)? = value["status"]?["errorCode"], let code = Int64(text) else {
            return .skipped(Skip.unreadableStatus)
        }
        guard let outcome = Self.outcomes[code] else { return .skipped(Skip.otherError) }
        guard let at = AuthLogFields.time(value["createdDateTime"]) else { return .skipped(AuthLogSkip.unreadableTime) }
        let user = AuthLogFields.user(value["userPrincipalName"])
        guard user != .unreadable else { return .skipped(AuthLogSkip.unreadableUser) }
        let address = AuthLogFields.address(value["ipAddress"])
        let method = Self.secondFactorMethod(value["mfaDetail"]?["authMethod"]?.stringValue)
        let payload: Payload =
            switch outcome {
            case .succeeded:
                .signInSucceeded(
                    method: .password, secondFactor: value["authenticationRequirement"]?.stringValue == "multiFactorAuthentication",
                    clientAddress: address)
            case .failed(let reason): .signInFailed(method: .password, reason: reason, clientAddress: address)
            case .throttled: .signInThrottled(method: .password, retryAfter: at, clientAddress: address)
            case .secondFactorRequired: .secondFactorRequired(method: method)
            case .secondFactorFailed: .secondFactorFailed(method: method, clientAddress: address)
            }
        return .event(AuthLogEvent(at: at, host: nil, user: user.name, payload: payload))
    }

    /// The second factor of `mfaDetail.authMethod`: a text message or a call as `sms`, an email
    /// as `email`, any other (an authenticator app's code or notification) as `totp`.
    static func secondFactorMethod(_ authMethod: String?) -> SecondFactorMethod {
        guard let name = authMethod?.lowercased() else { return .totp }
        if name.contains("sms") || name.contains("text message") || name.contains("phone call") { return .sms }
        if name.contains("email") { return .email }
        return .totp
    }
}
