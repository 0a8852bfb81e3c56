import Foundation
@_exported import TestSupport
import OnboardingModel
import OnboardingStore
import Synchronization

// Helpers for the sync tests: a store with events, a faithful fake of the server's sync routes,
// a scripted transport, and a manual clock. Nothing here asserts.

enum SyncFixture {
    static let device = "kiosk-7"
    static let token = "token-kiosk-7"
    static let start = Timestamp(millisecondsSince1970: 1_796_054_400_123)

    static func openStore(in directory: TemporaryDirectory, name: String = "store", device: String = SyncFixture.device) throws -> OnboardingStore {
        var options = OnboardingStore.Options()
        options.deviceID = device
        options.durability = .relaxed
        return try OnboardingStore.open(at: directory.appending(name), options: options)
    }

    static func event(
        _ index: Int, device: String = SyncFixture.device, payload: Payload = .signInStarted(method: .passcode),
        id: UUID = UUID()
    ) -> Event {
        Event(
            id: id, device: device, at: start.adding(milliseconds: Int64(index) * 1000), user: "alice",
            flow: nil, payload: payload)
    }

    /// Appends `count` events, in transactions of at most 1,000.
    @discardableResult
    static func append(_ count: Int, to store: OnboardingStore, from first: Int = 0) async throws -> [AppendResult] {
        var results: [AppendResult] = []
        var index = first
        while index < first + count {
            let chunk = min(1000, first + count - index)
            results += try await store.append((index..<index + chunk).map { event($0, device: store.deviceID) })
            index += chunk
        }
        return results
    }

    static func allRecords(_ store: OnboardingStore) throws -> [Record] {
        let head = try store.head().seq
        return head == 0 ? [] : try store.records(in: 1...head)
    }
}

/// The sync routes of the protocol, implemented from its rules and nothing else: per device a list
/// of records; gaps, forks and broken links refused; a batch all or nothing.
final class FakeSyncServer: Sendable {
    private struct State {
        var logs: [String: [Record]] = [:]
        var requests = 0
    }

    private let state = Mutex(State())
    private let tokens: [String: String]
    let maximumBodyBytes: Int

    init(tokens: [String: String] = [SyncFixture.token: SyncFixture.device], maximumBodyBytes: Int = SyncLimits.maximumBodyBytes) {
        self.tokens = tokens
        self.maximumBodyBytes = maximumBodyBytes
    }

    func log(of device: String = SyncFixture.device) -> [Record] { state.withLock { $0.logs[device] ?? [] } }
    func setLog(_ records: [Record], of device: String = SyncFixture.device) { state.withLock { $0.logs[device] = records } }
    func truncate(to count: Int, of device: String = SyncFixture.device) {
        state.withLock { $0.logs[device] = Array(($0.logs[device] ?? []).prefix(count)) }
    }
    var requestCount: Int { state.withLock { $0.requests } }

