import Foundation
import OnboardingModel

/// Newcomers creating accounts, each on their own phone, as the app records the form: opened, the
/// email typed (now and then first in a shape the app refuses, or already in use), the password
/// (now and then too weak at first), the form sent, and its outcome (mostly the account; now and
/// then no network or a server error and a second send, or the email taken after all and another
/// one typed). The account's user id appears only on `account_created`, as the app learns it.
///
/// Its flows never touch a lockout key and never share a device, so they are laid out whole,
/// from a random stream of their own.
struct SignUpTraffic {
    /// One sign-up for every this many planned honest sign-in events on personal devices (about
    /// one newcomer per 23 sign-in sessions): a modest share, as in an app that has been out for
    /// a while.
    static let signInEventsPerSignUp: Int64 = 100
    /// The longest mean time between sign-ups (about 300 years): past any span a workload is
    /// spread over, and far enough from `Int64.max` that planning the next one never overflows.
    static let longestGapMilliseconds: Int64 = 10_000_000_000_000
    /// The server answers a sent form this long after.
    static let answerMilliseconds: ClosedRange<Int64> = 300...3_000

    // Shares, per mille of flows (docs/workloads.md lists them).
    static let invalidEmailFirstPerMille = 50
    static let emailInUseInlinePerMille = 100
    static let weakPasswordFirstPerMille = 100
    static let networkFailurePerMille = 30
    static let serverErrorPerMille = 10
    static let emailInUseOnSubmitPerMille = 10

    private var random: WorkloadRandom
    /// When the next flow starts (milliseconds since 1970).
    private(set) var nextStart: Int64
    /// The mean time between two flows' starts.
    private let gapMilliseconds: Int64
    private var count = 0

    init(seed: UInt64, start: Int64, honestGapMilliseconds: Int64) {
        random = WorkloadRandom(seed: seed, stream: 2)
        let (gap, overflow) = honestGapMilliseconds.multipliedReportingOverflow(by: SignUpTraffic.signInEventsPerSignUp)
        gapMilliseconds = overflow ? SignUpTraffic.longestGapMilliseconds : Swift.min(Swift.max(1, gap), SignUpTraffic.longestGapMilliseconds)
        nextStart = start + random.between(0...gapMilliseconds)
    }

    /// The flow starting at ``nextStart``, in time order; plans the next one.
    mutating func nextFlow() -> [Event] {
        var flow = Flow(device: WorkloadNames.signUpDevice(count), session: random.uuid(), at: nextStart)
        let user = WorkloadNames.newcomer(count)
        count += 1

        flow.add(.accountCreationStarted, &random)
        flow.pause(&random)
        if random.chance(perMille: SignUpTraffic.invalidEmailFirstPerMille) {
            // "name@example" without its ending: the app's own check refuses it and says why.
            flow.add(.fieldEdited(field: .email, filled: true, valid: false), &random)
            flow.pause(&random)
            flow.add(.fieldValidated(field: .email, result: .emailInvalid), &random)
            flow.pause(&random)
        }
        flow.add(.fieldEdited(field: .email, filled: true, valid: true), &random)
        flow.pause(&random)
        if random.chance(perMille: SignUpTraffic.emailInUseInlinePerMille) {
            flow.add(.fieldValidated(field: .email, result: .emailInUse), &random)
            flow.pause(&random)
            retypeEmail(&flow)
        }
        flow.add(.fieldValidated(field: .email, result: .emailAvailable), &random)
        flow.pause(&random)
        if random.chance(perMille: SignUpTraffic.weakPasswordFirstPerMille) {
            flow.add(.fieldEdited(field: .password, filled: true, valid: false), &random)
            flow.pause(&random)
        }
        flow.add(.fieldEdited(field: .password, filled: true, valid: true), &random)
        flow.pause(&random)
        flow.add(.accountCreationSubmitted, &random)
        flow.at += random.between(SignUpTraffic.answerMilliseconds)

        let roll = random.below(1000)
        let network = SignUpTraffic.networkFailurePerMille, server = network + SignUpTraffic.serverErrorPerMille
        if roll < server {
            flow.add(.accountCreationFailed(field: nil, reason: roll < network ? .networkUnavailable : .serverError), &random)
            flow.pause(&random)
            flow.add(.accountCreationSubmitted, &random)
            flow.at += random.between(SignUpTraffic.answerMilliseconds)
        } else if roll < server + SignUpTraffic.emailInUseOnSubmitPerMille {
            // Taken between the inline check and the send (or by the same person on another device).
            flow.add(.accountCreationFailed(field: .email, reason: .emailInUse), &random)
            flow.pause(&random)
            retypeEmail(&flow)
            flow.add(.fieldValidated(field: .email, result: .emailAvailable), &random)
            flow.pause(&random)
            flow.add(.accountCreationSubmitted, &random)
            flow.at += random.between(SignUpTraffic.answerMilliseconds)
        }
        flow.add(.accountCreated, user: user, &random)

        nextStart += Swift.max(1, random.between(gapMilliseconds / 2...gapMilliseconds * 3 / 2))
        return flow.events
    }

    /// Another email address: the field emptied and typed again.
    private mutating func retypeEmail(_ flow: inout Flow) {
        flow.add(.fieldEdited(field: .email, filled: false, valid: nil), &random)
        flow.at += random.between(FormTraffic.clearingMilliseconds)
        flow.add(.fieldEdited(field: .email, filled: true, valid: true), &random)
        flow.pause(&random)
    }

    /// One flow being laid out.
    struct Flow {
        let device: String
        let session: UUID
        var at: Int64
        var events: [Event] = []

        init(device: String, session: UUID, at: Int64) {
            self.device = device
            self.session = session
            self.at = at
        }

        mutating func add(_ payload: Payload, user: String? = nil, _ random: inout WorkloadRandom) {
            events.append(
                Event(
                    id: random.uuid(), device: device, at: Timestamp(millisecondsSince1970: at), user: user,
                    flow: session, payload: payload))
        }

        /// The user reads and types before the next step.
        mutating func pause(_ random: inout WorkloadRandom) {
            at += random.between(SignInTraffic.typingPauseMilliseconds)
        }
    }
}
