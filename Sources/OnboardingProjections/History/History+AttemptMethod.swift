import OnboardingModel

extension History {
    /// How an attempt was made: a first-factor sign-in method (`password`, `passcode`, …) or a
    /// second-factor method (`totp`, `sms`, …). The two vocabularies share no name, so ``name``
    /// alone says which; it is what the history JSON, the CSV and the `method=` filter spell.
    public enum AttemptMethod: Sendable, Hashable, CustomStringConvertible {
        case signIn(SignInMethod)
        case secondFactor(SecondFactorMethod)

        /// The wire name: `password`, `totp`, ….
        public var name: String {
            switch self {
            case .signIn(let method): method.rawValue
            case .secondFactor(let method): method.rawValue
            }
        }

        /// The lockout factor an attempt by this method counts toward.
        public var factor: LockoutFactor {
            switch self {
            case .signIn: .password
            case .secondFactor: .secondFactor
            }
        }

        public var description: String { name }
    }
}
