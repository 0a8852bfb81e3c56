import Foundation
import LMDB
import OnboardingModel
import OnboardingProjections
import Testing
@testable import OnboardingStore

/// `prune(before:)`: only acknowledged records older than the date go, the chain verifies from
/// the hash they leave, and the projections equal those of a store that never pruned.
@Suite("prune(before:) removes the acknowledged prefix")
struct PruneTests {
    static let sessions = (0..<5).map { _ in UUID() }
    static let users = ["alice", "bob", "carol"]
    static let farFuture = Timestamp(millisecondsSince1970: 4_000_000_000_000)

    /// `count` events that move every projection: users added, failed passwords (lockouts),
    /// successes and sign-outs, spread over users and sessions, the n-th at `start + n s`.
    static func events(_ count: Int, from first: Int = 0) -> [Event] {
        (first..<first + count).map { index in
            let user = users[index % users.count]
            let session = sessions[(index / 7) % sessions.count]
            let payload: Payload =
                switch index % 11 {
                case 0: .userAdded(displayName: "User \(user)", subtitle: nil, imageRef: nil, passcodePolicy: .numeric, passcodeMinLength: 6)
                case 1, 2, 3, 5, 6: .signInFailed(method: .password, reason: .invalidPassword)
                case 4: .signInStarted(method: .password)
                case 7: .signInSucceeded(method: .password, secondFactor: false)
                case 8: .userSelected
                case 9: .signedOut(reason: .user)
                default: .signInFailed(method: .passcode, reason: .invalidPasscode)
                }
            return Events.make(index, user: user, session: session, payload: payload)
        }
    }

    /// A store at `path` holding `events`, acknowledged through `acknowledged`.
    static func makeStore(
        _ path: String, events: [Event], acknowledged: UInt64,
        snapshotEvery: Int = 10_000
    ) async throws -> OnboardingStore {
        let store = try OnboardingStore.open(at: path, options: storeOptions { $0.snapshotEveryEvents = snapshotEvery })
        var index = 0
        while index < events.count {
            _ = try await store.append(Array(events[index..<min(index + 40, events.count)]))
            index += 40
        }
        try store.setSyncCursor(acknowledged)
        return store
    }

    @Test("only acknowledged records go, with every index entry; the rest is untouched")
    func onlyAcknowledged() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let events = Self.events(200)
        let store = try await Self.makeStore(directory.store, events: events, acknowledged: 120)
        let before = try store.allRecords()

        let result = try store.prune(before: Self.farFuture)

        #expect(result.removed == 1...120)
        #expect(result.recordCount == 120)
        #expect(result.limit == .acknowledged(120))
        #expect(result.prunedThrough == PrunePoint(seq: 120, hash: before[119].hash))
        #expect(result.freedBytesEstimate > 120 * 100)
        #expect(try store.storedRecord(at: 120) == nil)
        #expect(try store.records(in: 1...200) == Array(before[120...]))
        #expect(try store.seq(of: events[0].id) == nil)
        #expect(try store.seq(of: events[120].id) == 121)
        #expect(try store.records(user: "alice").allSatisfy { $0.seq > 120 })
        #expect(try store.records(user: "alice").count == before[120...].filter { $0.event.user == "alice" }.count)
        #expect(try store.records(flow: Self.sessions[0]).allSatisfy { $0.seq > 120 })
        #expect(try store.head().seq == 200)
        #expect(try store.prunedThrough() == result.prunedThrough)
        store.close()

