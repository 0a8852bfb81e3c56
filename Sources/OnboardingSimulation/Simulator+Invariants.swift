import Foundation
import OnboardingModel
import OnboardingProjections
import OnboardingServer
import OnboardingStore

extension Simulator {
    /// Every invariant, over what the step may have changed (everything, every
    /// ``fullSweepSteps`` steps and at the end; docs/testing.md § Deterministic simulation lists
    /// them).
    func checkInvariants() throws {
        statistics.invariantChecks += 1
        let checking = scope
        scope = CheckScope()
        for device in devices {
            let full = checking.everything || checking.fullDevices.contains(device.index)
            try checkDevice(device, full: full, projections: full || checking.devices.contains(device.index))
        }
        var replicasChanged = checking.everything
        for device in devices where device.isEnrolled {
            let full = checking.everything || checking.fullReplicas.contains(device.index)
            if try checkReplica(device, full: full) || full || checking.replicas.contains(device.index) { replicasChanged = true }
        }
        if replicasChanged {
            mergedReplicaReadings = nil
            try checkGlobalLockout()
        }
        try checkHistories()
        if checking.everything { try checkVerification() }
    }

    /// Every store passes its own verification (chain, indexes, user entries, the projection
    /// snapshot, signed heads) and the server's audit of every replica (`GET /v1/audit`) passes:
    /// read in full, so only in the full sweeps.
    private func checkVerification() throws {
        for device in devices {
            let report = try expect("verifying \(device.id)") { try device.store.verify() }
            guard report.isValid else {
                throw failure("verify", "onboard verify of \(device.id) finds: \(report.problems.prefix(3).map(\.description).joined(separator: "; "))")
            }
        }
        let response = server.handle(SyncRequest(method: "GET", path: "/v1/audit", headers: ["authorization": "Bearer \(auditorToken)"]))
        guard response.status == 200, let object = try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any],
            let ok = object["ok"] as? Bool
        else {
            throw failure("audit", "GET /v1/audit answered \(response.status): \(String(decoding: response.body.prefix(300), as: UTF8.self))")
        }
        guard ok else {
            let failing = (object["devices"] as? [[String: Any]] ?? []).filter { ($0["ok"] as? Bool) == false }.map { device in
                let problems = (device["problems"] as? [[String: Any]] ?? []).compactMap { $0["message"] as? String }
                return "\(device["device"] as? String ?? "?"): " + problems.prefix(3).joined(separator: "; ")
            }
            throw failure("audit", "the server's audit of its replicas fails: \(failing.joined(separator: " | "))")
        }
    }

    /// The device's log is the model's from its prune point on, with the same hashes, each
    /// record reading with its readable user unless the device forgot the user; the cursor lies
    /// between the prune point and the head; the projections equal a rebuild. Reads the records
    /// after those checked before, or (`full`) all of them.
    private func checkDevice(_ device: SimulatedDevice, full: Bool, projections: Bool) throws {
        let store = device.store
        let head = try expect("reading the head of \(device.id)") { try store.head() }
        guard head.seq == UInt64(device.log.count), head.seq == 0 || head.hash == device.log.last!.hash else {
            throw failure("device log", "\(device.id)'s head is seq \(head.seq); it recorded \(device.log.count) records")
        }
        let point = try expect("reading the prune point of \(device.id)") { try store.prunedThrough() }?.seq ?? 0
        guard point == device.prunedThrough else {
            throw failure("device log", "\(device.id) is pruned through seq \(point), not \(device.prunedThrough)")
        }
        let first = (full ? point : max(point, device.checkedThrough)) + 1
        if first <= head.seq {
            let records = try expect("reading \(device.id)") { try store.records(in: first...head.seq) }
            guard records.count == Int(head.seq - first + 1) else {
                throw failure("device log", "\(device.id) holds \(records.count) records in seq \(first)…\(head.seq)")
            }
            let forgotten = device.forgottenOnDevice
            for record in records {
                try checkReading(
                    record, of: device, expected: device.expectedReading(of: device.log[Int(record.seq) - 1], forgotten: forgotten),
                    forgotten: forgotten, in: "the device")
            }
        }
        device.checkedThrough = head.seq
        let cursor = try expect("reading the sync cursor of \(device.id)") { try store.syncCursor() }
        guard cursor <= head.seq, point <= cursor else {
            throw failure("sync cursor", "\(device.id)'s sync cursor is \(cursor), outside its prune point \(point) … head \(head.seq)")
        }
        guard projections else { return }
        let state = try expect("reading the projections of \(device.id)") { try store.projectionState() }
        let rebuilt = try expect("rebuilding the projections of \(device.id)") { try store.rebuildState(policy: device.storeOptions.lockoutPolicy) }
        guard state == rebuilt else {
            throw failure("projections", "\(device.id)'s projections, built as records came, differ from a rebuild of its log at seq \(state.seq)")
        }
    }

    /// The replica is a gap-free prefix of the device's log with the same hashes, holds at least
    /// everything the server ever acknowledged, and reads each record with its readable user
    /// unless the user was forgotten there; the device's cursor and prune point never pass it.
    /// Reads the records after those checked before, or (`full`, or when the new ones end a
    /// user's readability there) all of them. Returns whether the replica holds new records.
    @discardableResult
    private func checkReplica(_ device: SimulatedDevice, full: Bool) throws -> Bool {
        let point = try expect("reading the prune point of \(device.id)") { try device.store.prunedThrough() }
        let (head, heldAtPoint) = try expect("reading the replica of \(device.id)") {
            try server.withDeviceLog(of: device.id) { replica in (try replica.head(), try point.flatMap { try replica.storedRecord(at: $0.seq) }) }
        }
        guard head.seq <= UInt64(device.log.count) else {
            throw failure("replica prefix", "the server holds \(device.id) up to seq \(head.seq); the device recorded \(device.log.count)")
        }
        guard head.seq >= device.acknowledged, head.seq >= device.replicaCheckedThrough else {
            throw failure(
                "acknowledged records lost",
                "the server acknowledged \(device.id) up to seq \(device.acknowledged) and held seq \(device.replicaCheckedThrough), but now holds only seq \(head.seq)"
            )
        }
        // The device's word against the real server's (a liar's cursor or acknowledgement must
        // never move either past it).
        try checkSyncCursor(of: device, serverHolds: head.seq)
        if let point {
            guard point.seq <= head.seq else {
                throw failure(
                    "nothing unsynced is pruned",
                    "\(device.id) pruned through seq \(point.seq), but the server holds only seq \(head.seq): seq \(head.seq + 1)…\(point.seq) exist nowhere now"
                )
            }
            guard heldAtPoint?.hash == point.hash else {
                throw failure("nothing unsynced is pruned", "\(device.id) pruned through seq \(point.seq), whose hash the server's record there does not have")
            }
        }
        let grew = head.seq > device.replicaCheckedThrough
        // A user_forgotten among the new records changes how the user's earlier records read.
        let forgetArrived = device.log[Int(device.replicaCheckedThrough)..<Int(head.seq)].contains { $0.forgets != nil }
        let first = full || forgetArrived ? 1 : device.replicaCheckedThrough + 1
        guard first <= head.seq else { return grew }
        let records = try expect("reading the replica of \(device.id)") { try server.withDeviceLog(of: device.id) { try $0.records(in: first...head.seq) } }
        guard records.count == Int(head.seq - first + 1), records.enumerated().allSatisfy({ $0.element.seq == first + UInt64($0.offset) }) else {
            throw failure("replica prefix", "the replica of \(device.id) has a gap: \(records.count) records in seq \(first)…\(head.seq)")
        }
        let forgotten = device.forgottenOnReplica(through: head.seq)
        for record in records {
            try checkReading(
                record, of: device, expected: device.expectedReading(of: device.log[Int(record.seq) - 1], forgotten: forgotten),
                forgotten: forgotten, in: "the replica")
        }
        device.replicaView = Array(device.replicaView.prefix(Int(first - 1))) + records.map(\.event)
        device.replicaCheckedThrough = head.seq
        return grew || first == 1
    }

    /// The device's sync cursor claims no more than the real server holds.
    private func checkSyncCursor(of device: SimulatedDevice, serverHolds head: UInt64) throws {
        let cursor = try expect("reading the sync cursor of \(device.id)") { try device.store.syncCursor() }
        guard cursor <= head else {
            throw failure("sync cursor", "\(device.id)'s sync cursor claims seq \(cursor), but the server holds only seq \(head)")
        }
    }

    /// ``checkSyncCursor(of:serverHolds:)`` right after a client that was lied to acted, before
    /// the rest of its run (within a convergence, all of it happens in one step) can set right
    /// what it believed.
    func checkSyncCursorAfterLies(of device: SimulatedDevice) throws {
        guard !device.liesThisRun.isEmpty, device.isEnrolled else { return }
        let head = try expect("reading the replica of \(device.id)") { try server.withDeviceLog(of: device.id) { try $0.head() } }
        try checkSyncCursor(of: device, serverHolds: head.seq)
    }

    /// One record of a store against the model: the same hash, and the event the model expects
    /// there (`forgotten`: the users who read erased there, for the message).
    private func checkReading(
        _ record: Record, of device: SimulatedDevice, expected: Event, forgotten: Set<String>,
        in place: String
    ) throws {
        let model = device.log[Int(record.seq) - 1]
        guard record.hash == model.hash else {
            throw failure("same hashes", "seq \(record.seq) of \(device.id) in \(place) does not have the hash the device gave it")
        }
        guard record.event == expected else {
            if let user = model.event.user, record.event.user.map(UserRef.isLiteral) == true, !forgotten.contains(user) {
                throw failure(
                    "readable ids",
                    "seq \(record.seq) of \(device.id) in \(place) (\(model.event.type.rawValue)) reads as a pseudonym, erased, though its user \(user) was never forgotten there"
                )
            }
            if let user = model.event.user, forgotten.contains(user), record.event.user == user {
                throw failure("erasure", "seq \(record.seq) of \(device.id) in \(place) still reads as \(user), who was forgotten there")
            }
            throw failure(
                "record content",
                "seq \(record.seq) of \(device.id) in \(place) reads as a \(record.event.type.rawValue) of \(record.event.user ?? "nobody"), not as the \(model.event.type.rawValue) of \(model.event.user ?? "nobody") recorded"
            )
        }
    }

    /// The server's lockout equals its own rebuild from the replicas, and the simulator's fold
    /// of every record the replicas hold, in (`at`, device, seq) order.
    private func checkGlobalLockout() throws {
        var relevant: [Record] = []
        for device in devices where device.isEnrolled {
            for (offset, event) in device.replicaView.enumerated() where LockoutEngine.mayAffectKeys(event.type) {
                relevant.append(Record(seq: UInt64(offset + 1), event: event, previousHash: .zero, hash: .zero))
            }
        }
        relevant.sort { ($0.event.at, $0.event.device, $0.seq) < ($1.event.at, $1.event.device, $1.seq) }
        var engine = LockoutEngine(policy: server.options.policy, acrossDevices: true)
        for record in relevant { engine.apply(record) }
        let now = server.options.clock()
        for user in Set(relevant.compactMap(\.event.user)).sorted() {
            let expected = engine.entries(ofUser: user, at: now)
            let actual = try server.globalLockoutEntries(user: user, at: now)
            guard expected == actual else {
                throw failure(
                    "global lockout",
                    "the server's lockout of \(UserRef.isLiteral(user) ? "a forgotten user" : user) is \(actual), a fold of the replicas in (at, device, seq) order gives \(expected)"
                )
            }
        }
        guard try expect("rebuilding the global lockout", { try server.globalLockoutMatchesRebuild() }) else {
            throw failure(
                "global lockout", "the server's lockout, folded as uploads arrived, differs from a rebuild from its replicas in (at, device, seq) order")
        }

    }
}
