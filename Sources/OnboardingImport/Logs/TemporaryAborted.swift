// TEMPORARY until the sign_in_aborted event type is merged; deleted at merge.
import OnboardingModel

enum SignInAbortReason: String {
    case tooManyFailures = "too_many_failures", refused, clientGaveUp = "client_gave_up", userChanged = "user_changed"
    case noIdentification = "no_identification", badProtocol = "bad_protocol"
    case closedBeforeAuthentication = "closed_before_authentication", negotiationFailed = "negotiation_failed"
    case noAuthenticationMethods = "no_authentication_methods", bannerError = "banner_error", timeout
}

extension Payload {
    static func signInAborted(reason: SignInAbortReason, clientAddress: String?) -> Payload {
        .signInFailed(method: .other, reason: .invalidPassword, clientAddress: clientAddress)
    }
}