        // No index entry of a pruned record is left behind.
        try withRawStore(directory.store) { raw in
            try raw.environment.read { transaction throws in
                #expect(try transaction.count(raw.events) == 80)
                #expect(try transaction.count(raw.byID) == 80)
                for database in [raw.byUser, raw.bySession] {
                    try transaction.withCursor(database) { cursor in
                        var entry = try cursor.first()
                        while let current = entry {
                            #expect(number(current.key.suffix(8)) > 120, "\(database.name) keeps an entry of a pruned record")
                            entry = try cursor.next()
                        }
                    }
                }
            }
        }
    }

    @Test("the prune stops at the first record not older than the date")
    func stopsAtTheDate() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try await Self.makeStore(directory.store, events: Self.events(100), acknowledged: 100)
        defer { store.close() }
        // Events are one second apart from `Events.start`: 50 are older than start + 50 s.
        let result = try store.prune(before: Events.start.adding(milliseconds: 50_000))
        #expect(result.removed == 1...50)
        #expect(result.limit == .date)
        #expect(try store.stats().eventCount == 50)
        #expect(try store.stats().firstAt == Events.start.adding(milliseconds: 50_000))
        #expect(try store.stats().prunedThrough?.seq == 50)
    }

    @Test("with nothing acknowledged nothing goes, and the result says why")
    func nothingAcknowledged() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try await Self.makeStore(directory.store, events: Self.events(30), acknowledged: 0)
        defer { store.close() }
        let result = try store.prune(before: Self.farFuture)
        #expect(result.removed == nil && result.recordCount == 0)
        #expect(result.limit == .nothingAcknowledged)
        #expect(try store.prunedThrough() == nil)
        #expect(try store.allRecords().count == 30)
    }

    @Test("verify passes after pruning and checks the chain from the hash the pruned records left")
    func verifyPasses() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try await Self.makeStore(directory.store, events: Self.events(150), acknowledged: 90, snapshotEvery: 25)
        let hash90 = try #require(try store.storedRecord(at: 90)).hash
        _ = try store.prune(before: Self.farFuture, batchRecords: 40)
        _ = try await store.append(Self.events(10, from: 150))
        store.close()

        let reopened = try OnboardingStore.open(at: directory.store, options: storeOptions { $0.readOnly = true })
        let report = try reopened.verify()
        reopened.close()
        #expect(report.isValid, "\(report.problems)")
        #expect(report.recordsChecked == 70)
        #expect(report.headSeq == 160)
        #expect(report.prunedThrough == PrunePoint(seq: 90, hash: hash90))
        #expect(report.snapshotSeq != nil, "the snapshot is checked against the base snapshot and the log")
    }

    @Test("signed heads below the prune point are listed as signature-only, not counted as checked; one at the prune point is")
    func signedHeadsBelowThePrunePoint() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try await Self.makeStore(directory.store, events: Self.events(60), acknowledged: 40)
        for seq: UInt64 in [10, 20, 40, 50] { _ = try store.signHead(through: seq) }
        _ = try store.prune(before: Self.farFuture)
        var report = try store.verify()
        #expect(report.isValid, "\(report.problems)")
        #expect(report.prunedSignedHeadSeqs == [10, 20], "their records are gone: only the signatures are checked")
        #expect(report.prunePointIsSigned, "the head at seq 40 signs the hash pruned_through keeps")
        #expect(report.signedHeadSeq == 50 && report.signedHeadCount == 4)
        store.close()

        // Without the heads at and above the prune point, no head is checked against the log.
        try withRawStore(directory.store) { raw in
            // Opened before the write: opening a database begins a transaction of its own.
            let signed = try #require(try raw.environment.openDatabase("signed_heads", create: false))
            try raw.environment.write { transaction in
                for seq: UInt64 in [40, 50, 60] { try transaction.delete(signed, key: Keys.seq(seq)) }
            }
        }
        let reopened = try OnboardingStore.open(at: directory.store, options: storeOptions { $0.readOnly = true })
        defer { reopened.close() }
        report = try reopened.verify()
        #expect(report.isValid, "\(report.problems)")
        #expect(report.prunedSignedHeadSeqs == [10, 20])
        #expect(!report.prunePointIsSigned)
        #expect(report.signedHeadSeq == nil, "a head over a pruned record vouches for nothing the store holds")
    }

    @Test("a rebuild from the base snapshot and the remaining log equals the state before pruning, and a never-pruned store's")
    func rebuildEqualsState() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let events = Self.events(300)
        let store = try await Self.makeStore(directory.appending("pruned"), events: events, acknowledged: 250, snapshotEvery: 60)
        let control = try await Self.makeStore(directory.appending("control"), events: events, acknowledged: 0)
        defer { control.close() }
        let statePrePrune = try store.projectionState()
        #expect(statePrePrune == (try control.rebuildState(policy: .mediawiki)))

        _ = try store.prune(before: Self.farFuture, batchRecords: 33)

        #expect(try store.projectionState() == statePrePrune)
        #expect(try store.rebuildState(policy: .mediawiki) == statePrePrune)
        // Through a seq between the prune point and the head: base + part of the log.
        #expect(try store.rebuildState(policy: .mediawiki, through: 280) == (try control.rebuildState(policy: .mediawiki, through: 280)))
        #expect(throws: StoreError.self) { try store.rebuildState(policy: .mediawiki, through: 100) }
        #expect(throws: StoreError.self) { try store.rebuildState(policy: .nist) }

        // Later events fold the same on both.
        let more = Self.events(40, from: 300)
        _ = try await store.append(more)
        _ = try await control.append(more)
        #expect(try store.projectionState() == (try control.projectionState()))
        store.close()

        // Without the regular snapshot, an open rebuilds from the base snapshot + the log.
        try withRawStore(directory.appending("pruned")) { raw in
            let snapshots = try #require(try raw.environment.openDatabase("snapshots", create: false))
            try raw.environment.write { transaction throws in
                #expect(try transaction.delete(snapshots, key: Array("onboarding_state".utf8)))
            }
        }
        let reopened = try OnboardingStore.open(at: directory.appending("pruned"))
        defer { reopened.close() }
        #expect(try reopened.projectionState() == (try control.projectionState()))
        #expect(try reopened.verify().isValid)
    }

    @Test("batches give the same store as one transaction, report progress, and a second prune continues")
    func batchesAndResume() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let events = Self.events(120)
        // One store copied: records name users by the store's own pseudonyms, so two stores
        // made separately would hash differently.
        let original = try await Self.makeStore(directory.appending("single"), events: events, acknowledged: 100)
        original.close()
        try FileManager.default.copyItem(atPath: directory.appending("single"), toPath: directory.appending("batched"))
        let single = try OnboardingStore.open(at: directory.appending("single"), options: storeOptions { $0.snapshotEveryEvents = 10_000 })
        defer { single.close() }
        let batched = try OnboardingStore.open(at: directory.appending("batched"), options: storeOptions { $0.snapshotEveryEvents = 10_000 })
        defer { batched.close() }

        _ = try single.prune(before: Self.farFuture)
        var seen: [UInt64] = []
        _ = try batched.prune(before: Events.start.adding(milliseconds: 45_000), batchRecords: 10) { seen.append($0.throughSeq) }
        #expect(seen == [10, 20, 30, 40, 45])
        _ = try batched.prune(before: Self.farFuture, batchRecords: 30) { seen.append($0.throughSeq) }
        #expect(seen.suffix(2) == [75, 100])

        #expect(try batched.prunedThrough() == (try single.prunedThrough()))
        #expect(try batched.projectionState() == (try single.projectionState()))
        #expect(try batched.allRecords() == (try single.allRecords()))
        #expect(try batched.verify().isValid)
        // Nothing more may go: the rest is unacknowledged.
        #expect(try batched.prune(before: Self.farFuture).removed == nil)
    }

    @Test("a damaged record in the range stops the prune before anything is removed")
    func damageStopsThePrune() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try await Self.makeStore(directory.store, events: Self.events(60), acknowledged: 60)
        store.close()
        try withRawStore(directory.store) { raw in
            try raw.environment.write { transaction throws in
                var value = try #require(try transaction.get(raw.events, key: Keys.seq(25)))
                value[value.count - 1] ^= 0x01
                try transaction.put(raw.events, key: Keys.seq(25), value: value)
            }
        }
        let reopened = try OnboardingStore.open(at: directory.store, options: storeOptions { $0.maintainProjections = false })
        defer { reopened.close() }
        let error = #expect(throws: StoreError.self) { try reopened.prune(before: Self.farFuture, batchRecords: 100) }
        #expect(error?.code == .corrupted && error?.seq == 25)
        #expect(try reopened.prunedThrough() == nil)
        #expect(try reopened.head().seq == 60)
    }

    @Test("a changed prune point, or a record left at or below it, is named by verify")
    func tamperedPrunePoint() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try await Self.makeStore(directory.store, events: Self.events(50), acknowledged: 30)
        _ = try store.prune(before: Self.farFuture)
        store.close()
        let pruned = Array("pruned_through".utf8)
        try withRawStore(directory.store) { raw in
            try raw.environment.write { transaction throws in
                var value = try #require(try transaction.get(raw.meta, key: pruned))
                value[value.count - 1] ^= 0x01
                try transaction.put(raw.meta, key: pruned, value: value)
            }
        }
        var report = try OnboardingStore.open(at: directory.store, options: storeOptions { $0.readOnly = true }).verify()
        #expect(!report.isValid)
        #expect(report.problems.first?.seq == 31)
        #expect(report.problems.first?.message.contains("prune point") == true)

        // A prune point beyond the server's acknowledgement: records went before the server held them.
        try withRawStore(directory.store) { raw in
            try raw.environment.write { transaction throws in
                try transaction.put(raw.meta, key: Array("sync_cursor".utf8), value: Keys.seq(20))
            }
        }
        report = try OnboardingStore.open(at: directory.store, options: storeOptions { $0.readOnly = true }).verify()
        #expect(report.problems.contains { $0.seq == 30 && $0.message.contains("acknowledged only seq 20") })
    }
}

