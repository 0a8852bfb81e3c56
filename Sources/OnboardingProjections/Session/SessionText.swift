import OnboardingModel

/// Every message the session projection shows, in one place so product copy can be reviewed (and
/// later localized) without reading the fold.
///
/// The entries that docs/projections.md's message table fixes are worded exactly as the design documents word
/// them ("Invalid password", "Verification failed", …); the others follow the Wikipedia design's
/// rule: say what went wrong and how to fix it.
///
/// ```swift
/// SessionText.invalidPassword          // "Invalid password"
/// SessionText.tooManyAttempts(waitMilliseconds: 300_000)
/// // "You have made too many recent login attempts. Please wait 5 minutes before trying again."
/// ```
public enum SessionText {
    // MARK: Sign-in (the Wikipedia login design's "Log in" table, the mobile auth brief's error states)

    public static let invalidPassword = "Invalid password"
    public static let invalidPasscode = "Invalid passcode"
    public static let unknownUser = "No account with this username. Check the spelling or create an account."
    public static let unknownEmail = "No account with this email address. Check the spelling or create an account."
    public static let unknownPhone = "No account with this phone number. Check the number or create an account."

    /// "No account with this …" for the kind of identifier the user typed.
    public static func unknownAccount(_ kind: IdentifierKind) -> String {
        switch kind {
        case .username: unknownUser
        case .email: unknownEmail
        case .phone: unknownPhone
        }
    }
    public static let biometricFailed = "Biometric sign-in failed. Try again, or use your passcode or password."
    public static let noConnection = "No internet connection. Check your connection and try again."
    public static let serverError = "Something went wrong on our side. Please try again in a few minutes."

    /// The lockout sentence for `waitMilliseconds` left, rounded up as ``WaitWords`` says: the
    /// message of every temporary lock (``TemporaryLock/message``) and of a `sign_in_throttled`
    /// whose lock the local policy does not know. With 4–5 minutes left it is the Wikipedia
    /// design's own sentence, "… Please wait 5 minutes before trying again."
    public static func tooManyAttempts(waitMilliseconds: Int64) -> String {
        "You have made too many recent login attempts. Please wait \(WaitWords.words(remainingMilliseconds: waitMilliseconds)) before trying again."
    }

    // MARK: Second factor (the Wikipedia login design's "2FA" table)

    public static let verificationFailed = "Verification failed"

    // MARK: Session end

    public static let sessionExpired = "Your session has expired. Please sign in again."
    public static let sessionRevoked = "You were signed out by the server or an administrator. Please sign in again."

    // MARK: CAPTCHA (the Wikipedia login design's "CAPTCHA" table and user story)

    public static let wrongCaptcha = "Wrong code. Please try again."
    public static let captchaAlternatives =
        "Can't complete the CAPTCHA? You can also create an account on the website, or ask an administrator to create one for you."

    // MARK: Password reset (the Wikipedia login design's reset confirmation, the mobile brief's Forgot Password)

    public static let temporaryPasswordSent = "Temporary password sent via email"
    public static let resendHelp = "Didn't get the email? Check your spam folder. You can send it again when the timer ends."
    /// The same help once the resend timer has ended.
    public static let resendAvailableHelp = "Didn't get the email? Check your spam folder, or send it again."
    public static let passwordChanged = "Your password has been changed."
    public static let tooManyResetRequests = "Too many reset requests. Please wait a few minutes before trying again."

    // MARK: Account creation (the Wikipedia login design's "Create an account" table)

    public static let usernameInUse = "Username already in use"
    /// The mobile brief's "email taken": the same check on an email field.
    public static let emailInUse = "Email already in use"
    public static let usernameInvalid = "This username can't be used. Choose another one."
    public static let passwordTooWeak = "This password is too easy to guess. Choose a longer one."
    public static let passwordsDoNotMatch = "Passwords do not match"
    public static let passwordsMatch = "Passwords match"
    public static let emailInvalid = "Enter a valid email address, like name@example.com."
    public static let phoneInvalid = "Enter a valid phone number, with the country code."
    public static let accountCreated = "Your account has been created."

    // MARK: Shared device (the shared-device multi-user pattern)

    public static let passcodeReset = "Your passcode has been reset. Sign in with your new passcode."
}
