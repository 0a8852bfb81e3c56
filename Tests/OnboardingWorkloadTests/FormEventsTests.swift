import Foundation
import OnboardingModel
import OnboardingProjections
@testable import OnboardingWorkload
import TestSupport
import Testing

/// The form events laid over the sign-in traffic: they leave that traffic as it was, attackers
/// get none, honest flows get them at the rates docs/workloads.md gives, and every form is sent
/// from an enabled button.
@Suite struct FormEventsTests {
    static func events(_ spec: WorkloadSpec) -> [(event: Event, actor: WorkloadActor)] {
        var generator = WorkloadGenerator(spec: spec)
        var all: [(event: Event, actor: WorkloadActor)] = []
        while let next = generator.nextTagged() { all.append(next) }
        return all
    }

    /// The types the form layers add (a failed reset's retry and a sign-up's inline checks and
    /// outcome are of older types).
    static let formTypes: Set<EventType> = [
        .fieldEdited, .passwordResetStarted, .passwordResetFailed, .passwordResetRequested,
        .accountCreationStarted, .fieldValidated, .accountCreationSubmitted,
        .accountCreationFailed, .accountCreated
    ]

    static func withoutIdentifierKind(_ event: Event) -> Event {
        var event = event
        if case .signInStarted(let method, _) = event.payload { event.payload = .signInStarted(method: method) }
        return event
    }

