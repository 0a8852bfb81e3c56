import Foundation

/// Finds the event ids that occur on more than one line of an import, with memory bounded
/// whatever the number of lines.
///
/// Every line's id is added with where the line is. Up to ``defaultBufferEntries`` ids stay in memory
/// and are checked there. Beyond that the ids are spilled to a ``ScratchFile``, split into
/// ``partitionCount`` partitions by a hash of the id (a hash join: all lines of one id land in
/// one partition), and the partitions are then checked one at a time. A partition holds about
/// 1/1,024 of the lines: ~4 MiB for 10^8 lines.
///
/// ```swift
/// var finder = RepeatedIDFinder()
/// try finder.add(Entry(id: event.id, line: 7, offset: 1_234, length: 212))
/// try finder.forEachRepeat { first, repeated in … }   // in line order within a partition
/// ```
struct RepeatedIDFinder {
    /// Where one line with an id is. 40 bytes; spilled as raw memory (read back by this process only).
    struct Entry {
        var idHigh: UInt64
        var idLow: UInt64
        var line: UInt64
        var offset: Int64
        var length: UInt32

        init(id: UUID, line: Int, offset: Int64, length: Int) {
            (idHigh, idLow) = withUnsafeBytes(of: id.uuid) {
                ($0.loadUnaligned(fromByteOffset: 0, as: UInt64.self), $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            }
            self.line = UInt64(line)
            self.offset = offset
            self.length = UInt32(length)
        }

        /// The id's hash with the process's random seed (SipHash, as `Hasher` does), all of whose
        /// bits are used: ids in a file can be anything — time-ordered ids share their leading
        /// bits, counted ones their trailing — and a crafted file must not be able to pile them
        /// into a few slots and make the check quadratic.
        var hash: UInt64 {
            var hasher = Hasher()
            hasher.combine(idHigh)
            hasher.combine(idLow)
            return UInt64(UInt(bitPattern: hasher.finalize()))
        }

        func hasSameID(as other: Entry) -> Bool { idHigh == other.idHigh && idLow == other.idLow }
    }

    /// Ids kept in memory before spilling (10 MiB): files of up to 262,144 events never touch
    /// the disk, larger ones spill in steps of this size.
    static let defaultBufferEntries = 1 << 18
    /// Partitions of spilled ids: with 10^8 lines each holds ~98,000 ids (4 MiB and its table),
    /// and a spill writes blocks of ~256 ids (10 KiB), large enough for sequential writes.
    static let partitionCount = 1 << 10
    private static let partitionShift = UInt64(64 - 10)

    private var buffer: [Entry] = []
    private var spill: ScratchFile?
    /// Per partition, where its blocks are in the spill file (offset in bytes, entries).
    private var blocks: [[(offset: Int64, count: Int)]] = []
    private(set) var count = 0
    /// Table slots looked at by ``forEachRepeat(_:)``: about one per id when the hash spreads them.
    private(set) var probes = 0
    private let bufferEntries: Int

    /// - Parameter bufferEntries: ids kept in memory before spilling (tests spill early).
    init(bufferEntries: Int = RepeatedIDFinder.defaultBufferEntries) {
        precondition(bufferEntries >= 1, "the buffer holds at least one id")
        self.bufferEntries = bufferEntries
    }

    mutating func add(_ entry: Entry) throws(ImportError) {
        if buffer.isEmpty { buffer.reserveCapacity(bufferEntries) }
        buffer.append(entry)
        count += 1
        if buffer.count == bufferEntries { try flush() }
    }

    /// Writes the buffer to the spill file, partition by partition (a stable counting sort, so
    /// each partition's entries stay in line order).
    private mutating func flush() throws(ImportError) {
        guard !buffer.isEmpty else { return }
        if spill == nil {
            spill = try ScratchFile(purpose: "the ids of the lines checked")
            blocks = Array(repeating: [], count: Self.partitionCount)
        }
        var counts = [Int](repeating: 0, count: Self.partitionCount)
        for entry in buffer { counts[Int(entry.hash >> Self.partitionShift)] += 1 }
        var starts = [Int](repeating: 0, count: Self.partitionCount)
        for partition in 1..<Self.partitionCount { starts[partition] = starts[partition - 1] + counts[partition - 1] }
        var next = starts
        var sorted = [Entry](unsafeUninitializedCapacity: buffer.count) { storage, initialized in
            for entry in buffer {
                let partition = Int(entry.hash >> Self.partitionShift)
                (storage.baseAddress! + next[partition]).initialize(to: entry)
                next[partition] += 1
            }
            initialized = buffer.count
        }
        let stride = MemoryLayout<Entry>.stride
        let fileStart = spill!.size
        let spill = spill!
        var failure: ImportError?
        sorted.withUnsafeBytes { bytes in
            do throws(ImportError) { try spill.append(bytes) } catch { failure = error }
        }
        if let failure { throw failure }
        for partition in 0..<Self.partitionCount where counts[partition] > 0 {
            blocks[partition].append((fileStart + Int64(starts[partition] * stride), counts[partition]))
        }
        sorted.removeAll()
        buffer.removeAll(keepingCapacity: true)
    }

    /// Calls `body` for every line whose id an earlier line has, with that first line, partition
    /// by partition (within one id, in line order).
    mutating func forEachRepeat(_ body: (_ first: Entry, _ repeated: Entry) throws(ImportError) -> Void) throws(ImportError) {
        guard spill != nil else {
            probes += try Self.findRepeats(in: buffer, body)
            return
        }
        try flush()
        buffer = [] // the partitions need the memory now
        let stride = MemoryLayout<Entry>.stride
        for partition in 0..<Self.partitionCount where !blocks[partition].isEmpty {
            let total = blocks[partition].reduce(0) { $0 + $1.count }
            var failure: ImportError?
            let entries = [Entry](unsafeUninitializedCapacity: total) { storage, initialized in
                let raw = UnsafeMutableRawBufferPointer(storage)
                var filled = 0
                for block in blocks[partition] {
                    let target = UnsafeMutableRawBufferPointer(rebasing: raw[(filled * stride)..<((filled + block.count) * stride)])
                    do throws(ImportError) {
                        let read = try spill!.read(at: block.offset, into: target)
                        guard read == target.count else {
                            failure = ImportError(.inputOutput, "the temporary file of ids ended early (read \(read) of \(target.count) bytes)")
                            break
                        }
                    } catch {
                        failure = error
                        break
                    }
                    filled += block.count
                }
                initialized = failure == nil ? total : 0
            }
            if let failure { throw failure }
            probes += try Self.findRepeats(in: entries, body)
        }
    }

    /// One pass over `entries` (in line order) with an open-addressing table of first sightings;
    /// returns the slots probed.
    private static func findRepeats(in entries: [Entry], _ body: (Entry, Entry) throws(ImportError) -> Void) throws(ImportError) -> Int {
        guard entries.count > 1 else { return 0 }
        var probes = 0
        var size = 1
        while size < entries.count * 2 { size <<= 1 }
        let mask = size - 1
        var slots = [Int32](repeating: -1, count: size)
        for index in entries.indices {
            let entry = entries[index]
            // The low bits: the partition already fixed the high ones.
            var slot = Int(truncatingIfNeeded: entry.hash) & mask
            while true {
                probes += 1
                let occupant = slots[slot]
                if occupant < 0 {
                    slots[slot] = Int32(index)
                    break
                }
                if entries[Int(occupant)].hasSameID(as: entry) {
                    try body(entries[Int(occupant)], entry)
                    break
                }
                slot = (slot + 1) & mask
            }
        }
        return probes
    }
}
