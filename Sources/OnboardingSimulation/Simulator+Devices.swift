import Foundation
import OnboardingModel
import OnboardingProjections
import OnboardingServer
import OnboardingStore
import OnboardingWorkload

extension Simulator {
    // MARK: Devices come and go

    func createDevice() throws {
        let index = devices.count
        let id = "sim-d\(index)"
        let path = ((directory as NSString).appendingPathComponent("devices") as NSString).appendingPathComponent("d\(index)")
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let kind = DeviceScript.Kind.allCases[random.below(DeviceScript.Kind.allCases.count)]
        let keysOnlyWhenNeeded = chance(300)
        var storeOptions = OnboardingStore.Options()
        storeOptions.deviceID = id
        storeOptions.initialMapSizeBytes = Self.tinyMapSizes[random.below(Self.tinyMapSizes.count)]
        // Snapshots only on a clean close (and by prune): a background snapshot would write at a
        // moment chosen by thread scheduling, and a crash image or a map growth would then
        // depend on it.
        storeOptions.snapshotEveryEvents = Int.max
        let skew = drawSkew()
        let deviceClock = DeviceClock(base: clock, skewMilliseconds: skew)
        // The store refuses events dated past its clock's allowance: its clock is the device's.
        storeOptions.clock = { deviceClock.now }
        let residents = kind == .personal ? [pool[random.below(pool.count)]] : []
        let script = DeviceScript(
            kind: kind, device: id, residents: residents,
            beginsAnonymously: keysOnlyWhenNeeded || chance(200))
        let batches = [3, 8, 16, 64, SyncLimits.maximumBatchEvents]
        // An older client's first batch must be small enough to hold only the sign-up's first
        // events, which name no user.
        let batchEvents = keysOnlyWhenNeeded ? 4 : batches[random.below(batches.count)]
        let faults = FaultyTransport.Faults(
            dropRequest: Double(random.below(100)) / 1000, dropResponse: Double(random.below(100)) / 1000,
            duplicate: Double(random.below(100)) / 1000, delay: Double(random.below(200)) / 1000,
            reorder: Double(random.below(100)) / 1000, maximumDelay: .seconds(5))
        let device = try expect("creating the store of \(id)") {
            try SimulatedDevice(
                index: index, id: id, path: path, storeOptions: storeOptions,
                clock: deviceClock, link: SimulatedLink(device: id, clock: clock),
                script: script, sendsKeysOnlyWhenNeeded: keysOnlyWhenNeeded, enrolsWithSigningKey: chance(700),
                batchEvents: batchEvents, faults: faults)
        }
        devices.append(device)
        note(
            "\(id) is new: \(kind.rawValue), clock \(skew) ms off, map \(storeOptions.initialMapSizeBytes) B, batches of \(batchEvents)"
                + (keysOnlyWhenNeeded ? ", an older client (keys only when a record names a user)" : ""))
    }

    /// A device clock's error: most are within seconds, some lag by hours, some run ahead — a
    /// few by more than the server allows (their uploads wait until the server's time catches up).
    func drawSkew() -> Int64 {
        let roll = random.below(1000)
        if roll < 700 { return random.between(-30_000...30_000) }
        if roll < 850 { return -random.between(60_000...10_800_000) }
        if roll < 950 { return random.between(30_000...240_000) }
        return random.between(330_000...1_200_000)
    }

    // MARK: What people do

