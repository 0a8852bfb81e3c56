import Foundation
import OnboardingModel
import OnboardingServer
import OnboardingStore

extension Simulator {
    // MARK: Sync runs

    func makeClient(for device: SimulatedDevice) -> SyncClient {
        let link = device.link
        let deviceClock = device.clock
        let network: any SyncTransport = device.network!
        let transport: any SyncTransport = device.sendsKeysOnlyWhenNeeded ? KeylessUploadTransport(inner: network) : network
        device.runCount += 1
        device.runToken = device.token
        return SyncClient(
            store: device.store, transport: transport, token: device.token!, batchEvents: device.batchEvents,
            sleep: { duration in await link.sleep(duration) }, now: { deviceClock.now },
            serverKey: server.signingKey.publicKey,
            seed: options.seed ^ (UInt64(device.index) << 40) ^ UInt64(device.runCount))
    }

    /// An enrolled device with no run in progress starts one (the app syncs after a sign-in, on
    /// a timer, when the network returns).
    func startSync() throws -> Bool {
        guard let device = pick({ $0.isEnrolled && $0.link.isIdle }) else { return false }
        try begin(device)
        return true
    }

    func begin(_ device: SimulatedDevice) throws {
        let client = makeClient(for: device)
        device.client = client
        device.liesThisRun = []
        statistics.syncRuns += 1
        note("\(device.id) starts sync run \(device.runCount)")
        do { device.runTask = try device.link.beginRun { () async throws(SyncError) -> SyncSummary in try await client.run() } } catch {
            throw failure("liveness", "\(error)")
        }
        try afterActivation(device)
    }

    /// What the client did between being resumed and parking again.
    func afterActivation(_ device: SimulatedDevice) throws {
        touch(device)
        try absorbClientRecords(device)
        try checkSyncCursorAfterLies(of: device)
        switch device.link.parked {
        case .request(let request):
            note("\(device.id) sends \(Self.describe(request))")
        case .sleep(let until):
            note("\(device.id) waits \(until - clock.nowMilliseconds) ms")
        case .finished:
            let result = device.link.collect()!
            device.runTask = nil
            device.client = nil
            if let prune = device.pendingPrune {
                device.pendingPrune = nil
                try finishPrune(of: device, before: prune.before, batchRecords: prune.batchRecords, confirmation: result)
            } else {
                try judge(result, of: device)
            }
        case .idle, .running:
            preconditionFailure("the link of \(device.id) reported a park without parking")
        }
    }

    /// A run of an honest client ends with the server holding its log, or because the network
    /// failed it too often, or (for a device whose clock runs ahead) because its newest events are
    /// dated past the server's allowance, or with the protocol error a lie it was told calls for.
    /// Anything else is a defect, and so is an error naming the device's token.
    func judge(_ result: Result<SyncSummary, SyncError>, of device: SimulatedDevice) throws {
        if case .failure(let error) = result { try checkNoToken(in: error, of: device) }
        switch result {
        case .success(let summary):
            note(
                "\(device.id) sync run ends: acknowledged seq \(summary.acknowledgedSeq), \(summary.appended) appended, "
                    + "\(summary.duplicates) duplicates, \(summary.batches) batches, \(summary.retries) retries, \(summary.rewinds) rewinds"
                    + (summary.forgottenOnRequest.isEmpty ? "" : ", \(summary.forgottenOnRequest.count) forgotten on request")
                    + (summary.forgetFailures.isEmpty ? "" : ", \(summary.forgetFailures.count) forgets impossible")
                    + (summary.unknownForgetRequests == 0 ? "" : ", \(summary.unknownForgetRequests) forget requests for users it never held")
                    // Not the refusal's text: it names the server key, which differs between runs.
                    + (summary.forgetRequestsRefused == nil ? "" : ", forget requests refused"))
            if let refused = summary.forgetRequestsRefused, !device.liesThisRun.contains(where: \.altersForgetRequests) {
                throw failure("erasure", "\(device.id) refused the real server's forget requests: \(refused)")
            }
            if !summary.forgetFailures.isEmpty && device.prunedThrough == 0 {
                throw failure(
                    "erasure",
                    "\(device.id) could not carry out the server's forget requests though it never pruned: \(summary.forgetFailures.joined(separator: "; "))")
            }
        case .failure(let error) where error == .unauthorized && device.runToken != device.token:
            note("\(device.id) sync run ends: its token was revoked during the run")
        case .failure(let error) where error == .unavailable:
            note("\(device.id) sync run ends: the network failed it too often")
        case .failure(let error) where error == .refused && error.message.contains(SyncErrorCode.futureEvent.rawValue):
            note("\(device.id) sync run ends: an event is dated past the server's allowance")
        case .failure(let error) where isCaughtLie(error, of: device):
            statistics.liesCaught += 1
            note("\(device.id) sync run ends: it caught a lie (\(Self.name(of: error)))")
        case .failure(let error):
            throw failure("honest sync refused", "the sync run of \(device.id) ended with \(Self.name(of: error)): \(error.message)")
        }
    }

