import Foundation
import OnboardingModel
import OnboardingProjections
@testable import OnboardingWorkload
import TestSupport
import Testing

/// The generator: determinism, validity, time order, the shape of each scenario, and the rule
/// that attackers never attempt while their key is locked.
@Suite struct WorkloadGeneratorTests {
    static func jsonl(_ spec: WorkloadSpec) -> [UInt8] {
        var bytes: [UInt8] = []
        for event in WorkloadGenerator(spec: spec) {
            EventJSON.encode(event, seq: nil, into: &bytes)
            bytes.append(0x0A)
        }
        return bytes
    }

    static func events(_ spec: WorkloadSpec) -> [(event: Event, actor: WorkloadActor)] {
        var generator = WorkloadGenerator(spec: spec)
        var all: [(event: Event, actor: WorkloadActor)] = []
        while let next = generator.nextTagged() { all.append(next) }
        return all
    }

    @Test(.slow, arguments: WorkloadScenario.allCases) // 1.8 × 10^5 events generated
    func sameSeedGivesTheSameBytesAndAnotherSeedDoesNot(scenario: WorkloadScenario) {
        let spec = WorkloadSpec(eventCount: 10_000, seed: 42, scenario: scenario)
        var other = spec
        other.seed = 43
        let first = Self.jsonl(spec)
        #expect(first == Self.jsonl(spec), "seed 42, \(scenario.rawValue): two runs differ")
        #expect(first != Self.jsonl(other), "seeds 42 and 43 gave the same \(scenario.rawValue) stream")
        #expect(first.filter { $0 == 0x0A }.count == 10_000)
    }

