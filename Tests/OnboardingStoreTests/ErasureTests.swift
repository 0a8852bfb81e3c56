import Foundation
import LMDB
import OnboardingModel
import OnboardingProjections
@testable import OnboardingStore
import Synchronization
import Testing

@Suite("Erasure: forget-user destroys a key, the chain still verifies")
struct ErasureTests {
    static let aliceName = "Alice Zyxwvut-Erasable"

    /// alice and bob on the device; alice fails her password 5 times (locked under mediawiki).
    static func populated(_ directory: TemporaryDirectory) async throws -> OnboardingStore {
        let store = try OnboardingStore.open(at: directory.store, options: storeOptions { $0.deviceID = "kiosk-7" })
        var events = [
            Events.make(
                0, user: "alice",
                payload: .userAdded(
                    displayName: aliceName, subtitle: "Night nurse", imageRef: "img/alice.png",
                    passcodePolicy: .numeric, passcodeMinLength: 6)),
            Events.make(
                1, user: "bob",
                payload: .userAdded(
                    displayName: "Bob Qwerty", subtitle: nil, imageRef: nil,
                    passcodePolicy: .numeric, passcodeMinLength: 6))
        ]
        for index in 2..<7 {
            events.append(Events.make(index, user: "alice", payload: .signInFailed(method: .password, reason: .invalidPassword)))
        }
        events.append(Events.make(7, user: "bob", payload: .signInSucceeded(method: .passcode, secondFactor: false)))
        _ = try await store.append(events)
        return store
    }

    @Test("after forget-user: alice reads as erased, bob is intact, verify passes, lockout carries over")
    func forgetUser() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try await Self.populated(directory)
        defer { store.close() }
        let at = Events.start.adding(milliseconds: 10_000)
        let before = try store.allRecords()
        #expect(before[0].event.user == "alice")
        guard case .locked = try store.signInDecision(user: "alice", device: "kiosk-7", at: at) else {
            Issue.record("alice should be locked after 5 failures")
            return
        }
        let bobHistoryBefore = try store.records(user: "bob")

        let (pseudonym, seq) = try await store.forgetUser("alice", at: at)
        #expect(seq == 9)
        #expect(UserRef.isLiteral(pseudonym))
        #expect(try store.isForgotten("alice"))

