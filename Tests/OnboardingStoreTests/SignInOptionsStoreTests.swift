import Foundation
import LMDB
import OnboardingModel
import OnboardingProjections
import Testing
@testable import OnboardingStore

/// `sign_in_options_shown` in a store: the device state a query reads, verify's design findings
/// (App Store Review Guideline 4.8) beside an intact log, and a pruned base of state version 6.
@Suite("Sign-in options in a store")
struct SignInOptionsStoreTests {
    /// Screens of kiosk-7 and phone-1: 2 of them keep the guideline, 6 break it, between other events.
    static func log() -> [Event] {
        let shown: [([SignInOption], DevicePlatform?)] = [
            ([.apple, .google, .password], .ios), // fine
            ([.google, .password], nil), // apple missing
            ([.google, .apple], .ios), // apple not first
            ([.google, .apple], .android), // fine
            ([.facebook], .web), // apple missing
            ([.microsoft, .github, .apple], .ios), // apple not first
            ([.other, .passcode], .ios), // apple missing
            ([.github], nil) // apple missing
        ]
        var events: [Event] = []
        for (index, screen) in shown.enumerated() {
            events.append(
                Events.make(
                    2 * index, user: nil, payload: .signInOptionsShown(options: screen.0, platform: screen.1), device: index % 2 == 0 ? "kiosk-7" : "phone-1"))
            events.append(Events.make(2 * index + 1, user: "alice", payload: .signInFailed(method: .password, reason: .invalidPassword)))
        }
        return events
    }

    @Test("verify counts every screen that breaks guideline 4.8 and lists the first five by seq; the report stays valid")
    func verifyReportsDesignFindings() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try OnboardingStore.open(at: directory.store)
        defer { store.close() }
        _ = try await store.append(Self.log())
        let report = try store.verify()
        #expect(report.isValid && report.problems.isEmpty, "a design finding is not damage")
        #expect(report.recordsChecked == 16)
        #expect(report.designFindingCount == 6)
        #expect(report.designFindings.map(\.seq) == [3, 5, 9, 11, 13])
        #expect(report.designFindings[0].findings == [.appleMissing(providers: [.google])])
        #expect(report.designFindings[1].findings == [.appleNotFirst(before: [.google])])
        #expect(
            report.designFindings[3].description
                == "seq 11: Sign in with Apple is not the first provider on iOS (microsoft, github come before it): put Apple first")
    }

    @Test("a store without such screens has no design findings")
    func noFindings() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try OnboardingStore.open(at: directory.store)
        defer { store.close() }
        _ = try await store.append([
            Events.make(0, user: nil, payload: .signInOptionsShown(options: [.apple, .google], platform: .ios)),
            Events.make(1, payload: .signInSucceeded(method: .apple, secondFactor: false))
        ])
        let report = try store.verify()
        #expect(report.isValid && report.designFindingCount == 0 && report.designFindings.isEmpty)
    }

    @Test("the device state a query reads holds the device's last screen, after a reopen too")
    func deviceState() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var store = try OnboardingStore.open(at: directory.store)
        _ = try await store.append(Self.log())
        let expected = SignInOptions(options: [.other, .passcode], platform: .ios, shownAt: Events.start.adding(milliseconds: 12_000))
        #expect(try store.deviceState(device: "kiosk-7").signInOptions == expected)
        #expect(try store.deviceState(device: "phone-1").signInOptions?.options == [.github])
        let before = try store.deviceState(device: "kiosk-7")
        store.close()
        store = try OnboardingStore.open(at: directory.store)
        defer { store.close() }
        #expect(try store.deviceState(device: "kiosk-7") == before, "the snapshot written at close keeps it")
    }

    @Test("a pruned base of state version 6 (no sign-in options) still serves, and the screens after it show")
    func version6BaseOpens() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try await PruneTests.makeStore(directory.store, events: PruneTests.events(60), acknowledged: 60)
        _ = try store.prune(before: PruneTests.farFuture)
        store.close()
        // Rewrite pruned_base as the build before wrote it (its bytes are those of version 7
        // without sign-in options, which the pruned log never had), and drop the regular snapshot.
        try withRawStore(directory.store) { raw in
            let snapshots = try #require(try raw.environment.openDatabase("snapshots", create: false))
            try raw.environment.write { transaction in
                let base = try #require(try transaction.get(snapshots, key: Array("pruned_base".utf8)))
                #expect(Array(base[0..<4]) == StoreLayout.uint32Value(7))
                #expect(!String(decoding: base[12...], as: UTF8.self).contains("signInOptions"))
                try transaction.put(snapshots, key: Array("pruned_base".utf8), value: StoreLayout.uint32Value(6) + Array(base[4...]))
                _ = try transaction.delete(snapshots, key: Array("onboarding_state".utf8))
            }
        }
        let reopened = try OnboardingStore.open(at: directory.store)
        defer { reopened.close() }
        _ = try await reopened.append([
            Events.make(100, user: nil, payload: .signInOptionsShown(options: [.google, .apple], platform: .ios))
        ])
        let options = try reopened.deviceState(device: Events.device).signInOptions
        #expect(options?.guideline48Findings == [.appleNotFirst(before: [.google])])
        let report = try reopened.verify()
        #expect(report.isValid && report.designFindingCount == 1 && report.designFindings.map(\.seq) == [61])
    }
}
