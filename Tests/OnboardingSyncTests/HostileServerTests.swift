import Foundation
import OnboardingModel
import OnboardingServer
import OnboardingStore
import Synchronization
import Testing
import TestSupport

/// The sync client against a server that lies, stalls, floods and redirects: a scripted HTTP
/// server on loopback (``ScriptedHTTPServer``) in front of a real ``SyncServer``, reached with the
/// real transport. Each test scripts one kind of misbehaviour and checks what a user would see:
/// the error, what the store marked acknowledged, what it forgot.
@Suite(.timed, .slow) struct HostileServerTests {
    /// A real server with `kiosk-7` enrolled, a device store with `events` events, and a liar in
    /// front of the server whose script decides each answer.
    final class Fixture: @unchecked Sendable {
        let directory: TemporaryDirectory
        let server: SyncServer
        let store: OnboardingStore
        let token: String
        private(set) var liar: ScriptedHTTPServer!

        init(events: Int = 300, script: @escaping @Sendable (_ request: SyncRequest, _ honest: @Sendable () -> SyncResponse) -> ScriptedHTTPServer.Reply)
            async throws
        {
            directory = try TemporaryDirectory()
            server = try SyncServer(dataDirectory: directory.appending("server"))
            token = try server.issueToken(role: .device, device: SyncFixture.device)
            store = try SyncFixture.openStore(in: directory)
            try await SyncFixture.append(events, to: store)
            let server = self.server
            liar = try ScriptedHTTPServer { raw in
                let request = SyncRequest(method: raw.method, path: raw.path, headers: raw.headers, body: raw.body)
                return script(request) { server.handle(request) }
            }
        }

        var url: URL { URL(string: "http://127.0.0.1:\(liar.port)")! }

        func client(batch: Int = 100, serverKey: SigningPublicKey? = nil, timeout: Duration = .seconds(5)) throws -> SyncClient {
            SyncClient(
                store: store, transport: try HTTPTransport(baseURL: url, timeout: timeout), token: token, batchEvents: batch,
                sleep: { _ in }, serverKey: serverKey, seed: 7)
        }

        /// What the real server holds for the device.
        var serverSeq: UInt64 {
            let response = server.handle(
                SyncRequest(
                    method: "GET", path: SyncPaths.cursor(device: SyncFixture.device),
                    headers: ["authorization": "Bearer \(token)"]))
            return (try? SyncWire.cursor(from: response.body).acknowledgedSeq) ?? .max
        }

        func close() {
            liar.stop()
            store.close()
            server.close()
            directory.remove()
        }
    }

    /// Runs `client`, returning the error it threw (nil when it succeeded).
    static func failure(of client: SyncClient) async -> SyncError? {
        do {
            _ = try await client.run()
            return nil
        } catch {
            return error
        }
    }

    /// Numbers the requests a script sees: 1, 2, …
    final class Counter: Sendable {
        private let count = Mutex(0)
        func next() -> Int {
            count.withLock { count in
                count += 1
                return count
            }
        }
    }

    static func answer(_ response: SyncResponse) -> ScriptedHTTPServer.Reply {
        .answer(response.status, headers: ["content-type": "application/json"], body: response.body)
    }