    @Test(arguments: WorkloadScenario.allCases, [LockoutPolicy.mediawiki, .owasp])
    func theSignInTrafficIsTheSameWithAndWithoutFormEvents(scenario: WorkloadScenario, policy: LockoutPolicy) {
        var spec = WorkloadSpec(eventCount: 6_000, seed: 21, scenario: scenario, policy: policy)
        let with = Self.events(spec).map(\.event)
        spec.formEvents = false
        let without = Self.events(spec).map(\.event)
        #expect(with.count == 6_000 && without.count == 6_000)
        let signInIDs = Set(without.map(\.id))
        let signIn = with.filter { signInIDs.contains($0.id) }
        // Every sign-in event comes, in the same order and otherwise byte for byte the same, and
        // only sign_in_started gains a field.
        #expect(signIn.map(Self.withoutIdentifierKind) == Array(without.prefix(signIn.count)))
        for event in with where !signInIDs.contains(event.id) {
            #expect(Self.formTypes.contains(event.type), "\(event.type.rawValue) is not a form event")
        }
        let attacks: Set<WorkloadScenario> = [.bruteForce, .stuffing, .spraying]
        #expect(
            attacks.contains(scenario) ? signIn.count == with.count : signIn.count < with.count * 9 / 10,
            "\(scenario.rawValue): \(with.count - signIn.count) form events of \(with.count)")
    }

    @Test func attackersFillNoForms() {
        // Scripts that send the sign-in request themselves (no form, no sign_in_started).
        var spec = WorkloadSpec(eventCount: 20_000, seed: 4, scenario: .mixed)
        spec.userCount = 300
        for (event, actor) in Self.events(spec) where !actor.isHonest {
            #expect([.signInFailed, .signInThrottled].contains(event.type), "\(actor.rawValue) recorded \(event.type.rawValue)")
        }
    }

    @Test func theStreamWithFormEventsIsPinned() {
        // A change to the form layers changes every user's workload: make it on purpose.
        let first = WorkloadGenerator(spec: WorkloadSpec(eventCount: 3, seed: 7, scenario: .honest)).map { EventJSON.encode($0, seq: nil) }
        #expect(
            first == [
                """
                {"id":"a065b6b6-e3d5-44db-ba97-0b4587c28c0f","device":"device-00052","at":"2026-01-05T00:56:21.748Z",\
                "user":"user-000452","session":"e6984080-bab1-4a02-953a-eb70673e29cb","type":"field_edited","field":"password","filled":true}
                """,
                """
                {"id":"225ec07a-9950-4761-a9c3-a27688795369","device":"device-00052","at":"2026-01-05T00:56:24.520Z",\
                "user":"user-000452","session":"e6984080-bab1-4a02-953a-eb70673e29cb","type":"sign_in_started","method":"password"}
                """,
                """
                {"id":"f5ba4eb7-28dd-432c-ab03-54df4a45b34e","device":"device-00052","at":"2026-01-05T00:56:26.245Z",\
                "user":"user-000452","session":"e6984080-bab1-4a02-953a-eb70673e29cb","type":"second_factor_required","method":"totp"}
                """
            ])
        // The sign-in events are those of the stream without form events.
        var spec = WorkloadSpec(eventCount: 2, seed: 7, scenario: .honest)
        spec.formEvents = false
        #expect(
            WorkloadGenerator(spec: spec).map(\.id.uuidString).map { $0.lowercased() }
                == ["225ec07a-9950-4761-a9c3-a27688795369", "f5ba4eb7-28dd-432c-ab03-54df4a45b34e"])
    }

    // MARK: Rates

    struct Sessions {
        var bySession: [UUID: [(event: Event, actor: WorkloadActor)]] = [:]
        var order: [UUID] = []

        init(_ all: [(event: Event, actor: WorkloadActor)]) {
            for entry in all {
                guard let session = entry.event.flow else { continue }
                if bySession[session] == nil { order.append(session) }
                bySession[session, default: []].append(entry)
            }
        }

        var flows: [[(event: Event, actor: WorkloadActor)]] { order.map { bySession[$0]! } }
    }

    static func isEdit(_ event: Event, _ field: FormField, filled: Bool) -> Bool {
        if case .fieldEdited(field, filled, _) = event.payload { true } else { false }
    }

    @Test func honestSignInsFillTheirFormsAtTheDocumentedRates() {
        let all = Self.events(WorkloadSpec(eventCount: 60_000, seed: 17, scenario: .honest))
        let flows = Sessions(all).flows.filter { $0[0].actor == .honest }
        var passwordStarts = 0, withPassword = 0, typed = 0, emails = 0, autofilled = 0
        var retries = 0, retyped = 0, resets = 0, resetStarts = 0, failures: [PasswordResetFailureReason] = []
        for flow in flows {
            let events = flow.map(\.event)
            for (index, event) in events.enumerated() {
                let before = events[..<index]
                switch event.payload {
                case .signInStarted(.password, let kind):
                    passwordStarts += 1
                    if before.contains(where: { Self.isEdit($0, .password, filled: true) }) { withPassword += 1 }
                    guard let kind else {
                        #expect(!before.contains { Self.isEdit($0, .email, filled: true) || Self.isEdit($0, .username, filled: true) })
                        continue
                    }
                    typed += 1
                    if kind == .email { emails += 1 }
                    let field = FormTraffic.field(kind)
                    if let identifier = before.last(where: { Self.isEdit($0, field, filled: true) }),
                        let password = before.last(where: { Self.isEdit($0, .password, filled: true) }),
                        password.at.millisecondsSince1970 - identifier.at.millisecondsSince1970 <= 300
                    {
                        autofilled += 1
                    }
                case .signInFailed(.password, .invalidPassword, _):
                    // The next attempt, unless the lockout refused it: was the field emptied first?
                    guard
                        let next = events[(index + 1)...].firstIndex(where: {
                            [.signInFailed, .signInSucceeded, .secondFactorRequired, .signInThrottled].contains($0.type)
                        }),
                        events[next].type != .signInThrottled
                    else { continue }
                    retries += 1
                    if events[(index + 1)..<next].contains(where: { Self.isEdit($0, .password, filled: false) }) { retyped += 1 }
                case .passwordResetRequested:
                    guard !before.contains(where: { $0.type == .passwordResetRequested }) else { continue }
                    resets += 1
                    if before.last?.type == .passwordResetStarted || before.dropLast().last?.type == .passwordResetStarted { resetStarts += 1 }
                case .passwordResetFailed(let reason):
                    failures.append(reason)
                default: break
                }
            }
        }
        func perMille(_ part: Int, _ whole: Int) -> Int { whole == 0 ? 0 : part * 1000 / whole }
        #expect(passwordStarts > 8_000)
        #expect(perMille(withPassword, passwordStarts) >= 995, "\(withPassword) of \(passwordStarts) sign-ins had a password filled")
        #expect((510...590).contains(perMille(typed, passwordStarts)), "typed identifiers: \(typed) of \(passwordStarts)")
        #expect((560...640).contains(perMille(emails, typed)), "emails: \(emails) of \(typed)")
        #expect((260...340).contains(perMille(autofilled, typed)), "autofilled: \(autofilled) of \(typed)")
        #expect((190...310).contains(perMille(retyped, retries)), "cleared and retyped: \(retyped) of \(retries)")
        #expect(resets > 300 && resetStarts == resets, "\(resetStarts) of \(resets) resets opened \"Forgot password?\"")
        #expect((50...110).contains(perMille(failures.count, resets)), "failed resets: \(failures.count) of \(resets)")
        let networkOrUnknown = failures.filter { $0 == .networkUnavailable || $0 == .unknownAccount }.count
        #expect(perMille(networkOrUnknown, failures.count) >= 750, "\(failures)")
        #expect(failures.filter { $0 == .rateLimited }.count * 10 <= failures.count, "rate_limited is rare: \(failures)")
    }

    @Test func sharedDevicePasscodesAreFilledAndNowAndThenOfTheWrongShapeFirst() {
        let all = Self.events(WorkloadSpec(eventCount: 40_000, seed: 23, scenario: .sharedDevice))
        var starts = 0, invalidFirst = 0, wrong = 0, cleared = 0
        for flow in Sessions(all).flows {
            let events = flow.map(\.event)
            for (index, event) in events.enumerated() {
                switch event.payload {
                case .signInStarted(.passcode, nil):
                    starts += 1
                    let since = events[..<index].lastIndex { $0.type == .userSelected } ?? 0
                    let edits = events[since..<index].filter { $0.type == .fieldEdited }.map(\.payload)
                    #expect(edits.last == .fieldEdited(field: .passcode, filled: true, valid: true), "\(edits)")
                    if edits.contains(.fieldEdited(field: .passcode, filled: true, valid: false)) { invalidFirst += 1 }
                case .signInFailed(.passcode, .invalidPasscode, _):
                    guard let next = events[(index + 1)...].firstIndex(where: { [.signInFailed, .signInSucceeded, .signInThrottled].contains($0.type) }),
                        events[next].type != .signInThrottled
                    else { continue }
                    wrong += 1
                    let edits = events[(index + 1)..<next].map(\.payload)
                    if edits.first == .fieldEdited(field: .passcode, filled: false, valid: nil),
                        edits.last == .fieldEdited(field: .passcode, filled: true, valid: true)
                    {
                        cleared += 1
                    }
                default: break
                }
            }
        }
        #expect(starts > 5_000)
        #expect((95...145).contains(invalidFirst * 1000 / starts), "invalid shape first: \(invalidFirst) of \(starts)")
        #expect(wrong > 300 && cleared == wrong, "cleared after a wrong passcode: \(cleared) of \(wrong)")
    }

    @Test func newcomersCreateAccountsAtAModestShare() {
        let all = Self.events(WorkloadSpec(eventCount: 60_000, seed: 29, scenario: .honest))
        let signIn = all.filter { $0.actor == .honest && ![EventType.fieldEdited, .passwordResetStarted, .passwordResetFailed].contains($0.event.type) }
        let flows = Sessions(all).flows.filter { $0[0].actor == .newcomer }
        // One sign-up per 100 planned sign-in events; the lanes' sessions run longer than planned.
        #expect((5...12).contains(flows.count * 1000 / signIn.count), "\(flows.count) sign-ups, \(signIn.count) sign-in events")
        var failed = 0
        for flow in flows {
            let events = flow.map(\.event)
            #expect(events.first?.type == .accountCreationStarted)
            #expect(Set(events.map(\.device)).count == 1 && events[0].device.hasPrefix("signup-"))
            guard case .accountCreated = events.last?.payload, let user = events.last?.user else {
                Issue.record("a sign-up ends with \(events.last?.type.rawValue ?? "nothing")")
                continue
            }
            #expect(user.hasPrefix("newcomer-") && events.dropLast().allSatisfy { $0.user == nil })
            // Every outcome answers a sent form, and the form was filled when it was sent.
            for (index, event) in events.enumerated() where [.accountCreationFailed, .accountCreated].contains(event.type) {
                #expect(events[index - 1].type == .accountCreationSubmitted)
            }
            #expect(events.contains { Self.isEdit($0, .email, filled: true) } && events.contains { Self.isEdit($0, .password, filled: true) })
            if events.contains(where: { $0.type == .accountCreationFailed }) { failed += 1 }
        }
        #expect(failed > 0 && failed * 10 < flows.count, "\(failed) of \(flows.count) sign-ups failed once")
    }

    /// Replays each flow on a screen of its own (its session as the device, so flows sharing a
    /// device do not mix): every form is sent while its submit button is enabled.
    @Test(arguments: [WorkloadScenario.honest, .sharedDevice, .mixed])
    func everyFormIsSentFromAnEnabledButton(scenario: WorkloadScenario) {
        let spec = WorkloadSpec(eventCount: 30_000, seed: 31, scenario: scenario)
        var session = SessionProjection()
        var lockout = LockoutEngine(policy: spec.policy, acrossDevices: true)
        var lastOnDevice: [String: Int64] = [:]
        var sent = 0, squeezed = 0
        for (seq, (event, actor)) in Self.events(spec).enumerated() where actor.isHonest {
            let device = event.device
            defer { lastOnDevice[device] = event.at.millisecondsSince1970 }
            var own = event
            own.device = event.flow.map { "flow-" + $0.uuidString } ?? event.device
            if [.signInStarted, .accountCreationSubmitted, .passwordResetRequested].contains(event.type) {
                sent += 1
                let flow = session.session(device: own.device).flow
                if !flow.submitEnabled {
                    // Only where the sign-in traffic left no time to fill the form: another flow
                    // on the same device ended the moment this one began.
                    let gap = event.at.millisecondsSince1970 - (lastOnDevice[device] ?? Int64.min / 2)
                    #expect(
                        event.type == .signInStarted && gap <= 2,
                        "\(event.type.rawValue) on \(flow.screen.rawValue) (\(flow.state.rawValue)), \(gap) ms after the device's last event")
                    squeezed += 1
                }
            }
            let record = Record(seq: UInt64(seq + 1), event: own, previousHash: .zero, hash: .zero)
            lockout.apply(record)
            session.apply(record, lockout: lockout)
        }
        #expect(sent > 2_000)
        #expect(squeezed * 200 < sent, "\(squeezed) of \(sent) forms sent with the button disabled")
    }

    @Test(.slow) func formEventsChangeNoLockoutFigure() { // replays the effectiveness simulation again
        var parameters = LockoutEffectivenessTests.parameters
        parameters.formEvents = false
        let without = LockoutEffectiveness.report(parameters)
        for (with, without) in zip(LockoutEffectivenessTests.rows, without) {
            var same = with
            same.events = without.events
            #expect(same == without, "\(with.policy)")
            #expect(with.events > without.events, "\(with.policy): the honest traffic's form events are replayed too")
        }
    }
}
