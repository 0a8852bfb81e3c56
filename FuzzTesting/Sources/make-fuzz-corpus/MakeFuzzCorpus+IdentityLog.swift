/// The seeds of `FuzzIdentityLog`: one record of each identity provider's log in its documented
/// schema (written by us), the forms a file takes (Windows XML, a CloudTrail log file, Graph's
/// answer), Keycloak's lockout events with a user named only by id, and lockout ends.
extension MakeFuzzCorpus {
    static func identityLogSeeds(_ writer: inout CorpusWriter) throws {
        let okta =
            #"{"uuid":"6f2c8a1e","published":"2026-12-03T09:14:00.000Z","eventType":"user.session.start","actor":{"id":"00u1","type":"User","alternateId":"tom@acme.example"},"client":{"ipAddress":"203.0.113.77"},"outcome":{"result":"FAILURE","reason":"INVALID_CREDENTIALS"}}"#
        let oktaMFA =
            #"{"published":"2026-12-03T09:15:20+01:00","eventType":"user.authentication.auth_via_mfa","actor":{"alternateId":"maria@acme.example"},"client":{"ipAddress":"::ffff:198.51.100.23"},"outcome":{"result":"FAILURE"},"debugContext":{"debugData":{"factor":"SMS_FACTOR"}}}"#
        let oktaLock = #"{"published":"9999-12-31T23:59:59.999Z","eventType":"user.account.lock","actor":{"alternateId":"tom@acme.example"}}"#
        let entra =
            #"{"id":"66ea","createdDateTime":"2026-12-03T09:14:00Z","userPrincipalName":"tom@acme.example","ipAddress":"203.0.113.77","authenticationRequirement":"multiFactorAuthentication","status":{"errorCode":50126,"failureReason":"Invalid username or password."},"mfaDetail":{"authMethod":"Text message"}}"#
        let cloudTrail =
            #"{"eventVersion":"1.08","userIdentity":{"type":"IAMUser","arn":"arn:aws:iam::123456789012:user/tom","userName":"tom"},"eventTime":"2026-12-03T09:14:00Z","eventName":"ConsoleLogin","sourceIPAddress":"203.0.113.77","responseElements":{"ConsoleLogin":"Failure"},"errorMessage":"Failed authentication","additionalEventData":{"MFAUsed":"No"},"recipientAccountId":"123456789012"}"#
        let winlogbeat =
            #"{"@timestamp":"2026-12-03T09:14:00.000Z","winlog":{"event_id":4625,"computer_name":"WS-01.acme.example","event_data":{"TargetUserName":"tom","SubStatus":"0xc000006a","Status":"0xc000006d","LogonType":"3","IpAddress":"203.0.113.77"}}}"#
        let lockout = #"{"@timestamp":"2026-12-03T09:14:20.000Z","winlog":{"event_id":"4740","computer_name":"dc01","event_data":{"TargetUserName":"tom"}}}"#
        let xml =
            "<Events><?xml version='1.0'?><!-- export --><Event xmlns='http://schemas.microsoft.com/win/2004/08/events/event'><System><EventID>4625</EventID><TimeCreated SystemTime='2026-12-03T09:14:00.1234567Z'/><Computer>WS-01.acme.example</Computer></System><EventData><Data Name='TargetUserName'>t&amp;m&#x41;&lt;</Data><Data Name='SubStatus'>0xC0000064</Data><Data Name='IpAddress'>::1</Data><Data Name=\"LogonType\"><![CDATA[10]]></Data></EventData></Event>\n<Event><System><EventID>4740</EventID><TimeCreated SystemTime='2026-12-03T09:14:20Z'/><Computer>dc01</Computer></System><EventData><Data Name='TargetUserName'>tom</Data></EventData></Event></Events>"
        let wrapped = #"{"Records":["# + cloudTrail + #",{"eventName":"GetObject"}],"digest":{"a":"]}\""}}"#
        let graph = "{\n  \"@odata.context\": \"x\",\n  \"value\": [\n    " + entra + "\n  ]\n}"
        let keycloak = [
            #"{"time":1796290000000,"type":"LOGIN","realmId":"acme","userId":"5b8e","ipAddress":"198.51.100.23","details":{"username":"maria.lopez"}}"#,
            #"{"time":1796290140000,"type":"USER_DISABLED_BY_TEMPORARY_LOCKOUT","realmId":"acme","userId":"5b8e","ipAddress":"203.0.113.77","details":{"reason":"brute_force_attack detected","num_failures":"5","not_before":"2026-12-03T09:44:07.25"}}"#,
            #"{"time":1796290200000,"type":"LOGIN_ERROR","realmId":"acme","userId":"5b8e","error":"user_temporarily_disabled","details":{}}"#,
            #"{"time":1796290300000,"type":"LOGIN_ERROR","realmId":"acme","userId":"5b8e","error":"invalid_user_credentials","details":{"username":"maria.lopez","selected_credential_id":"9f1e"}}"#,
            #"{"time":1796290400000,"type":"USER_DISABLED_BY_PERMANENT_LOCKOUT","realmId":"acme","userId":"5b8e","details":{}}"#,
            #"{"time":1796290500000,"type":"LOGOUT","realmId":"acme","userId":"5b8e"}"#
        ].joined(separator: "\n")
        let seeds: [(String, UInt8, String)] = [
            ("okta-failure", 0x00, okta), ("okta-mfa", 0x40, oktaMFA), ("okta-lock", 0x00, oktaLock), ("entra-failure", 0x01, entra),
            ("cloudtrail-failure", 0x02, cloudTrail), ("winlogbeat-failure", 0x03, winlogbeat), ("winlogbeat-lockout", 0x43, lockout),
            ("windows-xml", 0x04, xml), ("windows-xml-doctype", 0x04, "<!DOCTYPE x [<!ENTITY a 'b'>]><Event></Event>"),
            ("cloudtrail-file", 0x05, wrapped), ("graph-answer", 0x0D, graph), ("keycloak-lockouts", 0x06, keycloak),
            ("keycloak-time", 0x07, "2026-12-03T10:44"), ("keycloak-time-dst", 0x0F, "2026-10-25T02:30:00.123456789"),
            ("keycloak-time-far", 0x1F, "9999-12-31T23:59:59.999")
        ]
        for (name, mode, text) in seeds { try writer.seed("FuzzIdentityLog", "\(name).json", [mode] + Array(text.utf8)) }
        try writer.dictionary(
            "FuzzIdentityLog",
            [
                "\"eventType\":", "\"published\":", "\"actor\":", "\"alternateId\":", "\"client\":", "\"ipAddress\":", "\"outcome\":",
                "\"result\":", "\"reason\":", "\"debugContext\":", "\"debugData\":", "\"factor\":", "\"user.session.start\"",
                "\"user.account.lock\"", "\"user.authentication.auth_via_mfa\"", "\"user.session.end\"", "\"SUCCESS\"", "\"FAILURE\"",
                "\"INVALID_CREDENTIALS\"", "\"LOCKED_OUT\"", "\"VERIFICATION_ERROR\"", "\"createdDateTime\":", "\"userPrincipalName\":",
                "\"status\":", "\"errorCode\":", "50126", "50053", "50074", "500121", "\"value\":", "\"Records\":", "\"eventName\":",
                "\"ConsoleLogin\"", "\"responseElements\":", "\"errorMessage\":", "\"Failed authentication\"", "\"userIdentity\":",
                "\"userName\":", "\"arn\":", "\"recipientAccountId\":", "\"sourceIPAddress\":", "\"HIDDEN_DUE_TO_SECURITY_REASONS\"",
                "\"@timestamp\":", "\"winlog\":", "\"event_id\":", "\"computer_name\":", "\"event_data\":", "\"TargetUserName\":",
                "\"SubStatus\":", "\"LogonType\":", "0xc000006a", "0xc0000064", "0xc0000234", "<Event>", "</Event>", "<EventID>",
                "</EventID>", "<TimeCreated SystemTime='", "<Computer>", "</Computer>", "<Data Name='", "</Data>", "<![CDATA[", "]]>",
                "<!--", "-->", "<?", "?>", "<!DOCTYPE", "&amp;", "&lt;", "&#x", "&#", "USER_DISABLED_BY_TEMPORARY_LOCKOUT",
                "USER_DISABLED_BY_PERMANENT_LOCKOUT", "\"not_before\":", "\"selected_credential_id\":", "\"userId\":",
                "\"user_temporarily_disabled\"", ".1234567Z", "+01:00", "9999-12-31T23:59:59", "0001-01-01T00:00"
            ].map { Array($0.utf8) })
    }
}
