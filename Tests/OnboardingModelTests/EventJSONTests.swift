import Foundation
import Testing
@testable import OnboardingModel

@Suite("EventJSON: the import/export contract")
struct EventJSONTests {
    // MARK: Corpus: every event type

    static let longText = String(repeating: "漢", count: 1365) + "x" // exactly 4096 bytes
    static let longUser = String(repeating: "é", count: 128) // exactly 256 bytes
    static let longDevice = String(repeating: "kiosk-7.", count: 8) // exactly 64 bytes

    /// One or more events of every type, with Unicode in every text field, null and long values.
    static let corpus: [Event] = [
        Samples.event(
            .userAdded(
                displayName: "Zoë Ångström", subtitle: "שלום עולם", imageRef: "https://example.org/😀.png",
                passcodePolicy: .numeric, passcodeMinLength: 4)),
        Samples.event(
            .userAdded(
                displayName: longText, subtitle: longText, imageRef: longText,
                passcodePolicy: .alphanumeric, passcodeMinLength: 64), user: longUser, device: longDevice),
        Samples.event(
            .userAdded(
                displayName: "Ana \"the boss\" \\ O'Neil", subtitle: nil, imageRef: nil,
                passcodePolicy: .numeric, passcodeMinLength: 1), user: nil, session: nil),
        Samples.event(.userProfileUpdated(displayName: "مرحبا \u{200F}بالعالم", subtitle: nil, imageRef: "img/👩‍💻"), user: "زينب"),
        Samples.event(.userProfileUpdated(displayName: nil, subtitle: nil, imageRef: nil)),
        Samples.event(.userSelected, user: "用户@例子.广告"),
        Samples.event(.userRemoved(reason: .passcodeRetryLimit)),
        Samples.event(.passcodeSet),
        Samples.event(.passcodeChanged, session: nil),
        Samples.event(.passcodeResetStarted),
        Samples.event(.passcodeResetCompleted),
        Samples.event(.biometricEnabled(kind: .fingerprint), user: "e\u{301}lodie"),
        Samples.event(.biometricDisabled),
        Samples.event(.signInStarted(method: .apple), user: nil),
        Samples.event(.signInFailed(method: .passcode, reason: .invalidPasscode)),
        Samples.event(.signInThrottled(method: .password, retryAfter: timestamp("2026-11-29T16:05:00.123Z"))),
        Samples.event(.signInThrottled(method: .other, retryAfter: .minimum), user: nil),
        Samples.event(.secondFactorRequired(method: .recoveryCode)),
        Samples.event(.secondFactorFailed(method: .totp)),
        Samples.event(.secondFactorSucceeded(method: .sms)),
        Samples.event(.signInSucceeded(method: .biometric, secondFactor: true)),
        Samples.event(.signInSucceeded(method: .google, secondFactor: false)),
        Samples.event(.signedOut(reason: .sessionExpired)),
        Samples.event(.captchaPresented(purpose: .createAccount), user: nil),
        Samples.event(.captchaFailed, user: nil),
        Samples.event(.captchaPassed, user: nil),
        Samples.event(.captchaAlternativesViewed, user: nil, session: nil),
        Samples.event(.passwordResetRequested(route: .email)),
        Samples.event(.temporaryPasswordSent),
        Samples.event(.passwordChanged(forced: true)),
        Samples.event(.passwordChanged(forced: false)),
        Samples.event(.accountCreationStarted, user: nil),
        Samples.event(.fieldValidated(field: .passwordConfirmation, result: .passwordsDoNotMatch), user: nil),
        Samples.event(.accountCreationFailed(field: .username, reason: .usernameInUse), user: nil),
        Samples.event(.accountCreationFailed(field: nil, reason: .networkUnavailable), user: nil),
        Samples.event(.accountCreated, user: "new.user+tag@example.org"),
        Samples.event(.lockoutCleared(reason: .admin), user: "👩🏽‍🚀"),
        Samples.event(.userForgotten, user: "~0123456789abcdef0123456789abcdef", session: nil),
        Samples.event(.signInStarted(method: .password, identifierKind: .phone), user: nil),
        Samples.event(.fieldValidated(field: .email, result: .emailInUse), user: nil),
        Samples.event(.accountCreationFailed(field: nil, reason: .phoneInvalid), user: nil),
        Samples.event(.fieldEdited(field: .passcode, filled: true, valid: false)),
        Samples.event(.fieldEdited(field: .email, filled: false, valid: nil), user: nil),
        Samples.event(.accountCreationSubmitted, user: nil),
        Samples.event(.passwordResetStarted, user: nil),
        Samples.event(.passwordResetFailed(reason: .unknownAccount), user: nil),
        Samples.event(.userSwitchOpened, user: nil),
        Samples.event(.userSwitchClosed),
        Samples.event(.signInOptionsShown(options: [.apple, .google, .password, .biometric], platform: .ios), user: nil, session: nil),
        Samples.event(.signInOptionsShown(options: [.passcode])),
        Samples.event(.signInAborted(reason: .closedBeforeAuthentication, clientAddress: "2001:db8::7"), user: nil, session: nil),
        Samples.event(.signInAborted(reason: .tooManyFailures, clientAddress: "203.0.113.9"), user: "root", session: nil),
        Samples.event(.signInAborted(reason: .timeout), user: nil, session: nil),
        Samples.event(.accountLocked(source: .entra, until: Timestamp(millisecondsSince1970: 1_796_290_200_000), clientAddress: "203.0.113.9")),
        Samples.event(.accountLocked(source: .keycloak), user: nil),
        Samples.event(
            .logImported(
                format: .sshd, events: 34, appended: 34, skipped: 46, skippedKinds: "12 pam, 34 not sshd",
                firstAt: Samples.at, lastAt: Samples.at.adding(milliseconds: 3_600_000)), user: nil, session: nil),
        Samples.event(
            .logImported(
                format: .windows, events: Payload.maximumImportCount, appended: 0, skipped: 0, firstAt: Timestamp.minimum,
                lastAt: Timestamp.maximum), user: nil, session: nil)
    ]

