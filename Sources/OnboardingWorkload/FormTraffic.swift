import Foundation
import OnboardingModel

/// What honest users' forms report around the sign-in traffic: the identifier and password or
/// passcode filled before a sign-in is sent (typed, or autofilled by a password manager), now and
/// then a password cleared and retyped after a wrong one, a passcode cleared after a wrong one and
/// now and then first of a shape the app refuses, the two-factor code typed, "Forgot password?"
/// opened, and now and then a reset request that fails before the one that goes through.
///
/// It sees each sign-in event before the generator returns it and lays its form events in the
/// time between that party's previous event on the device and this one (at most
/// ``WorkloadGenerator/formLeadMilliseconds`` before it), so the sign-in traffic keeps every
/// time and id; its draws come from a stream of their own. Attackers get none: their scripts send
/// the sign-in request without a form (docs/workloads.md § Form events).
struct FormTraffic {
    // Shares, per mille (docs/workloads.md lists them).

    /// Sign-ins on a personal device where the user types (or autofills) the identifier; on the
    /// others the app remembers the account and only the password is asked.
    static let typedIdentifierPerMille = 550
    /// Of the typed identifiers: email, username, and phone for the rest.
    static let emailIdentifierPerMille = 600
    static let usernameIdentifierPerMille = 300
    /// Flows whose password (and identifier) a password manager fills.
    static let autofillPerMille = 300
    /// After a wrong password: the user empties the field and types again (else they type over
    /// the selected text, which never empties it, so the app reports nothing).
    static let retypeAfterWrongPasswordPerMille = 250
    /// Passcodes first reported in a shape the user's policy refuses (too short, a letter under a
    /// numeric policy), then valid. The kiosk app checks when typing pauses, so most passcodes
    /// are reported once, valid.
    static let invalidPasscodeFirstPerMille = 120
    /// Password reset requests that fail before the one that goes through.
    static let resetFailurePerMille = 80
    /// Of the failures: no network, no account for what was typed, a server error; rate limited
    /// for the rest.
    static let resetNetworkPerMille = 550
    static let resetUnknownAccountPerMille = 350
    static let resetServerErrorPerMille = 70

    // How long before the event it leads to each form event happens (a field's event is its
    // first keystroke, not the end of typing). Where a party's events are closer together than
    // these, the form events are squeezed in between, in the same order.

    /// The identifier's first keystroke before the password's.
    static let identifierTypingMilliseconds: ClosedRange<Int64> = 3_000...10_000
    /// The password's or the code's first keystroke before the request is sent.
    static let secretTypingMilliseconds: ClosedRange<Int64> = 2_000...6_000
    /// A password manager fills the identifier, then the password this much later…
    static let autofillGapMilliseconds: ClosedRange<Int64> = 50...300
    /// …and the user sends the form this long after.
    static let autofillToSubmitMilliseconds: ClosedRange<Int64> = 800...3_000
    /// A passcode's first keystroke before it is sent, and before the invalid shape is fixed.
    static let passcodeTypingMilliseconds: ClosedRange<Int64> = 1_500...4_000
    /// From emptying a field to its first new keystroke.
    static let clearingMilliseconds: ClosedRange<Int64> = 300...1_500
    /// From opening "Forgot password?" to typing, and from typing to sending.
    static let resetStepMilliseconds: ClosedRange<Int64> = 1_000...4_000
    /// From a failed reset request's answer to the next step.
    static let resetRetryMilliseconds: ClosedRange<Int64> = 1_000...3_000

    /// A form event planned `lead` milliseconds before the sign-in event it leads to.
    struct Step {
        let lead: Int64
        let payload: Payload
    }

    /// What the form layer remembers of one party's current flow.
    struct FlowNotes {
        var session: UUID?
        /// The time and device of the party's last sign-in event (of any flow): form events on
        /// that device come after it. (A lane of honest traffic is not one person: its next
        /// session, often of another user on another device, may begin the moment one ends.)
        var lastAt: Int64?
        var lastDevice: String?
        /// The flow's last sign-in event.
        var last: Payload?
        /// What the user types to name the account on this flow's sign-in form; `nil` when the
        /// app remembers it (or on a shared device, where the user is picked from a list).
        var typed: IdentifierKind?
        var autofill = false
        var resetRoute: ResetRoute?
        /// The failure the pending reset request meets before the one that goes through.
        var resetFailure: PasswordResetFailureReason?
    }

    private var random: WorkloadRandom
    private var flows: [FlowNotes]
    /// No form event is dated before the workload's start.
    private let start: Int64

    init(seed: UInt64, agentCount: Int, start: Int64) {
        random = WorkloadRandom(seed: seed, stream: 1)
        flows = Array(repeating: FlowNotes(), count: agentCount)
        self.start = start
    }