    func handle(_ request: SyncRequest) -> SyncResponse {
        state.withLock { $0.requests += 1 }
        let parts = request.path.split(separator: "/").map(String.init)
        guard parts.count == 4, parts[0] == "v1", parts[1] == "devices" else { return failure(.notFound, "no such endpoint") }
        let device = parts[2]
        guard let token = request.bearerToken, let owner = tokens[token] else { return failure(.unauthorized, "bad token") }
        guard owner == device else { return failure(.forbidden, "another device's log") }
        switch (request.method, parts[3]) {
        case ("GET", "cursor"):
            return SyncResponse(
                status: 200, headers: ["content-type": SyncWire.contentType],
                body: SyncWire.cursorBody(cursor(device, log(of: device))))
        case ("POST", "events"):
            guard request.headers["content-type"]?.hasPrefix(SyncWire.contentType) == true else {
                return failure(.unsupportedMediaType, "send application/json")
            }
            guard request.body.count <= maximumBodyBytes else { return failure(.tooLarge, "at most \(maximumBodyBytes) bytes") }
            let upload: SyncWire.Upload
            do { upload = try SyncWire.uploadWithKeys(from: request.body) } catch { return failure(.malformed, "\(error)") }
            guard upload.device == device else { return failure(.malformed, "body.device differs from the path") }
            return state.withLock { state in
                var staged = state.logs[device] ?? []
                guard upload.records[0].seq >= 1, upload.records[0].seq <= UInt64(staged.count) + 1 else {
                    return failure(.gap, "expected seq \(staged.count + 1)", expectedSeq: UInt64(staged.count) + 1)
                }
                var outcomes: [SyncWire.Outcome] = []
                for record in upload.records {
                    if record.seq <= UInt64(staged.count) {
                        guard staged[Int(record.seq) - 1].hash == record.hash else {
                            return failure(.fork, "a different record is stored at seq \(record.seq)")
                        }
                        outcomes.append(.init(seq: record.seq, kind: .duplicate))
                    } else {
                        let previous = staged.last?.hash ?? .zero
                        // Sealed as the device sealed it, with the keys the upload carried.
                        let computed = Digest.hash(
                            previous.bytes
                                + RecordCodec.body(
                                    of: record.event, seq: record.seq,
                                    seal: Self.seal(for: record.event, keys: upload.keys)))
                        guard record.previousHash == previous, record.hash == computed else {
                            return failure(.chainBroken, "seq \(record.seq) does not link or hash")
                        }
                        staged.append(record)
                        outcomes.append(.init(seq: record.seq, kind: .appended))
                    }
                }
                state.logs[device] = staged
                return SyncResponse(
                    status: 200, headers: ["content-type": SyncWire.contentType],
                    body: SyncWire.uploadResponseBody(cursor(device, staged), outcomes: outcomes))
            }
        default:
            return failure(.methodNotAllowed, "\(request.method) \(request.path)")
        }
    }

    /// The seal the device wrote `event` with: the pseudonym under the uploaded pseudonym key (or
    /// the pseudonym literal itself) and, for personal fields, the uploaded user key.
    static func seal(for event: Event, keys: SyncWire.Keys?) -> UserSeal? {
        guard let user = event.user else { return nil }
        guard let keys else { return TestKeys.seal(for: user) }
        let ref = UserRef(literal: user) ?? UserRef(user: user, pseudonymKey: keys.pseudonymKey)
        return UserSeal(ref: ref, key: event.hasPersonalFields ? keys.users[ref] : nil)
    }

    private func cursor(_ device: String, _ log: [Record]) -> SyncWire.Cursor {
        SyncWire.Cursor(device: device, acknowledgedSeq: UInt64(log.count), headHash: log.last?.hash ?? .zero)
    }

    private func failure(_ code: SyncErrorCode, _ message: String, expectedSeq: UInt64? = nil) -> SyncResponse {
        SyncResponse(
            status: code.status, headers: ["content-type": SyncWire.contentType],
            body: SyncWire.errorBody(.init(code: code, message: message, expectedSeq: expectedSeq)))
    }
}

/// Wraps a transport; `script` sees every request (numbered from 1) and may answer it, fail it,
/// or let it through (`.forward`). Keeps every request it saw.
final class ScriptedTransport: SyncTransport {
    enum Step: Sendable {
        case forward
        case forwardModified(SyncRequest)
        case answer(SyncResponse)
        case fail
        /// Delivers, then fails (the answer is lost).
        case forwardThenFail
    }

    struct NetworkDown: Error, CustomStringConvertible { var description: String { "scripted network failure" } }

    private let inner: any SyncTransport
    private let script: @Sendable (Int, SyncRequest) -> Step
    private let seen = Mutex<[SyncRequest]>([])

    init(wrapping inner: any SyncTransport, script: @escaping @Sendable (Int, SyncRequest) -> Step = { _, _ in .forward }) {
        self.inner = inner
        self.script = script
    }

    var requests: [SyncRequest] { seen.withLock { $0 } }
    var uploads: Int { requests.filter { $0.method == "POST" }.count }

    func send(_ request: SyncRequest) async throws -> SyncResponse {
        let number = seen.withLock { seen in
            seen.append(request)
            return seen.count
        }
        switch script(number, request) {
        case .forward: return try await inner.send(request)
        case .forwardModified(let modified): return try await inner.send(modified)
        case .answer(let response): return response
        case .fail: throw NetworkDown()
        case .forwardThenFail:
            _ = try await inner.send(request)
            throw NetworkDown()
        }
    }
}