    @Test("the corpus covers every event type and is valid")
    func corpusCoversEveryType() throws {
        #expect(Set(Self.corpus.map(\.type)) == Set(EventType.allCases))
        for event in Self.corpus { try event.validate() }
        #expect(Self.longText.utf8.count == Limits.maximumTextBytes)
        #expect(Self.longUser.utf8.count == Limits.maximumUserBytes)
        #expect(Self.longDevice.utf8.count == Limits.maximumDeviceBytes)
    }

    @Test(
        "every corpus event encodes canonically, decodes to itself and re-encodes byte for byte",
        arguments: EventJSONTests.corpus.indices)
    func corpusRoundTrip(index: Int) throws {
        let event = Self.corpus[index]
        for seq in [nil, 1, 42, UInt64.max] as [UInt64?] {
            let text = EventJSON.encode(event, seq: seq)
            var appended: [UInt8] = [0x5B]
            EventJSON.encode(event, seq: seq, into: &appended)
            #expect(appended == [0x5B] + Array(text.utf8), "encode(into:) appends the same bytes")
            #expect(!text.contains("\n"))
            let decoded = try EventJSON.decode(line: text)
            #expect(decoded.event == event)
            #expect(decoded.seq == seq)
            #expect(Array(EventJSON.encode(decoded.event, seq: decoded.seq).utf8) == Array(text.utf8))
            #expect(try keys(of: text) == expectedKeys(for: event, withSeq: seq != nil))
        }
    }

    func keys(of text: String) throws -> [String] {
        guard case .object(let members) = try JSONValue.parse(text) else { return [] }
        return members.map(\.key)
    }

    func expectedKeys(for event: Event, withSeq: Bool) -> [String] {
        let envelope =
            withSeq
            ? ["id", "device", "seq", "at", "user", "session", "type"]
            : ["id", "device", "at", "user", "session", "type"]
        let payload = zip(event.type.fields, event.payload.fieldValues).compactMap { $1 == nil ? nil : $0.name }
        return envelope + payload
    }

