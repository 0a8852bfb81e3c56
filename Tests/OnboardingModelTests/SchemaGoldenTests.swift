import Foundation
import Testing
@testable import OnboardingModel

/// Byte identity of every (type, schema) pair: the records below were encoded by the build
/// before the schema table (`EventSchema`) and kept as fixtures (`SchemaGoldenFixtures`). Every
/// record must still encode to exactly these bytes and decode to the same event, and the
/// fixtures must cover every schema of every type.
///
/// To regenerate after a deliberate format change (never for a refactor): run this suite with
/// `ONBOARD_WRITE_SCHEMA_GOLDENS=/path/to/SchemaGoldenFixtures.swift`.
@Suite("Schema goldens: every type and schema encodes to the bytes it always did")
struct SchemaGoldenTests {
    /// One payload per schema of every type, each the lowest schema that holds it.
    static let payloads: [(name: String, payload: Payload)] = [
        (
            "user_added",
            .userAdded(
                displayName: "Ann Lee", subtitle: "Nurse", imageRef: "img/ann.png",
                passcodePolicy: .alphanumeric, passcodeMinLength: 6)
        ),
        ("user_added.minimal", .userAdded(displayName: "Bo", passcodePolicy: .numeric, passcodeMinLength: 64)),
        ("user_profile_updated", .userProfileUpdated(displayName: nil, subtitle: "Ward 3", imageRef: nil)),
        ("user_selected", .userSelected),
        ("user_removed", .userRemoved(reason: .passcodeRetryLimit)),
        ("passcode_set", .passcodeSet),
        ("passcode_changed", .passcodeChanged),
        ("passcode_reset_started", .passcodeResetStarted),
        ("passcode_reset_completed", .passcodeResetCompleted),
        ("biometric_enabled", .biometricEnabled(kind: .fingerprint)),
        ("biometric_disabled", .biometricDisabled),
        ("sign_in_started.1", .signInStarted(method: .apple)),
        ("sign_in_started.2", .signInStarted(method: .password, identifierKind: .phone)),
        ("sign_in_failed.1", .signInFailed(method: .passcode, reason: .invalidPasscode)),
        ("sign_in_failed.2", .signInFailed(method: .password, reason: .unknownUser, clientAddress: "203.0.113.9")),
        ("sign_in_throttled.1", .signInThrottled(method: .google, retryAfter: Timestamp(millisecondsSince1970: 1_795_968_060_000))),
        (
            "sign_in_throttled.2",
            .signInThrottled(
                method: .password, retryAfter: Timestamp(millisecondsSince1970: -1000),
                clientAddress: "2001:db8::1")
        ),
        ("second_factor_required", .secondFactorRequired(method: .totp)),
        ("second_factor_failed.1", .secondFactorFailed(method: .sms)),
        ("second_factor_failed.2", .secondFactorFailed(method: .recoveryCode, clientAddress: "192.0.2.7")),
        ("second_factor_succeeded", .secondFactorSucceeded(method: .email)),
        ("sign_in_succeeded.1", .signInSucceeded(method: .biometric, secondFactor: true)),
        ("sign_in_succeeded.2", .signInSucceeded(method: .other, secondFactor: false, clientAddress: "198.51.100.20")),
        ("signed_out", .signedOut(reason: .revoked)),
        ("captcha_presented", .captchaPresented(purpose: .createAccount)),
        ("captcha_failed", .captchaFailed),
        ("captcha_passed", .captchaPassed),
        ("captcha_alternatives_viewed", .captchaAlternativesViewed),
        ("password_reset_requested", .passwordResetRequested(route: .email)),
        ("temporary_password_sent", .temporaryPasswordSent),
        ("password_changed", .passwordChanged(forced: true)),
        ("account_creation_started", .accountCreationStarted),
        ("field_validated.1", .fieldValidated(field: .captcha, result: .passwordTooWeak)),
        ("field_validated.2", .fieldValidated(field: .secondFactorCode, result: .phoneInvalid)),
        ("account_creation_failed.1", .accountCreationFailed(field: nil, reason: .serverError)),
        ("account_creation_failed.2", .accountCreationFailed(field: .phone, reason: .phoneInvalid)),
        ("account_created", .accountCreated),
        ("lockout_cleared", .lockoutCleared(reason: .passwordReset)),
        ("user_forgotten", .userForgotten),
        ("field_edited", .fieldEdited(field: .passcode, filled: true, valid: false)),
        ("field_edited.minimal", .fieldEdited(field: .username, filled: false)),
        ("account_creation_submitted", .accountCreationSubmitted),
        ("password_reset_started", .passwordResetStarted),
        ("password_reset_failed", .passwordResetFailed(reason: .unknownAccount)),
        ("user_switch_opened", .userSwitchOpened),
        ("user_switch_closed", .userSwitchClosed),
        ("sign_in_options_shown", .signInOptionsShown(options: [.apple, .google, .password, .biometric], platform: .ios)),
        ("sign_in_options_shown.minimal", .signInOptionsShown(options: [.other])),
        (
            "sign_in_options_shown.all",
            .signInOptionsShown(
                options: [.biometric, .passcode, .password, .other, .github, .microsoft, .facebook, .google, .apple], platform: .other)
        ),
        ("sign_in_aborted.1", .signInAborted(reason: .noIdentification)),
        ("sign_in_aborted.2", .signInAborted(reason: .timeout, clientAddress: "2001:db8::22")),
        ("account_locked", .accountLocked(source: .windows, until: Timestamp(millisecondsSince1970: 1_796_290_200_000))),
        ("account_locked.permanent", .accountLocked(source: .keycloak)),
        ("account_locked.address", .accountLocked(source: .okta, until: nil, clientAddress: "2001:db8::7")),
        (
            "log_imported",
            .logImported(
                format: .sshd, events: 34, appended: 30, skipped: 46, skippedKinds: "12 pam, 34 not sshd",
                firstAt: Samples.at, lastAt: Samples.at.adding(milliseconds: 3_600_000))
        ),
        (
            "log_imported.minimal",
            .logImported(format: .windows, events: Payload.maximumImportCount, appended: 0, skipped: 0, firstAt: Samples.at, lastAt: Samples.at)
        )
    ]