/// A clock that never waits: it records every requested sleep.
final class ManualClock: Sendable {
    private let recorded = Mutex<[Duration]>([])
    var waits: [Duration] { recorded.withLock { $0 } }

    var sleep: @Sendable (Duration) async throws -> Void {
        { [self] duration in
            recorded.withLock { $0.append(duration) }
            await Task.yield()
        }
    }
}

/// Waits (really) until `condition` holds, polling every 10 ms for at most `timeout`.
/// Waits for `condition`. The bound is generous: on a 2-core machine the suite's synchronous
/// tests (child processes, sockets) can hold both cooperative threads for tens of seconds, and
/// the agent being watched runs on those threads; a test that fails waits the whole bound.
func eventually(timeout: Duration = .seconds(90), _ condition: () async throws -> Bool) async rethrows -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return try await condition()
}

extension SyncResponse {
    static func status(_ status: Int, retryAfter: Int? = nil) -> SyncResponse {
        SyncResponse(
            status: status, headers: retryAfter.map { ["retry-after": String($0)] } ?? [:],
            body: SyncWire.errorBody(.init(code: .busy, message: "try later")))
    }
}

/// A sleep that waits until the test says so: each ``sleep`` suspends until ``advance()``, so a
/// test drives a periodic loop step by step instead of waiting for real time. A cancelled sleep
/// throws `CancellationError` at once, as `Task.sleep` does.
final class StepClock: Sendable {
    private struct State {
        var waiters: [UUID: CheckedContinuation<Void, any Error>] = [:]
        var cancelled: Set<UUID> = []
        var slept = 0
    }

    private let state = Mutex(State())

    /// Sleeps waiting for ``advance()`` now.
    var sleeping: Int { state.withLock { $0.waiters.count } }
    /// Sleeps begun so far.
    var slept: Int { state.withLock { $0.slept } }

    var sleep: @Sendable (Duration) async throws -> Void {
        { [self] _ in
            let id = UUID()
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    let cancelledAlready = state.withLock { state -> Bool in
                        state.slept += 1
                        if state.cancelled.remove(id) != nil { return true }
                        state.waiters[id] = continuation
                        return false
                    }
                    if cancelledAlready { continuation.resume(throwing: CancellationError()) }
                }
            } onCancel: {
                let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                    guard let waiter = state.waiters.removeValue(forKey: id) else {
                        state.cancelled.insert(id)
                        return nil
                    }
                    return waiter
                }
                waiter?.resume(throwing: CancellationError())
            }
        }
    }

    /// Ends every sleep now waiting.
    func advance() {
        let waiters = state.withLock { state in
            defer { state.waiters = [:] }; return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }
}

/// Holds request number `holding` (1-based, counting every request) until ``open()``: a test acts
/// while a run waits on that request, then lets it through.
final class GateTransport: SyncTransport {
    private struct State {
        var count = 0
        var arrived = false
        var isOpen = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let inner: any SyncTransport
    private let holding: Int
    private let state = Mutex(State())

    init(wrapping inner: any SyncTransport, holding: Int) {
        self.inner = inner
        self.holding = holding
    }

    /// Requests sent so far (the held one included).
    var requestCount: Int { state.withLock { $0.count } }
    /// The held request has arrived and waits.
    var isHolding: Bool { state.withLock { $0.arrived && !$0.isOpen } }

    func open() {
        let waiter = state.withLock { state in
            state.isOpen = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    func send(_ request: SyncRequest) async throws -> SyncResponse {
        let holds = state.withLock { state -> Bool in
            state.count += 1
            guard state.count == holding, !state.isOpen else { return false }
            state.arrived = true
            return true
        }
        if holds {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let openAlready = state.withLock { state -> Bool in
                    if state.isOpen { return true }
                    state.waiter = continuation
                    return false
                }
                if openAlready { continuation.resume() }
            }
        }
        return try await inner.send(request)
    }
}