    /// A device records one to three events of its people's current flows, each when it happens
    /// (a second or so apart) — or, one time in five, writes them in one append (the app's queue
    /// flushed at once: one commit with several events, perhaps several new users).
    func record() throws {
        guard let device = pick({ _ in true }) else { return }
        var types: [String] = []
        var queued: [Event] = []
        let batched = chance(200)
        for _ in 0..<(1 + random.below(3)) {
            let at = device.clock.now
            var decisionError: StoreError?
            let (event, newUser) = device.script.next(random: &random, at: at, pool: pool) { user, factor in
                do throws(StoreError) { return try device.store.signInDecision(user: user, factor: factor, at: at) } catch {
                    decisionError = error
                    return .allowed(failures: 0)
                }
            }
            if let decisionError { throw failure("operation failed", "the lockout decision on \(device.id): \(decisionError)") }
            if let newUser, newUser.contains("-new") { pool.append(newUser) }
            queued.append(event)
            if !batched { try append(queued, to: device); queued = [] }
            types.append(event.type.rawValue + (event.user.map { " \($0)" } ?? ""))
            clock.advance(milliseconds: random.between(200...3_000))
        }
        if batched { try append(queued, to: device) }
        touch(device)
        note("\(device.id) records " + types.joined(separator: ", ") + (batched && types.count > 1 ? " (one append)" : ""))
    }

    /// Appends `events` in one commit and adds them to the model with the hashes they got.
    private func append(_ events: [Event], to device: SimulatedDevice) throws {
        let results = try expect("appending to \(device.id)") { try device.store.appendBlocking(events) }
        for (event, result) in zip(events, results) {
            guard !result.isDuplicate, result.seq == UInt64(device.log.count + 1) else {
                throw failure(
                    "device log",
                    "\(device.id) stored a new event at seq \(result.seq) (duplicate: \(result.isDuplicate)); its log had \(device.log.count) records")
            }
            let stored = try expect("reading seq \(result.seq) of \(device.id)") { try device.store.storedRecord(at: result.seq) }
            guard let stored else { throw failure("device log", "\(device.id) lacks seq \(result.seq) right after appending it") }
            device.log.append(ModelRecord(seq: result.seq, hash: stored.hash, event: event, forgets: nil))
            if let user = event.user { device.notePseudonym(of: user) }
            statistics.events += 1
        }
    }

    /// Records the client wrote itself (a `user_forgotten` the server asked for) join the model.
    func absorbClientRecords(_ device: SimulatedDevice) throws {
        let head = try expect("reading the head of \(device.id)") { try device.store.head() }.seq
        guard head > UInt64(device.log.count) else { return }
        let added = try expect("reading \(device.id)") { try device.store.records(in: UInt64(device.log.count + 1)...head) }
        var forgotten: [String] = []
        touchFully(device)
        for record in added {
            guard record.seq == UInt64(device.log.count + 1), record.event.type == .userForgotten,
                let literal = record.event.user, let user = device.user(forPseudonym: literal)
            else {
                throw failure(
                    "device log",
                    "the sync client of \(device.id) wrote seq \(record.seq), a \(record.event.type.rawValue) the simulator cannot account for (it writes only the user_forgotten the server asks for, of a user the server forgot)"
                )
            }
            // Only the real server's signed request may erase a user on the client's side: one
            // the server forgot in this device's replica.
            guard device.forgottenOnReplica.contains(user) else {
                throw failure(
                    "erasure only on the server's word",
                    "the sync client of \(device.id) forgot \(user) (seq \(record.seq)), whom the server never forgot for it: a forged forget request erased a user"
                )
            }
            device.log.append(ModelRecord(seq: record.seq, hash: record.hash, event: record.event, forgets: user))
            forgotten.append(user)
            statistics.deviceForgets += 1
        }
        // The client forgets in the order of the pseudonyms, which depend on the store's random
        // key: the trace names the users sorted, and the seqs only as a range.
        note("\(device.id) forgets \(forgotten.sorted().joined(separator: ", ")) on the server's request (seq \(added[0].seq)…\(head))")
    }

    // MARK: Crashes and restarts

