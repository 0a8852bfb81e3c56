import Foundation
import OnboardingModel
import OnboardingProjections
@testable import OnboardingStore
import Testing
import TestSupport

/// The projection invariant (docs/projections.md § Snapshots and rebuilds; the rules of the
/// `Projection` protocol), on seeded random logs: state kept incrementally by
/// the store == a fold of the log from scratch == a snapshot loaded and caught up, at random
/// prefixes. Replay a failure with ONBOARDING_TEST_SEED=<seed in the message>.
@Suite(.slow) struct ProjectionPropertyTests {
    static let eventCount = 10_000

    /// Plausible onboarding traffic: many users on a few devices, mostly sign-in flows, times
    /// mostly moving forward with the occasional device clock jumping back.
    struct Workload {
        var random: SplitMix64
        var clock = Timestamp(millisecondsSince1970: 1_796_054_400_000)
        let users = (0..<24).map { "user-\($0)" } + ["Zoë", "josé"]
        let devices = ["kiosk-1", "kiosk-2", "phone-a"]
        var sessions: [UUID] = [UUID()]

        init(seed: UInt64) { random = SplitMix64(seed: seed) }

        mutating func pick<T>(_ items: [T]) -> T { items[Int(random.next() % UInt64(items.count))] }

        mutating func payload() -> Payload {
            let method: SignInMethod = pick([.password, .password, .passcode, .biometric, .apple, .google])
            let second: SecondFactorMethod = pick(SecondFactorMethod.allCases)
            switch random.next() % 40 {
            case 0..<12: return .signInFailed(method: method, reason: pick(SignInFailureReason.allCases + [.invalidPassword, .invalidPasscode]))
            case 12..<16: return .signInStarted(method: method)
            case 16..<19: return .signInSucceeded(method: method, secondFactor: random.next() % 2 == 0)
            case 19..<21: return .secondFactorFailed(method: second)
            case 21: return .secondFactorRequired(method: second)
            case 22: return .secondFactorSucceeded(method: second)
            case 23: return .signedOut(reason: pick(SignOutReason.allCases))
            case 24:
                return .userAdded(
                    displayName: pick(["Alice Martin", "José Álvarez", "王小明", "يوسف الحسن", "Madonna"]),
                    subtitle: random.next() % 2 == 0 ? "Nurse" : nil, imageRef: nil,
                    passcodePolicy: pick(PasscodePolicy.allCases), passcodeMinLength: 4 + Int(random.next() % 4))
            case 25: return .userSelected
            case 26: return .userRemoved(reason: pick(UserRemovalReason.allCases))
            case 27: return .passcodeSet
            case 28: return pick([.passcodeResetStarted, .passcodeResetCompleted, .passcodeChanged])
            case 29: return pick([.biometricEnabled(kind: .face), .biometricDisabled])
            case 30: return .signInThrottled(method: method, retryAfter: clock.adding(milliseconds: 300_000))
            case 31: return .passwordResetRequested(route: pick(ResetRoute.allCases))
            case 32: return .temporaryPasswordSent
            case 33: return .passwordChanged(forced: random.next() % 2 == 0)
            case 34: return .lockoutCleared(reason: pick(LockoutClearReason.allCases))
            case 35: return .fieldValidated(field: pick(FormField.allCases), result: pick(ValidationResult.allCases))
            case 36: return pick([.captchaPresented(purpose: .createAccount), .captchaFailed, .captchaPassed, .captchaAlternativesViewed])
            case 37: return pick([.accountCreationStarted, .accountCreated])
            case 38: return .accountCreationFailed(field: pick([nil, .username]), reason: pick(AccountCreationFailureReason.allCases))
            default:
                guard random.next() % 2 == 0 else { return .userProfileUpdated(displayName: "Renamed", subtitle: nil, imageRef: "img/1.png") }
                return .signInOptionsShown(options: pick([[.apple, .google, .password], [.google, .apple], [.passcode]]), platform: pick([nil, .ios, .android]))
            }
        }

        mutating func event() -> Event {
            let step = Int64(random.next() % 90_000)
            clock = clock.adding(milliseconds: random.next() % 50 == 0 ? -600_000 : step)
            if random.next() % 20 == 0 { sessions.append(UUID()) }
            let user: String? = random.next() % 25 == 0 ? nil : pick(users)
            return Event(id: UUID(), device: pick(devices), at: clock, user: user, flow: pick(sessions), payload: payload())
        }
    }

