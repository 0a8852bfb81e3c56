import OnboardingModel

/// The order of the social sign-in buttons: Sign in with Apple comes first, and must be offered
/// whenever any other third-party sign-in is (App Store Review Guideline 4.8). The methods are
/// those of `sign_in_started` (docs/events.md § `sign_in_started`). What a screen actually
/// showed is checked against the same rule by ``SignInOptions/guideline48Findings(options:platform:)``.
///
/// ```swift
/// SocialSignIn.buttons(offering: [.google, .password])   // [.apple, .google]
/// SocialSignIn.buttons(offering: [.password])            // []
/// ```
public enum SocialSignIn {
    /// The methods that sign in through another company's account.
    public static let providers: Set<SignInMethod> = [.apple, .google, .other]

    /// The social buttons to show for the methods an app offers: Apple first (added when any
    /// other provider is offered), then the others in the order given, each once; password,
    /// passcode and biometric sign-in are not social buttons.
    public static func buttons(offering methods: [SignInMethod]) -> [SignInMethod] {
        var others: [SignInMethod] = []
        for method in methods where providers.contains(method) && method != .apple && !others.contains(method) {
            others.append(method)
        }
        return others.isEmpty && !methods.contains(.apple) ? [] : [.apple] + others
    }
}
