import Foundation
import OnboardingLab
import OnboardingModel
import OnboardingProjections
@testable import OnboardingWorkload
import Testing

/// `sign_in_aborted` in the lockout lab (docs/lab.md): an attempt the policy may refuse by its
/// address, never a guess at an account.
@Suite("Lockout lab: aborted attempts")
struct LabAbortedAttemptTests {
    static let scanner = "203.0.113.9"

    /// A scanner's 8 aborted attempts 1 s apart (no user), and alice mistyping and signing in
    /// from her own address a minute later.
    static let events: [Event] =
        (0..<8).map { LabTests.event(Double($0), nil, .signInAborted(reason: .noIdentification, clientAddress: scanner)) } + [
            LabTests.fail(60, "alice", from: "192.0.2.1"), LabTests.succeed(70, "alice", from: "192.0.2.1")
        ]

    @Test("fail2ban refuses the scanner from its 6th attempt; no aborted attempt is a guess let through")
    func fail2banRefusesTheScanner() {
        let log = LabLog(events: Self.events)
        #expect(log.inputs.count == 10)
        #expect(log.parties.prefix(8).allSatisfy { $0 == .attacker(attack: "address \(Self.scanner)") })
        var trace = LabTrace()
        let result = LabReplay.run(log, policy: .fail2ban, trace: &trace)
        #expect(result.guessesLetThrough == 0 && result.attackerAttemptsRefused == 3 && result.lockouts == 1)
        #expect(result.honestUsersLockedOut == 0 && result.honestUsers == 1)
        #expect(result.attacks.map(\.name) == ["address \(Self.scanner)"])
        #expect(result.attacks.first?.attempts == 8 && result.attacks.first?.timeToFirstLockMilliseconds == 4_000)
        // The one lock is on the scanner's address, from its 5th attempt, for fail2ban's 10 minutes.
        #expect(trace.locks.count == 1)
        let lock = trace.locks.first
        #expect(lock?.index == 4 && lock?.key == .address(Self.scanner, user: nil) && lock?.permanent == false)
        #expect(lock?.startMilliseconds == LabTests.start.millisecondsSince1970 + 4_000)
        #expect(lock?.endMilliseconds == LabTests.start.millisecondsSince1970 + 604_000)
        #expect(trace.attempts.map(\.outcome) == Array(repeating: .allowed, count: 5) + Array(repeating: .refused, count: 3) + [.allowed, .allowed])
    }

    @Test(
        "a policy without a rule by address lets every aborted attempt through and locks nothing for them", arguments: [LockoutPolicy.nist, .keycloak, .owasp])
    func perUserPoliciesIgnoreThem(policy: LockoutPolicy) {
        var trace = LabTrace()
        let result = LabReplay.run(LabLog(events: Self.events), policy: policy, trace: &trace)
        #expect(result.guessesLetThrough == 0 && result.attackerAttemptsRefused == 0)
        #expect(trace.attempts.prefix(8).allSatisfy { $0.outcome == .allowed })
        // Only alice's own wrong password may lock (owasp's back-off does): her key, not the scanner's address.
        #expect(trace.locks.allSatisfy { $0.index == 8 && $0.key == .user("alice", device: "host-1", factor: .password) })
    }

    @Test("an aborted attempt with neither address nor user is neither side")
    func heuristicWithoutAddress() {
        // An aborted attempt with no address and no user is neither side (docs/lab.md rule 4).
        let log = LabLog(events: [LabTests.event(0, nil, .signInAborted(reason: .timeout))])
        #expect(log.parties == [.unknown])
    }
}
