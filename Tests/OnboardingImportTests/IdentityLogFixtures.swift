/// Logs of identity providers, written by us in each vendor's documented schema (Okta's
/// System Log `LogEvent`, Microsoft Graph's `signIn`, CloudTrail's record of `ConsoleLogin`,
/// Windows' Security events 4624/4625/4740 as `wevtutil /f:xml` and winlogbeat write them). The
/// story in each: a password sprayer at 203.0.113.77 against a few accounts, one of them
/// locked, and an honest user who signs in from 198.51.100.23.
enum IdentityLogFixtures {
    static let sprayer = "203.0.113.77"
    static let honest = "198.51.100.23"

    // MARK: Okta System Log

    /// One `LogEvent`: `published`, `eventType`, the actor's login, the client's address, the outcome.
    static func okta(_ published: String, _ type: String, _ login: String, _ address: String, _ result: String, _ reason: String? = nil, factor: String? = nil)
        -> String
    {
        let reasonMember = reason.map { #","reason":"\#($0)""# } ?? ""
        let debug = factor.map { #","debugContext":{"debugData":{"factor":"\#($0)","requestUri":"/api/v1/authn/factors/verify"}}"# } ?? ""
        return
            #"{"uuid":"6f2c8a1e-\#(published.suffix(4).filter(\.isNumber))","published":"\#(published)","eventType":"\#(type)","version":"0","severity":"INFO","displayMessage":"\#(type)","actor":{"id":"00u1abcd","type":"User","alternateId":"\#(login)","displayName":"\#(login)"},"client":{"userAgent":{"rawUserAgent":"Mozilla/5.0","os":"Mac OS X","browser":"CHROME"},"zone":"null","device":"Computer","ipAddress":"\#(address)","geographicalContext":{"country":"United States"}},"outcome":{"result":"\#(result)"\#(reasonMember)}\#(debug),"transaction":{"type":"WEB","id":"Xk9"}}"#
    }

    /// The API's answer: newest first.
    static let oktaArray =
        "[\n"
        + [
            okta("2026-12-03T09:16:00.000Z", "user.session.end", "maria@acme.example", honest, "SUCCESS"),
            okta("2026-12-03T09:15:30.000Z", "user.authentication.auth_via_mfa", "maria@acme.example", honest, "SUCCESS", factor: "GOOGLE_AUTHENTICATOR"),
            okta(
                "2026-12-03T09:15:20.000Z", "user.authentication.auth_via_mfa", "maria@acme.example", honest, "FAILURE", "INVALID_CREDENTIALS",
                factor: "SMS_FACTOR"),
            okta("2026-12-03T09:15:00.000Z", "user.session.start", "maria@acme.example", honest, "SUCCESS"),
            okta("2026-12-03T09:14:40.000Z", "policy.evaluate_sign_on", "maria@acme.example", honest, "ALLOW"),
            okta("2026-12-03T09:14:30.000Z", "user.session.start", "tom@acme.example", sprayer, "FAILURE", "LOCKED_OUT"),
            okta("2026-12-03T09:14:20.000Z", "user.account.lock", "tom@acme.example", sprayer, "SUCCESS"),
            okta("2026-12-03T09:14:10.000Z", "user.session.start", "nobody@acme.example", sprayer, "FAILURE", "VERIFICATION_ERROR"),
            okta("2026-12-03T09:14:05.000Z", "user.session.start", "ghost@acme.example", sprayer, "FAILURE", "UNKNOWN_USER"),
            okta("2026-12-03T09:14:00.000Z", "user.session.start", "tom@acme.example", sprayer, "FAILURE", "INVALID_CREDENTIALS"),
            okta("2026-12-03T09:13:50.000Z", "user.session.start", "tom@acme.example", sprayer, "FAILURE", "GENERAL_NONSUCCESS")
        ].joined(separator: ",\n") + "\n]\n"

    // MARK: Entra ID sign-ins

    static func entra(_ created: String, _ upn: String, _ address: String, _ code: Int, requirement: String = "singleFactorAuthentication", mfa: String? = nil)
        -> String
    {
        let mfaMember = mfa.map { #","mfaDetail":{"authMethod":"\#($0)","authDetail":null}"# } ?? ""
        return
            #"{"id":"66ea54eb-\#(code)","createdDateTime":"\#(created)","userDisplayName":"\#(upn)","userPrincipalName":"\#(upn)","userId":"d7f3","appDisplayName":"Office 365","ipAddress":"\#(address)","clientAppUsed":"Browser","isInteractive":true,"authenticationRequirement":"\#(requirement)","status":{"errorCode":\#(code),"failureReason":"x","additionalDetails":null}\#(mfaMember),"location":{"city":"Redmond","countryOrRegion":"US"}}"#
    }

    /// Microsoft Graph's answer (`GET /auditLogs/signIns`), pretty-printed, newest first.
    static let entraGraph = """
        {
          "@odata.context": "https://graph.microsoft.com/v1.0/$metadata#auditLogs/signIns",
          "@odata.nextLink": "https://graph.microsoft.com/v1.0/auditLogs/signIns?$skiptoken=9a{]}\\"",
          "value": [
            \([
                entra("2026-12-03T09:15:30Z", "maria@acme.example", honest, 0, requirement: "multiFactorAuthentication", mfa: "Mobile app notification"),
                entra("2026-12-03T09:15:20Z", "maria@acme.example", honest, 500121, mfa: "Text message"),
                entra("2026-12-03T09:15:10Z", "maria@acme.example", honest, 50074, mfa: "Text message"),
                entra("2026-12-03T09:14:30Z", "tom@acme.example", sprayer, 50053),
                entra("2026-12-03T09:14:10Z", "ghost@acme.example", sprayer, 50034),
                entra("2026-12-03T09:14:00Z", "tom@acme.example", sprayer, 50126),
                entra("2026-12-03T09:13:50Z", "tom@acme.example", sprayer, 50140)
            ].joined(separator: ",\n    "))
          ]
        }
        """

    // MARK: CloudTrail

    static func consoleLogin(
        _ time: String, user: String?, address: String, outcome: String, error: String? = nil, mfa: String = "No", type: String = "IAMUser"
    ) -> String {
        let userName = user.map { #","userName":"\#($0)""# } ?? ""
        let errorMember = error.map { #","errorMessage":"\#($0)""# } ?? ""
        return
            #"{"eventVersion":"1.08","userIdentity":{"type":"\#(type)","principalId":"AIDA","arn":"arn:aws:iam::123456789012:\#(type == "Root" ? "root" : "user/\(user ?? "x")")","accountId":"123456789012"\#(userName)},"eventTime":"\#(time)","eventSource":"signin.amazonaws.com","eventName":"ConsoleLogin","awsRegion":"us-east-1","sourceIPAddress":"\#(address)","userAgent":"Mozilla/5.0","requestParameters":null,"responseElements":{"ConsoleLogin":"\#(outcome)"}\#(errorMember),"additionalEventData":{"LoginTo":"https://console.aws.amazon.com/","MobileVersion":"No","MFAUsed":"\#(mfa)"},"eventID":"3f2a","readOnly":false,"eventType":"AwsConsoleSignIn","managementEvent":true,"recipientAccountId":"123456789012","eventCategory":"Management"}"#
    }

    /// A log file as CloudTrail delivers it: one line, `{"Records":[…]}`.
    static let cloudTrailFile =
        #"{"Records":["#
        + [
            consoleLogin("2026-12-03T09:15:00Z", user: "maria", address: honest, outcome: "Success", mfa: "Yes"),
            #"{"eventVersion":"1.08","eventTime":"2026-12-03T09:15:05Z","eventSource":"s3.amazonaws.com","eventName":"GetObject","recipientAccountId":"123456789012"}"#,
            consoleLogin("2026-12-03T09:14:00Z", user: "tom", address: sprayer, outcome: "Failure", error: "Failed authentication"),
            consoleLogin(
                "2026-12-03T09:14:10Z", user: "HIDDEN_DUE_TO_SECURITY_REASONS", address: sprayer, outcome: "Failure",
                error: "No username found in supplied account"),
            consoleLogin("2026-12-03T09:14:20Z", user: nil, address: sprayer, outcome: "Failure", error: "Failed authentication", type: "Root")
        ].joined(separator: ",") + "]}"

    // MARK: Windows

    /// One event as `wevtutil qe Security /f:xml` writes it (on one line, as it does).
    static func windowsXML(_ id: Int, _ time: String, data: [(String, String)], computer: String = "WS-01.acme.example") -> String {
        let items = data.map { "<Data Name='\($0.0)'>\($0.1)</Data>" }.joined()
        return
            "<Event xmlns='http://schemas.microsoft.com/win/2004/08/events/event'><System><Provider Name='Microsoft-Windows-Security-Auditing' Guid='{54849625-5478-4994-a5ba-3e3b0328c30d}'/><EventID>\(id)</EventID><Version>0</Version><Level>0</Level><Task>12544</Task><Opcode>0</Opcode><Keywords>0x8010000000000000</Keywords><TimeCreated SystemTime='\(time)'/><EventRecordID>\(id * 7)</EventRecordID><Correlation/><Execution ProcessID='636' ThreadID='700'/><Channel>Security</Channel><Computer>\(computer)</Computer><Security/></System><EventData>\(items)</EventData></Event>"
    }

    static let windowsExport = [
        windowsXML(
            4625, "2026-12-03T09:14:00.1234567Z",
            data: [
                ("SubjectUserSid", "S-1-0-0"), ("TargetUserName", "tom"), ("TargetDomainName", "ACME"), ("Status", "0xc000006d"), ("SubStatus", "0xc000006a"),
                ("LogonType", "3"), ("IpAddress", sprayer), ("IpPort", "51234")
            ]),
        "<!-- a comment between events -->",
        windowsXML(
            4625, "2026-12-03T09:14:10.0000000Z",
            data: [("TargetUserName", "gh&lt;o&#x73;&#116;"), ("Status", "0xC000006D"), ("SubStatus", "0xC0000064"), ("LogonType", "3"), ("IpAddress", sprayer)]
        ),
        windowsXML(
            4740, "2026-12-03T09:14:20.0000000Z", data: [("TargetUserName", "tom"), ("TargetDomainName", "WS-07"), ("SubjectUserName", "DC01$")],
            computer: "dc01.acme.example"),
        windowsXML(
            4625, "2026-12-03T09:14:30.0000000Z",
            data: [("TargetUserName", "tom"), ("Status", "0xc000006e"), ("SubStatus", "0xc0000234"), ("LogonType", "3"), ("IpAddress", sprayer)]),
        windowsXML(
            4625, "2026-12-03T09:14:40.0000000Z",
            data: [("TargetUserName", "old"), ("Status", "0xc000006e"), ("SubStatus", "0xc0000072"), ("LogonType", "2"), ("IpAddress", "-")]),
        windowsXML(4624, "2026-12-03T09:15:00.0000000Z", data: [("TargetUserName", "maria"), ("LogonType", "10"), ("IpAddress", "::ffff:198.51.100.23")]),
        windowsXML(4624, "2026-12-03T09:15:01.0000000Z", data: [("TargetUserName", "SYSTEM"), ("LogonType", "5"), ("IpAddress", "-")]),
        windowsXML(4624, "2026-12-03T09:15:02.0000000Z", data: [("TargetUserName", "WS-01$"), ("LogonType", "3"), ("IpAddress", "::1")]),
        windowsXML(4672, "2026-12-03T09:15:03.0000000Z", data: [("SubjectUserName", "maria")])
    ].joined(separator: "\n")

    /// The same kind of events as winlogbeat ships them, one JSON object per line.
    static func winlogbeat(_ id: Any, _ time: String, _ data: String, computer: String = "WS-01.acme.example") -> String {
        #"{"@timestamp":"\#(time)","event":{"code":"\#(id)","provider":"Microsoft-Windows-Security-Auditing"},"host":{"name":"ws-01"},"winlog":{"channel":"Security","event_id":\#(id is String ? "\"\(id)\"" : "\(id)"),"computer_name":"\#(computer)","event_data":{\#(data)}}}"#
    }
}