        let after = try store.allRecords()
        #expect(after.count == 9)
        // Same hashes: erasure changed no stored byte of the log.
        #expect(after.prefix(8).map { $0.hash } == before.map { $0.hash })
        #expect(
            after[0].event
                == Events.make(
                    0, id: before[0].event.id, user: pseudonym,
                    payload: .userAdded(
                        displayName: PersonalData.erasedText, subtitle: nil, imageRef: nil,
                        passcodePolicy: .numeric, passcodeMinLength: 6)))
        for record in after where record.event.user != "bob" {
            #expect(record.event.user == pseudonym, "seq \(record.seq)")
        }
        #expect(after[8].event.type == .userForgotten && after[8].event.user == pseudonym)
        // bob untouched.
        #expect(after[1] == before[1] && after[7] == before[7])
        #expect(try store.records(user: "bob") == bobHistoryBefore)
        // The chain and the indexes verify, and the snapshot written on close will too.
        #expect(try store.verify().isValid)
        // Lockout keys of the forgotten user keep working without the readable name.
        guard case .locked = try store.signInDecision(user: "alice", device: "kiosk-7", at: at) else {
            Issue.record("the lockout of alice must survive erasure")
            return
        }
        #expect(try store.lockoutEntries(at: at).contains { $0.key.user == pseudonym && $0.failures == 5 })
        #expect(!(try store.lockoutEntries(at: at).contains { $0.key.user == "alice" }))
        // The user list shows bob only; alice is removed.
        #expect(Set(try store.users(device: "kiosk-7", at: at).sections.flatMap { $0.rows }.map { $0.profile.id }) == ["bob"])
        // History by the readable id still finds the records (through the ref), pseudonymous.
        #expect(try store.records(user: "alice").count == 7)
        // A new attempt naming alice is stored under the pseudonym only and keeps counting.
        let outcome = try await store.record(Events.make(11, user: "alice", payload: .signInFailed(method: .password, reason: .invalidPassword)))
        #expect(try store.storedRecord(at: outcome.seq)?.event.user == pseudonym)
        let entries = try store.lockoutEntries(at: at.adding(milliseconds: 2_000))
        #expect(entries.contains { $0.key.user == pseudonym } && !entries.contains { $0.key.user == "alice" })
        // The projections equal a rebuild from the log.
        #expect(try store.projectionState() == (try store.rebuildState(policy: store.options.lockoutPolicy)))
    }

    @Test("after forget-user and compaction the name is nowhere in the store's bytes, and it reopens valid")
    func nameLeavesTheFile() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try await Self.populated(directory)
        let dataFile = directory.store + "/data.mdb"
        _ = try await store.forgetUser("alice", at: Events.start.adding(milliseconds: 10_000))
        store.close()
        try OnboardingStore.compact(at: directory.store)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: dataFile))
        for secret in [Self.aliceName, "Night nurse", "img/alice.png", "alice"] {
            #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(secret) is still in data.mdb")
        }
        let reopened = try OnboardingStore.open(at: directory.store)
        defer { reopened.close() }
        #expect(try reopened.verify().isValid)
        #expect(try reopened.allRecords().count == 9)
    }

    @Test("records never hold a readable user id or profile text: only the snapshot does, and forget drops it")
    func recordsHoldCiphertextOnly() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try await Self.populated(directory)
        store.close()
        try withRawStore(directory.store) { raw in
            try raw.environment.read { transaction throws in
                try transaction.withCursor(raw.events) { cursor in
                    var entry = try cursor.first()
                    while let current = entry {
                        let value = Data(current.value)
                        for secret in [Self.aliceName, "Night nurse", "alice", "bob", "Bob Qwerty"] {
                            #expect(value.range(of: Data(secret.utf8)) == nil, "\(secret) in a record")
                        }
                        entry = try cursor.next()
                    }
                }
                // by_user keys are user refs, never the readable id.
                #expect(try transaction.get(raw.byUser, key: try raw.userKey("alice", 1)) == [])
                // The user's entry in user_keys: pseudonym, key, then only ciphertext.
                let entry = try #require(try raw.userEntry("alice", in: transaction)).value
                #expect(entry.count > 16 + 32 + 24 + 16)
                #expect(Data(entry).range(of: Data("alice".utf8)) == nil)
            }
        }
    }

    @Test("a changed user entry is named by verify; the store still opens with that user erased")
    func aChangedUserEntryIsDetected() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try await Self.populated(directory)
        #expect(try store.verify().isValid)
        store.close()
        try withRawStore(directory.store) { raw in
            try raw.environment.write { transaction in
                let entry = try #require(try raw.userEntry("bob", in: transaction))
                var value = entry.value
                value[value.count - 1] ^= 1 // the last byte of bob's sealed id
                try transaction.put(try #require(raw.userKeysDatabase), key: Keys.seq(entry.number), value: value)
            }
        }
        // The store still opens: bob reads as his pseudonym, erased; alice is intact; verify names it.
        let reopened = try OnboardingStore.open(at: directory.store)
        defer { reopened.close() }
        let report = try reopened.verify()
        #expect(!report.isValid)
        #expect(report.problems.contains { $0.message.contains("does not open with the key it holds") })
        #expect(try reopened.records(user: "bob").allSatisfy { UserRef.isLiteral($0.event.user ?? "") })
        #expect(try reopened.records(user: "alice").allSatisfy { $0.event.user == "alice" })
    }

    @Test("forgetting twice, or an unknown user, leaves a tombstone and one event each; the chain verifies")
    func forgetUnknownAndTwice() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try await Self.populated(directory)
        defer { store.close() }
        _ = try await store.forgetUser("carol", at: Events.start)
        #expect(try store.isForgotten("carol"))
        // carol is then never stored readably.
        _ = try await store.append(Events.make(20, user: "carol"))
        #expect(try store.records(user: "carol").allSatisfy { UserRef.isLiteral($0.event.user ?? "") })
        #expect(try store.verify().isValid)
        // A user_forgotten naming a readable id is refused: the event must hold no personal data.
        let error = await #expect(throws: StoreError.self) {
            _ = try await store.append(Events.make(21, user: "bob", payload: .userForgotten))
        }
        #expect(error?.code == .invalidEvent)
    }
}