    /// A device dies: its client's work in flight is abandoned (the request may have reached the
    /// server), and the device restarts from what its store left on disk.
    func crashDevice() throws -> Bool {
        guard let device = pick({ !$0.link.isIdle || self.chance(300) }) else { return false }
        var what = "idle"
        if case .request(let request) = device.link.parked {
            if !device.partitioned && chance(500) {
                // The request crossed the path: a liar there saw it, and the server answered.
                if options.lieRatePerMille > 0 { liar.hear(request, device: device.index) }
                let response = try forward(request, of: device)
                what = "its request reached the server (\(response.status)), the answer is lost"
            } else {
                what = "its request is lost"
            }
        } else if case .sleep = device.link.parked {
            what = "its sync client was waiting"
        }
        try abandonRun(device)
        statistics.mapGrowths += device.mapGrowths
        try expect("taking the crash image of \(device.id)") { try CrashImage.replace(device.path) { device.closeStore() } }
        try expect("reopening \(device.id) after its crash") { try device.reopen() }
        touchFully(device)
        statistics.deviceCrashes += 1
        note("\(device.id) crashes (\(what)) and restarts from disk")
        return true
    }

    /// The app is closed and opened again: the store closes cleanly (snapshot, signed head).
    func restartDevice() throws -> Bool {
        guard let device = pick({ _ in true }) else { return false }
        try abandonRun(device)
        statistics.mapGrowths += device.mapGrowths
        device.closeStore()
        try expect("reopening \(device.id)") { try device.reopen() }
        touchFully(device)
        statistics.deviceRestarts += 1
        note("\(device.id) restarts cleanly")
        return true
    }

    /// Ends a sync run in progress as a dying app ends it: nothing more reaches the network.
    func abandonRun(_ device: SimulatedDevice) throws {
        if let task = device.runTask {
            do { try device.link.crash(cancelling: task) } catch { throw failure("liveness", "\(error)") }
            _ = device.link.collect()
            device.runTask = nil
        }
        if device.pendingPrune != nil {
            device.pendingPrune = nil
            note("\(device.id)'s prune dies with it, before the server confirmed anything")
        }
        try absorbClientRecords(device)
        device.client = nil
    }

    // MARK: Erasure, pruning, clocks

    /// A user asks a device to forget them (refused by a pruned store, which cannot rewrite the
    /// base snapshot that holds their id).
    func forgetOnDevice() throws -> Bool {
        guard
            let device = pick({ device in
                let forgotten = device.forgottenOnDevice
                return device.pseudonyms.keys.contains { !forgotten.contains($0) }
            })
        else { return false }
        touchFully(device)
        let forgotten = device.forgottenOnDevice
        let candidates = device.pseudonyms.keys.filter { !forgotten.contains($0) }.sorted()
        let user = candidates[random.below(candidates.count)]
        do {
            let (pseudonym, seq) = try device.store.forgetUser(user, at: device.clock.now)
            guard device.prunedThrough == 0 else {
                throw failure("erasure", "\(device.id) forgot \(user) though it was pruned through seq \(device.prunedThrough)")
            }
            guard pseudonym == device.pseudonyms[user]?.literal else {
                throw failure("erasure", "\(device.id) forgot \(user) under another pseudonym than the one its records carry")
            }
            guard seq == UInt64(device.log.count + 1), let stored = try device.store.storedRecord(at: seq) else {
                throw failure("device log", "\(device.id) wrote the user_forgotten of \(user) at seq \(seq) with \(device.log.count) records before it")
            }
            device.log.append(ModelRecord(seq: seq, hash: stored.hash, event: stored.event, forgets: user))
            statistics.deviceForgets += 1
            note("\(device.id) forgets \(user) (seq \(seq))")
        } catch let error as StoreError where error.code == .pruned {
            guard device.prunedThrough > 0 else {
                throw failure("erasure", "\(device.id) refused to forget \(user) as pruned though it never pruned: \(error)")
            }
            note("\(device.id) cannot forget \(user): it was pruned")
        } catch let error as StoreError {
            throw failure("operation failed", "forgetting \(user) on \(device.id): \(error)")
        }
        return true
    }

