import Foundation
import OnboardingModel
import OnboardingProjections
import OnboardingServer
import OnboardingStore
import OnboardingWorkload

/// A deterministic simulation of devices, the network and the sync server, driven by one seed
/// (in the manner of TigerBeetle's VOPR): devices with their own stores and skewed clocks record
/// realistic events and sync through a network that drops, duplicates, reorders, delays and
/// partitions; devices crash and restart from disk, the server restarts, devices enrol, users
/// are forgotten on devices and on the server, devices prune. After every step the invariants of
/// docs/testing.md § Deterministic simulation are checked; the first one broken ends the run
/// with the seed and step, which replay it exactly.
///
/// ```swift
/// var options = SimulationOptions(seed: 7)
/// options.steps = 500
/// let report = Simulator.run(options)   // blocks: call it from a thread of your own
/// if let failure = report.failure { print(failure) }
/// ```
///
/// The simulator runs on the calling thread and blocks it (the stores fsync and the sync clients
/// are driven by semaphores), so never call it from Swift concurrency's cooperative threads.
public final class Simulator {
    /// The simulation's time starts here (2026-03-01T00:00:00Z).
    static let startMilliseconds: Int64 = 1_772_323_200_000
    /// Users at the start; sign-ups add more.
    static let initialUsers = 10
    /// Devices that exist when the simulation starts (the rest are created and enrol later).
    static let initialDevices = 3
    /// Rounds of sync runs a convergence gives every device: the faulty network fails a run
    /// rarely enough (8 attempts per request) that five in a row mean a device cannot sync.
    static let convergenceRounds = 5
    /// Rounds of a convergence in which the hostile mode still lies: one, so four honest rounds
    /// remain, as many as a faulty network needs (see ``convergenceRounds``).
    static let hostileConvergenceRounds = 1
    /// Activations of one client within one step, beyond which it is spinning.
    static let maximumActivationsPerStep = 10_000

    let options: SimulationOptions
    let directory: String
    var random: SplitMix64
    let clock: SimulationClock
    var server: SyncServer
    let serverOptions: SyncServer.Options
    let serverDirectory: String
    let adminToken: String
    let auditorToken: String
    var devices: [SimulatedDevice] = []
    /// Every user id of the simulation (devices' residents and sign-ups join it).
    var pool: [String]
    var trace = Trace()
    var statistics = SimulationStatistics()
    var step = 0
    /// Lines the server wrote to its operator's log (a failure an honest request met).
    let serverLog = ServerLog()
    /// What the hostile mode's liar saw on the path (it tells its lies with it).
    var liar = LiarMemory()
    /// A convergence is past its first round: the network has healed, and no lie is told.
    var healing = false
    /// What the current step may have changed (the checks after it read that).
    var scope = CheckScope()
    /// Every replica's records as they read there, in (at, device, seq) order, for the server's
    /// history; `nil` after a replica changed.
    var mergedReplicaReadings: [HistoryModel.Reading]?
    /// Every this many steps every invariant reads everything again, whatever the steps
    /// changed: a defect that changes what a step did not touch is found within this many
    /// steps. 50 keeps the full reads (which grow with the logs) a small part of a run.
    static let fullSweepSteps = 50

    /// Runs a simulation and reports; never throws (a setup failure is reported as a failure at
    /// step 0).
    public static func run(_ options: SimulationOptions) -> SimulationReport {
        let simulator: Simulator
        do {
            simulator = try Simulator(options: options)
        } catch {
            return SimulationReport(
                seed: options.seed, stepsRun: 0, traceDigest: 0, traceLineCount: 0, statistics: SimulationStatistics(),
                failure: SimulationFailure(seed: options.seed, step: 0, invariant: "setup", message: "\(error)"),
                traceTail: [], directory: options.directory ?? "")
        }
        return simulator.runSteps()
    }