    // MARK: The network

    /// One request in flight is delivered (or lost, when its device is cut off from the server).
    func deliverOne() throws -> Bool {
        guard let device = pick({ if case .request = $0.link.parked { true } else { false } }) else { return false }
        try deliver(device)
        return true
    }

    func deliver(_ device: SimulatedDevice) throws {
        guard case .request(let request) = device.link.parked else { preconditionFailure("\(device.id) has no request in flight") }
        let outcome: Result<SyncResponse, any Error>
        if device.partitioned {
            statistics.requestsFailed += 1
            note("\(device.id): the request is lost (partitioned from the server)")
            outcome = .failure(SimulatedLink.NetworkFault(description: "simulated partition: no route to the sync server"))
        } else {
            outcome = .success(try serverSide(request, of: device))
        }
        do { try device.link.answer(outcome) } catch { throw failure("liveness", "\(error)") }
        try afterActivation(device)
    }

    /// Bookkeeping of an answer the server gave (whether or not the client will see it): what it
    /// acknowledged, and whether an honest device could ever be refused so.
    func observe(_ request: SyncRequest, _ response: SyncResponse, _ device: SimulatedDevice) throws {
        statistics.requestsDelivered += 1
        touchReplica(device)
        if request.method == "POST", let upload = try? SyncWire.uploadWithKeys(from: request.body), upload.keys == nil {
            statistics.keylessUploads += 1
        }
        let error = SyncWire.error(from: response.body)
        note("\(device.id): server answers \(response.status)" + (error.map { " \($0.wireCode)" } ?? ""))
        if response.body.count >= directory.utf8.count, String(decoding: response.body, as: UTF8.self).contains(directory) {
            throw failure(
                "no paths in answers",
                "the server's answer to \(Self.describe(request)) of \(device.id) names a path of its data directory: \(String(decoding: response.body.prefix(300), as: UTF8.self))"
            )
        }
        switch (response.status, error?.code) {
        case (200, _):
            guard let cursor = try? SyncWire.cursor(from: response.body) else {
                throw failure("protocol", "the server's 200 to \(Self.describe(request)) of \(device.id) carries no cursor")
            }
            device.acknowledged = max(device.acknowledged, cursor.acknowledgedSeq)
            if request.method == "POST", let upload = try? SyncWire.upload(from: request.body),
                let outcomes = try? SyncWire.outcomes(from: response.body)
            {
                let appended = Set(outcomes.filter { $0.kind == .appended }.map(\.seq))
                for record in upload.records where appended.contains(record.seq) {
                    if let user = record.event.user, !UserRef.isLiteral(user) { device.readableOnReplica.insert(user) }
                }
            }
        case (409, .gap?):
            break
        case (401, _) where request.bearerToken != device.token:
            break // a request made with a token revoked since
        case (400, .futureEvent?):
            let latest = server.options.clock().adding(milliseconds: server.options.maximumClockSkewMilliseconds)
            let upload = try? SyncWire.upload(from: request.body)
            guard let upload, upload.records.contains(where: { latest < $0.event.at }) else {
                throw failure(
                    "honest request refused",
                    "\(device.id) was refused future_event though no record of \(Self.describe(request)) is dated after \(latest.iso8601)")
            }
            statistics.futureEventRefusals += 1
        default:
            throw failure(
                "honest request refused",
                "\(Self.describe(request)) of \(device.id) was answered \(response.status) \(error?.description ?? String(decoding: response.body.prefix(300), as: UTF8.self))"
            )
        }
    }

