/// One thing a sign-in screen offers, as `sign_in_options_shown` lists them (docs/events.md §
/// `sign_in_options_shown`): a third-party provider's button, the password or passcode form, or
/// the biometric badge.
///
/// The first six are **third-party providers**: sign-in through another company's account, which
/// App Store Review Guideline 4.8 is about (``isThirdPartyProvider``); `other` stands for any
/// provider without a name of its own here (an enterprise or another social login).
///
/// ```swift
/// let shown: [SignInOption] = [.apple, .google, .password, .biometric]
/// shown.filter(\.isThirdPartyProvider)   // [.apple, .google]
/// ```
public enum SignInOption: String, WireEnum {
    case apple, google, facebook, microsoft, github, other, password, passcode, biometric

    /// How many options one `sign_in_options_shown` may list: each at most once, so the nine
    /// values fit; 16 leaves room for providers a later schema may add without a new limit, and
    /// bounds what a hostile line can make a reader hold (one byte of count, one byte each).
    public static let maximumShown = 16

    /// Whether the option signs in through another company's account (a social or enterprise
    /// provider), as opposed to the app's own password, passcode or the device's biometric.
    public var isThirdPartyProvider: Bool {
        switch self {
        case .apple, .google, .facebook, .microsoft, .github, .other: true
        case .password, .passcode, .biometric: false
        }
    }
}
