import Foundation
import OnboardingModel
import OnboardingProjections
import OnboardingStore

/// A device's head and latest accepted signed head, as its replica holds them.
struct ReplicaHead: Sendable {
    var seq: UInt64
    var hash: Digest
    var signed: (seq: UInt64, hash: Digest)?
}

/// The devices' last upload times, and which are not written to `DATA/server` yet.
struct UploadTimes: Sendable {
    var times: [String: Timestamp] = [:]
    var unwritten: Set<String> = []
    var writtenAt: Timestamp?
}

extension ReplicaStorage {
    /// One process serves a data directory: every change comes through this one.
    package var changesAreLocal: Bool { true }

    // MARK: Upload times

    func noteUpload(of device: String, at time: Timestamp) {
        let due = uploadTimes.withLock { state -> Bool in
            state.times[device] = time
            state.unwritten.insert(device)
            guard let written = state.writtenAt else { return true }
            return time.millisecondsSince1970 - written.millisecondsSince1970 >= Self.uploadTimePersistInterval
        }
        if due { persistUploadTimes(all: false) }
    }

    /// Writes the upload times not written yet, in one commit (`all`: at close, whenever they
    /// were last written).
    func persistUploadTimes(all: Bool) {
        let pending: [String: Timestamp] = uploadTimes.withLock { state in
            defer {
                state.unwritten.removeAll()
                state.writtenAt = Timestamp.now
            }
            return state.times.filter { state.unwritten.contains($0.key) }
        }
        guard !pending.isEmpty else { return }
        do { try tokens.recordUploads(pending) } catch {
            uploadTimes.withLock { $0.unwritten.formUnion(pending.keys) }
            failureLog?(
                "onboard serve: the last upload times of \(pending.count) devices could not be written (\(ServerFailure(error).logLine)); they are kept in memory"
            )
        }
    }

    // MARK: Records in page order

    package func forEachRecord(_ query: HistoryQuery, newestFirst: Bool, _ body: (Record) throws -> Bool) throws {
        var failure: (any Error)?
        // The store wraps a closure's errors in its own: the caller's are passed on as thrown.
        func feed(_ record: Record) -> Bool {
            do { return try body(record) } catch {
                failure = error
                return false
            }
        }
        if let device = query.device {
            guard tokens.isEnrolled(device) else { return }
            try replicas.withReplica(device) { store in
                if let user = query.user {
                    // One user's records of one device, through by_user: bounded by that user.
                    var records = try store.records(user: user).filter { query.covers($0.event) }
                    if let after = query.after { records.removeAll { newestFirst ? $0.seq >= after.seq : $0.seq <= after.seq } }
                    if newestFirst { records.reverse() }
                    for record in records where !feed(record) { return }
                } else if newestFirst {
                    try Self.forEachRecordDescending(store, before: query.after?.seq) { record in query.covers(record.event) ? feed(record) : true }
                } else {
                    guard let start = query.after.map({ $0.seq == .max ? nil : $0.seq + 1 }) ?? 1 else { return }
                    try store.forEachRecord(from: start) { record in query.covers(record.event) ? feed(record) : true }
                }
            }
        } else if let user = query.user {
            // Every replica's records of the user, as a history page reads them: memory bounded
            // by the user's records, not the log's.
            var records: [Record] = []
            for device in try tokens.enrolledDevices() {
                let found = try replicas.withReplica(device) { try $0.records(user: user) }
                records += found.filter { $0.event.user == user && query.covers($0.event) }
            }
            func key(_ record: Record) -> HistoryCursor { HistoryCursor(at: record.event.at, device: record.event.device, seq: record.seq) }
            records.sort { key($0) < key($1) }
            if newestFirst { records.reverse() }
            var window = EventIDWindow()
            for record in records {
                if let after = query.after, newestFirst ? !(key(record) < after) : !(after < key(record)) { continue }
                guard window.isFirst(record) else { continue }
                if !feed(record) { break }
            }
        }
        if let failure { throw failure }
    }

