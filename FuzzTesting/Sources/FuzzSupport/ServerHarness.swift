import Foundation
import OnboardingServer
import OnboardingStore
import Synchronization

/// A real ``SyncServer`` in a temporary directory, for the server targets: created once per
/// process, with `kiosk-7` enrolled (no signing key; its replica holds the seed story's first
/// batch), `kiosk-8` enrolled with the fixtures' signing key (empty replica), an auditor token
/// and the admin token. ``reset()`` puts it back in that state: a target calls it after an input
/// that changed the server, so every input meets the same server and a saved crash input
/// replays alone.
///
/// The directory is on `/dev/shm` when there is one: every acknowledged upload is fsynced, and
/// on a RAM disk that costs nothing, so resets stay cheap.
///
/// ```swift
/// let harness = ServerHarness.shared
/// let response = harness.server.handle(SyncRequest(method: "GET", path: "/v1/health"))
/// ```
public final class ServerHarness: @unchecked Sendable {
    // @unchecked: a libFuzzer target calls it from one thread only.
    public static let shared = ServerHarness()

    public enum Token: CaseIterable, Sendable {
        case none, device, otherDevice, auditor, admin, unknown
    }

    /// The server's clock: a day after the seed story, so its events are in the past.
    public static let now = FuzzFixtures.start.adding(milliseconds: 86_400_000)
    public static let signedDevice = "kiosk-8"

    public private(set) var server: SyncServer
    public private(set) var directory: String
    public private(set) var tokens: [Token: String] = [:]
    /// What the server writes to its operator's log (``SyncServer/Options/failureLog``).
    public final class OperatorLog: Sendable {
        let lines = Mutex<[String]>([])
        func append(_ line: String) { lines.withLock { $0.append(line) } }
        func clear() { lines.withLock { $0.removeAll() } }
        public var text: String { lines.withLock { $0.joined(separator: "\n  ") } }
    }

    /// What the server wrote to its operator log during the current input (printed on failure).
    public let failureLog = OperatorLog()
    public var resetCount: Int { Self.resets.load(ordering: .relaxed) }
    private static let resets = Atomic<Int>(0)
    private let preloadBody: [UInt8]
    private static let sequence = Atomic<Int>(0)

    private init() {
        Self.removeStaleDirectories()
        do {
            let scratch = Self.newDirectory()
            defer { try? FileManager.default.removeItem(atPath: scratch) }
            guard let first = try SeedDevice.uploads(in: scratch).first(where: { $0.name == SeedDevice.preloadName }) else {
                fatalError("the seed story has no \(SeedDevice.preloadName) upload")
            }
            preloadBody = first.body
            (server, directory, tokens) = try Self.start(preloadBody: first.body, log: failureLog)
        } catch {
            fatalError("ServerHarness: cannot start the server: \(error)")
        }
        ServerHarness.registerCleanup(directory)
    }

    /// Closes the server, deletes its directory and starts a fresh one in the initial state.
    public func reset() {
        server.close()
        try? FileManager.default.removeItem(atPath: directory)
        do {
            (server, directory, tokens) = try Self.start(preloadBody: preloadBody, log: failureLog)
        } catch {
            fatalError("ServerHarness: cannot restart the server: \(error)")
        }
        ServerHarness.registerCleanup(directory)
        Self.resets.add(1, ordering: .relaxed)
    }

    /// The request headers for `token` (and a JSON content type when `json`).
    public func headers(_ token: Token, json: Bool) -> [String: String] {
        var headers: [String: String] = [:]
        if let value = tokens[token] { headers["authorization"] = "Bearer \(value)" }
        if json { headers["content-type"] = SyncWire.contentType }
        return headers
    }

    /// Runs one request; clears the failure log first.
    public func handle(_ request: SyncRequest) -> SyncResponse {
        failureLog.clear()
        return server.handle(request)
    }

