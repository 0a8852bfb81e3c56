import Foundation
import Testing
import OnboardingModel
@testable import OnboardingProjections

/// Form input is not a guess: `field_edited` (and the other form events of vocabulary schema 2)
/// never count toward a lockout under any policy, however many there are and wherever they fall.
@Suite("Lockout: form events are never counted")
struct LockoutFormEventsTests {
    static let start = Timestamp(millisecondsSince1970: 1_796_054_400_000)

    /// Sign-in traffic: counted and uncounted failures, throttles, second factors and successes
    /// for three users on two devices, a few seconds apart.
    static func attempts(_ random: inout SplitMix64) -> [Event] {
        let payloads: [Payload] = [
            .signInFailed(method: .password, reason: .invalidPassword), .signInFailed(method: .passcode, reason: .invalidPasscode),
            .signInFailed(method: .password, reason: .unknownUser), .signInFailed(method: .password, reason: .networkUnavailable),
            .secondFactorFailed(method: .totp), .signInStarted(method: .password, identifierKind: .email),
            .signInSucceeded(method: .password, secondFactor: false)
        ]
        var at = start
        return (0..<3_000).map { index in
            at = at.adding(milliseconds: Int64.random(in: 200...20_000, using: &random))
            // Successes are rare, so locks happen.
            var payload = index % 1_000 == 999 ? payloads[6] : payloads[Int.random(in: 0...5, using: &random)]
            // Most attempts come from one of two addresses, so the rules by address lock too.
            let address = ["198.51.100.1", "198.51.100.2", nil][Int.random(in: 0...2, using: &random)]
            if case let .signInFailed(method, reason, _) = payload { payload = .signInFailed(method: method, reason: reason, clientAddress: address) }
            return Event(
                id: UUID(), device: ["kiosk-7", "phone-1"][Int.random(in: 0...1, using: &random)], at: at,
                user: ["ann", "bob", "carol"][Int.random(in: 0...2, using: &random)], flow: nil, payload: payload)
        }
    }

    /// Every form event of schema 2, with every field, flag and reason.
    static let formPayloads: [Payload] =
        FormField.allCases.flatMap { field in
            [
                Payload.fieldEdited(field: field, filled: true, valid: nil), .fieldEdited(field: field, filled: false, valid: false),
                .fieldEdited(field: field, filled: true, valid: true)
            ]
        } + PasswordResetFailureReason.allCases.map { .passwordResetFailed(reason: $0) }
        + [.accountCreationSubmitted, .passwordResetStarted]

    static func fold(_ events: [Event], _ policy: LockoutPolicy) -> LockoutEngine {
        var engine = LockoutEngine(policy: policy)
        for (index, event) in events.enumerated() {
            engine.apply(Record(seq: UInt64(index + 1), event: event, previousHash: .zero, hash: .zero))
        }
        return engine
    }

    @Test("a log with form events between its attempts decides exactly as the log without them", arguments: LockoutPolicy.presets)
    func formEventsChangeNoDecision(policy: LockoutPolicy) {
        var random = SplitMix64(seed: 0xF0E1)
        let attempts = Self.attempts(&random)
        var mixed: [Event] = []
        for attempt in attempts {
            // Up to five form events before each attempt, by the same user on the same device.
            for _ in 0..<Int.random(in: 0...5, using: &random) {
                let payload = Self.formPayloads[Int.random(in: 0...Self.formPayloads.count - 1, using: &random)]
                mixed.append(Event(id: UUID(), device: attempt.device, at: attempt.at, user: attempt.user, flow: nil, payload: payload))
            }
            mixed.append(attempt)
        }
        #expect(mixed.count > attempts.count + 6_000)
        let plain = Self.fold(attempts, policy), withForms = Self.fold(mixed, policy)
        #expect(withForms.hasSameKeys(as: plain))
        var locked = 0
        for minutes in stride(from: 0, through: 900, by: 5) {
            let at = Self.start.adding(milliseconds: Int64(minutes) * 60_000)
            #expect(withForms.entries(at: at) == plain.entries(at: at), "\(policy.name) at +\(minutes) min")
            #expect(withForms.addressEntries(at: at) == plain.addressEntries(at: at), "\(policy.name) at +\(minutes) min")
            locked += (plain.entries(at: at) + plain.addressEntries(at: at)).filter { $0.lockedUntil != nil || $0.permanent }.count
        }
        #expect(locked > 0, "\(policy.name): the traffic must lock some keys, or the comparison proves nothing")
        // A log of form events alone leaves the engine empty.
        #expect(Self.fold(mixed.filter { Self.formPayloads.contains($0.payload) }, policy).keyCount == 0)
    }
}
