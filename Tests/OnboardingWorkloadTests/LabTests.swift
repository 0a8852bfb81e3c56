import Foundation
import OnboardingLab
import OnboardingModel
import OnboardingProjections
@testable import OnboardingWorkload
import Testing

/// The lockout lab (docs/lab.md): who is who, what a replay counts, and the sweep's frontier.
@Suite("Lockout lab: replay, parties, sweep")
struct LabTests {
    static let start = Timestamp(millisecondsSince1970: 1_796_054_400_000)

    static func event(_ seconds: Double, _ user: String?, _ payload: Payload, device: String = "host-1") -> Event {
        Event(id: UUID(), device: device, at: start.adding(milliseconds: Int64(seconds * 1000)), user: user, flow: nil, payload: payload)
    }

    static func fail(_ seconds: Double, _ user: String?, from address: String? = nil, device: String = "host-1") -> Event {
        event(seconds, user, .signInFailed(method: .password, reason: .invalidPassword, clientAddress: address), device: device)
    }

    static func succeed(_ seconds: Double, _ user: String, from address: String? = nil) -> Event {
        event(seconds, user, .signInSucceeded(method: .password, secondFactor: false, clientAddress: address))
    }

    @Test("the parties of a generated workload are its ground truth, attempt for attempt")
    func generatedPartiesAreTheGroundTruth() {
        var generator = WorkloadGenerator(spec: WorkloadSpec(eventCount: 20_000, seed: 3, userCount: 200, deviceCount: 50))
        var events: [Event] = [], actors: [WorkloadActor] = []
        while let (event, actor) = generator.nextTagged() {
            events.append(event)
            if LockoutInput(event) != nil { actors.append(actor) }
        }
        let log = LabLog(events: events)
        #expect(log.truth == .generated)
        #expect(log.inputs.count == actors.count && log.eventCount == events.count)
        var attackers = 0
        for (party, actor) in zip(log.parties, actors) {
            switch party {
            case .honest: #expect(actor.isHonest || actor == .newcomer)
            case .attacker: #expect(!actor.isHonest && actor != .newcomer); attackers += 1
            case .unknown: Issue.record("a generated attempt with no party")
            }
        }
        #expect(attackers > 100, "the mixed workload attacks")
    }