    init(options: SimulationOptions) throws {
        precondition(
            (1...SimulationOptions.maximumDevices).contains(options.devices),
            "devices must be 1…\(SimulationOptions.maximumDevices)")
        self.options = options
        random = SplitMix64(seed: options.seed)
        clock = SimulationClock(start: Timestamp(millisecondsSince1970: Self.startMilliseconds))
        trace.echo = options.verbose
        directory = try SimulationDirectory.make(seed: options.seed, under: options.directory)
        serverDirectory = (directory as NSString).appendingPathComponent("server")
        pool = (0..<Self.initialUsers).map { "user-\($0)" }

        var serverOptions = SyncServer.Options()
        let clock = self.clock
        serverOptions.clock = { clock.now }
        // Replicas start tiny so that appends meet MAP_FULL and grow, and few stay open so that
        // they are closed and reopened (at the size their file has) all the time.
        serverOptions.replicaInitialMapSizeBytes = Self.tinyMapSizes[random.below(Self.tinyMapSizes.count)]
        serverOptions.maximumOpenReplicas = 1 + random.below(3)
        let log = serverLog
        serverOptions.failureLog = { line in log.append(line) }
        self.serverOptions = serverOptions
        server = try Self.makeServer(options: options, directory: serverDirectory, serverOptions: serverOptions)
        guard let admin = server.createdAdminToken else { throw SimulationSetupError("the new server made no admin token") }
        adminToken = admin
        let issued = server.handle(SyncRequest(method: "POST", path: SyncPaths.auditorTokens, headers: ["authorization": "Bearer \(admin)"]))
        guard issued.status == 201, let token = try? SyncWire.token(from: issued.body) else {
            throw SimulationSetupError("the server refused an auditor token (\(issued.status))")
        }
        auditorToken = token
        trace.add(
            "seed \(options.seed): \(options.steps) steps, up to \(options.devices) devices, "
                + (options.databaseURL == nil ? "" : "the server on PostgreSQL, ")
                + "replicas map \(serverOptions.replicaInitialMapSizeBytes) B, \(serverOptions.maximumOpenReplicas) open"
                + (options.lieRatePerMille > 0
                    ? ", a lying server on \(options.lieRatePerMille)‰ of requests" + (options.undetectableLies ? " (undetectable lies too)" : "") : ""))
        for _ in 0..<min(Self.initialDevices, options.devices) { try createDevice() }
    }

    /// Initial map sizes: from the smallest a store opens with to a few pages more, so growth
    /// happens at many different points of a log.
    /// The server on the storage the options name.
    static func makeServer(options: SimulationOptions, directory: String, serverOptions: SyncServer.Options) throws -> SyncServer {
        if let url = options.databaseURL { return try SyncServer(databaseURL: url, options: serverOptions) }
        return try SyncServer(dataDirectory: directory, options: serverOptions)
    }

    static let tinyMapSizes = [32 << 10, 40 << 10, 48 << 10, 64 << 10, 96 << 10]

    private func runSteps() -> SimulationReport {
        var failure: SimulationFailure?
        do {
            scope.everything = true
            try checkInvariants()
            while step < options.steps {
                step += 1
                try runStep()
                if step % Self.fullSweepSteps == 0 { scope.everything = true }
                try checkInvariants()
            }
            step += 1
            note("final convergence")
            try converge()
            scope.everything = true
            try checkInvariants()
        } catch let error as SimulationFailure {
            failure = error
        } catch {
            failure = SimulationFailure(
                seed: options.seed, step: step, invariant: "unexpected error", message: "\(error)",
                replaySteps: min(step, options.steps), devices: options.devices,
                lieRatePerMille: options.lieRatePerMille, undetectableLies: options.undetectableLies)
        }
        tearDown()
        return SimulationReport(
            seed: options.seed, stepsRun: step, traceDigest: trace.digest, traceLineCount: trace.lineCount,
            statistics: statistics, failure: failure, traceTail: trace.tail, directory: directory)
    }

    private func tearDown() {
        for device in devices {
            if let task = device.runTask { try? device.link.crash(cancelling: task) }
            statistics.mapGrowths += device.mapGrowths
            device.closeStore()
        }
        server.close()
        if !options.keepFiles { try? FileManager.default.removeItem(atPath: directory) }
    }

    // MARK: Steps

    enum Action: CaseIterable {
        case record, startSync, deliver, tick, crashDevice, restartDevice, restartServer, createDevice, enrol,
            forgetOnDevice, forgetOnServer, prune, partition, clockJump, converge, replaceToken
    }