    /// Time passes; clients whose waits are over run on, in device order.
    func tick() throws {
        let roll = random.below(1000)
        let delta = roll < 750 ? random.between(50...5_000) : roll < 950 ? random.between(5_000...120_000) : random.between(120_000...1_800_000)
        clock.advance(milliseconds: delta)
        note("\(delta) ms pass")
        try wakeDueSleepers()
    }

    func wakeDueSleepers() throws {
        var woken = 0
        while let device = devices.first(where: { if case .sleep(let until) = $0.link.parked { until <= clock.nowMilliseconds } else { false } }) {
            woken += 1
            guard woken <= Self.maximumActivationsPerStep else {
                throw failure("liveness", "sync clients woke \(woken) times without time passing (a client spins on zero waits)")
            }
            do { try device.link.wake() } catch { throw failure("liveness", "\(error)") }
            try afterActivation(device)
        }
    }

    /// A device loses its route to the server (or gets it back); sometimes the server is cut off
    /// from every device at once.
    func partition() throws {
        let roll = random.below(1000)
        if roll < 400, let device = pick({ !$0.partitioned }) {
            device.partitioned = true
            statistics.partitions += 1
            note("\(device.id) is cut off from the server")
        } else if roll < 700, let device = pick({ $0.partitioned }) {
            device.partitioned = false
            note("\(device.id) reaches the server again")
        } else if roll < 850 {
            for device in devices { device.partitioned = true }
            statistics.partitions += 1
            note("the server is cut off from every device")
        } else {
            for device in devices { device.partitioned = false }
            note("every partition heals")
        }
    }

    // MARK: Convergence

    /// The network heals and the server's clock passes every device's events; then every
    /// enrolled device must get its whole log to the server within a few sync runs, and the
    /// server's forget requests must reach every device that can carry them out. The hostile
    /// mode's liar stays for the first round (``hostileConvergenceRounds``), and every invariant
    /// is checked after it.
    func converge() throws {
        for device in devices { device.partitioned = false }
        defer { healing = false }
        for round in 1...Self.convergenceRounds {
            let pending = try devices.filter { try !isConverged($0) }
            if pending.isEmpty { break }
            // In the hostile mode the liar stays on the path for the first round (which carries
            // most uploads) and leaves it for the others, which must then bring every log home.
            healing = round > Self.hostileConvergenceRounds
            // Before every round: a device whose clock runs ahead dates even the user_forgotten
            // its client wrote in the last round ahead of the server.
            letServerClockPassEveryEvent()
            note("convergence round \(round): " + pending.map(\.id).joined(separator: ", "))
            for device in pending { try runToCompletion(device) }
            // What the liar made a client believe in this round must be caught now: the honest
            // rounds after it would set it right before the step's checks.
            if !healing && options.lieRatePerMille > 0 { try checkInvariants() }
        }
        for device in devices where try !isConverged(device) {
            let head = try expect("reading \(device.id)") { try device.store.head() }.seq
            let replica = try expect("reading the replica of \(device.id)") { try server.withDeviceLog(of: device.id) { try $0.head() } }.seq
            let requests = try expect("reading the replica of \(device.id)") { try server.withDeviceLog(of: device.id) { try $0.forgetRequests() } }.count
            throw failure(
                "liveness",
                "\(device.id) did not converge in \(Self.convergenceRounds) sync runs over a healed network: its log ends at seq \(head), the server holds seq \(replica), the sync cursor is \(try device.store.syncCursor()), \(requests) forget requests wait"
            )
        }
        statistics.convergences += 1
        scope.everything = true
    }

