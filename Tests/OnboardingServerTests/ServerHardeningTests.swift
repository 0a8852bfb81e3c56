import Foundation
import OnboardingModel
import OnboardingProjections
@testable import OnboardingServer
import OnboardingStore
import Synchronization
import Testing
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// What hostile clients sent the server, and what it must answer: never a trap, never a path,
/// never a lock a device could impose on someone else beyond the documented skew.
@Suite struct ServerHardeningTests {
    typealias Fixture = SyncServerTests.Fixture
    static let start = SyncServerTests.start

    /// A server whose clock stands still at `now` until a test moves it.
    final class ManualServerClock: Sendable {
        private let milliseconds: Atomic<Int64>
        init(_ now: Timestamp) { milliseconds = Atomic(now.millisecondsSince1970) }
        var now: Timestamp { Timestamp(millisecondsSince1970: milliseconds.load(ordering: .relaxed)) }
        func set(_ time: Timestamp) { milliseconds.store(time.millisecondsSince1970, ordering: .relaxed) }
    }

    /// Lines a server wrote to its operator's log.
    final class LogLines: Sendable {
        let lines = Mutex<[String]>([])
    }

    /// A server on `storage` (opened again on the same data after a close: a restart).
    static func server(
        on storage: TestServerStorage, clock: ManualServerClock, maximumOpenReplicas: Int = 1024,
        failures: LogLines? = nil
    ) throws -> SyncServer {
        var options = SyncServer.Options()
        options.clock = { clock.now }
        options.maximumOpenReplicas = maximumOpenReplicas
        if let failures { options.failureLog = { line in failures.lines.withLock { $0.append(line) } } }
        return try storage.open(options)
    }

    /// A server on LMDB replicas in `directory`.
    static func server(in directory: TemporaryDirectory, clock: ManualServerClock) throws -> SyncServer {
        try server(on: TestServerStorage("lmdb", in: directory), clock: clock)
    }

    static func call(_ server: SyncServer, _ method: String, _ path: String, token: String?, body: [UInt8] = []) -> SyncResponse {
        var headers: [String: String] = [:]
        if let token { headers["authorization"] = "Bearer \(token)" }
        if !body.isEmpty { headers["content-type"] = "application/json" }
        return server.handle(SyncRequest(method: method, path: path, headers: headers, body: body))
    }

    static func text(_ response: SyncResponse) -> String { String(decoding: response.body, as: UTF8.self) }

    static func event(
        _ device: String, at: Timestamp, user: String? = "alice",
        payload: Payload = .signInFailed(method: .password, reason: .invalidPassword)
    ) -> Event {
        Event(id: UUID(), device: device, at: at, user: user, flow: nil, payload: payload)
    }

    /// - Parameter checksTimes: `false` for a hostile device, whose store writes whatever times it likes.
    static func openStore(_ device: String, in directory: TemporaryDirectory, checksTimes: Bool = true) throws -> OnboardingStore {
        var options = OnboardingStore.Options()
        options.deviceID = device
        if !checksTimes { options.maximumClockSkewMilliseconds = nil }
        return try OnboardingStore.open(at: directory.appending("device-\(device)-\(UUID().uuidString.prefix(4))"), options: options)
    }

    static func uploadBody(_ store: OnboardingStore, _ range: ClosedRange<UInt64>) throws -> [UInt8] {
        let records = try store.records(in: range)
        return SyncWire.uploadBody(device: store.deviceID, records: records, keys: try store.syncKeys(for: records))
    }

    // MARK: Seqs a client chooses (A1)

    /// A record with any seq: the seq is not covered by anything the decoder checks first.
    static func crafted(seqs: [UInt64], device: String = "kiosk-7") -> [UInt8] {
        let records = seqs.map { seq in
            Record(
                seq: seq, event: event(device, at: start, user: nil, payload: .captchaPassed),
                previousHash: Digest(bytes: [UInt8](repeating: 0, count: 32)), hash: Digest(bytes: [UInt8](repeating: 1, count: 32)))
        }
        return SyncWire.uploadBody(device: device, records: records)
    }

