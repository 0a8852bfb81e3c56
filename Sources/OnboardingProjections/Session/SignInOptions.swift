import OnboardingModel

/// What a device's sign-in screen offered the last time the app recorded it
/// (`sign_in_options_shown`): the options top to bottom, the platform the device said it is, and
/// when. It describes the device's screen, not one flow, so it lives on ``DeviceState`` and no
/// other event changes it. ``guideline48Findings`` checks it against App Store Review Guideline 4.8
/// (docs/projections.md § Sign-in options).
///
/// ```swift
/// let shown = SignInOptions(options: [.google, .apple, .password], platform: .ios, shownAt: now)
/// shown.guideline48Findings   // [.appleNotFirst(before: [.google])]
/// ```
public struct SignInOptions: Sendable, Hashable, Codable {
    /// Top to bottom, each at most once (the event's rule).
    public var options: [SignInOption]
    /// `nil` when the event did not say: then only the "without Apple" half of the check applies.
    public var platform: DevicePlatform?
    public var shownAt: Timestamp

    public init(options: [SignInOption], platform: DevicePlatform?, shownAt: Timestamp) {
        self.options = options
        self.platform = platform
        self.shownAt = shownAt
    }

    /// The screen's findings under guideline 4.8 (``guideline48Findings(options:platform:)``).
    public var guideline48Findings: [Guideline48Finding] {
        Self.guideline48Findings(options: options, platform: platform)
    }

    /// What breaks App Store Review Guideline 4.8 on a screen offering `options` (top to bottom)
    /// on `platform`, as the mobile auth brief reads it: Sign in with Apple must be offered
    /// whenever another third-party provider is (on every platform: the brief asks it of the app,
    /// and an event without a platform cannot be exempted), and on iOS it must come before every
    /// other third-party provider. Where the password form, the passcode or the biometric badge
    /// sit does not matter to either rule. Pure: no clock, nothing but its arguments.
    ///
    /// What it cannot see is in docs/projections.md § Sign-in options: screens the app did not
    /// record, how the buttons look (the guideline's equivalent prominence), whether another
    /// provider has the privacy properties the guideline asks of the alternative, its exceptions
    /// (say, an enterprise app signing in with the company's own accounts).
    public static func guideline48Findings(options: [SignInOption], platform: DevicePlatform?) -> [Guideline48Finding] {
        let providers = options.filter(\.isThirdPartyProvider)
        guard let apple = providers.firstIndex(of: .apple) else {
            return providers.isEmpty ? [] : [.appleMissing(providers: providers)]
        }
        if platform == .ios, apple > 0 { return [.appleNotFirst(before: Array(providers[..<apple]))] }
        return []
    }
}
