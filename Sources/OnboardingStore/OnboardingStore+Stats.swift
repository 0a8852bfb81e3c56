import Foundation
import LMDB
import OnboardingModel

/// Facts about a store, for `onboard stats`.
public struct StoreStats: Sendable {
    public var deviceID: String
    public var formatVersion: UInt32
    public var eventCount: Int
    public var headSeq: UInt64
    public var headHash: Digest
    /// Size of `data.mdb` on disk.
    public var fileSizeBytes: Int
    public var mapSizeBytes: Int
    public var usedBytes: Int
    public var firstAt: Timestamp?
    public var lastAt: Timestamp?
    /// Events per type, in vocabulary order, types with no event left out.
    public var countsByType: [(type: EventType, count: Int)]
    public var userCount: Int
    /// Where a pruned log begins (`nil`: never pruned); `eventCount` counts the retained records.
    public var prunedThrough: PrunePoint?
}

extension OnboardingStore {
    /// Counts events by type by reading only each record's type code (no full decode).
    public func stats() throws(StoreError) -> StoreStats {
        let info = environment.info()
        let fileSize = (try? FileManager.default.attributesOfItem(atPath: (path as NSString).appendingPathComponent("data.mdb"))[.size] as? Int) ?? 0
        return try reading { transaction in
            let head = try readHead(transaction)
            var counts = [Int](repeating: 0, count: EventType.allCases.count)
            var total = 0
            var firstSeq: UInt64?
            try transaction.withCursor(databases.events) { cursor in
                var entry = try cursor.first()
                while let current = entry {
                    let value = current.value
                    let offset = RecordCodec.headerByteCount
                    if value.count >= offset + 2 {
                        let code = UInt16(value[offset]) << 8 | UInt16(value[offset + 1])
                        if let type = EventType(code: code) { counts[Int(type.wireCode)] += 1 }
                    }
                    if total == 0 { firstSeq = StoreLayout.seq(fromKey: current.key) }
                    total += 1
                    entry = try cursor.next()
                }
            }
            // Every user the store has seen has an entry in user_keys (a forgotten one a tombstone).
            let userCount = try databases.userKeys.map { try transaction.count($0) } ?? 0
            // A pruned log starts after seq 1.
            let first = try firstSeq.flatMap { try readRecord($0, in: transaction) }
            let last = head.seq > 0 ? try readRecord(head.seq, in: transaction) : nil
            let versionBytes = try transaction.get(databases.meta, key: StoreLayout.MetaKey.formatVersion) ?? [0, 0, 0, 0]
            return StoreStats(
                deviceID: deviceID,
                formatVersion: versionBytes.reduce(UInt32(0)) { $0 << 8 | UInt32($1) },
                eventCount: total, headSeq: head.seq, headHash: head.hash,
                fileSizeBytes: fileSize, mapSizeBytes: info.mapSizeBytes, usedBytes: info.usedBytes,
                firstAt: first?.event.at, lastAt: last?.event.at,
                countsByType: EventType.allCases.compactMap { type in
                    let count = counts[Int(type.wireCode)]
                    return count > 0 ? (type, count) : nil
                },
                userCount: userCount,
                prunedThrough: try readPrunedThrough(transaction))
        }
    }
}