    /// Weights per mille of each action (an action that cannot happen now falls back to recording).
    static let weights: [(Action, Int)] = [
        (.record, 330), (.startSync, 130), (.deliver, 250), (.tick, 130), (.crashDevice, 20), (.restartDevice, 10),
        (.restartServer, 15), (.createDevice, 10), (.enrol, 25), (.forgetOnDevice, 8), (.forgetOnServer, 8),
        (.prune, 15), (.partition, 25), (.clockJump, 6), (.converge, 8), (.replaceToken, 5)
    ]

    /// The hostile mode's weights: four times as many prunes (taken from recording), since a
    /// prune is where a lie believed would cost records, and its confirmation is a request the
    /// liar answers like any other.
    static let hostileWeights: [(Action, Int)] = weights.map { action, weight in
        switch action {
        case .record: (action, weight - 45)
        case .prune: (action, weight + 45)
        default: (action, weight)
        }
    }

    private func runStep() throws {
        let weights = options.lieRatePerMille > 0 ? Self.hostileWeights : Self.weights
        let total = weights.reduce(0) { $0 + $1.1 }
        var roll = random.below(total)
        var action = Action.record
        for (candidate, weight) in weights {
            if roll < weight {
                action = candidate
                break
            }
            roll -= weight
        }
        if try !perform(action) { try record() }
    }

    /// Does `action`; `false` when it cannot happen now.
    private func perform(_ action: Action) throws -> Bool {
        switch action {
        case .record: try record()
        case .startSync: return try startSync()
        case .deliver: return try deliverOne()
        case .tick: try tick()
        case .crashDevice: return try crashDevice()
        case .restartDevice: return try restartDevice()
        case .restartServer: try restartServer()
        case .createDevice:
            guard devices.count < options.devices else { return false }
            try createDevice()
        case .enrol: return try enrol()
        case .forgetOnDevice: return try forgetOnDevice()
        case .forgetOnServer: return try forgetOnServer()
        case .prune: return try prune()
        case .partition: try partition()
        case .clockJump: return clockJump()
        case .replaceToken: return try replaceToken()
        case .converge:
            note("convergence")
            try converge()
        }
        return true
    }

    // MARK: Helpers

    func note(_ line: String) {
        trace.add("step \(step) t=\(clock.nowMilliseconds - Self.startMilliseconds) ms: \(line)")
    }

    func failure(_ invariant: String, _ message: String) -> SimulationFailure {
        var detail = message
        let logged = serverLog.lines
        if !logged.isEmpty { detail += "\nserver log: " + logged.suffix(5).joined(separator: " | ") }
        return SimulationFailure(
            seed: options.seed, step: step, invariant: invariant, message: detail, replaySteps: min(step, options.steps),
            devices: options.devices, lieRatePerMille: options.lieRatePerMille, undetectableLies: options.undetectableLies)
    }

    /// Runs an operation of the code under test that must not fail here.
    func expect<T>(_ what: String, _ body: () throws -> T) throws -> T {
        do { return try body() } catch {
            throw failure("operation failed", "\(what): \(error)")
        }
    }

    /// A device chosen by the seed among those that pass `filter`.
    func pick(_ filter: (SimulatedDevice) -> Bool) -> SimulatedDevice? {
        let candidates = devices.filter(filter)
        return candidates.isEmpty ? nil : candidates[random.below(candidates.count)]
    }

    func chance(_ perMille: Int) -> Bool { random.chance(perMille: perMille) }

    // MARK: What a step touched

    /// New records or a new cursor on the device.
    func touch(_ device: SimulatedDevice) { scope.devices.insert(device.index) }
    /// Every record of the device may read differently (reopened, a forget, a prune).
    func touchFully(_ device: SimulatedDevice) {
        scope.devices.insert(device.index)
        scope.fullDevices.insert(device.index)
    }
    /// A request of the device reached the server.
    func touchReplica(_ device: SimulatedDevice) { scope.replicas.insert(device.index) }
    /// Every replica may read differently (the server restarted or forgot a user).
    func touchEveryReplica() {
        for device in devices {
            scope.replicas.insert(device.index)
            scope.fullReplicas.insert(device.index)
        }
    }
}
