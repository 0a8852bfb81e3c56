import OnboardingModel

/// Reads one AWS CloudTrail record and maps a console sign-in (`eventName` `ConsoleLogin`) to the
/// vocabulary: `responseElements.ConsoleLogin` (`Success` or `Failure`), `errorMessage`,
/// `sourceIPAddress`, `additionalEventData.MFAUsed`, `userIdentity` (`userName`, else `arn`),
/// `eventTime`, and `recipientAccountId` as the device (docs/importers.md § AWS CloudTrail has
/// the table). Every other record is skipped as ``Skip/otherEvent``.
///
/// ```swift
/// let line = #"{"eventTime":"2026-12-03T09:14:00Z","eventName":"ConsoleLogin","recipientAccountId":"123456789012","userIdentity":{"type":"IAMUser","userName":"maria"},"sourceIPAddress":"198.51.100.23","responseElements":{"ConsoleLogin":"Failure"},"errorMessage":"Failed authentication"}"#
/// // .event(AuthLogEvent(…, host: "123456789012", user: "maria", payload: .signInFailed(method: .password, reason: .invalidPassword, …)))
/// ```
struct CloudTrailLoginParser: JSONAuthLogParser {
    enum Skip {
        /// A record of another API call (`CheckMfa`, `AssumeRole`, `GetObject`, …).
        static let otherEvent = "other event"
        /// A `ConsoleLogin` whose `responseElements.ConsoleLogin` is neither `Success` nor
        /// `Failure`, or a failure whose `errorMessage` is no credential check.
        static let otherOutcome = "other outcome"
    }

    /// The user name CloudTrail writes for a failed sign-in to a name that is no IAM user: the
    /// typed name is withheld, so the attempt names no user.
    static let hiddenUserName = "HIDDEN_DUE_TO_SECURITY_REASONS"

    func parse(_ element: UnsafeRawBufferPointer) -> AuthLogLine {
        guard let value = try? JSONValue.parse(bytes: Array(element)) else { return .skipped(AuthLogSkip.notJSON) }
        guard case .object = value, let name = value["eventName"]?.stringValue else { return .skipped(AuthLogSkip.notARecord) }
        guard name == "ConsoleLogin" else { return .skipped(Skip.otherEvent) }
        let address = AuthLogFields.address(value["sourceIPAddress"])
        let payload: Payload
        switch value["responseElements"]?["ConsoleLogin"]?.stringValue {
        case "Success"?:
            payload = .signInSucceeded(
                method: .password, secondFactor: value["additionalEventData"]?["MFAUsed"]?.stringValue == "Yes", clientAddress: address)
        case "Failure"?:
            switch value["errorMessage"]?.stringValue {
            case "Failed authentication"?: payload = .signInFailed(method: .password, reason: .invalidPassword, clientAddress: address)
            case "No username found in supplied account"?:
                payload = .signInFailed(method: .password, reason: .unknownUser, clientAddress: address)
            default: return .skipped(Skip.otherOutcome)
            }
        default: return .skipped(Skip.otherOutcome)
        }
        guard let at = AuthLogFields.time(value["eventTime"]) else { return .skipped(AuthLogSkip.unreadableTime) }
        let device = AuthLogFields.device(value["recipientAccountId"])
        guard device != .unreadable else { return .skipped(AuthLogSkip.unreadableDevice) }
        let identity = value["userIdentity"]
        var user = AuthLogFields.user(identity?["userName"])
        if user == .value(Self.hiddenUserName) {
            user = .absent
        } else if user == .absent {
            user = AuthLogFields.user(identity?["arn"])
        }
        guard user != .unreadable else { return .skipped(AuthLogSkip.unreadableUser) }
        return .event(AuthLogEvent(at: at, host: device.name, user: user.name, payload: payload))
    }
}
