extension UserProfile {
    /// Whether "Sign In" is enabled for what is typed in the passcode field (disabled until a
    /// passcode is entered: docs/projections.md § `submit_enabled`). The entry must be long enough and use only the characters of
    /// the user's policy: ASCII digits for `numeric`, letters and digits for `alphanumeric`.
    ///
    /// The entry is checked and forgotten: passcodes are never stored or recorded.
    ///
    /// ```swift
    /// profile.canSubmit(passcode: "")        // false: nothing entered yet
    /// profile.canSubmit(passcode: "123456")  // true for a numeric policy of 6
    /// ```
    public func canSubmit(passcode entry: String) -> Bool {
        guard entry.count >= max(1, passcodeMinimumLength) else { return false }
        switch passcodePolicy {
        case .numeric: return entry.allSatisfy { $0.isASCII && $0.isNumber }
        case .alphanumeric: return entry.allSatisfy { $0.isLetter || $0.isNumber }
        }
    }
}
