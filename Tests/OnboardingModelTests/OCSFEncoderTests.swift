import Foundation
import Testing
@testable import OnboardingModel

@Suite("OCSF export: events as OCSF Authentication (3002)")
struct OCSFEncoderTests {
    static let encoder = OCSFEncoder(product: .init(version: "9.9.9"))
    static let hash = Digest(bytes: [UInt8](repeating: 0x11, count: Digest.byteCount))

    static func record(_ payload: Payload, user: String? = "alice", session: UUID? = Samples.session, seq: UInt64 = 12) -> Record {
        Record(seq: seq, event: Samples.event(payload, user: user, session: session), previousHash: .zero, hash: hash)
    }

    static func line(_ record: Record, encoder: OCSFEncoder = OCSFEncoderTests.encoder) -> String? {
        var bytes: [UInt8] = []
        guard encoder.appendLine(record, to: &bytes) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Expected mapping of one sign-in related payload.
    struct Expectation: Sendable, CustomStringConvertible {
        let payload: Payload
        let activity: Int
        let typeUID: Int
        let status: Int
        let statusDetail: String?
        let severity: Int
        let isMFA: Bool?
        var description: String { payload.type.rawValue }
    }

    static let signInRelated: [Expectation] = [
        .init(payload: .signInStarted(method: .password), activity: 1, typeUID: 300201, status: 99, statusDetail: nil, severity: 1, isMFA: nil),
        .init(
            payload: .signInFailed(method: .password, reason: .invalidPassword), activity: 1, typeUID: 300201, status: 2,
            statusDetail: "INVALID_CREDENTIALS", severity: 2, isMFA: nil),
        .init(
            payload: .signInFailed(method: .passcode, reason: .invalidPasscode), activity: 1, typeUID: 300201, status: 2,
            statusDetail: "INVALID_CREDENTIALS", severity: 2, isMFA: nil),
        .init(
            payload: .signInFailed(method: .password, reason: .unknownUser), activity: 1, typeUID: 300201, status: 2,
            statusDetail: "USER_DOES_NOT_EXIST", severity: 2, isMFA: nil),
        .init(
            payload: .signInFailed(method: .biometric, reason: .biometricFailed), activity: 1, typeUID: 300201, status: 2,
            statusDetail: "INVALID_CREDENTIALS", severity: 2, isMFA: nil),
        // Not guesses: recorded as failures, but only informational.
        .init(
            payload: .signInFailed(method: .google, reason: .networkUnavailable), activity: 1, typeUID: 300201, status: 2,
            statusDetail: "NETWORK_UNAVAILABLE", severity: 1, isMFA: nil),
        .init(
            payload: .signInFailed(method: .password, reason: .serverError), activity: 1, typeUID: 300201, status: 2,
            statusDetail: "SERVER_ERROR", severity: 1, isMFA: nil),
        .init(
            payload: .signInFailed(method: .apple, reason: .cancelled), activity: 1, typeUID: 300201, status: 2,
            statusDetail: "CANCELLED", severity: 1, isMFA: nil),
        .init(
            payload: .signInThrottled(method: .password, retryAfter: timestamp("2026-11-29T16:05:00.123Z")), activity: 1,
            typeUID: 300201, status: 2, statusDetail: "ACCOUNT_LOCKED_OUT", severity: 3, isMFA: nil),
        .init(
            payload: .secondFactorRequired(method: .totp), activity: 1, typeUID: 300201, status: 99, statusDetail: nil,
            severity: 1, isMFA: true),
        .init(
            payload: .secondFactorFailed(method: .sms), activity: 1, typeUID: 300201, status: 2, statusDetail: "INVALID_CREDENTIALS",
            severity: 2, isMFA: true),
        .init(
            payload: .secondFactorSucceeded(method: .email), activity: 1, typeUID: 300201, status: 1, statusDetail: nil,
            severity: 1, isMFA: true),
        .init(
            payload: .signInSucceeded(method: .password, secondFactor: true), activity: 1, typeUID: 300201, status: 1,
            statusDetail: nil, severity: 1, isMFA: true),
        .init(
            payload: .signInSucceeded(method: .biometric, secondFactor: false), activity: 1, typeUID: 300201, status: 1,
            statusDetail: nil, severity: 1, isMFA: false),
        .init(
            payload: .signedOut(reason: .user), activity: 2, typeUID: 300202, status: 1, statusDetail: "LOGOFF_USER_INITIATED",
            severity: 1, isMFA: nil),
        .init(
            payload: .signedOut(reason: .sessionExpired), activity: 2, typeUID: 300202, status: 1, statusDetail: "SESSION_EXPIRED",
            severity: 1, isMFA: nil),
        .init(
            payload: .signedOut(reason: .revoked), activity: 2, typeUID: 300202, status: 1, statusDetail: "SESSION_REVOKED",
            severity: 1, isMFA: nil),
        .init(
            payload: .captchaPresented(purpose: .signIn), activity: 99, typeUID: 300299, status: 99, statusDetail: nil,
            severity: 1, isMFA: nil),
        .init(payload: .captchaFailed, activity: 99, typeUID: 300299, status: 2, statusDetail: "CAPTCHA_FAILED", severity: 2, isMFA: nil),
        .init(payload: .captchaPassed, activity: 99, typeUID: 300299, status: 1, statusDetail: nil, severity: 1, isMFA: nil),
        .init(
            payload: .passwordResetRequested(route: .email), activity: 99, typeUID: 300299, status: 99, statusDetail: nil,
            severity: 1, isMFA: nil),
        .init(payload: .temporaryPasswordSent, activity: 99, typeUID: 300299, status: 1, statusDetail: nil, severity: 1, isMFA: nil),
        .init(
            payload: .passwordChanged(forced: true), activity: 99, typeUID: 300299, status: 1,
            statusDetail: "PASSWORD_CHANGE_REQUIRED", severity: 1, isMFA: nil),
        .init(
            payload: .passwordChanged(forced: false), activity: 99, typeUID: 300299, status: 1, statusDetail: nil,
            severity: 1, isMFA: nil),
        .init(payload: .passcodeChanged, activity: 99, typeUID: 300299, status: 1, statusDetail: nil, severity: 1, isMFA: nil),
        .init(payload: .passcodeResetStarted, activity: 99, typeUID: 300299, status: 99, statusDetail: nil, severity: 1, isMFA: nil),
        .init(payload: .passcodeResetCompleted, activity: 99, typeUID: 300299, status: 1, statusDetail: nil, severity: 1, isMFA: nil),
        .init(
            payload: .lockoutCleared(reason: .admin), activity: 99, typeUID: 300299, status: 1, statusDetail: "ADMIN",
            severity: 3, isMFA: nil),
        .init(
            payload: .lockoutCleared(reason: .passwordReset), activity: 99, typeUID: 300299, status: 1,
            statusDetail: "PASSWORD_RESET", severity: 3, isMFA: nil),
        .init(payload: .passwordResetStarted, activity: 99, typeUID: 300299, status: 99, statusDetail: nil, severity: 1, isMFA: nil),
        .init(
            payload: .passwordResetFailed(reason: .unknownAccount), activity: 99, typeUID: 300299, status: 2,
            statusDetail: "USER_DOES_NOT_EXIST", severity: 1, isMFA: nil),
        .init(
            payload: .passwordResetFailed(reason: .rateLimited), activity: 99, typeUID: 300299, status: 2,
            statusDetail: "RATE_LIMITED", severity: 2, isMFA: nil),
        .init(
            payload: .passwordResetFailed(reason: .networkUnavailable), activity: 99, typeUID: 300299, status: 2,
            statusDetail: "NETWORK_UNAVAILABLE", severity: 1, isMFA: nil),
        // A logon cut off before its credentials were checked: a failed logon, the cut-off after
        // too many failures as severe as a lockout, the rest low.
        .init(
            payload: .signInAborted(reason: .tooManyFailures, clientAddress: "203.0.113.9"), activity: 1, typeUID: 300201, status: 2,
            statusDetail: "TOO_MANY_FAILURES", severity: 3, isMFA: nil),
        .init(
            payload: .signInAborted(reason: .noIdentification), activity: 1, typeUID: 300201, status: 2,
            statusDetail: "NO_IDENTIFICATION", severity: 2, isMFA: nil)
    ]

    /// The OCSF 1.8.0 schema's caption of each `type_uid` the export writes: `type_name` must be
    /// exactly this, whatever the event's own `activity_name`.
    static let typeNames = [300201: "Authentication: Logon", 300202: "Authentication: Logoff", 300299: "Authentication: Other"]

    static let unrelated: [Payload] = [
        .userAdded(displayName: "Zoë", subtitle: nil, imageRef: nil, passcodePolicy: .numeric, passcodeMinLength: 6),
        .userProfileUpdated(displayName: "Zoë Å.", subtitle: nil, imageRef: nil), .userSelected, .userRemoved(reason: .admin),
        .passcodeSet, .biometricEnabled(kind: .face), .biometricDisabled, .captchaAlternativesViewed, .accountCreationStarted,
        .fieldValidated(field: .username, result: .usernameInUse), .accountCreationFailed(field: nil, reason: .serverError),
        .accountCreated, .userForgotten,
        // Form input: what the user typed into (never what), not an authentication.
        .fieldEdited(field: .passcode, filled: true, valid: true), .accountCreationSubmitted,
        // Navigation on a shared device's "Switch or Add User" screen.
        .userSwitchOpened, .userSwitchClosed,
        // What a sign-in screen offered: the app's design, not an authentication.
        .signInOptionsShown(options: [.google, .apple, .password], platform: .ios),
        // The store's note on an import: the imported events are the authentications.
        .logImported(format: .keycloak, events: 3, appended: 2, skipped: 1, skippedKinds: "1 not authentication", firstAt: Samples.at, lastAt: Samples.at)
    ]

    /// Written as an Account Change (3001), not an Authentication: a lock an identity provider
    /// enforced changes the account; it is no attempt to sign in.
    static let accountChanges: [Payload] = [.accountLocked(source: .okta, until: Timestamp(millisecondsSince1970: 1_796_290_200_000))]

    @Test func everyTypeIsEitherSignInRelatedOrSkipped() {
        let related = Set(Self.signInRelated.map(\.payload.type)).union(Self.accountChanges.map(\.type))
        let skipped = Set(Self.unrelated.map(\.type))
        #expect(related.isDisjoint(with: skipped))
        #expect(related.union(skipped) == Set(EventType.allCases))
    }

    @Test("account_locked is an Account Change, activity Lock: temporary with its end, permanent without, its address the source endpoint")
    func accountLockedIsAnAccountChangeLock() throws {
        let temporary = try #require(
            Self.line(Self.record(.accountLocked(source: .okta, until: Timestamp(millisecondsSince1970: 1_796_290_200_000), clientAddress: "198.51.100.4"))))
        let value = try JSONValue.parse(String(temporary.dropLast()))
        #expect(value["class_uid"] == .number("3001") && value["class_name"] == .string("Account Change"))
        #expect(value["activity_id"] == .number("9") && value["activity_name"] == .string("Lock"))
        #expect(value["type_uid"] == .number("300109") && value["type_name"] == .string("Account Change: Lock"))
        #expect(value["status_id"] == .number("1") && value["status_detail"] == .string("TEMPORARY"))
        #expect(value["severity_id"] == .number("3"))
        #expect(value["message"] == .string("Account locked by okta, until 2026-12-03T09:30:00.000Z"))
        #expect(value["src_endpoint"]?["ip"] == .string("198.51.100.4"))
        #expect(value["service"] == nil && value["auth_protocol_id"] == nil && value["is_mfa"] == nil, "Authentication's attributes only")
        #expect(value["unmapped"]?["source"] == .string("okta") && value["unmapped"]?["until"] == .string("2026-12-03T09:30:00.000Z"))

        let permanent = try JSONValue.parse(String(try #require(Self.line(Self.record(.accountLocked(source: .windows)))).dropLast()))
        #expect(permanent["status_detail"] == .string("PERMANENT"))
        #expect(permanent["message"] == .string("Account locked by windows, until an administrator unlocks it"))
        #expect(permanent["unmapped"]?["until"] == nil)
    }

    @Test(arguments: signInRelated)
    func signInRelatedMapping(_ expected: Expectation) throws {
        let line = try #require(Self.line(Self.record(expected.payload)))
        #expect(line.hasSuffix("}\n"))
        let value = try JSONValue.parse(String(line.dropLast()))
        #expect(value["class_uid"] == .number("3002"))
        #expect(value["category_uid"] == .number("3"))
        #expect(value["activity_id"] == .number(String(expected.activity)))
        #expect(value["type_uid"] == .number(String(expected.typeUID)))
        #expect(value["type_name"] == .string(try #require(Self.typeNames[expected.typeUID])))
        #expect(value["status_id"] == .number(String(expected.status)))
        #expect(value["status_detail"]?.stringValue == expected.statusDetail)
        #expect(value["severity_id"] == .number(String(expected.severity)))
        #expect(value["is_mfa"] == expected.isMFA.map(JSONValue.bool))
        #expect(value["time"] == .number("1795968000123"))
        #expect(value["metadata"]?["version"] == .string(OCSFSchema.version))
        #expect(value["metadata"]?["uid"] == .string("0f8fad5b-d9cb-469f-a165-70867728950e"))
        #expect(value["metadata"]?["event_code"] == .string(expected.payload.type.rawValue))
        #expect(value["unmapped"]?["type"] == .string(expected.payload.type.rawValue))
        #expect(value["unmapped"]?["seq"] == .number("12"))
        #expect(value["unmapped"]?["hash"] == .string(String(repeating: "11", count: 32)))
    }

    @Test func goldenLine() throws {
        let record = Self.record(.signInFailed(method: .password, reason: .invalidPassword))
        let expected =
            #"{"activity_id":1,"activity_name":"Logon","category_uid":3,"category_name":"Identity & Access Management","class_uid":3002,"class_name":"Authentication","type_uid":300201,"type_name":"Authentication: Logon","severity_id":2,"severity":"Low","status_id":2,"status":"Failure","status_detail":"INVALID_CREDENTIALS","time":1795968000123,"message":"Sign-in failed: invalid_password (method: password)","metadata":{"version":"1.8.0","product":{"name":"OnboardingStore","vendor_name":"OnboardingStore","version":"9.9.9"},"profiles":["host"],"uid":"0f8fad5b-d9cb-469f-a165-70867728950e","correlation_uid":"7c9e6679-7425-40de-944b-e07fc1f90ae7","event_code":"sign_in_failed","sequence":12},"user":{"name":"alice","uid":"alice"},"device":{"type_id":0,"type":"Unknown","uid":"kiosk-7"},"src_endpoint":{"uid":"kiosk-7"},"service":{"name":"OnboardingStore"},"auth_protocol_id":99,"auth_protocol":"Password","logon_type_id":2,"logon_type":"Interactive","unmapped":{"type":"sign_in_failed","seq":12,"hash":"1111111111111111111111111111111111111111111111111111111111111111","method":"password","reason":"invalid_password"}}"#
        #expect(Self.line(record) == expected + "\n")
        // Deterministic: the same record gives the same bytes.
        #expect(Self.line(record) == Self.line(record))
    }

    @Test(arguments: unrelated)
    func unrelatedEventsAreSkipped(_ payload: Payload) throws {
        var bytes: [UInt8] = Array("kept".utf8)
        #expect(!Self.encoder.appendLine(Self.record(payload), to: &bytes))
        #expect(bytes == Array("kept".utf8))
        #expect(Self.encoder.event(Self.record(payload)) == nil)

        // With unrelated events included: activity Other, named after the type.
        let all = OCSFEncoder(product: .init(version: "9.9.9"), includesUnrelatedEvents: true)
        let value = try JSONValue.parse(String(try #require(Self.line(Self.record(payload), encoder: all)).dropLast()))
        #expect(value["class_uid"] == .number("3002"))
        #expect(value["activity_id"] == .number("99"))
        #expect(value["type_uid"] == .number("300299"))
        #expect(value["type_name"] == .string("Authentication: Other"))
        #expect(value["activity_name"] == .string(OCSFClassification.words(payload.type.rawValue)))
        #expect(value["status_id"] == .number(payload.type == .accountCreationFailed ? "2" : "1"))
    }

    @Test func includingUnrelatedKeepsSignInMappings() {
        let all = OCSFEncoder(product: .init(version: "9.9.9"), includesUnrelatedEvents: true)
        for expected in Self.signInRelated {
            #expect(Self.line(Self.record(expected.payload), encoder: all) == Self.line(Self.record(expected.payload)))
        }
    }

    /// The schema wants a user with an account, a name or a uid; the empty uid can be no real
    /// user's (user ids are never empty).
    @Test func withoutUserOrSessionTheUserIsUnknownAndThereIsNoCorrelation() throws {
        let line = try #require(Self.line(Self.record(.captchaFailed, user: nil, session: nil)))
        let value = try JSONValue.parse(String(line.dropLast()))
        #expect(
            value["user"]
                == .object([
                    .init("type_id", .number("0")), .init("type", .string("Unknown")),
                    .init("uid", .string(""))
                ]))
        #expect(value["metadata"]?["correlation_uid"] == nil)
        #expect(value["metadata"]?["uid"] == .string("0f8fad5b-d9cb-469f-a165-70867728950e"))
    }

    @Test func textIsEscapedCanonically() throws {
        let user = "Zoë \"the boss\" \\ 漢"
        let line = try #require(Self.line(Self.record(.signInSucceeded(method: .google, secondFactor: false), user: user)))
        #expect(line.contains(#""user":{"name":"Zoë \"the boss\" \\ 漢","uid":"Zoë \"the boss\" \\ 漢"}"#))
        #expect(line.contains(#""auth_protocol_id":4,"auth_protocol":"OpenID""#))
        let value = try JSONValue.parse(String(line.dropLast()))
        #expect(value["user"]?["name"] == .string(user))
    }

    @Test func typeUIDIsClassTimesHundredPlusActivityAndTypeNameItsCaption() {
        for activity in OCSFSchema.Activity.allCases {
            #expect(activity.typeUID == 3002 * 100 + activity.rawValue)
            #expect(activity.typeName == Self.typeNames[activity.typeUID])
        }
    }
}
