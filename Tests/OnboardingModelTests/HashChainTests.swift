import Foundation
import Testing
@testable import OnboardingModel

/// The first place a stored log stops being trustworthy.
struct ChainBreak: Equatable, CustomStringConvertible {
    enum Reason: Equatable {
        /// The record at this seq does not decode (modified bytes, or stored under the wrong seq).
        case undecodable(String)
        /// The key order skips or repeats: this seq was expected but another key came.
        case unexpectedSeq(found: UInt64)
        /// The record's previous hash is not the hash of the record before it.
        case brokenLink
        /// The chain is intact but ends at a different hash than the trusted head.
        case headMismatch
    }

    let seq: UInt64
    let reason: Reason

    var description: String { "seq \(seq): \(reason)" }
}

/// A pure verifier over stored `(seq, bytes)` pairs in key order: every record decodes at its
/// key, keys run 1, 2, 3… without gaps, each record links to the hash of the one before (zeros
/// for seq 1), and, when a trusted head is given, the last hash is that head.
func verifyChain(_ entries: [(seq: UInt64, bytes: [UInt8])], trustedHead: Digest? = nil) -> ChainBreak? {
    var previous = Digest.zero
    var expectedSeq: UInt64 = 1
    for (seq, bytes) in entries {
        guard seq == expectedSeq else { return ChainBreak(seq: expectedSeq, reason: .unexpectedSeq(found: seq)) }
        let record: Record
        do {
            record = try RecordCodec.decode(bytes, expectedSeq: seq)
        } catch {
            return ChainBreak(seq: seq, reason: .undecodable(error.message))
        }
        guard record.previousHash == previous else { return ChainBreak(seq: seq, reason: .brokenLink) }
        previous = record.hash
        expectedSeq += 1
    }
    if let trustedHead, previous != trustedHead {
        return ChainBreak(seq: expectedSeq - 1, reason: .headMismatch)
    }
    return nil
}

@Suite("Hash chain: tampering is detected at the right seq")
struct HashChainTests {
    static let length = 64
    static let hashMismatch = ChainBreak.Reason.undecodable("hash does not match the record's bytes (the record was modified)")

    /// A chain of `length` records of varied types; returns the stored entries and the events.
    static func makeChain(seed: UInt64 = 0xC4A1) -> (entries: [(seq: UInt64, bytes: [UInt8])], events: [Event]) {
        var generator = EventGenerator(seed: seed)
        var entries: [(seq: UInt64, bytes: [UInt8])] = []
        var events: [Event] = []
        var previous = Digest.zero
        for index in 0..<length {
            let event = generator.event(of: EventType.allCases[index % EventType.allCases.count])
            let seq = UInt64(index + 1)
            let bytes = RecordCodec.encode(event, seq: seq, previousHash: previous)
            previous = RecordBytes.hash(bytes) // bytes 1..<33
            entries.append((seq, bytes))
            events.append(event)
        }
        return (entries, events)
    }

    static func head(_ entries: [(seq: UInt64, bytes: [UInt8])]) -> Digest { RecordBytes.hash(entries.last!.bytes) }

    @Test("an untouched chain verifies, and each record links to the hash of the one before")
    func intactChain() throws {
        let (entries, events) = Self.makeChain()
        #expect(entries.count == Self.length)
        #expect(verifyChain(entries) == nil)
        #expect(verifyChain(entries, trustedHead: Self.head(entries)) == nil)
        #expect(verifyChain([]) == nil)
        for (index, entry) in entries.enumerated() {
            let record = try RecordCodec.decode(entry.bytes, expectedSeq: entry.seq)
            #expect(record.event == events[index])
            let expectedPrevious = index == 0 ? Digest.zero : RecordBytes.hash(entries[index - 1].bytes)
            #expect(record.previousHash == expectedPrevious)
            #expect(Array(entry.bytes[33..<65]) == expectedPrevious.bytes)
        }
    }

