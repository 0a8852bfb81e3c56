import Foundation
import Testing
@testable import OnboardingImport
import OnboardingModel

@Suite struct RepeatedIDFinderTests {
    /// Random ids with repeats, some sharing their leading bytes as UUIDv7 ids do.
    static func ids(count: Int, seed: UInt64) -> [UUID] {
        var random = SplitMix64(seed: seed)
        var ids: [UUID] = []
        for index in 0..<count {
            if index > 0 && random.next() % 7 == 0 {
                ids.append(ids[Int(random.next() % UInt64(ids.count))])
                continue
            }
            var bytes = [UInt8](repeating: 0x01, count: 6) // one "millisecond" for all: the same high bits
            for _ in 0..<10 { bytes.append(UInt8(truncatingIfNeeded: random.next())) }
            ids.append(
                UUID(
                    uuid: (
                        bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                        bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
                    )))
        }
        return ids
    }

    /// Every (first line, repeating line) pair, found with a dictionary.
    static func expectedPairs(_ ids: [UUID]) -> [[Int]] {
        var first: [UUID: Int] = [:]
        var pairs: [[Int]] = []
        for (index, id) in ids.enumerated() {
            let line = index + 1
            if let earlier = first[id] { pairs.append([earlier, line]) } else { first[id] = line }
        }
        return pairs.sorted { $0[1] < $1[1] }
    }

    static func foundPairs(_ ids: [UUID], bufferEntries: Int) throws -> [[Int]] {
        var finder = RepeatedIDFinder(bufferEntries: bufferEntries)
        for (index, id) in ids.enumerated() {
            try finder.add(RepeatedIDFinder.Entry(id: id, line: index + 1, offset: Int64(index * 100), length: index % 50))
        }
        var pairs: [[Int]] = []
        try finder.forEachRepeat { first, repeated in
            #expect(first.hasSameID(as: repeated))
            #expect(
                first.offset == Int64((Int(first.line) - 1) * 100) && Int(repeated.length) == (Int(repeated.line) - 1) % 50,
                "an entry keeps where its line is")
            pairs.append([Int(first.line), Int(repeated.line)])
        }
        return pairs.sorted { $0[1] < $1[1] }
    }

    @Test(
        "in memory and spilled to disk, every repeat is found with its first line, and nothing else",
        arguments: [RepeatedIDFinder.defaultBufferEntries, 1_000, 97, 1])
    func findsEveryRepeat(bufferEntries: Int) throws {
        let ids = Self.ids(count: 5_000, seed: UInt64(bufferEntries))
        let expected = Self.expectedPairs(ids)
        #expect(expected.count > 500)
        #expect(try Self.foundPairs(ids, bufferEntries: bufferEntries) == expected)
    }

    @Test("no ids, one id, all distinct: no repeats")
    func noRepeats() throws {
        #expect(try Self.foundPairs([], bufferEntries: 10).isEmpty)
        #expect(try Self.foundPairs([UUID()], bufferEntries: 1).isEmpty)
        #expect(try Self.foundPairs((0..<300).map { _ in UUID() }, bufferEntries: 64).isEmpty)
    }

    @Test(
        "counted ids (trailing or leading bits alike) spread over the table: about one probe per id",
        arguments: [RepeatedIDFinder.defaultBufferEntries, 4_096])
    func countedIDsDoNotCollide(bufferEntries: Int) throws {
        let count = 100_000
        for pattern in 0..<3 {
            var finder = RepeatedIDFinder(bufferEntries: bufferEntries)
            for index in 0..<count {
                let value = UInt64(index)
                let (high, low): (UInt64, UInt64) =
                    switch pattern {
                    case 0: (0x0123_4567_89AB_4DEF, value.bigEndian) // ...-8000-0000000000aa, counted at the end
                    case 1: (value, 0x8000_0000_0000_0000) // counted in the leading (time) bytes
                    default: (0, value << 48) // counted in one middle byte pair
                    }
                let id = withUnsafeBytes(of: (high, low)) { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
                try finder.add(RepeatedIDFinder.Entry(id: id, line: index + 1, offset: 0, length: 0))
            }
            var repeats = 0
            try finder.forEachRepeat { _, _ in repeats += 1 }
            #expect(repeats == (pattern == 2 ? count - 65_536 : 0))
            #expect(finder.probes < 3 * count, "pattern \(pattern): \(finder.probes) probes for \(count) ids")
        }
    }
}