    @Test("the heuristic of docs/lab.md, rule by rule")
    func heuristic() {
        let log = LabLog(events: [
            Self.fail(0, "alice", from: "192.0.2.1"), // alice mistypes from her address, then signs in: honest
            Self.succeed(10, "alice", from: "192.0.2.1"),
            Self.fail(20, "alice", from: "203.0.113.9"), // an address that never signs anyone in: an attack
            Self.fail(21, "bob", from: "203.0.113.9"),
            Self.fail(30, "mallory"), // an account that never signs in, no address
            Self.fail(40, "alice"), // alice, no address: honest
            Self.event(50, "mallory", .passwordChanged(forced: false)) // neither
        ])
        #expect(log.truth == .heuristic)
        #expect(
            log.parties == [
                .honest(user: "alice"), .honest(user: "alice"), .attacker(attack: "address 203.0.113.9"),
                .attacker(attack: "address 203.0.113.9"), .attacker(attack: "accounts that never sign in"),
                .honest(user: "alice"), .unknown
            ])
    }

    @Test("a refused attempt counts nowhere; honest minutes merge per user; time to the first lock per attack")
    func replayCounts() {
        // mediawiki: 5 failures in 5 min lock a key until its window ends.
        var events = (0..<7).map { Self.fail(Double($0), "alice") } // honest: alice signs in later
        events.append(Self.succeed(100, "alice")) // refused: locked until 300 s
        events.append(Self.succeed(200, "alice")) // refused again: same lock, not counted twice
        events.append(Self.succeed(301, "alice")) // allowed
        events += (0..<6).map { Self.fail(400 + Double($0), "mallory") } // attacker: never signs in
        let result = LabReplay.run(LabLog(events: events), policy: .mediawiki)
        #expect(result.honestUsers == 1 && result.honestUsersLockedOut == 1)
        // Refused at 4 s (5th failure locked; 6th and 7th refused from 5 s), and the success at 100 s and 200 s:
        // one stretch from 5 s to 300 s.
        #expect(result.honestLockoutMilliseconds == 295_000)
        #expect(result.guessesLetThrough == 5 && result.attackerAttemptsRefused == 1)
        #expect(result.lockouts == 2)
        let attack = result.attacks.first { $0.name == "accounts that never sign in" }
        #expect(attack?.timeToFirstLockMilliseconds == 4_000 && attack?.attempts == 6)
        // Under nist (100 consecutive) nothing locks.
        let nist = LabReplay.run(LabLog(events: events), policy: .nist)
        #expect(nist.guessesLetThrough == 6 && nist.honestLockoutMilliseconds == 0 && nist.attacks.first?.timeToFirstLockMilliseconds == nil)
    }

    @Test("fail2ban stops a sprayer that no per-account policy sees")
    func sprayingByAddress() {
        // One address, one guess on each of 60 accounts, 10 s apart; the accounts' owners sign in elsewhere.
        var events = (0..<60).map { Self.fail(Double($0) * 10, "user-\($0)", from: "198.51.100.7") }
        events += (0..<60).map { Self.succeed(1000 + Double($0), "user-\($0)", from: "192.0.2.\($0 + 1)") }
        let log = LabLog(events: events)
        let mediawiki = LabReplay.run(log, policy: .mediawiki), fail2ban = LabReplay.run(log, policy: .fail2ban)
        #expect(mediawiki.guessesLetThrough == 60)
        #expect(fail2ban.guessesLetThrough < 15, "5 per ban of 10 minutes: \(fail2ban.guessesLetThrough)")
        #expect(fail2ban.attacks.first { $0.name == "address 198.51.100.7" }?.timeToFirstLockMilliseconds == 40_000)
        #expect(fail2ban.honestUsersLockedOut == 0)
    }

    @Test("the Pareto frontier equals a brute-force dominance check", arguments: [1, 2, 3, 4, 5] as [UInt64])
    func frontierIsBruteForce(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let points = (0..<300).map { _ in (Double(random.next() % 40), Double(random.next() % 40)) }
        #expect(LabSweep.paretoFrontier(points) == Self.bruteForceFrontier(points))
    }

    @Test("a sweep on a small generated workload: its frontier is the brute-force one, and its recommendation a frontier policy that parses")
    func sweepOnAGeneratedWorkload() throws {
        let events = Array(
            WorkloadGenerator(
                spec: WorkloadSpec(
                    eventCount: 20_000, seed: 5, scenario: .mixed, userCount: 200,
                    deviceCount: 50, policy: .nist)))
        let log = LabLog(events: events)
        var progress: [Int] = []
        let sweep = LabSweep.run(log, grid: LabSweep.Grid(limits: 3...10, windowSeconds: 60...3600, windowSteps: 4)) { done, _ in
            progress.append(done)
        }
        #expect(sweep.results.count == 32 && progress == Array(1...32))
        let points = sweep.results.map { (Double($0.guessesLetThrough), $0.honestLockoutMinutes) }
        #expect(sweep.frontier == Self.bruteForceFrontier(points))
        #expect(sweep.frontier.contains(sweep.recommended))
        // The frontier trades one cost for the other: the policy with the fewest guesses is on it.
        let fewest = sweep.results.map(\.guessesLetThrough).min()!
        #expect(sweep.frontier.contains { sweep.results[$0].guessesLetThrough == fewest })
        #expect(Set(sweep.results.map(\.guessesLetThrough)).count > 1, "the grid's policies differ, or the sweep proves nothing")
        let written = try LockoutPolicy.parse(json: sweep.recommendedPolicy.json)
        #expect(written == sweep.recommendedPolicy)
        #expect(LabReplay.run(log, policy: written) == sweep.results[sweep.recommended])
    }

    /// Every point that no other point dominates, by ascending (x, y), the first of equal points.
    static func bruteForceFrontier(_ points: [(Double, Double)]) -> [Int] {
        let kept = points.indices.filter { index in
            let (x, y) = points[index]
            let dominated = points.indices.contains { other in
                let (ox, oy) = points[other]
                return (ox <= x && oy <= y && (ox < x || oy < y)) || (ox == x && oy == y && other < index)
            }
            return !dominated
        }
        return kept.sorted { (points[$0].0, points[$0].1) < (points[$1].0, points[$1].1) }
    }
}