    @Test("a modified byte in any record's body is detected at that record")
    func modifiedRecord() {
        let (entries, _) = Self.makeChain()
        var rng = SplitMix64(seed: testSeed(fallback: 0x3D1F))
        for target in entries.indices {
            var tampered = entries
            let position = rng.int(in: 65...tampered[target].bytes.count - 1)
            tampered[target].bytes[position] ^= 0x01
            #expect(
                verifyChain(tampered) == ChainBreak(seq: UInt64(target + 1), reason: Self.hashMismatch),
                "flipped body byte \(position) of seq \(target + 1)")
        }
    }

    @Test("a modified record whose own hash was recomputed breaks the next record's link")
    func modifiedAndRehashed() {
        var (entries, events) = Self.makeChain()
        var forged = events[19]
        forged.user = "mallory"
        entries[19].bytes = RecordCodec.encode(forged, seq: 20, previousHash: RecordBytes.hash(entries[18].bytes))
        #expect(verifyChain(entries) == ChainBreak(seq: 21, reason: .brokenLink))
    }

    @Test("a deleted record is detected where it is missing")
    func deletedRecord() {
        let (entries, _) = Self.makeChain()
        // Deleted, the other keys untouched: key 20 is missing.
        var gap = entries
        gap.remove(at: 19)
        #expect(verifyChain(gap) == ChainBreak(seq: 20, reason: .unexpectedSeq(found: 21)))
        // Deleted and the following records moved down one key: record 21 now sits at key 20.
        var shifted = entries
        shifted.remove(at: 19)
        for index in 19..<shifted.count { shifted[index].seq -= 1 }
        #expect(
            verifyChain(shifted)
                == ChainBreak(
                    seq: 20,
                    reason: .undecodable(
                        "record says seq 21 but is stored at seq 20 (records were moved)")))
        // The first record deleted.
        #expect(verifyChain(Array(entries.dropFirst())) == ChainBreak(seq: 1, reason: .unexpectedSeq(found: 2)))
    }

    @Test("dropping the newest records is only visible against a trusted head")
    func truncatedTail() {
        let (entries, _) = Self.makeChain()
        let head = Self.head(entries)
        let truncated = Array(entries.dropLast(3))
        #expect(verifyChain(truncated) == nil)
        #expect(verifyChain(truncated, trustedHead: head) == ChainBreak(seq: 61, reason: .headMismatch))
    }

    @Test("an inserted, validly encoded record is detected at the seq it claims")
    func insertedForgedRecord() {
        let (entries, events) = Self.makeChain()
        let forgedEvent = Samples.event(.signInSucceeded(method: .password, secondFactor: false), user: "mallory")
        // Linked to the wrong record (two back), inserted at seq 20 with the rest moved up a key.
        var wrongLink = entries
        wrongLink.insert((20, RecordCodec.encode(forgedEvent, seq: 20, previousHash: RecordBytes.hash(entries[17].bytes))), at: 19)
        for index in 20..<wrongLink.count { wrongLink[index].seq += 1 }
        #expect(verifyChain(wrongLink) == ChainBreak(seq: 20, reason: .brokenLink))
        // Linked to a made-up hash.
        var madeUp = entries
        madeUp[19].bytes = RecordCodec.encode(forgedEvent, seq: 20, previousHash: Digest.hash(Array("forged".utf8)))
        #expect(verifyChain(madeUp) == ChainBreak(seq: 20, reason: .brokenLink))
        // Linked correctly to seq 19: then the genuine seq 20 no longer fits behind it.
        var rightLink = entries
        rightLink.insert((20, RecordCodec.encode(forgedEvent, seq: 20, previousHash: RecordBytes.hash(entries[18].bytes))), at: 19)
        for index in 20..<rightLink.count { rightLink[index].seq += 1 }
        #expect(
            verifyChain(rightLink)
                == ChainBreak(
                    seq: 21,
                    reason: .undecodable(
                        "record says seq 20 but is stored at seq 21 (records were moved)")))
        // Even re-encoding the genuine seq 20 at seq 21 keeps its link to seq 19, not to the forgery.
        rightLink[20].bytes = RecordCodec.encode(events[19], seq: 21, previousHash: RecordBytes.hash(entries[18].bytes))
        #expect(verifyChain(rightLink) == ChainBreak(seq: 21, reason: .brokenLink))
    }

    @Test("two reordered records are detected at the first of them")
    func reorderedRecords() {
        let (entries, events) = Self.makeChain()
        // Values swapped under their keys.
        var swappedValues = entries
        swappedValues.swapAt(29, 30)
        for index in 29...30 { swappedValues[index].seq = UInt64(index + 1) }
        #expect(
            verifyChain(swappedValues)
                == ChainBreak(
                    seq: 30,
                    reason: .undecodable(
                        "record says seq 31 but is stored at seq 30 (records were moved)")))
        // Keys and values swapped together (a reader seeing keys out of order).
        var swappedEntries = entries
        swappedEntries.swapAt(29, 30)
        #expect(verifyChain(swappedEntries) == ChainBreak(seq: 30, reason: .unexpectedSeq(found: 31)))
        // Re-encoded so each claims its new seq and the first links correctly: the second no
        // longer links to the first.
        var reencoded = entries
        reencoded[29].bytes = RecordCodec.encode(events[30], seq: 30, previousHash: RecordBytes.hash(entries[28].bytes))
        reencoded[30].bytes = RecordCodec.encode(events[29], seq: 31, previousHash: RecordBytes.hash(entries[29].bytes))
        #expect(verifyChain(reencoded) == ChainBreak(seq: 31, reason: .brokenLink))
        // Fully relinked swap: the rest of the chain still points at the original record 31.
        reencoded[30].bytes = RecordCodec.encode(events[29], seq: 31, previousHash: RecordBytes.hash(reencoded[29].bytes))
        #expect(verifyChain(reencoded) == ChainBreak(seq: 32, reason: .brokenLink))
    }

    @Test("a rewritten tail with every link recomputed is caught only by the trusted head")
    func rewrittenTail() {
        let (entries, events) = Self.makeChain()
        let head = Self.head(entries)
        var rewritten = Array(entries.prefix(39))
        var previous = RecordBytes.hash(rewritten.last!.bytes)
        for index in 39..<entries.count {
            var event = events[index]
            if index == 39 { event.device = "forged-device" }
            let bytes = RecordCodec.encode(event, seq: UInt64(index + 1), previousHash: previous)
            previous = RecordBytes.hash(bytes)
            rewritten.append((UInt64(index + 1), bytes))
        }
        #expect(verifyChain(rewritten) == nil)
        #expect(verifyChain(rewritten, trustedHead: head) == ChainBreak(seq: 64, reason: .headMismatch))
    }
}
