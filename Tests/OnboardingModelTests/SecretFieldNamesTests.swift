import Testing
@testable import OnboardingModel

@Suite("SecretFieldNames")
struct SecretFieldNamesTests {
    @Test(
        "names that suggest a secret are recognised, in any case",
        arguments: [
            "password", "passcode", "otp", "token", "secret", "captcha_answer", "code", "pin", "passwd", "pwd",
            "passphrase", "answer", "recovery_code", "credential", "cookie", "private_key", "api_key", "apiKey",
            "bearer", "salt", "password_hash", "PASSWORD", "Passcode", "newPassword", "session_token", "TOTPSecret",
            "sms_code", "otpValue", "securityAnswer"
        ])
    func secretLooking(name: String) {
        #expect(SecretFieldNames.looksSecret(name))
    }

    @Test(
        "ordinary field names are not secret-looking",
        arguments: [
            "id", "device", "seq", "at", "user", "session", "type", "display_name", "subtitle", "image_ref",
            "reason", "kind", "method", "retry_after", "second_factor", "purpose", "route", "forced", "field",
            "result", "color", ""
        ])
    func ordinary(name: String) {
        #expect(!SecretFieldNames.looksSecret(name))
    }

    @Test("only user_added's passcode fields would look secret, and decode checks real fields first")
    func vocabularyFieldNames() {
        let secretLooking = EventType.allCases.flatMap(\.fields).map(\.name).filter(SecretFieldNames.looksSecret)
        #expect(Set(secretLooking) == ["passcode_policy", "passcode_min_length"])
    }
}