    // MARK: Golden text

    @Test("golden: exact canonical text of a user_added event")
    func goldenUserAdded() {
        let event = Samples.event(
            .userAdded(
                displayName: "Zoë 😀", subtitle: nil, imageRef: "img/1",
                passcodePolicy: .alphanumeric, passcodeMinLength: 6))
        #expect(
            EventJSON.encode(event, seq: 7)
                == #"{"id":"0f8fad5b-d9cb-469f-a165-70867728950e","device":"kiosk-7","seq":7,"at":"2026-11-29T16:00:00.123Z","user":"alice","session":"7c9e6679-7425-40de-944b-e07fc1f90ae7","type":"user_added","display_name":"Zoë 😀","image_ref":"img/1","passcode_policy":"alphanumeric","passcode_min_length":6}"#
        )
    }

    @Test("golden: null user and session, escapes, a time and a flag")
    func goldenNullsAndEscapes() {
        let throttled = Samples.event(
            .signInThrottled(method: .passcode, retryAfter: timestamp("1969-12-31T23:59:59.9Z")),
            user: nil, session: nil)
        #expect(
            EventJSON.encode(throttled, seq: nil)
                == #"{"id":"0f8fad5b-d9cb-469f-a165-70867728950e","device":"kiosk-7","at":"2026-11-29T16:00:00.123Z","user":null,"session":null,"type":"sign_in_throttled","method":"passcode","retry_after":"1969-12-31T23:59:59.900Z"}"#
        )
        let quoted = Samples.event(.signInSucceeded(method: .apple, secondFactor: true), user: #"a"b\c/שלום"#)
        #expect(
            EventJSON.encode(quoted, seq: 3)
                == #"{"id":"0f8fad5b-d9cb-469f-a165-70867728950e","device":"kiosk-7","seq":3,"at":"2026-11-29T16:00:00.123Z","user":"a\"b\\c/שלום","session":"7c9e6679-7425-40de-944b-e07fc1f90ae7","type":"sign_in_succeeded","method":"apple","second_factor":true}"#
        )
    }

    @Test("encodePayload writes only the payload, in field order, omitting absent optionals")
    func payloadOnly() {
        #expect(
            EventJSON.encodePayload(.signInFailed(method: .password, reason: .invalidPassword))
                == #"{"method":"password","reason":"invalid_password"}"#)
        #expect(EventJSON.encodePayload(.captchaPassed) == "{}")
        #expect(EventJSON.encodePayload(.accountCreationFailed(field: nil, reason: .serverError)) == #"{"reason":"server_error"}"#)
        #expect(
            EventJSON.encodePayload(
                .userAdded(
                    displayName: "Zoë", subtitle: nil, imageRef: nil,
                    passcodePolicy: .numeric, passcodeMinLength: 6))
                == #"{"display_name":"Zoë","passcode_policy":"numeric","passcode_min_length":6}"#)
        #expect(EventJSON.encodePayload(.passwordChanged(forced: false)) == #"{"forced":false}"#)
    }

    // MARK: Property

    @Test("thousands of random valid events survive JSON export and import byte for byte")
    func randomEventsRoundTrip() {
        let seed = testSeed(fallback: 0x1503_E7E4)
        var generator = EventGenerator(seed: seed)
        for iteration in 0..<6_000 {
            let event = generator.event(of: EventType.allCases[iteration % EventType.allCases.count])
            let seq: UInt64? = generator.rng.chance(1, in: 4) ? nil : generator.rng.next() | 1
            let text = EventJSON.encode(event, seq: seq)
            let context = "seed \(seed) (replay with ONBOARDING_TEST_SEED=\(seed)), iteration \(iteration)"
            let decoded: EventJSON.Decoded
            do { decoded = try EventJSON.decode(line: text) } catch {
                Issue.record("\(context): import refused an export: \(error)\n\(text)")
                return
            }
            guard decoded.event == event, decoded.seq == seq,
                Array(EventJSON.encode(decoded.event, seq: decoded.seq).utf8) == Array(text.utf8)
            else {
                Issue.record("\(context): round trip changed the event\n\(text)")
                return
            }
            guard text.utf8.count <= Limits.maximumJSONLineBytes else {
                Issue.record("\(context): a valid event exported to \(text.utf8.count) bytes, over the line limit")
                return
            }
        }
    }

    @Test("the largest valid event, all escapes, still exports within one JSON line and imports back")
    func worstCaseEventFitsOneLine() throws {
        let escaped = String(repeating: "\\", count: Limits.maximumTextBytes) // every byte doubles when written
        let quotes = String(repeating: "\"", count: Limits.maximumUserBytes)
        let event = Samples.event(
            .userAdded(
                displayName: escaped, subtitle: escaped, imageRef: escaped,
                passcodePolicy: .alphanumeric, passcodeMinLength: 64),
            user: quotes, device: Self.longDevice)
        try event.validate()
        let text = EventJSON.encode(event, seq: .max)
        #expect(text.utf8.count <= Limits.maximumJSONLineBytes)
        let decoded = try EventJSON.decode(line: text)
        #expect(decoded.event == event)
        #expect(decoded.seq == .max)
    }

    // MARK: Lenient but canonical input

    @Test("members in any order, with whitespace, upper-case UUIDs and short fractions import canonically")
    func nonCanonicalInputNormalises() throws {
        let line = """
             { "reason" : "invalid_password" , "type":"sign_in_failed","method":"password",
               "session":"7C9E6679-7425-40DE-944B-E07FC1F90AE7", "user":"alice","at":"2026-11-29T16:00:00.1Z",
               "seq": 12, "device":"kiosk-7", "id":"0F8FAD5B-D9CB-469F-A165-70867728950E" }
            """
        let decoded = try EventJSON.decode(line: line)
        #expect(decoded.seq == 12)
        #expect(
            EventJSON.encode(decoded.event, seq: decoded.seq)
                == #"{"id":"0f8fad5b-d9cb-469f-a165-70867728950e","device":"kiosk-7","seq":12,"at":"2026-11-29T16:00:00.100Z","user":"alice","session":"7c9e6679-7425-40de-944b-e07fc1f90ae7","type":"sign_in_failed","method":"password","reason":"invalid_password"}"#
        )
    }

    @Test("seq, user, session and optional payload fields may be omitted or null")
    func omittedOptionals() throws {
        let minimal = try EventJSON.decode(
            line:
                #"{"id":"0f8fad5b-d9cb-469f-a165-70867728950e","device":"kiosk-7","at":"2026-11-29T16:00:00.123Z","type":"account_creation_failed","reason":"captcha_failed"}"#
        )
        #expect(minimal.seq == nil)
        #expect(minimal.event == Samples.event(.accountCreationFailed(field: nil, reason: .captchaFailed), user: nil, session: nil))
        let nulls = try EventJSON.decode(
            line:
                #"{"id":"0f8fad5b-d9cb-469f-a165-70867728950e","device":"kiosk-7","seq":null,"at":"2026-11-29T16:00:00.123Z","user":null,"session":null,"type":"account_creation_failed","field":null,"reason":"captcha_failed"}"#
        )
        #expect(nulls.seq == nil)
        #expect(nulls.event == minimal.event)
    }

    @Test("defaults fill id, device and at when a caller leaves them out")
    func defaultsFillEnvelope() throws {
        let defaults = EventJSON.Defaults(id: Samples.id, device: "kiosk-7", at: Samples.at)
        let decoded = try EventJSON.decode(line: #"{"type":"signed_out","reason":"revoked","user":"alice"}"#, defaults: defaults)
        #expect(decoded.event == Samples.event(.signedOut(reason: .revoked), session: nil))
        let explicit = try EventJSON.decode(
            line:
                #"{"type":"captcha_passed","id":"7c9e6679-7425-40de-944b-e07fc1f90ae7","device":"other","at":"2000-01-01T00:00:00Z"}"#,
            defaults: defaults)
        #expect(explicit.event.id == Samples.session)
        #expect(explicit.event.device == "other")
        #expect(explicit.event.at == timestamp("2000-01-01T00:00:00Z"))
    }

    @Test("a line of exactly 64 KiB is read; one byte more is refused")
    func lineLengthLimit() throws {
        let line = EventJSON.encode(Samples.event(.captchaPassed), seq: 1)
        let padded = line + String(repeating: " ", count: Limits.maximumJSONLineBytes - line.utf8.count)
        #expect(padded.utf8.count == 65_536)
        #expect(try EventJSON.decode(line: padded).event == Samples.event(.captchaPassed))
        let error = #expect(throws: EventValidationError.self) { try EventJSON.decode(line: padded + " ") }
        #expect(error?.field == nil)
        #expect(error?.message == "line is longer than 65536 bytes")
    }

    // MARK: Refusals

    /// A valid sign_in_failed line, edited per case: `nil` removes a member, text replaces its
    /// raw JSON value (or appends it).
    static func line(type: String = "sign_in_failed", _ changes: [(String, String?)] = []) -> String {
        var members: [(String, String)] = [
            ("id", #""0f8fad5b-d9cb-469f-a165-70867728950e""#), ("device", #""kiosk-7""#), ("seq", "5"),
            ("at", #""2026-11-29T16:00:00.123Z""#), ("user", #""alice""#), ("session", "null"), ("type", "\"\(type)\"")
        ]
        switch type {
        case "sign_in_failed": members += [("method", #""password""#), ("reason", #""invalid_password""#)]
        case "sign_in_succeeded": members += [("method", #""password""#), ("second_factor", "false")]
        case "sign_in_throttled": members += [("method", #""password""#), ("retry_after", #""2026-11-29T16:05:00Z""#)]
        case "user_added":
            members += [("display_name", #""Zoë""#), ("passcode_policy", #""numeric""#), ("passcode_min_length", "6")]
        case "password_changed": members += [("forced", "true")]
        default: break
        }
        for (key, raw) in changes {
            if let index = members.firstIndex(where: { $0.0 == key }) {
                if let raw { members[index].1 = raw } else { members.remove(at: index) }
            } else if let raw {
                members.append((key, raw))
            }
        }
        return "{" + members.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
    }

    struct Refusal: Sendable, CustomTestStringConvertible {
        let line: String
        let field: String?
        /// The exact message, or its beginning when it ends in "…".
        let message: String
        var testDescription: String { "\(field ?? "-"): \(message)" }

        init(_ line: String, _ field: String?, _ message: String) {
            self.line = line
            self.field = field
            self.message = message
        }
    }

    static let secretMessage = "looks like a secret; OnboardingStore never stores passwords, codes, tokens or answers — remove the field"
    static let methods = "password, passcode, biometric, apple, google, other"
    static let uuidHint = "is not a UUID like 0f8fad5b-d9cb-469f-a165-70867728950e"

    static let refusals: [Refusal] = [
        // Not JSON, not an object.
        Refusal(#"{"id":"#, nil, "malformed JSON at column 7: unexpected end of input"),
        Refusal(#"{"type":"captcha_passed","type":"captcha_failed"}"#, nil, #"malformed JSON at column 26: duplicate key "type""#),
        Refusal(line() + " x", nil, "malformed JSON at column …"),
        Refusal("", nil, "malformed JSON at column 1: unexpected end of input"),
        Refusal("[]", nil, "expected a JSON object, got an array"),
        Refusal(#""sign_in_failed""#, nil, "expected a JSON object, got a string"),
        Refusal("null", nil, "expected a JSON object, got null"),
        // type
        Refusal(line([("type", nil)]), "type", "is required (one of: user_added, user_profile_updated, …"),
        Refusal(line([("type", "5")]), "type", "must be a string, got a number"),
        Refusal(line([("type", "null")]), "type", "must be a string, got null"),
        Refusal(line(type: "sign_in_exploded"), "type", #"unknown event type "sign_in_exploded"; see docs/events.md for the vocabulary"#),
        Refusal(line(type: "Sign_In_Failed"), "type", #"unknown event type "Sign_In_Failed"…"#),
        // Required payload fields.
        Refusal(line([("method", nil)]), "method", "is required for sign_in_failed (one of: \(methods))"),
        Refusal(line([("method", "null")]), "method", "is required for sign_in_failed (one of: \(methods))"),
        Refusal(line(type: "password_changed", [("forced", nil)]), "forced", "is required for password_changed (true or false)"),
        Refusal(line(type: "sign_in_throttled", [("retry_after", nil)]), "retry_after", "is required for sign_in_throttled (ISO-8601 UTC time)"),
        Refusal(line(type: "user_added", [("display_name", nil)]), "display_name", "is required for user_added (text)"),
        Refusal(
            line(type: "user_added", [("passcode_min_length", nil)]), "passcode_min_length",
            "is required for user_added (a whole number 1…64)"),
        // Wrong kinds and values.
        Refusal(line([("method", #""pin""#)]), "method", #""pin" is not one of: \#(methods)"#),
        Refusal(line([("method", #""Password""#)]), "method", #""Password" is not one of: …"#),
        Refusal(line([("method", "1")]), "method", "must be a string, got a number"),
        Refusal(line(type: "sign_in_succeeded", [("second_factor", #""true""#)]), "second_factor", "must be true or false, got a string"),
        Refusal(line(type: "sign_in_succeeded", [("second_factor", "1")]), "second_factor", "must be true or false, got a number"),
        Refusal(line(type: "password_changed", [("forced", "[]")]), "forced", "must be true or false, got an array"),
        Refusal(line(type: "user_added", [("display_name", "42")]), "display_name", "must be a string, got a number"),
        Refusal(line(type: "user_added", [("display_name", "{}")]), "display_name", "must be a string, got an object"),
        Refusal(line(type: "user_added", [("display_name", #""""#)]), "display_name", "must be 1 to 4096 bytes of UTF-8, got 0"),
        Refusal(line(type: "user_added", [("display_name", "\"\(longText)é\"")]), "display_name", "must be 1 to 4096 bytes of UTF-8, got 4098"),
        Refusal(line(type: "user_added", [("display_name", #""a\nb""#)]), "display_name", "must not contain control characters"),
        Refusal(line(type: "user_added", [("subtitle", #""\u0000""#)]), "subtitle", "must not contain control characters"),
        Refusal(line(type: "user_added", [("passcode_min_length", "0")]), "passcode_min_length", "must be between 1 and 64, got 0"),
        Refusal(line(type: "user_added", [("passcode_min_length", "65")]), "passcode_min_length", "must be between 1 and 64, got 65"),
        Refusal(line(type: "user_added", [("passcode_min_length", "-1")]), "passcode_min_length", "must be between 1 and 64, got -1"),
        Refusal(line(type: "user_added", [("passcode_min_length", "6.5")]), "passcode_min_length", "must be a whole number, got a number"),
        Refusal(line(type: "user_added", [("passcode_min_length", "6e0")]), "passcode_min_length", "must be a whole number, got a number"),
        Refusal(
            line(type: "user_added", [("passcode_min_length", "99999999999999999999")]), "passcode_min_length",
            "must be a whole number, got a number"),
        Refusal(line(type: "user_added", [("passcode_min_length", #""6""#)]), "passcode_min_length", "must be a whole number, got a string"),
        Refusal(line(type: "user_added", [("passcode_policy", #""pin4""#)]), "passcode_policy", #""pin4" is not one of: numeric, alphanumeric"#),
        Refusal(
            line(type: "sign_in_throttled", [("retry_after", #""soon""#)]), "retry_after",
            #""soon" is not an ISO-8601 UTC time like 2026-11-29T16:00:00.123Z (at most 3 fraction digits, Z suffix)"#),
        // Unknown extra fields list what is allowed.
        Refusal(line([("color", #""red""#)]), "color", "is not a field of sign_in_failed (its payload fields: method, reason, client_address)"),
        Refusal(line(type: "captcha_passed", [("purpose", #""sign_in""#)]), "purpose", "is not a field of captcha_passed (its payload fields: none)"),
        Refusal(line([("Method", #""password""#)]), "Method", "is not a field of sign_in_failed (its payload fields: method, reason, client_address)"),
        // Secret-looking fields are refused with a message that says why.
        Refusal(line([("password", #""hunter2""#)]), "password", secretMessage),
        Refusal(line([("passcode", #""1234""#)]), "passcode", secretMessage),
        Refusal(line([("otp", #""123456""#)]), "otp", secretMessage),
        Refusal(line([("token", #""abc""#)]), "token", secretMessage),
        Refusal(line([("secret", #""s""#)]), "secret", secretMessage),
        Refusal(line([("captcha_answer", #""x7k""#)]), "captcha_answer", secretMessage),
        Refusal(line([("code", #""000000""#)]), "code", secretMessage),
        Refusal(line([("Password", #""hunter2""#)]), "Password", secretMessage),
        Refusal(line([("reset_token", "null")]), "reset_token", secretMessage),
        Refusal(line([("totp_secret", "1")]), "totp_secret", secretMessage),
        Refusal(line([("recovery_codes", "[]")]), "recovery_codes", secretMessage),
        Refusal(line([("temporary_password", #""x""#)]), "temporary_password", secretMessage),
        Refusal(line(type: "captcha_failed", [("captcha_answer", #""x7k""#)]), "captcha_answer", secretMessage),
        Refusal(line([("passcode_min_length", "6")]), "passcode_min_length", secretMessage),
        // Envelope: id, session, device, at, user, seq.
        Refusal(line([("id", nil)]), "id", "is required (a UUID; it makes re-imports idempotent)"),
        Refusal(line([("id", #""not-a-uuid""#)]), "id", #""not-a-uuid" \#(uuidHint)"#),
        Refusal(line([("id", #""0f8fad5b-d9cb-469f-a165-70867728950""#)]), "id", "\"0f8fad5b-d9cb-469f-a165-70867728950\" \(uuidHint)"),
        Refusal(line([("id", #""""#)]), "id", #""" \#(uuidHint)"#),
        // Foundation's parser alone would misread these (sscanf "%2hhx" per byte pair).
        Refusal(line([("id", #""0x8fad5b-d9cb-469f-a165-70867728950e""#)]), "id", "\"0x8fad5b-d9cb-469f-a165-70867728950e\" \(uuidHint)"),
        Refusal(line([("id", #"" f8fad5b-d9cb-469f-a165-70867728950e""#)]), "id", "\" f8fad5b-d9cb-469f-a165-70867728950e\" \(uuidHint)"),
        Refusal(line([("session", #""0f8fad5b-d9cb-469f-a165-7086772895-e""#)]), "session", "\"0f8fad5b-d9cb-469f-a165-7086772895-e\" \(uuidHint)"),
        Refusal(line([("session", #""0f8fad5b-d9cb-469f-a165-7086772895+e""#)]), "session", "\"0f8fad5b-d9cb-469f-a165-7086772895+e\" \(uuidHint)"),
        Refusal(line([("id", "12")]), "id", "must be a string, got a number"),
        Refusal(line([("id", "null")]), "id", "must be a string, got null"),
        Refusal(line([("session", #""abc""#)]), "session", #""abc" \#(uuidHint)"#),
        Refusal(line([("session", "true")]), "session", "must be a string, got a boolean"),
        Refusal(line([("device", nil)]), "device", "is required"),
        Refusal(line([("device", #""kiosk 7""#)]), "device", #"may only contain letters, digits and - _ . : (got "kiosk 7")"#),
        Refusal(line([("device", #""kiosk/7""#)]), "device", #"may only contain letters, digits and - _ . : (got "kiosk/7")"#),
        Refusal(line([("device", #""kiosk-é""#)]), "device", #"may only contain letters, digits and - _ . : (got "kiosk-é")"#),
        Refusal(line([("device", #""""#)]), "device", "must be 1 to 64 bytes long"),
        Refusal(line([("device", "\"\(longDevice)x\"")]), "device", "must be 1 to 64 bytes long"),
        Refusal(line([("device", "7")]), "device", "must be a string, got a number"),
        Refusal(line([("at", nil)]), "at", "is required (ISO-8601 UTC, e.g. 2026-11-29T16:00:00.123Z)"),
        Refusal(line([("at", #""2026-11-29T16:00:00+01:00""#)]), "at", #""2026-11-29T16:00:00+01:00" is not an ISO-8601 UTC time…"#),
        Refusal(line([("at", #""2026-02-30T00:00:00Z""#)]), "at", #""2026-02-30T00:00:00Z" is not an ISO-8601 UTC time…"#),
        Refusal(line([("at", #""2026-11-29T16:00:00.1234Z""#)]), "at", #""2026-11-29T16:00:00.1234Z" is not an ISO-8601 UTC time…"#),
        Refusal(line([("at", "1795968000123")]), "at", "must be a string, got a number"),
        Refusal(line([("user", #""""#)]), "user", "must be 1 to 256 bytes long (use null when unknown)"),
        Refusal(line([("user", "\"\(longUser)x\"")]), "user", "must be 1 to 256 bytes long (use null when unknown)"),
        Refusal(line([("user", #""a\u0007b""#)]), "user", "must not contain control characters"),
        Refusal(line([("user", "5")]), "user", "must be a string, got a number"),
        Refusal(line([("seq", "0")]), "seq", "must be a whole number ≥ 1, or omitted so the store assigns it"),
        Refusal(line([("seq", "-1")]), "seq", "must be a whole number ≥ 1, or omitted so the store assigns it"),
        Refusal(line([("seq", "1.5")]), "seq", "must be a whole number ≥ 1, or omitted so the store assigns it"),
        Refusal(line([("seq", "1e3")]), "seq", "must be a whole number ≥ 1, or omitted so the store assigns it"),
        Refusal(line([("seq", #""5""#)]), "seq", "must be a whole number ≥ 1, or omitted so the store assigns it"),
        Refusal(line([("seq", "18446744073709551616")]), "seq", "must be a whole number ≥ 1, or omitted so the store assigns it"),
        Refusal(line([("seq", "true")]), "seq", "must be a whole number ≥ 1, or omitted so the store assigns it")
    ]

    @Test("invalid lines are refused with an error naming the field", arguments: EventJSONTests.refusals)
    func refusal(_ refusal: Refusal) {
        let error = #expect(throws: EventValidationError.self) { try EventJSON.decode(line: refusal.line) }
        guard let error else { return }
        #expect(error.field == refusal.field, "field for \(refusal.line)")
        if refusal.message.hasSuffix("…") {
            #expect(error.message.hasPrefix(String(refusal.message.dropLast())), "message for \(refusal.line)")
        } else {
            #expect(error.message == refusal.message, "message for \(refusal.line)")
        }
        if let field = refusal.field {
            #expect(error.description == "field \"\(field)\": \(error.message)")
        } else {
            #expect(error.description == error.message)
        }
    }

    @Test(
        "the edited base line is itself valid, so each refusal is caused by its edit",
        arguments: ["sign_in_failed", "sign_in_succeeded", "sign_in_throttled", "user_added", "password_changed", "captcha_passed"])
    func baseLinesAreValid(type: String) throws {
        let decoded = try EventJSON.decode(line: Self.line(type: type))
        #expect(decoded.event.type.rawValue == type)
        #expect(decoded.seq == 5)
    }

    @Test("user_added's passcode_policy and passcode_min_length are accepted though they mention passcodes")
    func legitimatePasscodeFields() throws {
        let decoded = try EventJSON.decode(line: Self.line(type: "user_added"))
        #expect(
            decoded.event.payload
                == .userAdded(
                    displayName: "Zoë", subtitle: nil, imageRef: nil,
                    passcodePolicy: .numeric, passcodeMinLength: 6))
    }
}