/// A store pruned by the build before vocabulary schema 2 keeps a `pruned_base` of projection
/// state version 5, without the session's form fields and biometric badges: it must still open.
@Suite("A pruned base of state version 5 still serves")
struct PrunedBaseVersion5Tests {
    /// `value` (a decoded JSON tree) without the members state versions 6 and 7 added.
    static func stripped(_ value: Any) -> Any {
        if var object = value as? [String: Any] {
            object["biometrics"] = nil // the session's table
            object = strippedOfVersion7(object)
            object["signInOptions"] = nil // a device's (version 7)
            if object["screen"] != nil { // a flow (a user profile has a `biometric` of its own, kept)
                for key in ["fields", "identifierKind", "biometric"] { object[key] = nil }
            }
            return object.mapValues(stripped)
        }
        if let array = value as? [Any] { return array.map(stripped) }
        return value
    }

    /// `object` without the session members state version 7 added (the CAPTCHA setting and count).
    static func strippedOfVersion7(_ object: [String: Any]) -> [String: Any] {
        var object = object
        object["captchaAlternativesAfterFailures"] = nil
        object["captchaFailures"] = nil
        return object
    }

    @Test("a base of state version 6 opens: no CAPTCHA failures counted, the store's setting")
    func version6BaseOpens() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let events = PruneTests.events(200)
        let store = try await PruneTests.makeStore(directory.store, events: events, acknowledged: 150)
        _ = try store.prune(before: PruneTests.farFuture)
        let expected = try store.deviceState(device: Events.device)
        store.close()
        try withRawStore(directory.store) { raw in
            let snapshots = try #require(try raw.environment.openDatabase("snapshots", create: false))
            try raw.environment.write { transaction in
                let base = try #require(try transaction.get(snapshots, key: Array("pruned_base".utf8)))
                var tree = try #require(try JSONSerialization.jsonObject(with: Data(base[12...])) as? [String: Any])
                tree["session"] = Self.strippedOfVersion7(try #require(tree["session"] as? [String: Any]))
                let old = try JSONSerialization.data(withJSONObject: tree)
                #expect(!String(decoding: old, as: UTF8.self).contains("captchaFailures"))
                try transaction.put(
                    snapshots, key: Array("pruned_base".utf8),
                    value: StoreLayout.uint32Value(6) + Array(base[4..<12]) + Array(old))
                _ = try transaction.delete(snapshots, key: Array("onboarding_state".utf8))
            }
        }
        let reopened = try OnboardingStore.open(at: directory.store, options: storeOptions { $0.captchaAlternativesAfterFailures = 4 })
        defer { reopened.close() }
        #expect(try reopened.deviceState(device: Events.device) == expected)
        #expect(try reopened.projectionState().session.captchaAlternativesAfterFailures == 4)
    }