    /// Time passes until the server's clock, plus the skew it allows, reaches every event.
    private func letServerClockPassEveryEvent() {
        let allowance = server.options.maximumClockSkewMilliseconds
        let newest = devices.flatMap(\.log).map(\.event.at.millisecondsSince1970).max() ?? 0
        let behind = newest - (clock.nowMilliseconds + allowance)
        guard behind >= 0 else { return }
        clock.advance(milliseconds: behind + 1_000)
        note("\(behind + 1_000) ms pass so that the server's clock reaches every device's events")
    }

    func isConverged(_ device: SimulatedDevice) throws -> Bool {
        guard device.isEnrolled else { return true }
        guard device.link.isIdle else { return false }
        let head = try expect("reading \(device.id)") { try device.store.head() }.seq
        let cursor = try expect("reading \(device.id)") { try device.store.syncCursor() }
        let (replica, requests) = try expect("reading the replica of \(device.id)") {
            try server.withDeviceLog(of: device.id) { (try $0.head().seq, try $0.forgetRequests().count) }
        }
        return replica == head && cursor == head && (requests == 0 || device.prunedThrough > 0)
    }

    /// Runs `device`'s sync (starting one when none is in progress) until it ends, delivering
    /// every request and letting time pass for every wait.
    func runToCompletion(_ device: SimulatedDevice) throws {
        if device.link.isIdle { try begin(device) }
        try driveToCompletion(device)
    }

    /// Runs the run in progress on `device`'s link until it ends.
    func driveToCompletion(_ device: SimulatedDevice) throws {
        var activations = 0
        while true {
            activations += 1
            guard activations <= Self.maximumActivationsPerStep else {
                throw failure("liveness", "the sync run of \(device.id) did not end after \(activations) requests and waits")
            }
            switch device.link.parked {
            case .request:
                try deliver(device)
            case .sleep(let until):
                if until > clock.nowMilliseconds { clock.advance(milliseconds: until - clock.nowMilliseconds) }
                do { try device.link.wake() } catch { throw failure("liveness", "\(error)") }
                try afterActivation(device)
            case .idle:
                return
            case .running, .finished:
                preconditionFailure("the link of \(device.id) is between parks")
            }
        }
    }

    /// No error of the client names the device's token (it would end up in a log).
    func checkNoToken(in error: SyncError, of device: SimulatedDevice) throws {
        for token in [device.token, device.runToken].compactMap({ $0 }) where error.message.contains(token) {
            throw failure(
                "no token in errors",
                "the \(Self.name(of: error)) error of \(device.id)'s client names its token: \(error.message.replacingOccurrences(of: token, with: "<the token>").prefix(300))"
            )
        }
    }

    // MARK: Words for the trace

    /// `POST events [seq 3…9]`, `GET cursor`: what a request is, without its tokens or hashes.
    static func describe(_ request: SyncRequest) -> String {
        let endpoint = request.path.split(separator: "/").last.map(String.init) ?? request.path
        guard request.method == "POST", endpoint == "events", let upload = try? SyncWire.uploadWithKeys(from: request.body),
            let first = upload.records.first, let last = upload.records.last
        else { return "\(request.method) \(endpoint)" }
        return "POST events [seq \(first.seq)…\(last.seq)]" + (upload.keys == nil ? " without keys" : "")
    }

    /// The code of `error` in snake case, as the trace words it (`chain_broken`, `time_limit`).
    static func name(of error: SyncError) -> String {
        var name = ""
        for character in error.code.rawValue {
            if character.isUppercase { name += "_" + character.lowercased() } else { name.append(character) }
        }
        return name
    }
}