    /// An honest upload answer with `change` applied to its JSON object.
    static func altered(_ response: SyncResponse, _ change: (inout [String: Any]) -> Void) -> ScriptedHTTPServer.Reply {
        guard response.status == 200, var object = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] else {
            return answer(response)
        }
        change(&object)
        return .answer(200, headers: ["content-type": "application/json"], body: Array(try! JSONSerialization.data(withJSONObject: object)))
    }

    enum Lie: String, CaseIterable, Sendable {
        /// All appended, acknowledged far beyond the batch, a wrong hash; the server holds nothing.
        case beyondTheBatchWithAWrongHash
        /// Acknowledges a seq beyond anything the device holds.
        case beyondTheStoresHead
        /// The batch's last seq, but another hash.
        case wrongHash
        case fewerResultsThanRecords
        case refusalInsideA200
        case invalidJSON
    }

    @Test(arguments: Lie.allCases)
    func aLyingAcknowledgementMarksNothingAcknowledged(lie: Lie) async throws {
        let head = Mutex<Record?>(nil)
        let fixture = try await Fixture { request, honest in
            guard request.method == "POST" else { return Self.answer(honest()) }
            let upload = try! SyncWire.upload(from: request.body)
            _ = head
            let outcomes = upload.records.map { SyncWire.Outcome(seq: $0.seq, kind: .appended) }
            let last = upload.records.last!
            func claim(_ seq: UInt64, _ hash: Digest, _ outcomes: [SyncWire.Outcome]) -> ScriptedHTTPServer.Reply {
                .answer(
                    200,
                    body: SyncWire.uploadResponseBody(
                        SyncWire.Cursor(device: SyncFixture.device, acknowledgedSeq: seq, headHash: hash),
                        outcomes: outcomes))
            }
            switch lie {
            case .beyondTheBatchWithAWrongHash: return claim(3000, Digest(bytes: [UInt8](repeating: 0xAB, count: 32)), outcomes)
            case .beyondTheStoresHead: return claim(1_000_000_000, last.hash, outcomes)
            case .wrongHash: return claim(last.seq, Digest(bytes: [UInt8](repeating: 0x01, count: 32)), outcomes)
            case .fewerResultsThanRecords: return claim(last.seq, last.hash, Array(outcomes.dropLast()))
            case .refusalInsideA200:
                var refused = outcomes
                refused[3] = SyncWire.Outcome(seq: refused[3].seq, kind: .refused, reason: "nope")
                return claim(last.seq, last.hash, refused)
            case .invalidJSON: return .answer(200, body: Array(#"{"device": "kiosk-7", "acknowledged_seq": 1"#.utf8))
            }
        }
        defer { fixture.close() }
        head.withLock { $0 = try! fixture.store.storedRecord(at: try! fixture.store.head().seq) }

        let error = await Self.failure(of: try fixture.client())
        #expect(error == .badResponse, "\(lie): \(String(describing: error))")
        #expect(try fixture.store.syncCursor() == 0, "\(lie): the store marked seqs acknowledged on a lie")
        #expect(fixture.serverSeq == 0)
        let message = error?.message ?? ""
        #expect(message.contains("nothing") && message.contains("marked acknowledged"), "\(message)")
        if lie == .invalidJSON {
            #expect(message.hasPrefix("the server's answer to uploading seq 1…100 is unreadable"), "\(message)")
        }
        #expect(!message.contains(fixture.token))
    }

    /// An acknowledgement beyond the batch with this store's own hash there is what an honest
    /// server sends when another run of the device got further. The client moves on, but its
    /// durable cursor never passes the batch it sent.
    @Test func anAcknowledgementBeyondTheBatchNeverMovesTheCursorPastTheBatch() async throws {
        let head = Mutex<Record?>(nil)
        let fixture = try await Fixture { request, honest in
            guard request.method == "POST" else { return Self.answer(honest()) }
            let upload = try! SyncWire.upload(from: request.body)
            let record = head.withLock { $0! }
            return .answer(
                200,
                body: SyncWire.uploadResponseBody(
                    SyncWire.Cursor(device: SyncFixture.device, acknowledgedSeq: record.seq, headHash: record.hash),
                    outcomes: upload.records.map { SyncWire.Outcome(seq: $0.seq, kind: .duplicate) }))
        }
        defer { fixture.close() }
        head.withLock { $0 = try! fixture.store.storedRecord(at: 300) }
        let summary = try await fixture.client().run()
        #expect(summary.acknowledgedSeq == 300 && summary.batches == 1)
        #expect(try fixture.store.syncCursor() == 100, "the cursor went past the 100 records sent")
    }

    @Test func aLyingCursorIsRefusedBeforeAnythingIsSentOrForgotten() async throws {
        let fixture = try await Fixture { request, honest in
            guard request.path.hasSuffix("/cursor") else { return Self.answer(honest()) }
            // Claims seq 200 with a hash this store does not have there.
            return .answer(
                200,
                body: SyncWire.cursorBody(
                    SyncWire.Cursor(
                        device: SyncFixture.device, acknowledgedSeq: 200,
                        headHash: Digest(bytes: [UInt8](repeating: 9, count: 32)))))
        }
        defer { fixture.close() }
        let error = await Self.failure(of: try fixture.client())
        #expect(error == .fork)
        #expect(try fixture.store.syncCursor() == 0)
        #expect(fixture.liar.requests.filter { $0.method == "POST" }.isEmpty)
        // And prune's confirmation refuses it the same way.
        do {
            _ = try await fixture.client().confirmedAcknowledgement()
            Issue.record("prune's confirmation believed the lying cursor")
        } catch {
            #expect((error as? SyncError) == .fork, "\(error)")
        }
    }

    @Test func confirmationReportsWhatTheServerHoldsNow() async throws {
        let fixture = try await Fixture { _, honest in Self.answer(honest()) }
        defer { fixture.close() }
        _ = try await fixture.client().run()
        #expect(try await fixture.client().confirmedAcknowledgement() == 300)
    }

    @Test(arguments: [301, 302, 307, 308])
    func aRedirectStopsTheRunAndTheTokenGoesNowhereElse(status: Int) async throws {
        let elsewhere = try ScriptedHTTPServer { _ in .answer(200, body: Array("{}".utf8)) }
        defer { elsewhere.stop() }
        let fixture = try await Fixture { request, honest in
            request.method == "POST"
                ? .answer(status, headers: ["location": "http://127.0.0.1:\(elsewhere.port)/v1/devices/kiosk-7/events?x=secret"])
                : Self.answer(honest())
        }
        defer { fixture.close() }
        let error = await Self.failure(of: try fixture.client())
        #expect(error == .redirected)
        #expect(error?.message.contains("HTTP \(status), a redirect to http://127.0.0.1:\(elsewhere.port)") == true, "\(String(describing: error))")
        #expect(error?.message.contains("secret") == false, "the target's query is not repeated")
        #expect(elsewhere.requests.isEmpty)
        #expect(try fixture.store.syncCursor() == 0)
    }

    @Test func anEndlessAnswerEndsTheRunWithAClearErrorAndBoundedMemory() async throws {
        let fixture = try await Fixture { request, honest in
            request.method == "POST" ? .endlessChunked(status: 200, bound: .init(bytes: 1 << 30, time: .seconds(20))) : Self.answer(honest())
        }
        defer { fixture.close() }
        let error = await Self.failure(of: try fixture.client(timeout: .seconds(10)))
        #expect(error == .unavailable)
        #expect(error?.message.contains("longer than the protocol's \(SyncLimits.maximumBodyBytes) bytes") == true, "\(String(describing: error))")
        // Every attempt stopped reading near the limit; none drained the server's gigabyte.
        let posts = fixture.liar.requests.filter { $0.method == "POST" }
        #expect(posts.count == SyncLimits.maximumAttempts)
        for request in posts { #expect(fixture.liar.streamedBytes(connection: request.connection) < 64 << 20) }
    }

    @Test func aDrippingServerIsBoundedByEachRequestsDeadlineAndTheRunsTimeLimit() async throws {
        let answer = Array("HTTP/1.1 200 OK\r\ncontent-length: 132\r\n\r\n".utf8) + [UInt8](repeating: 0x20, count: 132)
        let fixture = try await Fixture { _, _ in .drip(answer, interval: .seconds(1)) }
        defer { fixture.close() }
        let client = try fixture.client(timeout: .seconds(1))
        do {
            _ = try await client.run(timeLimit: .seconds(3))
            Issue.record("a dripping server let the run finish")
        } catch {
            #expect(error == .timeLimit)
            #expect(error.message.contains("passed its time limit of 3 s"), "\(error.message)")
        }
        // Each attempt was cut after its 1 s deadline (as the server's threads saw it), not after
        // the 132 s the drip takes. (How many attempts fit in the 3 s depends on how soon the
        // cooperative pool runs the client again, which other tests decide.)
        #expect(!fixture.liar.requests.isEmpty)
        try await Task.sleep(for: .milliseconds(300))
        let lifetimes = fixture.liar.connectionLifetimes
        // The server notices a closed connection only at its next byte, a second apart: well under
        // 10 s is the cut; the drip alone would take 132 s.
        #expect(!lifetimes.isEmpty && lifetimes.values.allSatisfy { $0 < .seconds(10) }, "\(lifetimes)")
    }

    @Test func aDroppedConnectionIsRetriedWithTheWholeBodyAndNothingIsLostOrDoubled() async throws {
        let posts = Counter()
        let fixture = try await Fixture { request, honest in
            guard request.method == "POST" else { return Self.answer(honest()) }
            let number = posts.next()
            // The second upload reaches the server, whose answer is lost with the connection.
            if number == 2 {
                _ = honest()
                return .drop
            }
            return Self.answer(honest())
        }
        defer { fixture.close() }
        let summary = try await fixture.client().run()
        #expect(summary.acknowledgedSeq == 300 && fixture.serverSeq == 300)
        // 1…100 and 201…300 appended; 101…200 reached the server before the drop and came back
        // as duplicates on the retry.
        #expect(summary.appended == 200 && summary.duplicates == 100, "\(summary)")
        #expect(summary.retries == 1)
        #expect(fixture.liar.requests.allSatisfy { $0.bodyComplete })
    }

    @Test func afterARewindEachSeqIsCountedOnce() async throws {
        // The second upload is answered "gap, expected seq 1", as by a server that lost what it
        // had acknowledged: the client resends 1…100 (duplicates now) and goes on.
        let posts = Counter()
        let fixture = try await Fixture { request, honest in
            guard request.method == "POST" else { return Self.answer(honest()) }
            let number = posts.next()
            guard number == 2 else { return Self.answer(honest()) }
            return .answer(409, body: SyncWire.errorBody(SyncWire.ErrorBody(code: .gap, message: "expected seq 1", expectedSeq: 1)))
        }
        defer { fixture.close() }
        let summary = try await fixture.client().run()
        #expect(summary.rewinds == 1 && summary.acknowledgedSeq == 300)
        #expect(summary.appended + summary.duplicates == 300, "a 300-event log is summed as \(summary.appended) appended + \(summary.duplicates) duplicates")
        #expect(summary.appended == 300)
    }

    // MARK: Forget requests

    /// The cursor answer with `forget` listed and signed by `key` (or unsigned).
    static func forgetting(_ response: SyncResponse, _ forget: [String], signedBy key: SigningKeyPair?, forDevice device: String = SyncFixture.device)
        -> ScriptedHTTPServer.Reply
    {
        guard response.status == 200, var cursor = try? SyncWire.cursor(from: response.body) else { return answer(response) }
        cursor.forgetUsers = forget
        cursor.forgetSignature = key?.sign(SyncWire.forgetMessage(device: device, pseudonyms: forget))
        return .answer(200, body: SyncWire.cursorBody(cursor))
    }

    static func pseudonyms(_ count: Int, seed: UInt8) -> [String] {
        (0..<count).map { index in "~" + String(format: "%02x%06x", seed, index) + String(repeating: "0", count: 24) }
    }

    @Test func unknownPseudonymsAreIgnoredAndTooManyAreAProtocolError() async throws {
        let asked = Mutex(SyncLimits.maximumForgetUsersPerAnswer)
        let key = Mutex<SigningKeyPair?>(nil)
        let fixture = try await Fixture { request, honest in
            guard request.path.hasSuffix("/cursor") else { return Self.answer(honest()) }
            return Self.forgetting(honest(), Self.pseudonyms(asked.withLock { $0 }, seed: 1), signedBy: key.withLock { $0 })
        }
        defer { fixture.close() }
        key.withLock { $0 = fixture.server.signingKey }
        let serverKey = fixture.server.signingKey.publicKey
        let summary = try await fixture.client(serverKey: serverKey).run()
        #expect(summary.unknownForgetRequests == SyncLimits.maximumForgetUsersPerAnswer)
        #expect(summary.forgottenOnRequest.isEmpty && summary.forgetRequestsRefused == nil)
        #expect(try fixture.store.head().seq == 300, "no user_forgotten was appended for a pseudonym the device never had")

        asked.withLock { $0 = SyncLimits.maximumForgetUsersPerAnswer + 1 }
        let error = await Self.failure(of: try fixture.client(serverKey: serverKey))
        #expect(error == .badResponse)
        #expect(error?.message.contains("asks to forget 101 users, more than the protocol's 100 per answer") == true, "\(String(describing: error))")
        #expect(try fixture.store.head().seq == 300)
    }

    enum Signer: String, CaseIterable, Sendable {
        case none, anotherKey, theServerForAnotherDevice, theServer
    }

    @Test(arguments: Signer.allCases)
    func onlyTheEnrolledServerCanMakeTheDeviceForget(signer: Signer) async throws {
        let target = Mutex<[String]>([])
        let signing = Mutex<SigningKeyPair?>(nil)
        let fixture = try await Fixture(events: 40) { request, honest in
            guard request.path.hasSuffix("/cursor") else { return Self.answer(honest()) }
            let forget = target.withLock { $0 }
            guard !forget.isEmpty else { return Self.answer(honest()) }
            return Self.forgetting(
                honest(), forget, signedBy: signing.withLock { $0 },
                forDevice: signer == .theServerForAnotherDevice ? "tablet-1" : SyncFixture.device)
        }
        defer { fixture.close() }
        let serverKey = fixture.server.signingKey.publicKey
        // The first run pins the server key the operator handed over at enrolment.
        _ = try await fixture.client(serverKey: serverKey).run()
        #expect(try fixture.store.pinnedServerKey() == serverKey)
        let alice = fixture.store.userRef(of: "alice").literal
        target.withLock { $0 = [alice] }
        signing.withLock {
            $0 =
                switch signer {
                case .none: nil
                case .anotherKey: SigningKeyPair.generate()
                case .theServerForAnotherDevice, .theServer: fixture.server.signingKey
                }
        }
        // Later runs use the pinned key without being given it.
        let summary = try await fixture.client().run()
        if signer == .theServer {
            #expect(summary.forgottenOnRequest == [alice])
            #expect(try fixture.store.isForgotten("alice"))
        } else {
            #expect(summary.forgottenOnRequest.isEmpty)
            #expect(try !fixture.store.isForgotten("alice"), "\(signer): a forged forget request erased a user")
            #expect(
                summary.forgetRequestsRefused?.contains("without a valid signature of the pinned server key") == true,
                "\(String(describing: summary.forgetRequestsRefused))")
        }
    }

    @Test func withoutAPinnedKeyNothingIsForgottenAndAnotherKeyIsRefused() async throws {
        let fixture = try await Fixture(events: 10) { request, honest in
            guard request.path.hasSuffix("/cursor") else { return Self.answer(honest()) }
            return Self.answer(honest())
        }
        defer { fixture.close() }
        _ = try await fixture.client().run()
        _ = try fixture.server.forgetUser("alice")
        let unpinned = try await fixture.client().run()
        #expect(try unpinned.forgottenOnRequest.isEmpty && !fixture.store.isForgotten("alice"))
        #expect(unpinned.forgetRequestsRefused?.contains("no pinned server key") == true, "\(String(describing: unpinned.forgetRequestsRefused))")

        let pinned = try await fixture.client(serverKey: fixture.server.signingKey.publicKey).run()
        #expect(try pinned.forgottenOnRequest.count == 1 && fixture.store.isForgotten("alice"))

        let other = SigningKeyPair.generate().publicKey
        let error = await Self.failure(of: try fixture.client(serverKey: other))
        #expect(error == .serverKeyMismatch)
        #expect(error?.message.contains("is pinned to the sync server key \(fixture.server.signingKey.publicKey.hex)") == true, "\(String(describing: error))")
    }
}