    @Test("opened, caught up and equal to a store that never pruned; the badge comes back from the user list")
    func version5BaseOpens() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var events = PruneTests.events(200)
        // Alice turns Face ID on early (pruned away), then the log goes on.
        events.insert(Events.make(1, user: "alice", payload: .biometricEnabled(kind: .face)), at: 1)
        events.append(Events.make(300, user: "alice", session: PruneTests.sessions[0], payload: .userSelected))
        let store = try await PruneTests.makeStore(directory.store, events: events, acknowledged: 150)
        _ = try store.prune(before: PruneTests.farFuture)
        let expected = try store.deviceState(device: Events.device)
        #expect(expected.flow.user == "alice" && expected.flow.biometric == .face)
        store.close()

        // Rewrite pruned_base as the build before wrote it, and drop the regular snapshot.
        try withRawStore(directory.store) { raw in
            let snapshots = try #require(try raw.environment.openDatabase("snapshots", create: false))
            try raw.environment.write { transaction in
                let base = try #require(try transaction.get(snapshots, key: Array("pruned_base".utf8)))
                #expect(Array(base[0..<4]) == StoreLayout.uint32Value(UInt32(OnboardingState.stateVersion)))
                let tree = try JSONSerialization.jsonObject(with: Data(base[12...]))
                let old = try JSONSerialization.data(withJSONObject: Self.stripped(tree))
                #expect(!String(decoding: old, as: UTF8.self).contains("biometrics"))
                try transaction.put(
                    snapshots, key: Array("pruned_base".utf8),
                    value: StoreLayout.uint32Value(5) + Array(base[4..<12]) + Array(old))
                _ = try transaction.delete(snapshots, key: Array("onboarding_state".utf8))
            }
        }
        let reopened = try OnboardingStore.open(at: directory.store)
        defer { reopened.close() }
        let session = try reopened.deviceState(device: Events.device)
        #expect(session == expected)
        #expect(try reopened.verify().isValid)
    }
}

