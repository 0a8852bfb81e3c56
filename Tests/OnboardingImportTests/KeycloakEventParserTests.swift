import Testing
@testable import OnboardingImport
import OnboardingModel

@Suite struct KeycloakEventParserTests {
    typealias Skip = KeycloakEventParser.Skip

    static func parse(_ text: String) -> AuthLogLine {
        parse(bytes: Array(text.utf8))
    }

    static func parse(bytes: [UInt8]) -> AuthLogLine {
        bytes.withUnsafeBytes { KeycloakEventParser().parse($0) }
    }

    /// The event `text` maps to, `nil` (and a recorded issue) when it is skipped.
    static func event(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> AuthLogEvent? {
        switch parse(text) {
        case .event(let event): return event
        case .skipped(let kind):
            Issue.record("skipped as \(kind)", sourceLocation: sourceLocation)
            return nil
        }
    }

    /// A LOGIN_ERROR of `error` by `admin` from 203.0.113.77, with `extraDetails` (members
    /// written as JSON text) added to its details.
    static func loginError(_ error: String?, extraDetails: String = "") -> String {
        let errorMember = error.map { #","error":"\#($0)""# } ?? ""
        return #"{"time":1796271071000,"type":"LOGIN_ERROR","realmId":"acme","clientId":"acme-portal","ipAddress":"203.0.113.77""#
            + errorMember + #","details":{"auth_method":"openid-connect","username":"admin""# + extraDetails + "}}"
    }

    static let stufferTime = Timestamp(millisecondsSince1970: 1_796_271_071_000)

    // MARK: Sign-ins

    @Test("LOGIN: a password sign-in, the realm as device, the typed username, the canonical address")
    func login() {
        #expect(
            Self.parse(KeycloakFixtures.login)
                == .event(
                    AuthLogEvent(
                        at: Timestamp(millisecondsSince1970: 1_796_289_249_640), host: "acme", user: "maria.lopez",
                        payload: .signInSucceeded(method: .password, secondFactor: false, clientAddress: "198.51.100.23"))))
    }

    @Test("LOGIN with credential_type otp had a second factor; an IPv6 address is made canonical")
    func loginWithOTP() {
        let event = Self.event(KeycloakFixtures.loginWithOTP)
        #expect(event?.payload == .signInSucceeded(method: .password, secondFactor: true, clientAddress: "2001:db8:4:12::3a"))
        #expect(event?.user == "tom.becker")
    }

    @Test("LOGIN through an identity provider: google and apple by alias, any other provider is other")
    func brokeredLogin() {
        #expect(
            Self.event(KeycloakFixtures.brokeredLogin)?.payload
                == .signInSucceeded(method: .google, secondFactor: false, clientAddress: "198.51.100.23"))
        let apple = KeycloakFixtures.brokeredLogin.replacingOccurrences(of: #""identity_provider":"google""#, with: #""identity_provider":"Apple""#)
        #expect(Self.event(apple)?.payload == .signInSucceeded(method: .apple, secondFactor: false, clientAddress: "198.51.100.23"))
        let corporate = KeycloakFixtures.brokeredLogin.replacingOccurrences(of: #""identity_provider":"google""#, with: #""identity_provider":"acme-saml""#)
        #expect(Self.event(corporate)?.payload == .signInSucceeded(method: .other, secondFactor: false, clientAddress: "198.51.100.23"))
    }

    @Test("LOGIN_ERROR invalid_user_credentials: a wrong password, for the username as typed")
    func invalidPassword() {
        #expect(
            Self.parse(KeycloakFixtures.invalidPassword)
                == .event(
                    AuthLogEvent(
                        at: Timestamp(millisecondsSince1970: 1_796_289_240_118), host: "acme", user: "Maria.Lopez",
                        payload: .signInFailed(method: .password, reason: .invalidPassword, clientAddress: "198.51.100.23"))))
        let withPasswordType = Self.loginError("invalid_user_credentials", extraDetails: #","credential_type":"password""#)
        #expect(Self.event(withPasswordType)?.payload == .signInFailed(method: .password, reason: .invalidPassword, clientAddress: "203.0.113.77"))
    }

    @Test("LOGIN_ERROR user_not_found: an unknown user, named by what was typed (there is no userId)")
    func unknownUser() {
        #expect(
            Self.parse(KeycloakFixtures.unknownUser)
                == .event(
                    AuthLogEvent(
                        at: Self.stufferTime, host: "acme", user: "admin",
                        payload: .signInFailed(method: .password, reason: .unknownUser, clientAddress: "203.0.113.77"))))
    }

    @Test("a wrong OTP: invalid_user_credentials with credential_type otp, invalid_totp or invalid_otp")
    func otpFailures() {
        let expected = Payload.secondFactorFailed(method: .totp, clientAddress: "2001:db8:4:12::3a")
        #expect(Self.event(KeycloakFixtures.otpFailure)?.payload == expected)
        #expect(Self.event(KeycloakFixtures.otpFailure)?.user == "tom.becker")
        #expect(Self.event(KeycloakFixtures.invalidTOTP)?.payload == expected)
        #expect(Self.event(Self.loginError("invalid_otp"))?.payload == .secondFactorFailed(method: .totp, clientAddress: "203.0.113.77"))
    }

    @Test("a wrong recovery code is a recovery_code failure; a credential with no method (WebAuthn) is skipped")
    func otherCredentialTypes() {
        let recovery = Self.loginError("invalid_user_credentials", extraDetails: #","credential_type":"recovery-authn-codes""#)
        #expect(Self.event(recovery)?.payload == .secondFactorFailed(method: .recoveryCode, clientAddress: "203.0.113.77"))
        let webauthn = Self.loginError("invalid_user_credentials", extraDetails: #","credential_type":"webauthn""#)
        #expect(Self.parse(webauthn) == .skipped(Skip.otherCredential))
    }

    @Test("LOGIN_ERROR user_temporarily_disabled: throttled by Keycloak's brute-force detector, retry after the event's own time")
    func temporarilyDisabled() {
        let at = Timestamp(millisecondsSince1970: 1_796_271_132_250)
        #expect(
            Self.parse(KeycloakFixtures.temporarilyDisabled)
                == .event(
                    AuthLogEvent(
                        at: at, host: "acme", user: "alice.nguyen",
                        payload: .signInThrottled(method: .password, retryAfter: at, clientAddress: "203.0.113.77"))))
    }

    @Test("LOGIN_ERROR user_disabled is skipped as a disabled account")
    func userDisabled() {
        #expect(Self.parse(KeycloakFixtures.userDisabled) == .skipped(Skip.disabledAccount))
    }

    @Test(
        "a LOGIN_ERROR that checked no credential is skipped",
        arguments: [
            "expired_code", "cookie_not_found", "invalid_code", "invalid_client_credentials", "invalid_redirect_uri",
            "invalid_request", "identity_provider_login_failure", "Invalid_User_Credentials", ""
        ])
    func loginErrorWithoutCredentialCheck(error: String) {
        #expect(Self.parse(Self.loginError(error)) == .skipped(Skip.loginErrorWithoutCredentialCheck))
    }

    @Test("a LOGIN_ERROR without an error, or with a null or non-string one, is skipped")
    func loginErrorWithoutError() {
        #expect(Self.parse(Self.loginError(nil)) == .skipped(Skip.loginErrorWithoutCredentialCheck))
        let nullError = KeycloakFixtures.unknownUser.replacingOccurrences(of: #""user_not_found""#, with: "null")
        #expect(Self.parse(nullError) == .skipped(Skip.loginErrorWithoutCredentialCheck))
        let numberError = KeycloakFixtures.unknownUser.replacingOccurrences(of: #""user_not_found""#, with: "401")
        #expect(Self.parse(numberError) == .skipped(Skip.loginErrorWithoutCredentialCheck))
    }

    // MARK: Other authentication events

    @Test("LOGOUT: signed out by the user, named by userId when details has no username")
    func logout() {
        #expect(
            Self.parse(KeycloakFixtures.logout)
                == .event(
                    AuthLogEvent(
                        at: Timestamp(millisecondsSince1970: 1_796_292_137_330), host: "acme",
                        user: "5b8e2f61-0c4d-4a7e-b1f3-9d6a2c0e8b47", payload: .signedOut(reason: .user))))
    }

    @Test("UPDATE_PASSWORD: a password changed, not forced")
    func updatePassword() {
        #expect(Self.event(KeycloakFixtures.updatePassword)?.payload == .passwordChanged(forced: false))
        #expect(Self.event(KeycloakFixtures.updatePassword)?.user == "maria.lopez")
    }

    @Test("RESET_PASSWORD: a reset requested by email when an email was typed, else by username")
    func resetPassword() {
        let byEmail = Self.event(KeycloakFixtures.resetPassword)
        #expect(byEmail?.payload == .passwordResetRequested(route: .email))
        #expect(byEmail?.user == "kemal.yilmaz@acme.example")
        let byUsername = KeycloakFixtures.resetPassword.replacingOccurrences(of: "kemal.yilmaz@acme.example", with: "kemal.yilmaz")
        #expect(Self.event(byUsername)?.payload == .passwordResetRequested(route: .username))
        let noDetails = #"{"time":1796315080560,"type":"RESET_PASSWORD","realmId":"acme","userId":"u-1"}"#
        #expect(Self.event(noDetails)?.payload == .passwordResetRequested(route: .username))
    }

    @Test("REGISTER: an account created")
    func register() {
        #expect(
            Self.parse(KeycloakFixtures.register)
                == .event(
                    AuthLogEvent(
                        at: Timestamp(millisecondsSince1970: 1_796_303_144_210), host: "acme", user: "nadia.rahman", payload: .accountCreated)))
    }

    @Test(
        "every other type is not authentication",
        arguments: [
            "CODE_TO_TOKEN", "REFRESH_TOKEN", "INTROSPECT_TOKEN", "CLIENT_LOGIN", "CLIENT_LOGIN_ERROR", "TOKEN_EXCHANGE",
            "SEND_RESET_PASSWORD", "SEND_VERIFY_EMAIL", "VERIFY_EMAIL", "UPDATE_PROFILE", "UPDATE_TOTP", "REGISTER_ERROR",
            "LOGOUT_ERROR", "CODE_TO_TOKEN_ERROR", "IDENTITY_PROVIDER_LOGIN", "USER_INFO_REQUEST", "PERMISSION_TOKEN",
            "login", "", "LOGIN "
        ])
    func notAuthentication(type: String) {
        let text = #"{"time":1796289249702,"type":"\#(type)","realmId":"acme","userId":"5b8e2f61","ipAddress":"198.51.100.23"}"#
        #expect(Self.parse(text) == .skipped(Skip.notAuthentication))
    }

    @Test("the type is read before the time: a CODE_TO_TOKEN with an unreadable time is still not authentication")
    func typeBeforeTime() {
        #expect(Self.parse(#"{"time":"soon","type":"CODE_TO_TOKEN","realmId":"acme corp"}"#) == .skipped(Skip.notAuthentication))
        #expect(Self.parse(#"{"time":"soon","type":"LOGIN","realmId":"acme"}"#) == .skipped(Skip.unreadableTime))
    }

    // MARK: The envelope

    @Test("the time is milliseconds since 1970, from 0 to Timestamp.maximum")
    func timeBounds() {
        let zero = #"{"time":0,"type":"LOGOUT","realmId":"acme","userId":"u-1"}"#
        #expect(Self.event(zero)?.at == Timestamp(millisecondsSince1970: 0))
        let last = #"{"time":253402300799999,"type":"LOGOUT","realmId":"acme","userId":"u-1"}"#
        #expect(Self.event(last)?.at == Timestamp.maximum)
        let past = #"{"time":253402300800000,"type":"LOGOUT","realmId":"acme","userId":"u-1"}"#
        #expect(Self.parse(past) == .skipped(Skip.unreadableTime))
        #expect(Self.parse(#"{"time":-0,"type":"LOGOUT","realmId":"acme","userId":"u-1"}"#) == .skipped(Skip.unreadableTime))
    }

    @Test("realmId is the device: absent or null is none (the import's --device), a valid id is kept, a UUID too")
    func realm() {
        #expect(Self.event(#"{"time":1,"type":"LOGOUT","userId":"u-1"}"#)?.host == nil)
        #expect(Self.event(#"{"time":1,"type":"LOGOUT","realmId":null,"userId":"u-1"}"#)?.host == nil)
        let uuid = "6f1c2a9e-4b7d-4e38-9a05-c3d8e1f2b7a6"
        #expect(Self.event(#"{"time":1,"type":"LOGOUT","realmId":"\#(uuid)","userId":"u-1"}"#)?.host == uuid)
        #expect(Self.event(#"{"time":1,"type":"LOGOUT","realmId":"acme-staging.eu:2","userId":"u-1"}"#)?.host == "acme-staging.eu:2")
        let tooLong = String(repeating: "r", count: Limits.maximumDeviceBytes + 1)
        #expect(Self.parse(#"{"time":1,"type":"LOGOUT","realmId":"\#(tooLong)","userId":"u-1"}"#) == .skipped(Skip.unreadableRealm))
    }

    @Test("the user: details.username when given and not empty, else userId, else none")
    func user() {
        #expect(Self.event(#"{"time":1,"type":"LOGOUT","realmId":"acme","userId":"u-1","details":{"username":"ann"}}"#)?.user == "ann")
        #expect(Self.event(#"{"time":1,"type":"LOGOUT","realmId":"acme","userId":"u-1","details":{"username":""}}"#)?.user == "u-1")
        #expect(Self.event(#"{"time":1,"type":"LOGOUT","realmId":"acme","userId":"u-1","details":{"username":7}}"#)?.user == "u-1")
        #expect(Self.event(#"{"time":1,"type":"LOGOUT","realmId":"acme","userId":null}"#)?.user == nil)
        #expect(Self.event(#"{"time":1,"type":"LOGIN_ERROR","error":"user_not_found","realmId":"acme","details":{}}"#)?.user == nil)
        // A typed name that cannot be a user id is not replaced by the userId.
        let bad = #"{"time":1,"type":"LOGOUT","realmId":"acme","userId":"u-1","details":{"username":"ann\u0007"}}"#
        #expect(Self.parse(bad) == .skipped(Skip.unreadableUser))
        let longest = String(repeating: "é", count: Limits.maximumUserBytes / 2)
        #expect(Self.event(#"{"time":1,"type":"LOGOUT","realmId":"acme","details":{"username":"\#(longest)"}}"#)?.user == longest)
    }

    @Test(
        "ipAddress is made canonical; a missing, empty, listed, bracketed or named address is none",
        arguments: [
            ("198.51.100.23", "198.51.100.23"), ("::ffff:198.51.100.23", "198.51.100.23"),
            ("0:0:0:0:0:0:0:1", "::1"), ("2001:DB8::0:1", "2001:db8::1"),
            ("", nil), ("unknown", nil), ("203.0.113.77, 10.0.0.1", nil), ("[2001:db8::1]", nil),
            ("203.0.113.77:443", nil), ("portal.acme.example", nil), ("10.0.0.256", nil)
        ] as [(String, String?)])
    func address(raw: String, canonical: String?) {
        let text = Self.loginError("user_not_found").replacingOccurrences(of: "203.0.113.77", with: raw)
        #expect(Self.event(text)?.payload == .signInFailed(method: .password, reason: .unknownUser, clientAddress: canonical))
    }

    @Test("no ipAddress, or one that is not a string, is no address")
    func addressAbsent() {
        let none = #"{"time":1,"type":"LOGIN","realmId":"acme","userId":"u-1"}"#
        #expect(Self.event(none)?.payload == .signInSucceeded(method: .password, secondFactor: false, clientAddress: nil))
        let number = #"{"time":1,"type":"LOGIN","realmId":"acme","userId":"u-1","ipAddress":3405803853}"#
        #expect(Self.event(number)?.payload == .signInSucceeded(method: .password, secondFactor: false, clientAddress: nil))
    }

    @Test("members it does not know are allowed, details that is not an object is none, whitespace anywhere")
    func tolerantReading() {
        let extra = KeycloakFixtures.login.replacingOccurrences(
            of: #""type":"LOGIN","#, with: #""type":"LOGIN","representation":null,"authDetails":{"realmId":"other"},"future":[1,2,3],"#)
        #expect(Self.event(extra)?.payload == .signInSucceeded(method: .password, secondFactor: false, clientAddress: "198.51.100.23"))
        let oddDetails = #"{"time":1,"type":"LOGIN","realmId":"acme","userId":"u-1","details":"credential_type=otp"}"#
        #expect(Self.event(oddDetails)?.payload == .signInSucceeded(method: .password, secondFactor: false, clientAddress: nil))
        let spaced = " \n\t{ \"time\" : 1 ,\r\n \"type\" : \"LOGOUT\" , \"realmId\" : \"acme\" }\n "
        #expect(Self.event(spaced)?.payload == .signedOut(reason: .user))
    }

    // MARK: Hostile input

    @Test("hostile elements are skipped with their kind", arguments: KeycloakFixtures.hostile)
    func hostile(name: String, json: String, kind: String) {
        #expect(Self.parse(json) == .skipped(kind), "\(name)")
    }

    @Test("bytes that are not UTF-8, or nothing at all, are not JSON")
    func notUTF8() {
        var bytes = Array(KeycloakFixtures.login.utf8)
        let at = bytes.firstIndex(of: UInt8(ascii: "m")) ?? 0
        bytes[at] = 0xFF
        #expect(Self.parse(bytes: bytes) == .skipped(Skip.notJSON))
        #expect(Self.parse(bytes: []) == .skipped(Skip.notJSON))
        #expect(Self.parse(bytes: [0xEF, 0xBB, 0xBF] + Array(KeycloakFixtures.logout.utf8)) == .skipped(Skip.notJSON))
    }

    @Test("every prefix of an event is skipped, never a crash or a half-read event")
    func everyPrefix() {
        for fixture in [KeycloakFixtures.login, KeycloakFixtures.otpFailure, KeycloakFixtures.temporarilyDisabled] {
            let bytes = Array(fixture.utf8)
            for count in 0..<bytes.count {
                guard case .skipped = Self.parse(bytes: Array(bytes[..<count])) else {
                    Issue.record("a prefix of \(count) bytes was read as an event")
                    return
                }
            }
        }
    }

    @Test("deep nesting and huge arrays or numbers anywhere are refused or ignored without trouble")
    func largeInput() {
        let deep = String(repeating: "{\"a\":", count: 10_000) + "1" + String(repeating: "}", count: 10_000)
        #expect(Self.parse(deep) == .skipped(Skip.notJSON))
        let wide = #"{"time":1,"type":"LOGOUT","realmId":"acme","userId":"u-1","details":{"x":["# + String(repeating: "0,", count: 5000) + "0]}}"
        #expect(Self.event(wide)?.payload == .signedOut(reason: .user))
        let hugeNumber = #"{"time":1,"type":"LOGOUT","realmId":"acme","userId":"u-1","sessionId":1e999999999}"#
        #expect(Self.event(hugeNumber)?.payload == .signedOut(reason: .user))
    }

    // MARK: The fixtures

    /// Every element of the array fixture, parsed, in the file's order.
    static func parsedArrayFixture() throws -> [AuthLogLine] {
        var lines: [AuthLogLine] = []
        var splitter = JSONArraySplitter()
        let parser = KeycloakEventParser()
        try Array(KeycloakFixtures.stuffingAndHonest.utf8).withUnsafeBytes { bytes in
            try splitter.feed(bytes) { lines.append(parser.parse($0)) }
        }
        try splitter.finish()
        return lines
    }

    @Test("the stuffing fixture: 35 elements, 27 events, 7 not authentication and 1 login error without a credential check")
    func stuffingAndHonestTally() throws {
        let lines = try Self.parsedArrayFixture()
        #expect(lines.count == 35)
        let events = lines.compactMap { line -> AuthLogEvent? in
            if case .event(let event) = line { return event }
            return nil
        }
        #expect(events.count == 27)
        var skipped: [String: Int] = [:]
        for case .skipped(let kind) in lines { skipped[kind, default: 0] += 1 }
        #expect(skipped == [Skip.notAuthentication: 7, Skip.loginErrorWithoutCredentialCheck: 1])
        #expect(events.allSatisfy { $0.host == "acme" })
        // Newest first, as the admin API answers, and all in December 2026.
        #expect(events.map(\.at) == events.map(\.at).sorted(by: >))
        let december = try Timestamp(iso8601: "2026-12-01T00:00:00Z")...Timestamp(iso8601: "2026-12-31T23:59:59.999Z")
        #expect(events.allSatisfy { december.contains($0.at) })
    }

    @Test("the stuffing fixture: one address tries 14 usernames, one of them successfully, and is throttled once")
    func stuffingRun() throws {
        let events = try Self.parsedArrayFixture().compactMap { line -> AuthLogEvent? in
            if case .event(let event) = line, event.payload.clientAddress == KeycloakFixtures.stufferAddress { return event }
            return nil
        }.reversed()
        #expect(events.count == 17)
        var firstSeen: [String] = []
        for event in events where !firstSeen.contains(event.user ?? "") { firstSeen.append(event.user ?? "") }
        #expect(firstSeen == KeycloakFixtures.stuffedUsernames)
        #expect(Set(events.compactMap(\.user)).count >= 12)
        let failures = events.filter { $0.payload.type == .signInFailed }
        #expect(failures.count == 15)
        #expect(failures.filter { $0.payload == .signInFailed(method: .password, reason: .unknownUser, clientAddress: "203.0.113.77") }.count == 5)
        #expect(events.filter { $0.payload.type == .signInSucceeded }.map(\.user) == ["grace.lee"])
        #expect(events.last?.payload.type == .signInThrottled)
        #expect(events.last?.user == "alice.nguyen")
    }

    @Test("the stuffing fixture: the honest user fails once, then signs in, changes her password and signs out")
    func honestUser() throws {
        let maria = try Self.parsedArrayFixture().compactMap { line -> AuthLogEvent? in
            if case .event(let event) = line, event.user == "maria.lopez" || event.user == KeycloakFixtures.userIDs["maria.lopez"] {
                return event
            }
            return nil
        }.reversed().map(\.payload)
        #expect(
            Array(maria) == [
                .signInFailed(method: .password, reason: .invalidPassword, clientAddress: "198.51.100.23"),
                .signInSucceeded(method: .password, secondFactor: false, clientAddress: "198.51.100.23"),
                .passwordChanged(forced: false),
                .signedOut(reason: .user)
            ])
    }

    @Test("the stuffing fixture: the OTP user fails his second factor once, then signs in with it")
    func otpUser() throws {
        let tom = try Self.parsedArrayFixture().compactMap { line -> Payload? in
            if case .event(let event) = line, event.user == "tom.becker" { return event.payload }
            return nil
        }
        #expect(
            tom.reversed() == [
                .secondFactorFailed(method: .totp, clientAddress: "2001:db8:4:12::3a"),
                .signInSucceeded(method: .password, secondFactor: true, clientAddress: "2001:db8:4:12::3a")
            ])
    }

    @Test("the JSON Lines fixture: four events, oldest first")
    func jsonLinesFixture() {
        let lines = KeycloakFixtures.jsonLines.split(separator: "\n").map { Self.parse(String($0)) }
        #expect(lines.count == 4)
        let times = lines.compactMap { line -> Timestamp? in
            if case .event(let event) = line { return event.at }
            return nil
        }
        #expect(times.count == 4)
        #expect(times == times.sorted())
    }
}