    /// How each payload is written: with a live user (personal fields sealed), without a user
    /// (in the clear), and for a forgotten user (the pseudonym literal: no personal fields at all).
    enum Variant: String, CaseIterable {
        case user, anonymous, forgotten
    }

    static let forgottenLiteral = "~" + String(repeating: "3c", count: 16)

    static func event(_ payload: Payload, _ variant: Variant) -> Event {
        let id = uuid("24114258-751b-4c83-89a0-47dc4ac87fc0")
        let at = Timestamp(millisecondsSince1970: 1_795_968_004_192)
        switch variant {
        case .user:
            let user = payload.type == .userForgotten ? forgottenLiteral : "alice"
            return Event(id: id, device: "kiosk-7", at: at, user: user, flow: uuid("7c9e6679-7425-40de-944b-e07fc1f90ae7"), payload: payload)
        case .anonymous:
            return Event(id: id, device: "k", at: at, user: nil, flow: nil, payload: payload)
        case .forgotten:
            return Event(id: id, device: "device-0a1b2c3d4e5f", at: at, user: forgottenLiteral, flow: nil, payload: payload)
        }
    }

    static func cases() -> [(key: String, event: Event, seq: UInt64)] {
        var result: [(String, Event, UInt64)] = []
        for (index, entry) in payloads.enumerated() {
            for variant in Variant.allCases {
                // `user_forgotten` always names its user by the pseudonym literal.
                if entry.payload.type == .userForgotten, variant == .anonymous { continue }
                // `log_imported` names no user.
                if entry.payload.type == .logImported, variant != .anonymous { continue }
                result.append(("\(entry.name)/\(variant.rawValue)", event(entry.payload, variant), UInt64(index * 3 + 1)))
            }
        }
        return result
    }

