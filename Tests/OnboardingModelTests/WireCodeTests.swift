import Testing
@testable import OnboardingModel

/// Golden tests of every binary code. Stored records hold these numbers, so reordering,
/// renaming or removing a case must break a test here rather than silently misread old data.
@Suite("Wire codes are pinned")
struct WireCodeTests {
    /// Every event type with its JSON name and two-byte type code, in code order.
    static let eventTypeCodes: [(String, UInt16)] = [
        ("user_added", 1), ("user_profile_updated", 2), ("user_selected", 3), ("user_removed", 4),
        ("passcode_set", 5), ("passcode_changed", 6), ("passcode_reset_started", 7),
        ("passcode_reset_completed", 8), ("biometric_enabled", 9), ("biometric_disabled", 10),
        ("sign_in_started", 11), ("sign_in_failed", 12), ("sign_in_throttled", 13),
        ("second_factor_required", 14), ("second_factor_failed", 15), ("second_factor_succeeded", 16),
        ("sign_in_succeeded", 17), ("signed_out", 18), ("captcha_presented", 19), ("captcha_failed", 20),
        ("captcha_passed", 21), ("captcha_alternatives_viewed", 22), ("password_reset_requested", 23),
        ("temporary_password_sent", 24), ("password_changed", 25), ("account_creation_started", 26),
        ("field_validated", 27), ("account_creation_failed", 28), ("account_created", 29),
        ("lockout_cleared", 30), ("user_forgotten", 31), ("field_edited", 32), ("account_creation_submitted", 33),
        ("password_reset_started", 34), ("password_reset_failed", 35), ("user_switch_opened", 36),
        ("user_switch_closed", 37), ("sign_in_options_shown", 38), ("sign_in_aborted", 39), ("account_locked", 40), ("log_imported", 41)
    ]

    /// The types with a schema 2 (docs/format.md § Event types); every other type is at schema 1.
    static let schemaVersions: [String: UInt8] = [
        "sign_in_started": 2, "field_validated": 2, "account_creation_failed": 2,
        "sign_in_failed": 2, "sign_in_throttled": 2, "second_factor_failed": 2, "sign_in_succeeded": 2,
        "sign_in_aborted": 2,
        "account_locked": 2
    ]

    @Test("every event type has its pinned code, which is its allCases index + 1")
    func eventTypeCodesArePinned() {
        #expect(EventType.allCases.count == Self.eventTypeCodes.count)
        #expect(EventType.wireNames == Self.eventTypeCodes.map(\.0))
        for (index, type) in EventType.allCases.enumerated() {
            #expect(Int(type.code) == index + 1)
            #expect(Int(type.wireCode) == index)
        }
        for (name, code) in Self.eventTypeCodes {
            let type = EventType(rawValue: name)
            #expect(type?.code == code, "code of \(name)")
            #expect(EventType(code: code) == type, "type of code \(code)")
            #expect(type?.schemaVersion == Self.schemaVersions[name, default: 1], "schema of \(name)")
        }
    }

    @Test("codes outside 1…41 name no event type", arguments: [UInt16(0), 42, 43, 255, 256, 257, 0x0101, UInt16.max])
    func unknownEventTypeCodes(code: UInt16) {
        #expect(EventType(code: code) == nil)
    }

