/// What a device says it is, as `sign_in_options_shown` records it: the App Store's rules on the
/// order of sign-in buttons apply to `ios` (docs/projections.md § Sign-in options).
///
/// ```swift
/// Payload.signInOptionsShown(options: [.apple, .google], platform: .ios)
/// ```
public enum DevicePlatform: String, WireEnum { case ios, android, web, other }
