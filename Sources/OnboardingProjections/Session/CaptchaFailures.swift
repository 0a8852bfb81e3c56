import Foundation

/// The `captcha_failed` in a row of one flow on a device: past
/// ``SessionProjection/captchaAlternativesAfterFailures`` the CAPTCHA offers its alternatives.
struct CaptchaFailures: Sendable, Hashable {
    /// The flow they happened in; a failure of another flow starts the count again.
    var flow: UUID?
    var count: Int
}