    /// The form events before `event` (time-ordered, each earlier than it), and `event` as the
    /// app records it: a sign-in started says what the user typed to name the account.
    mutating func lay(_ event: inout Event, actor: WorkloadActor, agent: Int) -> [Event] {
        guard actor == .honest || actor == .sharedDevice else { return [] }
        var flow = flows[agent]
        let previousAt = flow.lastDevice == event.device ? flow.lastAt : nil
        if flow.session != event.flow {
            flow = FlowNotes(session: event.flow)
            if actor == .honest {
                flow.typed = random.chance(perMille: FormTraffic.typedIdentifierPerMille) ? identifierKind() : nil
                flow.autofill = random.chance(perMille: FormTraffic.autofillPerMille)
            }
        }
        let steps = plan(before: &event, passcode: actor == .sharedDevice, flow: &flow)
        let at = event.at.millisecondsSince1970
        flow.last = event.payload
        flow.lastAt = at
        flow.lastDevice = event.device
        flows[agent] = flow
        guard !steps.isEmpty else { return [] }
        let after = Swift.max(previousAt ?? Int64.min, at - WorkloadGenerator.formLeadMilliseconds, start - 1)
        return place(steps, after: after, like: event)
    }

    // MARK: What the user does before each sign-in event

    private mutating func plan(before event: inout Event, passcode: Bool, flow: inout FlowNotes) -> [Step] {
        var steps = Backwards()
        switch event.payload {
        case .signInStarted(let method, _):
            if passcode {
                passcodeEntry(&steps)
            } else {
                passwordEntry(&steps, flow)
                if let kind = flow.typed { event.payload = .signInStarted(method: method, identifierKind: kind) }
            }
        case .signInFailed, .secondFactorRequired, .signInSucceeded(_, false, _):
            // An attempt after the first one of the flow: what changed in the form since.
            switch flow.last {
            case .signInFailed?:
                if passcode {
                    // The kiosk app empties the passcode field after a wrong one.
                    passcodeEntry(&steps)
                    steps.add(.fieldEdited(field: .passcode, filled: false, valid: nil), by: random.between(FormTraffic.clearingMilliseconds))
                } else if random.chance(perMille: FormTraffic.retypeAfterWrongPasswordPerMille) {
                    steps.add(.fieldEdited(field: .password, filled: true, valid: nil), by: random.between(FormTraffic.secretTypingMilliseconds))
                    steps.add(.fieldEdited(field: .password, filled: false, valid: nil), by: random.between(FormTraffic.clearingMilliseconds))
                }
            case .passwordChanged?: passwordEntry(&steps, flow) // the form was done; signing in with the new one
            case .passcodeResetCompleted?: passcodeEntry(&steps)
            default: break
            }
        case .secondFactorFailed, .secondFactorSucceeded:
            switch flow.last {
            case .secondFactorRequired?:
                steps.add(.fieldEdited(field: .secondFactorCode, filled: true, valid: nil), by: random.between(FormTraffic.secretTypingMilliseconds))
            case .secondFactorFailed?:
                steps.add(.fieldEdited(field: .secondFactorCode, filled: true, valid: nil), by: random.between(FormTraffic.secretTypingMilliseconds))
                steps.add(.fieldEdited(field: .secondFactorCode, filled: false, valid: nil), by: random.between(FormTraffic.clearingMilliseconds))
            default: break
            }
        case .passwordResetRequested(let route):
            // The identifier typed on the sign-in form carries over when it is the one asked for.
            let field = FormTraffic.field(route)
            if flow.typed.map(FormTraffic.field) != field {
                steps.add(.fieldEdited(field: field, filled: true, valid: nil), by: random.between(FormTraffic.resetStepMilliseconds))
            }
            steps.add(.passwordResetStarted, by: random.between(FormTraffic.resetStepMilliseconds))
            flow.resetRoute = route
            flow.resetFailure = random.chance(perMille: FormTraffic.resetFailurePerMille) ? resetFailureReason() : nil
        case .temporaryPasswordSent:
            // The request just before failed: its answer, maybe a corrected identifier, the retry.
            guard let reason = flow.resetFailure, let route = flow.resetRoute else { break }
            flow.resetFailure = nil
            steps.add(.passwordResetRequested(route: route), by: random.between(FormTraffic.autofillToSubmitMilliseconds))
            if reason == .unknownAccount {
                let field = FormTraffic.field(route)
                steps.add(.fieldEdited(field: field, filled: true, valid: nil), by: random.between(FormTraffic.resetStepMilliseconds))
                steps.add(.fieldEdited(field: field, filled: false, valid: nil), by: random.between(FormTraffic.clearingMilliseconds))
            }
            steps.add(.passwordResetFailed(reason: reason), by: random.between(FormTraffic.resetRetryMilliseconds))
        default:
            break
        }
        return steps.steps
    }