    private static func start(preloadBody: [UInt8], log: OperatorLog) throws -> (SyncServer, String, [Token: String]) {
        let directory = newDirectory()
        var options = SyncServer.Options()
        options.clock = { ServerHarness.now }
        // A history poll (`wait=`) is answered at once: an input must not sit out a wait.
        options.maximumPollWaitSeconds = 0
        // Inputs come thousands a second with the same tokens: a limit would answer 429 to all.
        options.rateLimits = .off
        options.failureLog = { line in log.append(line) }
        let server = try SyncServer(dataDirectory: directory, options: options)
        guard let admin = server.createdAdminToken else { fatalError("a new server has an admin token") }
        func call(_ method: String, _ path: String, _ token: String, _ body: [UInt8] = []) throws -> [UInt8] {
            let response = server.handle(
                SyncRequest(
                    method: method, path: path,
                    headers: ["authorization": "Bearer \(token)", "content-type": SyncWire.contentType],
                    body: body))
            guard (200..<300).contains(response.status) else {
                fatalError("ServerHarness: \(method) \(path) answered \(response.status): \(String(decoding: response.body, as: UTF8.self))")
            }
            return response.body
        }
        let device = try SyncWire.token(from: try call("POST", "/v1/devices", admin, SyncWire.enrolBody(device: FuzzFixtures.device)))
        let other = try SyncWire.token(
            from: try call(
                "POST", "/v1/devices", admin,
                SyncWire.enrolBody(device: signedDevice, publicKey: SeedDevice.signingKey.publicKey)))
        let auditor = try SyncWire.token(from: try call("POST", "/v1/auditors", admin))
        _ = try call("POST", "/v1/devices/\(FuzzFixtures.device)/events", device, preloadBody)
        let tokens: [Token: String] = [
            .device: device, .otherDevice: other, .auditor: auditor, .admin: admin,
            .unknown: "0123456789abcdef0123456789abcdef"
        ]
        return (server, directory, tokens)
    }

    // MARK: Scratch directories

    private static var root: String {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: "/dev/shm", isDirectory: &isDirectory), isDirectory.boolValue,
            access("/dev/shm", W_OK) == 0
        {
            return "/dev/shm"
        }
        return NSTemporaryDirectory()
    }

    private static let prefix = "onboard-fuzz-"

    /// A new empty directory named after this process, so a later run can tell it is stale.
    public static func newDirectory() -> String {
        let number = sequence.add(1, ordering: .relaxed).newValue
        let path = (root as NSString).appendingPathComponent("\(prefix)\(getpid())-\(number)")
        try? FileManager.default.removeItem(atPath: path)
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            fatalError("cannot create \(path): \(error)")
        }
        return path
    }

    /// Directories of fuzz processes that no longer run (one that crashed leaves its own).
    private static func removeStaleDirectories() {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: root) else { return }
        for name in names where name.hasPrefix(prefix) {
            guard let pid = name.dropFirst(prefix.count).split(separator: "-").first.flatMap({ Int32($0) }) else { continue }
            if pid != getpid(), kill(pid, 0) != 0, errno == ESRCH {
                try? FileManager.default.removeItem(atPath: (root as NSString).appendingPathComponent(name))
            }
        }
    }

    /// The directory to delete when the process exits (libFuzzer ends a timed run with `exit`).
    private static let cleanupPath = Mutex<String?>(nil)
    private static let cleanupRegistered = Atomic<Bool>(false)

    private static func registerCleanup(_ path: String) {
        cleanupPath.withLock { $0 = path }
        if cleanupRegistered.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged {
            atexit {
                if let path = ServerHarness.cleanupPath.withLock({ $0 }) { try? FileManager.default.removeItem(atPath: path) }
                // How often an input changed the server (each costs a fresh server): run.sh's log shows it.
                let line = "ServerHarness: the server was reset \(ServerHarness.resets.load(ordering: .relaxed)) times\n"
                _ = line.withCString { write(2, $0, strlen($0)) }
            }
        }
    }
}