    @Test("the fixtures hold one payload for every schema of every type")
    func fixturesCoverEverySchema() {
        var covered = Set<String>()
        for entry in Self.payloads {
            let type = entry.payload.type
            covered.insert("\(type.rawValue)@\(type.schemaVersion(holding: entry.payload.fieldValues))")
        }
        for type in EventType.allCases {
            for schema in 1...type.schemaVersion {
                #expect(covered.contains("\(type.rawValue)@\(schema)"), "no golden for \(type.rawValue) at schema \(schema)")
            }
        }
    }

    @Test("every golden record encodes to its fixture bytes and decodes to the same event")
    func byteIdentity() throws {
        let cases = Self.cases()
        if let path = ProcessInfo.processInfo.environment["ONBOARD_WRITE_SCHEMA_GOLDENS"] {
            var text = "// Generated by SchemaGoldenTests (ONBOARD_WRITE_SCHEMA_GOLDENS) from the build before the\n"
            text += "// schema table: the contract the refactor keeps. Do not edit by hand.\n\n"
            text += "enum SchemaGoldenFixtures {\n    static let records: [String: String] = [\n"
            for (key, event, seq) in cases {
                text += "        \"\(key)\":\n            \"\(hex(RecordCodec.encode(event, seq: seq, previousHash: .zero)))\",\n"
            }
            text += "    ]\n}\n"
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            return
        }
        #expect(SchemaGoldenFixtures.records.count == cases.count)
        for (key, event, seq) in cases {
            try event.validate()
            let bytes = RecordCodec.encode(event, seq: seq, previousHash: .zero)
            guard let fixture = SchemaGoldenFixtures.records[key] else {
                Issue.record("no fixture for \(key)")
                continue
            }
            #expect(hex(bytes) == fixture, "\(key): the encoding changed")
            let record = try RecordCodec.decode(OnboardingModelTests.bytes(hex: fixture), expectedSeq: seq)
            let expected = key.hasSuffix("/forgotten") ? event.erasingPersonalData(ref: UserRef(literal: Self.forgottenLiteral)!) : event
            #expect(record.event == expected, "\(key): decodes to another event")
            // The decoded event re-encodes to the same bytes (the erased form of a forgotten one too).
            #expect(hex(RecordCodec.encode(record.event, seq: seq, previousHash: .zero)) == fixture, "\(key): re-encoding differs")
            // The envelope readers agree with the full decode.
            try bytes.withUnsafeBytes { raw in
                let ref = try RecordCodec.userRef(of: raw)
                #expect(
                    ref?.literal == (event.user.flatMap { UserRef(literal: $0)?.literal } ?? event.user.map { TestKeys.directory.ref(of: $0).literal }),
                    "\(key): userRef")
                let sealed = try RecordCodec.sealedSection(of: raw)
                let hasSealed = key.hasSuffix("/user") && event.hasPersonalFields
                #expect((sealed != nil) == hasSealed, "\(key): sealedSection")
                // The parts the lockout scan reads (StoredRecordParts) agree too.
                guard let parts = StoredRecordParts(raw) else {
                    Issue.record("\(key): StoredRecordParts refused a golden record")
                    return
                }
                #expect(parts.type == event.type && StoredRecordParts.type(of: raw) == event.type, "\(key): type")
                #expect(parts.schema == event.type.schemaVersion(holding: event.payload.fieldValues) && parts.at == event.at, "\(key): schema, time")
                #expect(String(decoding: parts.device, as: UTF8.self) == event.device, "\(key): device")
                #expect(parts.user?.literal == ref?.literal && parts.sealed.map(Array.init) == sealed, "\(key): user, sealed section")
                // The payload is the record's tail: what follows the sealed section, if any.
                let tail = parts.sealed.map { raw.count - (($0.baseAddress! + $0.count) - raw.baseAddress!) }
                #expect(
                    Array(raw.suffix(parts.payload.count)) == Array(parts.payload) && (tail ?? parts.payload.count) == parts.payload.count, "\(key): payload")
            }
        }
    }
}