    /// The identifier (when the flow types one) and the password, typed or autofilled.
    private mutating func passwordEntry(_ steps: inout Backwards, _ flow: FlowNotes) {
        // Sign-in forms check no identifier shape: `valid` stays unset.
        let identifier = flow.typed.map { Payload.fieldEdited(field: FormTraffic.field($0), filled: true, valid: nil) }
        if flow.autofill {
            steps.add(.fieldEdited(field: .password, filled: true, valid: nil), by: random.between(FormTraffic.autofillToSubmitMilliseconds))
            if let identifier { steps.add(identifier, by: random.between(FormTraffic.autofillGapMilliseconds)) }
        } else {
            steps.add(.fieldEdited(field: .password, filled: true, valid: nil), by: random.between(FormTraffic.secretTypingMilliseconds))
            if let identifier { steps.add(identifier, by: random.between(FormTraffic.identifierTypingMilliseconds)) }
        }
    }

    /// A passcode typed, now and then reported in a refused shape before it fits the policy.
    private mutating func passcodeEntry(_ steps: inout Backwards) {
        steps.add(.fieldEdited(field: .passcode, filled: true, valid: true), by: random.between(FormTraffic.passcodeTypingMilliseconds))
        if random.chance(perMille: FormTraffic.invalidPasscodeFirstPerMille) {
            steps.add(.fieldEdited(field: .passcode, filled: true, valid: false), by: random.between(FormTraffic.passcodeTypingMilliseconds))
        }
    }

    private mutating func identifierKind() -> IdentifierKind {
        let roll = random.below(1000)
        if roll < FormTraffic.emailIdentifierPerMille { return .email }
        if roll < FormTraffic.emailIdentifierPerMille + FormTraffic.usernameIdentifierPerMille { return .username }
        return .phone
    }

    private mutating func resetFailureReason() -> PasswordResetFailureReason {
        let roll = random.below(1000)
        if roll < FormTraffic.resetNetworkPerMille { return .networkUnavailable }
        if roll < FormTraffic.resetNetworkPerMille + FormTraffic.resetUnknownAccountPerMille { return .unknownAccount }
        if roll < FormTraffic.resetNetworkPerMille + FormTraffic.resetUnknownAccountPerMille + FormTraffic.resetServerErrorPerMille {
            return .serverError
        }
        return .rateLimited
    }

    static func field(_ kind: IdentifierKind) -> FormField {
        switch kind {
        case .username: .username
        case .email: .email
        case .phone: .phone
        }
    }

    static func field(_ route: ResetRoute) -> FormField { route == .email ? .email : .username }

    // MARK: Times

    /// Dates `steps` after `after` and before the sign-in event `anchor`: at their planned leads
    /// when those fit, else their leads scaled down to the last three quarters of the time there
    /// is (the user reads the screen first), in order, at distinct milliseconds; packed one a
    /// millisecond (keeping the last ones, the closest to the event) when even that is too tight.
    private mutating func place(_ steps: [Step], after: Int64, like anchor: Event) -> [Event] {
        let before = anchor.at.millisecondsSince1970
        let room = before - after - 1
        guard room > 0 else { return [] }
        let kept = Array(steps.suffix(Int(Swift.min(room, Int64(steps.count)))))
        let count = Int64(kept.count)
        var leads = kept.map(\.lead)
        if leads[0] > room {
            if room < 2 * count {
                leads = (0..<kept.count).map { count - Int64($0) }
            } else {
                // Scaled into (room - count) * 3/4, then at least a millisecond apart: the first
                // lead stays below room - count/4, inside the window.
                let available = (room - count) * 3 / 4, longest = leads[0]
                leads = leads.map { Swift.max(1, $0 * available / longest) }
                for index in stride(from: leads.count - 2, through: 0, by: -1) where leads[index] <= leads[index + 1] {
                    leads[index] = leads[index + 1] + 1
                }
            }
        }
        return zip(kept, leads).map { step, lead in
            Event(
                id: random.uuid(), device: anchor.device, at: Timestamp(millisecondsSince1970: before - lead), user: anchor.user,
                flow: anchor.flow, payload: step.payload)
        }
    }

    /// Steps built from the sign-in event backwards: each one added happens `by` milliseconds
    /// before the one added last.
    struct Backwards {
        private(set) var steps: [Step] = []
        private var lead: Int64 = 0

        mutating func add(_ payload: Payload, by gap: Int64) {
            lead += gap
            steps.insert(Step(lead: lead, payload: payload), at: 0)
        }
    }
}