    /// A device prunes what the server acknowledged and is older than a moment in its past, as
    /// `onboard prune` does: right before deleting it asks the server how far it holds the log
    /// (``finishPrune(of:before:batchRecords:confirmation:)`` goes on when the answer arrives).
    /// The question is a run of `SyncClient.confirmedAcknowledgement()` on the device's link, so
    /// it crosses the same network as a sync (lost, delayed, answered by the liar) while other
    /// devices act; a sync run would share the link, so a device prunes between runs.
    func prune() throws -> Bool {
        guard let device = pick({ $0.isEnrolled && !$0.log.isEmpty && $0.link.isIdle }) else { return false }
        // The hostile mode prunes up to the last minute one time in two: the records a lie
        // believed would cost are the newest ones.
        let age = options.lieRatePerMille > 0 && chance(500) ? random.between(0...60_000) : random.between(0...10_800_000)
        let before = device.clock.now.adding(milliseconds: -age)
        let client = makeClient(for: device)
        device.client = client
        device.liesThisRun = []
        device.pendingPrune = (before, 1 + random.below(40))
        statistics.pruneConfirmations += 1
        note("\(device.id) will prune before \(before.iso8601); it asks the server what it holds first")
        do {
            device.runTask = try device.link.beginRun { () async throws(SyncError) -> SyncSummary in
                var summary = SyncSummary()
                summary.acknowledgedSeq = try await client.confirmedAcknowledgement()
                return summary
            }
        } catch {
            throw failure("liveness", "\(error)")
        }
        try afterActivation(device)
        return true
    }

    /// The prune after its confirmation: nothing when the server did not confirm (the network
    /// failed it too often, its token was replaced meanwhile, or the client caught a lie; any
    /// other end is a defect); else the sync cursor moves back to the confirmed seq when that is
    /// less, and the store prunes.
    func finishPrune(of device: SimulatedDevice, before: Timestamp, batchRecords: Int, confirmation: Result<SyncSummary, SyncError>) throws {
        let confirmed: UInt64
        switch confirmation {
        case .success(let summary):
            confirmed = summary.acknowledgedSeq
        case .failure(let error):
            try checkNoToken(in: error, of: device)
            if error == .unavailable {
                note("\(device.id) prunes nothing: the server could not be reached")
            } else if error == .unauthorized && device.runToken != device.token {
                note("\(device.id) prunes nothing: its token was revoked meanwhile")
            } else if isCaughtLie(error, of: device) {
                statistics.liesCaught += 1
                note("\(device.id) prunes nothing: it caught a lie (\(Self.name(of: error)))")
            } else {
                throw failure(
                    "honest prune confirmation refused", "the confirmation of \(device.id) before pruning ended with \(Self.name(of: error)): \(error.message)")
            }
            statistics.pruneConfirmationsFailed += 1
            return
        }
        var cursor = try expect("reading the sync cursor of \(device.id)") { try device.store.syncCursor() }
        if confirmed < cursor {
            try expect("lowering the sync cursor of \(device.id)") { try device.store.setSyncCursor(confirmed) }
            note("\(device.id) moves its sync cursor back from \(cursor) to the confirmed seq \(confirmed)")
            statistics.pruneCursorsLowered += 1
            cursor = confirmed
        }
        // The rule: the longest prefix of acknowledged records dated before `before`.
        var expected = device.prunedThrough
        while expected < cursor, expected < UInt64(device.log.count), device.log[Int(expected)].event.at < before { expected += 1 }
        let result = try expect("pruning \(device.id)") { try device.store.prune(before: before, batchRecords: batchRecords) }
        let point = result.prunedThrough?.seq ?? 0
        guard point == expected else {
            throw failure(
                "prune",
                "\(device.id) pruned through seq \(point); acknowledged through \(cursor) and dated before \(before.iso8601) it should have been \(expected)")
        }
        touchFully(device)
        statistics.prunes += 1
        statistics.prunedRecords += Int(point - device.prunedThrough)
        device.prunedThrough = point
        note("\(device.id) prunes before \(before.iso8601) (the server confirms seq \(confirmed)): through seq \(point)")
    }

    /// A device's clock is corrected (or goes wrong): it jumps.
    func clockJump() -> Bool {
        guard let device = pick({ _ in true }) else { return false }
        let skew = drawSkew()
        device.clock.setSkew(milliseconds: skew)
        statistics.clockJumps += 1
        note("\(device.id) clock jumps to \(skew) ms off")
        return true
    }
}
