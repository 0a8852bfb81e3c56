/// Recognises field names that suggest a secret, so an import carrying one is refused with a
/// message that says why, instead of a plain "unknown field".
///
/// OnboardingStore never stores passwords, passcodes, temporary passwords, reset tokens, 2FA
/// codes, TOTP secrets, recovery codes, CAPTCHA answers or session tokens; no event type has a
/// field for one, and this check makes the refusal explicit.
public enum SecretFieldNames {
    /// Lower-cased fragments; a field name containing any of them looks secret.
    static let fragments = [
        "password", "passwd", "pwd", "passcode", "passphrase", "pin", "code", "otp", "token",
        "secret", "captcha_answer", "answer", "recovery", "credential", "cookie", "private_key",
        "api_key", "apikey", "bearer", "salt", "hash"
    ]

    /// Whether `name` looks like it holds a secret.
    public static func looksSecret(_ name: String) -> Bool {
        let lowered = name.lowercased()
        return fragments.contains { lowered.contains($0) }
    }
}