    /// 500 records per read going down from the head: bounded memory for a log of any length.
    static let descendingBatch: UInt64 = 500

    /// `store`'s records from before seq `before` (from the head without it) down to seq 1.
    static func forEachRecordDescending(_ store: OnboardingStore, before: UInt64?, _ body: (Record) -> Bool) throws {
        var upper = try store.head().seq
        if let before { upper = min(upper, before == 0 ? 0 : before - 1) }
        while upper >= 1 {
            let lower = upper > descendingBatch ? upper - descendingBatch + 1 : 1
            for record in try store.records(in: lower...upper).reversed() where !body(record) { return }
            upper = lower - 1
        }
    }

    // MARK: Devices

    package func deviceStatuses(after: String?, limit: Int) throws -> [DeviceStatus] {
        let devices = try tokens.enrolledDevices().filter { device in after.map { $0.utf8.lexicographicallyPrecedes(device.utf8) } ?? true }
            .prefix(limit)
        guard !devices.isEmpty else { return [] }
        let times = try tokens.deviceTimesByDevice()
        let uploads = uploadTimes.withLock { $0.times }
        let tokensByDevice = try tokens.deviceTokens()
        let heads = heads.withLock { $0 }
        return devices.map { device in
            let head = heads[device] ?? ReplicaHead(seq: 0, hash: .zero, signed: nil)
            return DeviceStatus(
                device: device, enrolledAt: times[device]?.enrolled, lastUploadAt: uploads[device] ?? times[device]?.lastUpload,
                acknowledgedSeq: head.seq, headHash: head.hash, signedHead: head.signed,
                hasPublicKey: tokens.publicKey(for: device) != nil, tokens: tokensByDevice[device] ?? [])
        }
    }

    package func audit(device: String) throws -> DeviceAudit? {
        guard tokens.isEnrolled(device) else { return nil }
        return try ReplicaAudit.run(
            tokens: tokens, devices: [device], detailed: false,
            open: { device throws(StoreError) in try replicas.leaseForAudit(device) },
            release: { store in replicas.release(store.deviceID) }
        ).first
    }

    package func revokeToken(device: String, id: String) throws -> Int { try tokens.revoke(device: device, id: id) }

    // MARK: Actions

    package func record(_ action: ServerAction) throws -> ServerAction {
        refoldIfPending()
        // Stored and folded under the lockout's lock: a refold that runs meanwhile either sees
        // the action in the store or is replaced before it is folded in.
        return try global.withLock { lockout in
            let stored = try actionStore.record(action)
            lockout.apply(stored)
            return stored
        }
    }

    package func actions(ofUser user: String) throws -> [ServerAction] {
        actionStore.all().filter { $0.user == user }.sorted { ($0.at, $0.seq) < ($1.at, $1.seq) }
    }

    package func actions(before: (at: Timestamp, seq: UInt64)?, limit: Int) throws -> [ServerAction] {
        let sorted = actionStore.all().sorted { ($0.at, $0.seq) > ($1.at, $1.seq) }
        return Array(sorted.lazy.filter { action in before.map { (action.at, action.seq) < ($0.at, $0.seq) } ?? true }.prefix(limit))
    }

    // MARK: Users

    package func searchUsers(_ search: [String], limit: Int) throws -> [UserMatch] {
        refoldIfPending()
        return self.search.withLock { $0.search(search, limit: limit) }
    }
}

/// Skips a record whose event id was already fed at the same time: the same event stored by two
/// devices (written before uploads naming another device were refused) is listed once, while the
/// window holds only the ids of one millisecond, so memory stays bounded on any history.
struct EventIDWindow {
    private var at: Timestamp?
    private var ids = Set<UUID>()

    mutating func isFirst(_ record: Record) -> Bool {
        if record.event.at != at {
            at = record.event.at
            ids.removeAll(keepingCapacity: true)
        }
        return ids.insert(record.event.id).inserted
    }
}