@Suite("Migration from record format 1")
struct MigrationTests {
    /// The format 1 body, written here by hand from docs/format.md (format 1 section): the
    /// envelope as in format 2 but the user as presence ‖ u16 length ‖ UTF-8, and every payload
    /// field in the body.
    static func legacyRecord(_ event: Event, seq: UInt64, previous: Digest) -> [UInt8] {
        var body: [UInt8] = []
        func u16(_ value: Int) { body += [UInt8(value >> 8), UInt8(value & 0xFF)] }
        func u64(_ value: UInt64) { withUnsafeBytes(of: value.bigEndian) { body += $0 } }
        func text(_ value: String) { u16(value.utf8.count); body += Array(value.utf8) }
        // Format 1 was written before any type had a schema 2: every record is at schema 1.
        u16(Int(event.type.code))
        body.append(1)
        u64(seq)
        withUnsafeBytes(of: event.id.uuid) { body += $0 }
        u64(UInt64(bitPattern: event.at.millisecondsSince1970))
        body.append(UInt8(event.device.utf8.count))
        body += Array(event.device.utf8)
        if let user = event.user { body.append(1); text(user) } else { body.append(0) }
        if let session = event.flow { body.append(1); withUnsafeBytes(of: session.uuid) { body += $0 } } else { body.append(0) }
        for (spec, value) in zip(event.type.fields(schema: 1)!, event.payload.fieldValues) {
            if spec.isOptional { body.append(value == nil ? 0 : 1) }
            switch value {
            case nil: break
            case .text(let string)?: text(string)
            case .choice(let code)?: body.append(code)
            case .flag(let flag)?: body.append(flag ? 1 : 0)
            case .instant(let instant)?: u64(UInt64(bitPattern: instant.millisecondsSince1970))
            case .count(let count)?: withUnsafeBytes(of: UInt32(count).bigEndian) { body += $0 }
            case .choices(let codes)?: body.append(UInt8(codes.count)); body += codes
            }
        }
        let hash = Digest.hash(previous.bytes + body)
        return [1] + hash.bytes + previous.bytes + body
    }

    /// A store as format 1 wrote it: no pseudonym key or user entries, records of format
    /// 1, `by_user` keyed by `user ‖ 0x00 ‖ seq`, format_version 1.
    static func writeLegacyStore(at path: String, events: [Event]) throws -> Digest {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let environment = try Environment.open(path: path)
        defer { environment.close() }
        var previous = Digest.zero
        _ = try environment.createDatabases(["events", "by_id", "by_user", "by_session", "meta", "snapshots"]) { transaction, databases in
            for (index, event) in events.enumerated() {
                let seq = UInt64(index + 1)
                let seqKey = Keys.seq(seq)
                let value = legacyRecord(event, seq: seq, previous: previous)
                previous = Digest(bytes: Array(value[1...32]))
                try transaction.put(databases[0], key: seqKey, value: value)
                try transaction.put(databases[1], key: Keys.uuid(event.id), value: seqKey)
                if let user = event.user { try transaction.put(databases[2], key: Array(user.utf8) + [0] + seqKey, value: []) }
                if let session = event.flow { try transaction.put(databases[3], key: Keys.session(session, seq), value: []) }
            }
            try transaction.put(databases[4], key: Keys.formatVersion, value: [0, 0, 0, 1])
            try transaction.put(databases[4], key: Keys.deviceID, value: Array("kiosk-7".utf8))
            try transaction.put(databases[4], key: Keys.head, value: Keys.seq(UInt64(events.count)) + previous.bytes)
            try transaction.put(databases[4], key: Array("created_at".utf8), value: [0, 0, 0, 0, 0, 0, 0, 0])
        }
        return previous
    }