    @Test func incrementalEqualsRebuildEqualsSnapshotPlusCatchUp() async throws {
        let seed = ProcessInfo.processInfo.environment["ONBOARDING_TEST_SEED"].flatMap(UInt64.init) ?? 0x5EED_2026
        var workload = Workload(seed: seed)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var options = storeOptions()
        options.snapshotEveryEvents = 997
        options.durability = .relaxed
        var store = try OnboardingStore.open(at: directory.store, options: options)
        var checkpoints = Set<Int>((0..<12).map { _ in Int(workload.random.next() % UInt64(Self.eventCount)) + 1 })
        checkpoints.insert(Self.eventCount)

        var written = 0
        var pure = OnboardingState(policy: .mediawiki)
        while written < Self.eventCount {
            let batch = min(Int(workload.random.next() % 40) + 1, Self.eventCount - written)
            let events = (0..<batch).map { _ in workload.event() }
            let results = try await store.append(events)
            for (event, result) in zip(events, results) {
                pure.apply(Record(seq: result.seq, event: event, previousHash: .zero, hash: .zero))
            }
            let before = written
            written += batch
            guard checkpoints.contains(where: { $0 > before && $0 <= written }) else { continue }
            let context = "seed \(seed), after \(written) events"
            let incremental = try store.projectionState()
            #expect(incremental == pure, "\(context): store state differs from the pure fold")
            let rebuilt = try store.rebuildState(policy: .mediawiki)
            #expect(rebuilt == incremental, "\(context): rebuild from scratch differs from incremental state")
            // A rebuild at an earlier prefix equals the fold of that prefix alone.
            let prefix = UInt64(max(1, written / 3))
            var folded = OnboardingState(policy: .mediawiki)
            for record in try store.records(in: 1...prefix) { folded.apply(record) }
            #expect(try store.rebuildState(policy: .mediawiki, through: prefix) == folded, "\(context): prefix \(prefix)")

            // Reopen: the snapshot (written every 997 events) is loaded and the rest replayed.
            store.close()
            store = try OnboardingStore.open(at: directory.store, options: options)
            let snapshotSeq = try #require(try store.decodeSnapshot()).seq
            #expect(snapshotSeq > 0 || written < 997, "\(context): no snapshot was written")
            #expect(try store.projectionState() == incremental, "\(context): snapshot + catch-up differs (snapshot at \(snapshotSeq))")
            #expect(try store.verify().isValid, "\(context)")
        }
        store.close()
    }

    @Test func aSnapshotOfAnotherPolicyOrVersionIsRebuilt() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var workload = Workload(seed: 42)
        var options = storeOptions()
        options.snapshotEveryEvents = 50
        let store = try OnboardingStore.open(at: directory.store, options: options)
        _ = try await store.append((0..<300).map { _ in workload.event() })
        let mediawiki = try store.projectionState()
        store.close()

        // Another policy: the mediawiki snapshot is not used.
        options.lockoutPolicy = .nist
        let nist = try OnboardingStore.open(at: directory.store, options: options)
        let state = try nist.projectionState()
        #expect(state.lockout.policy == .nist)
        #expect(state == (try nist.rebuildState(policy: .nist)))
        #expect(state.session == mediawiki.session || state.lockout != mediawiki.lockout)
        nist.close()

        // A snapshot of another state version: discarded and rebuilt; verify does not complain.
        try withRawStore(directory.store) { raw in
            let snapshots = try #require(try raw.environment.openDatabase("snapshots", create: false))
            try raw.environment.write { transaction throws in
                var value = try #require(try transaction.get(snapshots, key: Array("onboarding_state".utf8)))
                value[3] = 99
                try transaction.put(snapshots, key: Array("onboarding_state".utf8), value: value)
            }
        }
        options.lockoutPolicy = .mediawiki
        let reopened = try OnboardingStore.open(at: directory.store, options: options)
        #expect(try reopened.projectionState() == mediawiki)
        #expect(try reopened.verify().isValid)
        reopened.close()
    }

    @Test func aDamagedSnapshotIsReportedByVerify() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var workload = Workload(seed: 7)
        let store = try OnboardingStore.open(at: directory.store)
        _ = try await store.append(
            (0..<120).map { _ in workload.event() } + [
                Event(
                    id: UUID(), device: "kiosk-1", at: workload.clock, user: "victim", flow: nil,
                    payload: .signInFailed(method: .password, reason: .invalidPassword))
            ])
        store.close()
        // Change what the snapshot says about the state, keeping it valid JSON.
        try withRawStore(directory.store) { raw in
            let snapshots = try #require(try raw.environment.openDatabase("snapshots", create: false))
            try raw.environment.write { transaction throws in
                let value = try #require(try transaction.get(snapshots, key: Array("onboarding_state".utf8)))
                let text = String(decoding: value[12...], as: UTF8.self).replacingOccurrences(of: "\"victim\"", with: "\"someone\"")
                #expect(text.contains("someone"))
                try transaction.put(snapshots, key: Array("onboarding_state".utf8), value: Array(value[..<12]) + Array(text.utf8))
            }
        }
        let reader = try OnboardingStore.open(at: directory.store, options: storeOptions { $0.readOnly = true })
        let report = try reader.verify()
        #expect(
            report.problems.map(\.description) == [
                "seq 121: snapshot: projection snapshot differs from a rebuild of the log; it is rebuilt on the next writable open"
            ])
        reader.close()
    }
}
