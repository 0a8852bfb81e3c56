import OnboardingModel

/// One way a sign-in screen breaks App Store Review Guideline 4.8 ("Login Services"), as
/// ``SignInOptions/guideline48Findings(options:platform:)`` finds it: a design finding about
/// what the app showed, never a problem with the log.
///
/// ```swift
/// Guideline48Finding.appleMissing(providers: [.google]).problem
/// // "a third-party provider (google) is offered without Sign in with Apple: offer Apple too (App Store Review Guideline 4.8)"
/// ```
public enum Guideline48Finding: Sendable, Hashable {
    /// Third-party providers offered, Sign in with Apple not among them.
    case appleMissing(providers: [SignInOption])
    /// On iOS, these providers come before Sign in with Apple.
    case appleNotFirst(before: [SignInOption])

    /// A stable name for machines (`kind` in the JSON forms).
    public var kind: String {
        switch self {
        case .appleMissing: "apple_missing"
        case .appleNotFirst: "apple_not_first"
        }
    }

    /// One line: what is wrong and how to fix it.
    public var problem: String {
        switch self {
        case .appleMissing(let providers):
            let one = providers.count == 1
            return "\(one ? "a third-party provider" : "third-party providers") (\(Self.names(providers))) \(one ? "is" : "are") offered "
                + "without Sign in with Apple: offer Apple too (App Store Review Guideline 4.8)"
        case .appleNotFirst(let before):
            return "Sign in with Apple is not the first provider on iOS (\(Self.names(before)) \(before.count == 1 ? "comes" : "come") before it): "
                + "put Apple first"
        }
    }

    private static func names(_ options: [SignInOption]) -> String {
        options.map(\.rawValue).joined(separator: ", ")
    }
}