    @Test(
        arguments: TestDatabase.storages,
        [
            [UInt64.max], [UInt64.max, 0], [UInt64.max - 1, UInt64.max], [UInt64.max, UInt64.max], [0], [0, 1], [5, 4], [1, 3]
        ])
    func seqsAtTheEdgesAreRefusedWithoutATrap(storage name: String, seqs: [UInt64]) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let storage = try TestServerStorage(name, in: directory)
        defer { storage.remove() }
        let clock = ManualServerClock(Self.start)
        let server = try Self.server(on: storage, clock: clock)
        defer { server.close() }
        let token = try server.issueToken(role: .device, device: "kiosk-7")
        let response = Self.call(server, "POST", SyncPaths.events(device: "kiosk-7"), token: token, body: Self.crafted(seqs: seqs))
        if seqs == [UInt64.max - 1, UInt64.max] || seqs == [UInt64.max] {
            // Consecutive and representable: the decoder lets it through, the replica says where to start.
            #expect(response.status == 409 && SyncServerTests.errorCode(response) == "gap", "\(Self.text(response))")
            #expect(SyncWire.error(from: response.body)?.expectedSeq == 1)
        } else {
            #expect(response.status == 400, "\(seqs): \(Self.text(response))")
            #expect(SyncServerTests.errorCode(response) == "malformed")
        }
        // Still serving, and nothing was stored.
        #expect(Self.call(server, "GET", SyncPaths.health, token: nil).status == 200)
        let cursor = Self.call(server, "GET", SyncPaths.cursor(device: "kiosk-7"), token: token)
        #expect(try SyncWire.cursor(from: cursor.body).acknowledgedSeq == 0)
    }

    @Test func theWireDecoderNamesTheRecordWithTheImpossibleSeq() {
        #expect(throws: SyncWireError.self) { try SyncWire.upload(from: Self.crafted(seqs: [UInt64.max, 0])) }
        do {
            _ = try SyncWire.upload(from: Self.crafted(seqs: [UInt64.max, 0]))
        } catch {
            #expect(error.message.hasPrefix("records[1].event: field \"seq\": must be a whole number ≥ 1"), "\(error.message)")
        }
        do {
            _ = try SyncWire.upload(from: Self.crafted(seqs: [UInt64.max, UInt64.max]))
        } catch {
            #expect(error.message == "records[1].event.seq is 18446744073709551615 after 18446744073709551615; records must have consecutive seqs")
        }
    }

    @Test(arguments: TestDatabase.storages) func historyCursorsAndLimitsAtTheEdgesNeverTrap(storage name: String) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let storage = try TestServerStorage(name, in: directory)
        defer { storage.remove() }
        let server = try Self.server(on: storage, clock: ManualServerClock(Self.start.adding(milliseconds: 3_600_000)))
        defer { server.close() }
        let auditor = try server.issueToken(role: .auditor)
        let store = try Self.openStore("kiosk-7", in: directory)
        defer { store.close() }
        _ = try await store.append((0..<5).map { Self.event("kiosk-7", at: Self.start.adding(milliseconds: Int64($0))) })
        let token = try server.issueToken(role: .device, device: "kiosk-7")
        #expect(Self.call(server, "POST", SyncPaths.events(device: "kiosk-7"), token: token, body: try Self.uploadBody(store, 1...5)).status == 200)
        func encoded(_ text: String) -> String {
            Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        }
        let cursors = [
            "h1:9223372036854775807:18446744073709551615:kiosk-7", "h1:-9223372036854775808:0:kiosk-7",
            "h1:0:18446744073709551615:\u{7}", "h1:1:1:" + String(repeating: "z", count: 300)
        ].map(encoded)
        for path in [SyncPaths.history(user: "alice"), SyncPaths.history(device: "kiosk-7")] {
            for cursor in cursors {
                let response = Self.call(server, "GET", path + "?cursor=" + cursor, token: auditor)
                #expect([200, 400].contains(response.status), "\(path) \(cursor): \(Self.text(response))")
            }
            for at in ["0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999Z"] {
                let response = Self.call(server, "GET", path + "?since=\(at)&until=9999-12-31T23:59:59.999Z", token: auditor)
                #expect(response.status == 200, "\(Self.text(response))")
            }
        }
        for at in ["0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999Z", "10000-01-01T00:00:00Z", "-0001-01-01T00:00:00Z"] {
            let response = Self.call(server, "GET", SyncPaths.lockout(user: "alice") + "?at=" + at, token: auditor)
            #expect(at.hasPrefix("0") || at.hasPrefix("9") ? response.status == 200 : response.status == 400, "\(at): \(Self.text(response))")
        }
    }

    @Test(arguments: TestDatabase.storages) func aQueryIsLookedAtOnlyAfterTheToken(storage name: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let storage = try TestServerStorage(name, in: directory)
        defer { storage.remove() }
        let server = try Self.server(on: storage, clock: ManualServerClock(Self.start))
        defer { server.close() }
        for path in [
            SyncPaths.lockout(user: "alice") + "?bogus=1", SyncPaths.lockout(user: "alice") + "?at=yesterday",
            SyncPaths.history(user: "alice") + "?bogus=1"
        ] {
            #expect(Self.call(server, "GET", path, token: nil).status == 401, "\(path)")
            #expect(Self.call(server, "GET", path, token: "obt_nobody").status == 401, "\(path)")
        }
    }

    // MARK: Device ids in paths (A8)

    @Test(arguments: TestDatabase.storages) func everyDeviceEndpointRefusesAnInvalidIdWith400AndRevokingIsIdempotent(storage name: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let storage = try TestServerStorage(name, in: directory)
        defer { storage.remove() }
        let server = try Self.server(on: storage, clock: ManualServerClock(Self.start))
        defer { server.close() }
        let admin = try #require(server.createdAdminToken)
        let auditor = try server.issueToken(role: .auditor)

        // Never enrolled: there is nothing to revoke, which is what was asked (docs: 204).
        #expect(Self.call(server, "DELETE", SyncPaths.tokens(device: "tablet-9"), token: admin).status == 204)
        #expect(try !server.storage.isEnrolled("tablet-9"), "revoking does not enrol")

        for invalid in ["bad%20id", "a%2Fb", "%0Aforged", "%FF", String(repeating: "x", count: 300), "caf%C3%A9", "%"] {
            for (method, path, token) in [
                ("POST", "/v1/devices/\(invalid)/tokens", admin), ("DELETE", "/v1/devices/\(invalid)/tokens", admin),
                ("GET", "/v1/devices/\(invalid)/cursor", admin), ("GET", "/v1/devices/\(invalid)/cursor", auditor),
                ("GET", "/v1/devices/\(invalid)/history", auditor)
            ] {
                let response = Self.call(server, method, path, token: token)
                #expect(response.status == 400, "\(method) \(path): \(response.status) \(Self.text(response))")
                #expect(SyncServerTests.errorCode(response) == "malformed")
            }
        }
        // An upload path with an invalid id, from a real device token, is refused the same way.
        let token = try server.issueToken(role: .device, device: "kiosk-7")
        let upload = Self.call(server, "POST", "/v1/devices/bad%20id/events", token: token, body: Self.crafted(seqs: [1]))
        #expect(upload.status == 400 && SyncServerTests.errorCode(upload) == "malformed", "\(Self.text(upload))")
    }

    // MARK: Events naming another device (A13)

    @Test(arguments: TestDatabase.storages) func aDeviceCannotUploadEventsNamingAnotherDevice(storage name: String) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let storage = try TestServerStorage(name, in: directory)
        defer { storage.remove() }
        let server = try Self.server(on: storage, clock: ManualServerClock(Self.start.adding(milliseconds: 3_600_000)))
        defer { server.close() }
        let store = try Self.openStore("kiosk-7", in: directory)
        defer { store.close() }
        _ = try await store.append([Self.event("kiosk-7", at: Self.start), Self.event("kiosk-9", at: Self.start.adding(milliseconds: 1))])
        let token = try server.issueToken(role: .device, device: "kiosk-7")

        let response = Self.call(server, "POST", SyncPaths.events(device: "kiosk-7"), token: token, body: try Self.uploadBody(store, 1...2))
        #expect(response.status == 400, "\(Self.text(response))")
        let error = try #require(SyncWire.error(from: response.body))
        #expect(error.code == .foreignDevice)
        #expect(error.message.hasPrefix("seq 2 names device kiosk-9, not kiosk-7"))
        let outcomes = try SyncWire.outcomes(from: response.body)
        #expect(outcomes.map(\.reason) == ["batch_refused", "foreign_device"])
        #expect(try server.heldHead(of: "kiosk-7").seq == 0, "nothing was stored")
        // The auditor's view of kiosk-9 holds nothing kiosk-7 claimed for it.
        #expect(try server.globalLockoutEntries(user: "alice").isEmpty)
    }

    // MARK: Event times (A5)

    @Test(arguments: TestDatabase.storages) func eventsDatedPastTheSkewAreRefusedUntilTheServersClockCatchesUp(storage name: String) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let storage = try TestServerStorage(name, in: directory)
        defer { storage.remove() }
        let clock = ManualServerClock(Self.start)
        let server = try Self.server(on: storage, clock: clock)
        defer { server.close() }
        let skew = server.options.maximumClockSkewMilliseconds
        #expect(skew == 300_000, "the documented default: 5 minutes")
        let store = try Self.openStore("kiosk-7", in: directory)
        defer { store.close() }
        // Within the skew: accepted. One millisecond past it: refused, naming the seq.
        _ = try await store.append([
            Self.event("kiosk-7", at: Self.start.adding(milliseconds: skew)),
            Self.event("kiosk-7", at: Self.start.adding(milliseconds: skew + 1))
        ])
        let token = try server.issueToken(role: .device, device: "kiosk-7")
        let first = Self.call(server, "POST", SyncPaths.events(device: "kiosk-7"), token: token, body: try Self.uploadBody(store, 1...1))
        #expect(first.status == 200, "\(Self.text(first))")
        let second = Self.call(server, "POST", SyncPaths.events(device: "kiosk-7"), token: token, body: try Self.uploadBody(store, 2...2))
        #expect(second.status == 400)
        let error = try #require(SyncWire.error(from: second.body))
        #expect(error.code == .futureEvent)
        #expect(
            error.message.hasPrefix(
                "seq 2 is dated \(Self.start.adding(milliseconds: skew + 1).iso8601), more than 300 s after the server's clock (\(Self.start.iso8601))"))
        #expect(try server.heldHead(of: "kiosk-7").seq == 1)
        // A millisecond later on the server, the same batch is accepted.
        clock.set(Self.start.adding(milliseconds: 1))
        let again = Self.call(server, "POST", SyncPaths.events(device: "kiosk-7"), token: token, body: try Self.uploadBody(store, 2...2))
        #expect(again.status == 200, "\(Self.text(again))")
    }

    @Test(arguments: TestDatabase.storages, ["9999-12-31T23:59:59.999Z", "2100-01-01T00:00:00Z"])
    func noDeviceCanLockAUserOutForMillennia(storage name: String, far: String) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let storage = try TestServerStorage(name, in: directory)
        defer { storage.remove() }
        let clock = ManualServerClock(Self.start)
        let server = try Self.server(on: storage, clock: clock)
        defer { server.close() }
        let attacker = try Self.openStore("kiosk-6", in: directory, checksTimes: false)
        defer { attacker.close() }
        let future = try Timestamp(iso8601: far)
        _ = try await attacker.append((0..<6).map { Self.event("kiosk-6", at: future.adding(milliseconds: -Int64($0))) })
        let token = try server.issueToken(role: .device, device: "kiosk-6")
        let response = Self.call(server, "POST", SyncPaths.events(device: "kiosk-6"), token: token, body: try Self.uploadBody(attacker, 1...6))
        #expect(response.status == 400 && SyncServerTests.errorCode(response) == "future_event")
        #expect(try server.globalLockoutEntries(user: "alice").isEmpty)

        // The most a device can do: failures dated just inside the skew lock until at most
        // now + skew + the policy's window (5 minutes for mediawiki's first tier).
        let edge = try Self.openStore("kiosk-8", in: directory, checksTimes: false)
        defer { edge.close() }
        let skew = server.options.maximumClockSkewMilliseconds
        _ = try await edge.append((0..<6).map { Self.event("kiosk-8", at: Self.start.adding(milliseconds: skew - 5 + Int64($0))) })
        let edgeToken = try server.issueToken(role: .device, device: "kiosk-8")
        #expect(Self.call(server, "POST", SyncPaths.events(device: "kiosk-8"), token: edgeToken, body: try Self.uploadBody(edge, 1...6)).status == 200)
        let entry = try #require(server.globalLockoutEntries(user: "alice", at: Self.start).first)
        let until = try #require(entry.lockedUntil)
        #expect(until <= Self.start.adding(milliseconds: skew + 300_000))
    }

    // MARK: A keyless first batch (A7)

    @Test(arguments: TestDatabase.storages) func aFirstBatchNamingNoUserNeedsNoKeysAndTheNextBatchStillSyncs(storage name: String) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let storage = try TestServerStorage(name, in: directory)
        defer { storage.remove() }
        let server = try Self.server(on: storage, clock: ManualServerClock(Self.start.adding(milliseconds: 3_600_000)))
        defer { server.close() }
        let store = try Self.openStore("kiosk-7", in: directory)
        defer { store.close() }
        _ = try await store.append([
            Self.event("kiosk-7", at: Self.start, user: nil, payload: .captchaPresented(purpose: .signIn)),
            Self.event("kiosk-7", at: Self.start.adding(milliseconds: 1), user: nil, payload: .captchaPassed)
        ])
        _ = try await store.append([
            Self.event("kiosk-7", at: Self.start.adding(milliseconds: 2), user: "alice"),
            Self.event("kiosk-7", at: Self.start.adding(milliseconds: 3), user: "bob")
        ])
        let token = try server.issueToken(role: .device, device: "kiosk-7")
        let keyless = SyncWire.uploadBody(device: "kiosk-7", records: try store.records(in: 1...2))
        #expect(!Self.text(SyncResponse(status: 0, body: keyless)).contains("keys"))
        let first = Self.call(server, "POST", SyncPaths.events(device: "kiosk-7"), token: token, body: keyless)
        #expect(first.status == 200, "\(Self.text(first))")
        let second = Self.call(server, "POST", SyncPaths.events(device: "kiosk-7"), token: token, body: try Self.uploadBody(store, 3...4))
        #expect(second.status == 200, "the device's real key is adopted: \(Self.text(second))")
        #expect(try server.heldRecords(of: "kiosk-7", in: 1...4).map(\.hash) == store.records(in: 1...4).map(\.hash))
        #expect(try server.heldRecords(of: "kiosk-7", in: 3...4).map(\.event.user) == ["alice", "bob"], "readable, not ~pseudonyms")

        // Once adopted, another key is still refused: a replaced device store is not the device.
        let other = try Self.openStore("kiosk-7", in: directory)
        defer { other.close() }
        _ = try await other.append([Self.event("kiosk-7", at: Self.start, user: "carol")])
        var records = try other.records(in: 1...1)
        records[0].seq = 5
        let replaced = SyncWire.uploadBody(device: "kiosk-7", records: records, keys: try other.syncKeys(for: other.records(in: 1...1)))
        let refused = Self.call(server, "POST", SyncPaths.events(device: "kiosk-7"), token: token, body: replaced)
        #expect(refused.status == 409 && SyncServerTests.errorCode(refused) == "keys_changed", "\(Self.text(refused))")
    }

    // MARK: The global lockout's order (A11)

    @Test(arguments: TestDatabase.storages) func theGlobalLockoutFollowsEventTimesNotArrivalOrder(storage name: String) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let storage = try TestServerStorage(name, in: directory)
        defer { storage.remove() }
        let clock = ManualServerClock(Self.start.adding(milliseconds: 3_600_000))
        let server = try Self.server(on: storage, clock: clock)
        defer { server.close() }
        let kiosk = try Self.openStore("kiosk-7", in: directory)
        defer { kiosk.close() }
        let tablet = try Self.openStore("tablet-2", in: directory)
        defer { tablet.close() }
        // The tablet's success comes first in time, the kiosk's five failures after it: alice is
        // locked. Arrival order (kiosk first, the tablet late) would clear the lock.
        _ = try await tablet.append([Self.event("tablet-2", at: Self.start, payload: .signInSucceeded(method: .password, secondFactor: false))])
        _ = try await kiosk.append((1...5).map { Self.event("kiosk-7", at: Self.start.adding(milliseconds: Int64($0) * 1000)) })
        let kioskToken = try server.issueToken(role: .device, device: "kiosk-7")
        let tabletToken = try server.issueToken(role: .device, device: "tablet-2")
        #expect(Self.call(server, "POST", SyncPaths.events(device: "kiosk-7"), token: kioskToken, body: try Self.uploadBody(kiosk, 1...5)).status == 200)
        #expect(Self.call(server, "POST", SyncPaths.events(device: "tablet-2"), token: tabletToken, body: try Self.uploadBody(tablet, 1...1)).status == 200)

        let at = Self.start.adding(milliseconds: 10_000)
        let locked = try #require(server.globalLockoutEntries(user: "alice", at: at).first)
        #expect(locked.failures == 5 && locked.lockedUntil == Self.start.adding(milliseconds: 1000 + 300_000))
        #expect(try server.globalLockoutMatchesRebuild())
        // And a restart on the same data (LMDB: a rebuild in time order) answers the same.
        let before = try server.globalLockoutEntries(user: "alice", at: at)
        server.close()
        let restarted = try Self.server(on: storage, clock: clock)
        defer { restarted.close() }
        #expect(try restarted.globalLockoutEntries(user: "alice", at: at) == before)
    }

    @Test(arguments: TestDatabase.storages, UInt64(1)...6)
    func lateAndInterleavedUploadsFoldAsARebuildDoes(storage name: String, seed: UInt64) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let storage = try TestServerStorage(name, in: directory)
        defer { storage.remove() }
        let server = try Self.server(on: storage, clock: ManualServerClock(Self.start.adding(milliseconds: 86_400_000)))
        defer { server.close() }
        var random = SplitMix64(seed: seed)
        let devices = ["kiosk-1", "kiosk-2", "kiosk-3"]
        var stores: [OnboardingStore] = []
        defer { for store in stores { store.close() } }
        for device in devices {
            let store = try Self.openStore(device, in: directory)
            stores.append(store)
            let payloads: [Payload] = [
                .signInFailed(method: .password, reason: .invalidPassword), .secondFactorFailed(method: .totp),
                .signInSucceeded(method: .password, secondFactor: true), .lockoutCleared(reason: .admin),
                .passwordChanged(forced: false), .signInFailed(method: .passcode, reason: .cancelled)
            ]
            // Each device's clock wanders: times are not in seq order, and overlap the others'.
            let events = (0..<120).map { index in
                let jitter = Int64(random.next() % 60_000)
                return Self.event(
                    device, at: Self.start.adding(milliseconds: Int64(index) * 20_000 + jitter),
                    user: ["alice", "bob", nil][Int(random.next() % 3)], payload: payloads[Int(random.next() % UInt64(payloads.count))])
            }
            _ = try await store.append(events)
        }
        let tokens = try devices.map { try server.issueToken(role: .device, device: $0) }
        var next = [UInt64](repeating: 1, count: devices.count)
        while next.contains(where: { $0 <= 120 }) {
            let index = Int(random.next() % UInt64(devices.count))
            guard next[index] <= 120 else { continue }
            let end = min(next[index] + random.next() % 40, 120)
            let response = Self.call(
                server, "POST", SyncPaths.events(device: devices[index]), token: tokens[index],
                body: try Self.uploadBody(stores[index], next[index]...end))
            #expect(response.status == 200, "\(Self.text(response))")
            next[index] = end + 1
            #expect(try server.globalLockoutMatchesRebuild(), "seed \(seed): after \(devices[index]) up to \(end)")
            // And it answers what one fold of everything uploaded so far, in (at, device, seq)
            // order, answers: computed here from the devices' own logs, not by the server.
            var reference = LockoutEngine(policy: server.options.policy, acrossDevices: true)
            let uploaded = try stores.indices.flatMap { next[$0] > 1 ? try stores[$0].records(in: 1...(next[$0] - 1)) : [] }
            for record in uploaded.sorted(by: { ($0.event.at, $0.event.device, $0.seq) < ($1.event.at, $1.event.device, $1.seq) }) {
                reference.apply(record)
            }
            for user in ["alice", "bob"] {
                for at in [Self.start.adding(milliseconds: 1_200_000), Self.start.adding(milliseconds: 2_500_000)] {
                    #expect(
                        Set(try server.globalLockoutEntries(user: user, at: at)) == Set(reference.entries(ofUser: user, at: at)),
                        "seed \(seed): \(user) at \(at.iso8601) after \(devices[index]) up to \(end)")
                }
            }
        }
    }

    // MARK: Resources (A4)

    // About the bound on open LMDB replicas (evicting and reopening them), which a server on
    // PostgreSQL does not have: LMDB only.
    @Test func aFleetLargerThanTheOpenReplicaLimitSyncsAndReadsCorrectly() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let storage = try TestServerStorage("lmdb", in: directory)
        let clock = ManualServerClock(Self.start.adding(milliseconds: 3_600_000))
        let server = try Self.server(on: storage, clock: clock, maximumOpenReplicas: 3)
        defer { server.close() }
        let auditor = try server.issueToken(role: .auditor)
        var hashes: [String: [Digest]] = [:]
        for number in 0..<12 {
            let device = "kiosk-\(number)"
            let store = try Self.openStore(device, in: directory)
            defer { store.close() }
            _ = try await store.append((0..<3).map { Self.event(device, at: Self.start.adding(milliseconds: Int64(number * 10 + $0))) })
            let token = try server.issueToken(role: .device, device: device)
            #expect(Self.call(server, "POST", SyncPaths.events(device: device), token: token, body: try Self.uploadBody(store, 1...3)).status == 200)
            hashes[device] = try store.records(in: 1...3).map(\.hash)
        }
        let counts = server.replicas.counts
        #expect(counts.open <= 3 && counts.evicted >= 9, "\(counts)")
        // Every replica reads back whole, through the audit and the merged history.
        let audit = Self.call(server, "GET", "/v1/audit", token: auditor)
        #expect(audit.status == 200 && Self.text(audit).hasPrefix(#"{"ok":true"#), "\(Self.text(audit))")
        let history = Self.call(server, "GET", SyncPaths.history(user: "alice") + "?limit=100", token: auditor)
        #expect(history.status == 200)
        #expect(Self.text(history).components(separatedBy: #""outcome":"failed""#).count - 1 == 36)
        // Mediawiki's first tier locks at 5, and failures while locked are not counted.
        #expect(try server.globalLockoutEntries(user: "alice", at: Self.start).first?.failures == 5)
        #expect(server.replicas.counts.open <= 3)
    }

    // About a replica's LMDB file damaged on disk, and how store errors are classified; a
    // PostgreSQL server's unreachable database is PostgresFaultTests': LMDB only.
    @Test func resourceShortagesAre503WithRetryAfterAndOtherFailures500WithoutAPath() throws {
        let shortage = ServerFailure(StoreError(.storage, "cannot open store at /var/lib/x: Too many open files", systemCode: EMFILE))
        #expect(shortage.isResourceShortage && shortage.resource == "file descriptors")
        #expect(ServerFailure(ReplicaLimitReached(maximumOpen: 4)).isResourceShortage)
        #expect(ServerFailure(StoreError(.storage, "disk", systemCode: ENOSPC)).resource == "disk space")
        #expect(!ServerFailure(StoreError(.corrupted, "record at seq 3 is damaged")).isResourceShortage)

        // A damaged replica file: the server cannot open it. The client learns that the server
        // failed, not where its files are; the operator's log has the detail.
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let storage = try TestServerStorage("lmdb", in: directory)
        let failures = LogLines()
        let server = try Self.server(on: storage, clock: ManualServerClock(Self.start), failures: failures)
        defer { server.close() }
        let token = try server.issueToken(role: .device, device: "kiosk-7")
        #expect(Self.call(server, "GET", SyncPaths.cursor(device: "kiosk-7"), token: token).status == 200)
        server.replicas.closeIdle()
        let file = (server.replicaPath(for: "kiosk-7")! as NSString).appendingPathComponent("data.mdb")
        try Data(repeating: 0x5A, count: 64 << 10).write(to: URL(fileURLWithPath: file))
        let response = Self.call(server, "GET", SyncPaths.cursor(device: "kiosk-7"), token: token)
        #expect(response.status == 500, "\(Self.text(response))")
        #expect(!Self.text(response).contains(directory.path) && !Self.text(response).contains("/"), "\(Self.text(response))")
        #expect(failures.lines.withLock { $0.contains { $0.contains(directory.path) } }, "the operator's log names the replica")
        let audit = Self.call(server, "GET", "/v1/audit", token: try server.issueToken(role: .auditor))
        #expect(audit.status == 200 && Self.text(audit).contains(#""ok":false"#), "\(Self.text(audit))")
        #expect(!Self.text(audit).contains(directory.path), "the audit names the damage, not the files: \(Self.text(audit))")
    }
}