    @Test func theStreamIsPinned() {
        // A change to the generator changes every user's workload and benchmark: make it on purpose.
        let first = WorkloadGenerator(spec: WorkloadSpec(eventCount: 3, seed: 7)).first { _ in true }!
        #expect(
            EventJSON.encode(first, seq: nil) == """
                {"id":"53fcd651-3d02-4efe-a25e-c07a99506761","device":"sprayer-00","at":"2026-01-05T00:00:14.966Z",\
                "user":"user-000000","session":"69c3a276-8879-4369-9a82-e79b05b5faeb","type":"sign_in_failed",\
                "method":"password","reason":"invalid_password"}
                """)
    }

    @Test(.slow, arguments: WorkloadScenario.allCases, [LockoutPolicy.mediawiki, .owasp, .localPasscode]) // 1.8 × 10^5 events
    func everyEventIsValidUniqueAndInTimeOrderPerDevice(scenario: WorkloadScenario, policy: LockoutPolicy) throws {
        var spec = WorkloadSpec(eventCount: 10_000, seed: 9, scenario: scenario)
        spec.policy = policy
        var lastAtByDevice: [String: Timestamp] = [:]
        var ids = Set<UUID>()
        for event in WorkloadGenerator(spec: spec) {
            try event.validate()
            #expect(ids.insert(event.id).inserted, "duplicate id \(event.id)")
            if let last = lastAtByDevice[event.device] { #expect(last <= event.at, "time went back on \(event.device)") }
            lastAtByDevice[event.device] = event.at
            let line = EventJSON.encode(event, seq: nil)
            #expect(try EventJSON.decode(line: line).event == event)
        }
        #expect(ids.count == 10_000)
    }

    @Test func bruteForceIsFailuresOnOneAccountFromOneDevice() {
        let all = Self.events(WorkloadSpec(eventCount: 10_000, seed: 3, scenario: .bruteForce))
        #expect(Set(all.map(\.event.user)).count == 1)
        #expect(Set(all.map(\.event.device)) == [WorkloadNames.bruteForceDevice])
        let unsuccessful = all.filter { [.signInFailed, .signInThrottled].contains($0.event.type) }
        #expect(unsuccessful.count == all.count)
        #expect(all.filter { $0.event.type == .signInFailed }.count >= 150, "mediawiki allows 150 per 48 h")
    }

    @Test func stuffingSpreadsOverManyAccountsAndDevices() {
        let all = Self.events(WorkloadSpec(eventCount: 10_000, seed: 3, scenario: .stuffing))
        let accounts = Set(all.compactMap(\.event.user))
        #expect(accounts.count > 4_000, "one attempt each across many accounts, got \(accounts.count)")
        #expect(all.count < accounts.count * 3, "stuffing tries each account about once")
        #expect(Set(all.map(\.event.device)).count > 200)
        #expect(all.allSatisfy { $0.event.type == .signInFailed || $0.event.type == .signInThrottled })
    }

    @Test func sprayingTriesEveryAccountBeforeTheNextPassword() {
        var spec = WorkloadSpec(eventCount: 3_000, seed: 3, scenario: .spraying)
        spec.userCount = 1_000
        let all = Self.events(spec)
        var perAccount: [String: Int] = [:]
        for (event, _) in all { perAccount[event.user ?? "", default: 0] += 1 }
        #expect(perAccount.count == 1_000)
        #expect(perAccount.values.allSatisfy { $0 == 3 }, "three passwords, one try per account each")
    }

    @Test func honestUsersMostlySucceed() {
        let all = Self.events(WorkloadSpec(eventCount: 20_000, seed: 5, scenario: .honest))
        let successes = all.filter { $0.event.type == .signInSucceeded }.count
        let failures = all.filter { $0.event.type == .signInFailed }.count
        let started = all.filter { $0.event.type == .signInStarted }.count
        #expect(successes * 100 >= started * 95, "\(successes) successes of \(started) sessions")
        #expect(failures * 4 < successes, "typos are occasional: \(failures) failures, \(successes) successes")
        for type in [
            EventType.secondFactorRequired, .secondFactorFailed, .secondFactorSucceeded, .passwordResetRequested,
            .temporaryPasswordSent, .passwordChanged, .signedOut
        ] {
            #expect(all.contains { $0.event.type == type }, "no \(type.rawValue) in honest traffic")
        }
    }

    @Test func sharedDevicesAddUsersThenSignInByPasscode() {
        let all = Self.events(WorkloadSpec(eventCount: 10_000, seed: 5, scenario: .sharedDevice))
        var added = Set<String>()
        for (event, actor) in all {
            #expect(actor == .sharedDevice)
            #expect(event.device.hasPrefix("kiosk-"))
            if event.type == .userAdded { added.insert(event.user ?? "") }
            if event.type == .userSelected { #expect(added.contains(event.user ?? ""), "selected before added") }
        }
        #expect(all.contains { $0.event.payload == .signInFailed(method: .passcode, reason: .invalidPasscode) })
        #expect(all.filter { $0.event.type == .signInSucceeded }.count > 1_000)
    }

    /// Replays the stream into a fresh engine: every attacker failure happened while its key was
    /// free, and every throttled attempt while it was locked.
    @Test(arguments: [LockoutPolicy.mediawiki, .keycloak, .owasp, .nist])
    func attackersNeverAttemptWhileLocked(policy: LockoutPolicy) {
        var spec = WorkloadSpec(eventCount: 20_000, seed: 11, scenario: .mixed)
        spec.policy = policy
        var engine = LockoutEngine(policy: policy)
        var throttled = 0
        var seq: UInt64 = 0
        for (event, actor) in Self.events(spec) {
            let key = engine.key(user: event.user, device: event.device, factor: .password)
            switch event.payload {
            case .signInFailed: #expect(engine.decide(key, at: event.at).isAllowed, "\(actor) guessed while locked")
            case .signInThrottled(_, let retryAfter, _):
                throttled += 1
                let decision = engine.decide(key, at: event.at)
                #expect(!decision.isAllowed, "\(actor) was throttled while free")
                if case .locked(let lock) = decision { #expect(lock.until == retryAfter) }
            default: break
            }
            seq += 1
            engine.apply(Record(seq: seq, event: event, previousHash: .zero, hash: .zero))
        }
        #expect(throttled > 0, "\(policy.name): the brute-forcer should meet the lock")
    }

    @Test func tenMillionIsAStreamNotAnArray() {
        // The generator's state is per party and per kiosk, not per event: a 10^7 spec starts at once.
        var generator = WorkloadGenerator(spec: WorkloadSpec(eventCount: 10_000_000, seed: 1))
        for _ in 0..<1_000 { _ = generator.next() }
        #expect(generator.generatedCount == 1_000)
    }
}