/// `pruned_base` is the only record of the pruned history: its bytes are pinned, so a change to
/// the snapshot codec (a renamed property, a reordered member) shows here before it reaches a store.
@Suite("The pruned base's exact bytes")
struct PrunedBaseGoldenTests {
    static let golden =
        #"{"seq":2,"lockout":{"policy":{"name":"mediawiki","password":{"tiers":[{"limit":5,"windowSeconds":300},{"limit":150,"windowSeconds":172800}]},"secondFactor":{"tiers":[{"limit":10,"windowSeconds":60},{"limit":20,"windowSeconds":600}]},"clearing":{"signInSucceeded":"all","passwordChanged":"all","lockoutCleared":"all","passcodeResetCompleted":"all"},"address":{"scope":"address_and_user","rule":{"tiers":[{"limit":5,"windowSeconds":300},{"limit":150,"windowSeconds":172800}]},"clearedBySuccess":true}},"acrossDevices":false,"seq":2,"keys":[{"user":"alice","device":"kiosk-7","factor":"password","failures":1,"windows":[[1796054401123,1],[1796054401123,1]],"lastFailureAt":1796054401123}]},"session":{"devices":{"kiosk-7":{"device":"kiosk-7","flow":{"user":"alice","screen":"sign_in","state":"error","fieldMessages":[{"field":"password","text":"Invalid password","severity":"error"}],"fields":[]}}},"resendWaitMilliseconds":60000,"captchaPurposes":{},"biometrics":{},"captchaAlternativesAfterFailures":3,"captchaFailures":{}},"users":{"devices":{"kiosk-7":{"users":[{"id":"alice","displayName":"Alice Martin","initials":"AM","passcodePolicy":"numeric","passcodeMinimumLength":6,"hasPasscode":false,"addedAt":1796054400123}],"selected":"alice"}}}}"#

    @Test("a prune of two records leaves version 7 ‖ seq 2 ‖ these bytes, and the store reopens from them")
    func goldenBase() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let events = [
            Events.make(0, payload: .userAdded(displayName: "Alice Martin", passcodePolicy: .numeric, passcodeMinLength: 6)),
            Events.make(1, payload: .signInFailed(method: .password, reason: .invalidPassword)),
            Events.make(2, payload: .signInStarted(method: .password))
        ]
        let store = try await PruneTests.makeStore(directory.store, events: events, acknowledged: 2)
        _ = try store.prune(before: PruneTests.farFuture)
        let expected = try store.deviceState(device: Events.device)
        store.close()
        let base = try withRawStore(directory.store) { raw in
            let snapshots = try #require(try raw.environment.openDatabase("snapshots", create: false))
            return try raw.environment.read { transaction in try transaction.get(snapshots, key: Array("pruned_base".utf8)) }
        }
        let bytes = try #require(base)
        #expect(Array(bytes[0..<12]) == StoreLayout.uint32Value(7) + StoreLayout.seqKey(2))
        #expect(String(decoding: bytes[12...], as: UTF8.self) == Self.golden)
        // Opened from the base alone (no regular snapshot), it gives the same state.
        try withRawStore(directory.store) { raw in
            let snapshots = try #require(try raw.environment.openDatabase("snapshots", create: false))
            try raw.environment.write { transaction in _ = try transaction.delete(snapshots, key: Array("onboarding_state".utf8)) }
        }
        let reopened = try OnboardingStore.open(at: directory.store)
        defer { reopened.close() }
        #expect(try reopened.deviceState(device: Events.device) == expected)
        #expect(try reopened.verify().isValid)
    }
}