    static func events() -> [Event] {
        let session = UUID()
        return [
            Events.make(
                0, user: "zoë", session: session,
                payload: .userAdded(
                    displayName: "Zoë Ångström", subtitle: "Infirmière",
                    imageRef: nil, passcodePolicy: .numeric, passcodeMinLength: 6)),
            Events.make(1, user: "zoë", session: session, payload: .signInFailed(method: .passcode, reason: .invalidPasscode)),
            Events.make(2, user: nil, session: nil, payload: .captchaFailed),
            Events.make(3, user: "bob", payload: .userProfileUpdated(displayName: nil, subtitle: "Porter", imageRef: "img/b")),
            Events.make(4, user: "zoë", session: session, payload: .signInSucceeded(method: .passcode, secondFactor: false))
        ]
    }

    @Test("a store written by format 1 opens migrated: same events, a valid new chain, indexes on user refs")
    func migratesOnOpen() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let events = Self.events()
        let oldHead = try Self.writeLegacyStore(at: directory.store, events: events)
        // Read-only, it is refused with what to do.
        let refused = #expect(throws: StoreError.self) {
            try OnboardingStore.open(at: directory.store, options: storeOptions { $0.readOnly = true })
        }
        #expect(refused?.code == .needsMigration)

        let progress = Mutex<[UInt64]>([])
        let store = try OnboardingStore.open(
            at: directory.store,
            options: storeOptions { options in
                options.migrationProgress = { done, _ in progress.withLock { $0.append(done) } }
            })
        defer { store.close() }
        #expect(progress.withLock { $0.last } == 5)
        let records = try store.allRecords()
        #expect(records.map { $0.event } == events)
        #expect(try store.head().hash != oldHead, "hashes are recomputed over sealed bodies")
        #expect(try store.verify().isValid)
        #expect(try store.formatVersionOnDisk() == 2)
        #expect(try store.records(user: "zoë").map { $0.seq } == [1, 2, 5])
        #expect(try store.records(user: "bob").map { $0.seq } == [4])
        #expect(
            Set(
                try store.users(device: "kiosk-7", at: Events.start.adding(milliseconds: 9_000)).sections
                    .flatMap { $0.rows }.map { $0.profile.displayName }) == ["Zoë Ångström"])
        // And erasure works on a migrated store.
        _ = try store.forgetUser("zoë", at: Events.start.adding(milliseconds: 9_000))
        #expect(try store.records(user: "zoë").allSatisfy { UserRef.isLiteral($0.event.user ?? "") })
        #expect(try store.verify().isValid)
    }

    @Test("a format 1 record naming a pseudonym literal gets a tombstone on migration: every record's user has an entry")
    func literalUserMigrates() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let literal = UserRef(user: "erased elsewhere", pseudonymKey: .random()).literal
        let events = Self.events() + [Events.make(5, user: literal), Events.make(6, user: literal)]
        _ = try Self.writeLegacyStore(at: directory.store, events: events)
        let store = try OnboardingStore.open(at: directory.store)
        defer { store.close() }
        #expect(try store.isForgotten(literal))
        #expect(try store.records(user: literal).map(\.event.user) == [literal, literal])
        #expect(try store.stats().userCount == 3, "zoë, bob, and the literal's tombstone")
        let report = try store.verify()
        #expect(report.isValid, "\(report.problems)")
    }

    @Test("a format 1 store with a broken chain is refused and left exactly as it was")
    func brokenLegacyStoreIsLeftIntact() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        _ = try Self.writeLegacyStore(at: directory.store, events: Self.events())
        try withRawStore(directory.store) { raw in
            try raw.environment.write { transaction in
                var value = try #require(try transaction.get(raw.events, key: Keys.seq(3)))
                value[value.count - 1] ^= 1
                try transaction.put(raw.events, key: Keys.seq(3), value: value)
            }
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: directory.store + "/data.mdb"))
        let error = #expect(throws: StoreError.self) { try OnboardingStore.open(at: directory.store) }
        #expect(error?.code == .corrupted)
        #expect(error?.message.contains("seq 3") == true)
        #expect(error?.message.contains("nothing was changed") == true)
        let version = try withRawStore(directory.store) { raw in
            try raw.environment.read { try $0.get(raw.meta, key: Keys.formatVersion) }
        }
        #expect(version == [0, 0, 0, 1])
        let records = try withRawStore(directory.store) { raw in try raw.environment.read { try $0.count(raw.events) } }
        #expect(records == 5)
        _ = before
    }
}
