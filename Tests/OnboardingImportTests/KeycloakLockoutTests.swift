import Foundation
import OnboardingModel
import OnboardingStore
import Testing
import TestSupport

@testable import OnboardingImport

/// Keycloak's brute-force detector and the events that name their user only by `userId`: the
/// OTP form's failure, the lockout events, a LOGOUT taking the name seen before it, and a refused
/// attempt taking the end of the lock in force (docs/importers.md § Keycloak events).
@Suite struct KeycloakLockoutTests {
    static let maria = "5b8e2f61-0c4d-4a7e-b1f3-9d6a2c0e8b47"
    static let utc = TimeZone(identifier: "UTC")!

    static func parse(_ text: String, zone: TimeZone = utc, hint: KeycloakEventParser.Hint? = nil) -> AuthLogLine {
        Array(text.utf8).withUnsafeBytes { KeycloakEventParser(timeZone: zone).parse($0, hint: hint) }
    }

    /// An event of Maria's (userId only, unless `username`), at `time` milliseconds.
    static func event(_ type: String, time: Int64, error: String? = nil, username: String? = nil, details: String = "") -> String {
        var members = [#""time":\#(time)"#, #""type":"\#(type)""#, #""realmId":"acme""#, #""userId":"\#(maria)""#, #""ipAddress":"198.51.100.23""#]
        if let error { members.append(#""error":"\#(error)""#) }
        var detailMembers = [#""auth_method":"openid-connect""#]
        if let username { detailMembers.append(#""username":"\#(username)""#) }
        if !details.isEmpty { detailMembers.append(details) }
        members.append(#""details":{\#(detailMembers.joined(separator: ","))}"#)
        return "{" + members.joined(separator: ",") + "}"
    }

    static let at = Timestamp(millisecondsSince1970: 1_796_290_140_000) // 2026-12-03T09:29:00Z

    @Test("the OTP form's failure: invalid_user_credentials naming the OTP credential it checked, without a credential_type")
    func otpFormFailure() {
        let line = Self.event(
            "LOGIN_ERROR", time: Self.at.millisecondsSince1970, error: "invalid_user_credentials", username: "maria.lopez",
            details: #""selected_credential_id":"9f1e0c2a-6b3d-4e8f-a1c7-2d5b8e0f4a39""#)
        #expect(
            Self.parse(line)
                == .event(
                    AuthLogEvent(at: Self.at, host: "acme", user: "maria.lopez", payload: .secondFactorFailed(method: .totp, clientAddress: "198.51.100.23"))))
        // Without the credential id it stays a password failure.
        let password = Self.event("LOGIN_ERROR", time: Self.at.millisecondsSince1970, error: "invalid_user_credentials", username: "maria.lopez")
        #expect(Self.parse(password).event?.payload == .signInFailed(method: .password, reason: .invalidPassword, clientAddress: "198.51.100.23"))
    }

    @Test("USER_DISABLED_BY_TEMPORARY_LOCKOUT: account_locked until not_before, read in the server's zone, with or without seconds")
    func temporaryLockout() {
        let line = Self.event(
            "USER_DISABLED_BY_TEMPORARY_LOCKOUT", time: Self.at.millisecondsSince1970,
            details: #""reason":"brute_force_attack detected","num_failures":"5","not_before":"2026-12-03T10:44""#)
        let berlin = TimeZone(identifier: "Europe/Berlin")!
        #expect(
            Self.parse(line, zone: berlin)
                == .event(
                    AuthLogEvent(
                        at: Self.at, host: "acme", user: Self.maria,
                        payload: .accountLocked(source: .keycloak, until: Timestamp(millisecondsSince1970: 1_796_291_040_000), clientAddress: "198.51.100.23")))
        )
        // The same text in UTC is an hour later; seconds and a fraction are read when given.
        #expect(
            Self.parse(line).event?.payload
                == .accountLocked(source: .keycloak, until: Timestamp(millisecondsSince1970: 1_796_294_640_000), clientAddress: "198.51.100.23"))
        let precise = line.replacingOccurrences(of: "10:44", with: "10:44:07.25")
        #expect(
            Self.parse(precise).event?.payload
                == .accountLocked(source: .keycloak, until: Timestamp(millisecondsSince1970: 1_796_294_647_250), clientAddress: "198.51.100.23"))
    }

    @Test(
        "a temporary lockout whose end cannot be read is skipped, never taken as permanent",
        arguments: [
            "", #","not_before":"""#, #","not_before":"2026-12-03""#, #","not_before":"2026-12-03T10:44Z""#, #","not_before":"2026-02-30T10:44""#,
            #","not_before":"2026-12-03T24:00""#, #","not_before":"10000-01-01T00:00""#, #","not_before":"2026-12-03T10:44:60""#,
            #","not_before":18446744073709551615"#, #","not_before":"2026-12-03T10:44:07.""#,
            #","not_before":"\#(String(repeating: "9", count: 100_000))""#
        ])
    func unreadableLockEnd(member: String) {
        let line = Self.event("USER_DISABLED_BY_TEMPORARY_LOCKOUT", time: Self.at.millisecondsSince1970, details: #""reason":"x""# + member)
        #expect(Self.parse(line) == .skipped(KeycloakEventParser.Skip.unreadableLockEnd))
    }

    @Test("USER_DISABLED_BY_PERMANENT_LOCKOUT: account_locked without an end")
    func permanentLockout() {
        let line = Self.event("USER_DISABLED_BY_PERMANENT_LOCKOUT", time: Self.at.millisecondsSince1970, details: #""reason":"brute_force_attack detected""#)
        #expect(Self.parse(line).event?.payload == .accountLocked(source: .keycloak, until: nil, clientAddress: "198.51.100.23"))
    }

    @Test("user_temporarily_disabled retries after the lock's end: its own not_before, else the hint, else its own time")
    func throttledRetryAfter() {
        let refused = Self.event("LOGIN_ERROR", time: Self.at.millisecondsSince1970, error: "user_temporarily_disabled", username: "maria.lopez")
        let end = Timestamp(millisecondsSince1970: 1_796_290_740_000)
        #expect(Self.parse(refused).event?.payload == .signInThrottled(method: .password, retryAfter: Self.at, clientAddress: "198.51.100.23"))
        #expect(
            Self.parse(refused, hint: .init(retryAfter: end)).event?.payload
                == .signInThrottled(method: .password, retryAfter: end, clientAddress: "198.51.100.23"))
        let withEnd = Self.event(
            "LOGIN_ERROR", time: Self.at.millisecondsSince1970, error: "user_temporarily_disabled", username: "maria.lopez",
            details: #""not_before":"2026-12-03T09:40""#)
        #expect(
            Self.parse(withEnd).event?.payload
                == .signInThrottled(method: .password, retryAfter: Timestamp(millisecondsSince1970: 1_796_290_800_000), clientAddress: "198.51.100.23"))
    }

    @Test("KeycloakNames: a userId takes the name seen before it in time order, never one seen after; a refused attempt takes the lock in force")
    func namesFromEarlierEvents() {
        let lines = [
            Self.event("LOGOUT", time: 1_000), // before any name: none
            Self.event("LOGIN", time: 2_000, username: "maria.lopez"),
            Self.event("LOGOUT", time: 3_000),
            Self.event("USER_DISABLED_BY_TEMPORARY_LOCKOUT", time: 1_796_290_140_000, details: #""not_before":"2026-12-03T09:44""#),
            Self.event("LOGIN_ERROR", time: 1_796_290_200_000, error: "user_temporarily_disabled"),
            // After the lock ended: no retry hint.
            Self.event("LOGIN_ERROR", time: 1_796_291_100_000, error: "user_temporarily_disabled"),
            Self.event("LOGIN", time: 1_796_291_200_000, username: "Maria.Lopez"),
            Self.event("LOGOUT", time: 1_796_291_300_000)
        ]
        // An empty username is none: the name comes from before, as KeycloakNames says.
        #expect(Self.parse(Self.event("LOGOUT", time: 3_000, username: ""), hint: .init(user: "maria.lopez")).event?.user == "maria.lopez")
        #expect(Self.parse(Self.event("LOGOUT", time: 3_000, username: "")).event?.user == Self.maria)
        var names = KeycloakNames(timeZone: Self.utc)
        for (index, line) in lines.enumerated() { Array(line.utf8).withUnsafeBytes { names.note($0, line: index + 1) } }
        let lockEnd = Timestamp(millisecondsSince1970: 1_796_291_040_000)
        #expect(
            names.hints == [
                3: .init(user: "maria.lopez"), 4: .init(user: "maria.lopez"), 5: .init(user: "maria.lopez", retryAfter: lockEnd),
                6: .init(user: "maria.lopez"), 8: .init(user: "Maria.Lopez")
            ])
    }

    /// The import, end to end: the API's answer (newest first) with a LOGOUT and the lockout
    /// events that carry no username, imported into a store; again appends nothing.
    @Test func theImportNamesUsersFromEarlierEventsAndKeepsTheLocks() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let events = [
            Self.event("LOGIN", time: 1_796_290_000_000, username: "maria.lopez"),
            Self.event("LOGIN_ERROR", time: 1_796_290_100_000, error: "invalid_user_credentials", username: "maria.lopez"),
            Self.event("USER_DISABLED_BY_TEMPORARY_LOCKOUT", time: 1_796_290_140_000, details: #""not_before":"2026-12-03T09:44""#),
            Self.event("LOGIN_ERROR", time: 1_796_290_200_000, error: "user_temporarily_disabled", username: "maria.lopez"),
            Self.event("USER_DISABLED_BY_PERMANENT_LOCKOUT", time: 1_796_290_300_000),
            Self.event("LOGOUT", time: 1_796_290_400_000)
        ]
        let file = try directory.write("events.json", "[" + events.reversed().joined(separator: ",\n") + "]")
        let store = directory.appending("store")
        let summary = try LogImportTests.importer(store, .keycloak(timeZone: Self.utc)).run(try ImportInput(path: file))
        #expect(summary.appended == 6, "\(summary)")
        let all = try EventImporterTests.storedEvents(store)
        #expect(all.last?.type == .logImported, "the import's summary is its last record")
        let stored = all.filter { $0.type != .logImported }
        #expect(stored.map(\.user) == Array(repeating: "maria.lopez", count: 6), "every event names Maria, none by her userId")
        #expect(
            stored.map(\.payload) == [
                .signInSucceeded(method: .password, secondFactor: false, clientAddress: "198.51.100.23"),
                .signInFailed(method: .password, reason: .invalidPassword, clientAddress: "198.51.100.23"),
                .accountLocked(source: .keycloak, until: Timestamp(millisecondsSince1970: 1_796_291_040_000), clientAddress: "198.51.100.23"),
                .signInThrottled(method: .password, retryAfter: Timestamp(millisecondsSince1970: 1_796_291_040_000), clientAddress: "198.51.100.23"),
                .accountLocked(source: .keycloak, until: nil, clientAddress: "198.51.100.23"),
                .signedOut(reason: .user)
            ])
        let again = try LogImportTests.importer(store, .keycloak(timeZone: Self.utc)).run(try ImportInput(path: file))
        #expect(again.appended == 0 && again.alreadyStored == 6)
    }
}

extension AuthLogLine {
    /// The event, `nil` for a skipped line.
    var event: AuthLogEvent? {
        if case .event(let event) = self { return event }
        return nil
    }
}
