import Foundation
import OnboardingModel
import Testing

@testable import OnboardingProjections

/// An identity provider's own lock (`account_locked`, imported from its log) is the real
/// enforcement set beside the lab's replay: it is no failure, and no policy's engine counts it,
/// nor does it change any device's screen.
@Suite("Lockout: account_locked is never counted")
struct LockoutAccountLockedTests {
    static let locks: [Payload] =
        AccountLockSource.allCases.flatMap { source in
            [
                Payload.accountLocked(source: source), .accountLocked(source: source, until: LockoutFormEventsTests.start, clientAddress: "198.51.100.1"),
                .accountLocked(source: source, until: .maximum, clientAddress: "2001:db8::1")
            ]
        }

    @Test("a log with provider locks between its attempts decides exactly as the log without them", arguments: LockoutPolicy.presets)
    func locksChangeNoDecision(policy: LockoutPolicy) {
        var random = SplitMix64(seed: 0xAC10)
        let attempts = LockoutFormEventsTests.attempts(&random)
        var mixed: [Event] = []
        for (index, attempt) in attempts.enumerated() {
            if index % 3 == 0 {
                let payload = Self.locks[index % Self.locks.count]
                mixed.append(Event(id: UUID(), device: attempt.device, at: attempt.at, user: attempt.user, flow: nil, payload: payload))
            }
            mixed.append(attempt)
        }
        let plain = LockoutFormEventsTests.fold(attempts, policy), withLocks = LockoutFormEventsTests.fold(mixed, policy)
        #expect(withLocks.hasSameKeys(as: plain))
        for minutes in stride(from: 0, through: 900, by: 15) {
            let at = LockoutFormEventsTests.start.adding(milliseconds: Int64(minutes) * 60_000)
            #expect(withLocks.entries(at: at) == plain.entries(at: at), "\(policy.name) at +\(minutes) min")
            #expect(withLocks.addressEntries(at: at) == plain.addressEntries(at: at), "\(policy.name) at +\(minutes) min")
        }
        let locksAlone = mixed.filter { if case .accountLocked = $0.payload { return true } else { return false } }
        #expect(locksAlone.count == 1_000)
        #expect(LockoutFormEventsTests.fold(locksAlone, policy).keyCount == 0)
        #expect(locksAlone.allSatisfy { LockoutInput($0) == nil })
    }

    @Test("a provider's lock changes no device's screen: the session of a log with them is the session without them")
    func locksChangeNoScreen() {
        var random = SplitMix64(seed: 0xAC11)
        let attempts = Array(LockoutFormEventsTests.attempts(&random).prefix(600))
        var mixed: [Event] = []
        for (index, attempt) in attempts.enumerated() {
            mixed.append(
                Event(id: UUID(), device: attempt.device, at: attempt.at, user: attempt.user, flow: nil, payload: Self.locks[index % Self.locks.count]))
            mixed.append(attempt)
        }
        func session(_ events: [Event]) -> SessionProjection {
            var state = OnboardingState(policy: .mediawiki)
            for (index, event) in events.enumerated() { state.apply(Record(seq: UInt64(index + 1), event: event, previousHash: .zero, hash: .zero)) }
            return state.session
        }
        #expect(session(mixed) == session(attempts))
    }
}