    @Test("every enum's names are pinned in code order")
    func enumCodesArePinned() {
        #expect(PasscodePolicy.wireNames == ["numeric", "alphanumeric"])
        #expect(UserRemovalReason.wireNames == ["user_request", "admin", "passcode_retry_limit"])
        #expect(BiometricKind.wireNames == ["face", "touch", "fingerprint"])
        #expect(SignInMethod.wireNames == ["password", "passcode", "biometric", "apple", "google", "other"])
        #expect(
            SignInFailureReason.wireNames == [
                "invalid_password", "invalid_passcode", "unknown_user", "biometric_failed",
                "network_unavailable", "server_error", "cancelled"
            ])
        #expect(SecondFactorMethod.wireNames == ["totp", "sms", "email", "recovery_code"])
        #expect(SignOutReason.wireNames == ["user", "session_expired", "revoked"])
        #expect(CaptchaPurpose.wireNames == ["sign_in", "create_account"])
        #expect(ResetRoute.wireNames == ["username", "email"])
        #expect(
            FormField.wireNames == [
                "username", "password", "password_confirmation", "email", "captcha", "phone", "passcode", "second_factor_code"
            ])
        #expect(
            ValidationResult.wireNames == [
                "passwords_match", "passwords_do_not_match", "username_available", "username_in_use",
                "username_invalid", "password_too_weak", "email_available", "email_in_use", "email_invalid", "phone_invalid"
            ])
        #expect(
            AccountCreationFailureReason.wireNames == [
                "username_in_use", "username_invalid", "password_too_weak", "passwords_do_not_match",
                "captcha_failed", "network_unavailable", "server_error", "email_in_use", "email_invalid", "phone_invalid"
            ])
        #expect(IdentifierKind.wireNames == ["username", "email", "phone"])
        #expect(PasswordResetFailureReason.wireNames == ["unknown_account", "network_unavailable", "server_error", "rate_limited"])
        #expect(LockoutClearReason.wireNames == ["admin", "password_reset", "passcode_reset"])
        #expect(SignInOption.wireNames == ["apple", "google", "facebook", "microsoft", "github", "other", "password", "passcode", "biometric"])
        #expect(DevicePlatform.wireNames == ["ios", "android", "web", "other"])
        #expect(
            SignInAbortReason.wireNames == [
                "too_many_failures", "refused", "client_gave_up", "user_changed", "no_identification", "bad_protocol",
                "closed_before_authentication", "negotiation_failed", "no_authentication_methods", "banner_error", "timeout"
            ])
    }

    @Test("a few cases by name, so a swap of two cases is caught even if names stay")
    func specificCases() {
        #expect(PasscodePolicy.alphanumeric.wireCode == 1)
        #expect(UserRemovalReason.passcodeRetryLimit.wireCode == 2)
        #expect(BiometricKind.fingerprint.wireCode == 2)
        #expect(SignInMethod.other.wireCode == 5)
        #expect(SignInFailureReason.cancelled.wireCode == 6)
        #expect(SignInFailureReason.networkUnavailable.wireCode == 4)
        #expect(SecondFactorMethod.recoveryCode.wireCode == 3)
        #expect(SignOutReason.revoked.wireCode == 2)
        #expect(CaptchaPurpose.createAccount.wireCode == 1)
        #expect(ResetRoute.email.wireCode == 1)
        #expect(FormField.captcha.wireCode == 4)
        #expect(ValidationResult.passwordTooWeak.wireCode == 5)
        #expect(AccountCreationFailureReason.serverError.wireCode == 6)
        #expect(LockoutClearReason.passcodeReset.wireCode == 2)
        #expect(EventType.lockoutCleared.code == 30)
        #expect(EventType.signInThrottled.code == 13)
        #expect(FormField.secondFactorCode.wireCode == 7)
        #expect(ValidationResult.phoneInvalid.wireCode == 9)
        #expect(AccountCreationFailureReason.emailInUse.wireCode == 7)
        #expect(IdentifierKind.phone.wireCode == 2)
        #expect(PasswordResetFailureReason.rateLimited.wireCode == 3)
        #expect(EventType.passwordResetFailed.code == 35)
        #expect(SignInOption.biometric.wireCode == 8)
        #expect(SignInOption.other.wireCode == 5)
        #expect(DevicePlatform.web.wireCode == 2)
        #expect(EventType.signInOptionsShown.code == 38)
        #expect(EventType.accountLocked.code == 40)
        #expect(AccountLockSource.wireNames == ["keycloak", "okta", "entra", "windows"])
        #expect(EventType.userSwitchClosed.code == 37)
        #expect(EventType.signInAborted.code == 39)
        #expect(SignInAbortReason.closedBeforeAuthentication.wireCode == 6)
        #expect(SignInAbortReason.timeout.wireCode == 10)
        #expect(EventType.logImported.code == 41)
        #expect(ImportedLogFormat.wireNames == ["jsonl", "sshd", "keycloak", "okta", "entra", "cloudtrail", "windows"])
    }

    @Test("wire codes round trip and unknown codes are nil for every enum")
    func wireCodeRoundTrip() {
        func check<E: WireEnum>(_ type: E.Type) {
            for (index, value) in E.allCases.enumerated() {
                #expect(Int(value.wireCode) == index, "\(E.self).\(value.rawValue)")
                #expect(E(wireCode: value.wireCode) == value)
                #expect(E(rawValue: value.rawValue) == value)
            }
            #expect(E(wireCode: UInt8(E.allCases.count)) == nil, "\(E.self) past the end")
            #expect(E(wireCode: UInt8.max) == nil)
        }
        check(EventType.self)
        check(PasscodePolicy.self)
        check(UserRemovalReason.self)
        check(BiometricKind.self)
        check(SignInMethod.self)
        check(SignInFailureReason.self)
        check(SecondFactorMethod.self)
        check(SignOutReason.self)
        check(CaptchaPurpose.self)
        check(ResetRoute.self)
        check(FormField.self)
        check(ValidationResult.self)
        check(AccountCreationFailureReason.self)
        check(LockoutClearReason.self)
        check(IdentifierKind.self)
        check(PasswordResetFailureReason.self)
        check(SignInOption.self)
        check(DevicePlatform.self)
        check(SignInAbortReason.self)
        check(AccountLockSource.self)
    }

    @Test("payload fields of every type are pinned in canonical (JSON and binary) order")
    func payloadFieldOrder() {
        let expected: [EventType: [String]] = [
            .userAdded: ["display_name", "subtitle", "image_ref", "passcode_policy", "passcode_min_length"],
            .userProfileUpdated: ["display_name", "subtitle", "image_ref"],
            .userRemoved: ["reason"],
            .biometricEnabled: ["kind"],
            .signInStarted: ["method", "identifier_kind"],
            .signInFailed: ["method", "reason", "client_address"],
            .signInThrottled: ["method", "retry_after", "client_address"],
            .secondFactorRequired: ["method"],
            .secondFactorFailed: ["method", "client_address"],
            .secondFactorSucceeded: ["method"],
            .signInSucceeded: ["method", "second_factor", "client_address"],
            .signedOut: ["reason"],
            .captchaPresented: ["purpose"],
            .passwordResetRequested: ["route"],
            .passwordChanged: ["forced"],
            .fieldValidated: ["field", "result"],
            .accountCreationFailed: ["field", "reason"],
            .lockoutCleared: ["reason"],
            .fieldEdited: ["field", "filled", "valid"],
            .passwordResetFailed: ["reason"],
            .signInOptionsShown: ["options", "platform"],
            .signInAborted: ["reason", "client_address"],
            .accountLocked: ["source", "until", "client_address"],
            .logImported: ["format", "events", "appended", "skipped", "skipped_kinds", "first_at", "last_at"]
        ]
        for type in EventType.allCases {
            #expect(type.fields.map(\.name) == expected[type, default: []], "fields of \(type.rawValue)")
        }
        let optional = EventType.allCases.flatMap { type in
            type.fields.filter(\.isOptional).map { "\(type.rawValue).\($0.name)" }
        }
        #expect(
            optional == [
                "user_added.subtitle", "user_added.image_ref",
                "user_profile_updated.display_name", "user_profile_updated.subtitle", "user_profile_updated.image_ref",
                "sign_in_started.identifier_kind", "sign_in_failed.client_address", "sign_in_throttled.client_address",
                "second_factor_failed.client_address", "sign_in_succeeded.client_address",
                "account_creation_failed.field", "field_edited.valid", "sign_in_options_shown.platform",
                "sign_in_aborted.client_address",
                "account_locked.until", "account_locked.client_address",
                "log_imported.skipped_kinds"
            ])
    }

    @Test("schema 1 of the types with a schema 2 is pinned: its fields and how many choice values it knows")
    func schemaOneIsPinned() throws {
        func shape(_ type: EventType, _ schema: UInt8) throws -> [String] {
            try #require(type.fields(schema: schema)).map { spec in
                if case .choice(let names) = spec.kind { return "\(spec.name)/\(names.count)\(spec.isOptional ? "?" : "")" }
                return spec.name + (spec.isOptional ? "?" : "")
            }
        }
        #expect(try shape(.signInStarted, 1) == ["method/6"])
        #expect(try shape(.signInStarted, 2) == ["method/6", "identifier_kind/3?"])
        #expect(try shape(.fieldValidated, 1) == ["field/5", "result/6"])
        #expect(try shape(.fieldValidated, 2) == ["field/8", "result/10"])
        #expect(try shape(.accountCreationFailed, 1) == ["field/5?", "reason/7"])
        #expect(try shape(.accountCreationFailed, 2) == ["field/8?", "reason/10"])
        #expect(try shape(.signInFailed, 1) == ["method/6", "reason/7"])
        #expect(try shape(.signInFailed, 2) == ["method/6", "reason/7", "client_address?"])
        #expect(try shape(.signInThrottled, 1) == ["method/6", "retry_after"])
        #expect(try shape(.secondFactorFailed, 1) == ["method/4"])
        #expect(try shape(.signInSucceeded, 1) == ["method/6", "second_factor"])
        #expect(try shape(.signInAborted, 1) == ["reason/11"])
        #expect(try shape(.signInAborted, 2) == ["reason/11", "client_address?"])
        for type in EventType.allCases {
            #expect(type.fields(schema: 0) == nil && type.fields(schema: type.schemaVersion + 1) == nil, "\(type.rawValue)")
            #expect(type.fields(schema: type.schemaVersion)?.map(\.name) == type.fields.map(\.name))
        }
    }

    @Test("every payload reports its type and one value per field")
    func payloadShape() {
        var generator = EventGenerator(seed: 1)
        for type in EventType.allCases {
            let payload = generator.payload(of: type)
            #expect(payload.type == type)
            #expect(payload.fieldValues.count == type.fields.count, "\(type.rawValue)")
            #expect(Payload(type: type, fieldValues: payload.fieldValues) == payload)
        }
    }
}
