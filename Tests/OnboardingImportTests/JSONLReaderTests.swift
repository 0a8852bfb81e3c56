import Foundation
import Testing
@testable import OnboardingImport
import OnboardingModel

@Suite struct JSONLReaderTests {
    /// A line as the tests compare it: its number, offset and content.
    enum Got: Equatable, CustomStringConvertible {
        case text(Int, Int64, [UInt8])
        case tooLong(Int, Int64, isValidUTF8: Bool)

        var description: String {
            switch self {
            case .text(let number, let offset, let bytes): "\(number)@\(offset): \(String(decoding: bytes, as: UTF8.self).debugDescription)"
            case .tooLong(let number, let offset, let valid): "\(number)@\(offset): too long, UTF-8 \(valid)"
            }
        }
    }

    /// Reads `bytes` through the reader, `pieces` bytes per read at most (chunk boundaries
    /// anywhere), up to `limit`.
    static func lines(_ bytes: [UInt8], pieces: Int = Int.max, limit: Int64? = nil) throws -> (lines: [Got], bytes: Int64, count: Int) {
        var offset = 0
        var got: [Got] = []
        let totals = try JSONLReader.read(
            byteLimit: limit,
            from: { buffer in
                let count = min(buffer.count, pieces, bytes.count - offset)
                if count > 0 { buffer.copyBytes(from: bytes[offset..<offset + count]) }
                offset += count
                return count
            }
        ) { line in
            switch line.content {
            case .text(let content): got.append(.text(line.number, line.offset, Array(content)))
            case .tooLong(let valid): got.append(.tooLong(line.number, line.offset, isValidUTF8: valid))
            }
        }
        return (got, totals.bytes, totals.lines)
    }

    @Test(
        "lines end at \\n, a \\r before it is dropped, blank lines are counted not handed out, the last needs no newline",
        arguments: [1, 2, 3, 7, 64, Int.max])
    func splitting(pieces: Int) throws {
        let text = "{\"a\":1}\r\n\n  \t \r\n{\"b\":2}\n\r\n x\ry \nlast"
        let result = try Self.lines(Array(text.utf8), pieces: pieces)
        #expect(
            result.lines == [
                .text(1, 0, Array("{\"a\":1}".utf8)),
                .text(4, 16, Array("{\"b\":2}".utf8)),
                .text(6, 26, Array(" x\ry ".utf8)),
                .text(7, 32, Array("last".utf8))
            ])
        #expect(result.count == 7)
        #expect(result.bytes == Int64(text.utf8.count))
    }

    @Test("a byte order mark is skipped at the start of the stream, even split over reads, and only there", arguments: [1, 2, Int.max])
    func byteOrderMark(pieces: Int) throws {
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
        let result = try Self.lines(bom + Array("{}\n".utf8) + bom + Array("{}".utf8), pieces: pieces)
        #expect(result.lines == [.text(1, 3, Array("{}".utf8)), .text(2, 6, bom + Array("{}".utf8))])
        #expect(try Self.lines(bom).lines.isEmpty)
        #expect(try Self.lines([0xEF, 0xBB]).lines == [.text(1, 0, [0xEF, 0xBB])])
    }

    @Test("a line of exactly the limit is kept, with or without \\r; one byte more is too long", arguments: [1_000, Int.max])
    func lineLimit(pieces: Int) throws {
        let limit = JSONLReader.maximumLineBytes
        let exact = [UInt8](repeating: UInt8(ascii: "x"), count: limit)
        for ending in [[], [0x0A], [0x0D, 0x0A]] as [[UInt8]] {
            let result = try Self.lines(exact + ending + Array("\nnext".utf8), pieces: pieces)
            #expect(result.lines.first == .text(1, 0, exact))
        }
        // A \r not before the newline is content: then the line is over the limit.
        let carriage = try Self.lines(exact + [0x0D, UInt8(ascii: "x"), 0x0A], pieces: pieces)
        #expect(carriage.lines == [.tooLong(1, 0, isValidUTF8: true)])
        let over = try Self.lines(exact + [UInt8(ascii: "x"), 0x0A, UInt8(ascii: "y")], pieces: pieces)
        #expect(over.lines == [.tooLong(1, 0, isValidUTF8: true), .text(2, Int64(limit + 2), [UInt8(ascii: "y")])])
    }

    @Test("a line far over the limit is checked as it goes by: blank ones are skipped, others say whether they are UTF-8")
    func longLines() throws {
        let size = 3 * JSONLReader.readChunkBytes + 17
        let blank = [UInt8](repeating: 0x20, count: size) + [0x0D, 0x0A]
        let text = [UInt8](repeating: UInt8(ascii: "a"), count: size) + [0xC3, 0xA9, 0x0A] // é at the end
        var broken = [UInt8](repeating: UInt8(ascii: "a"), count: size)
        broken[size / 2] = 0xFF
        let tail = Array("{}".utf8)
        let result = try Self.lines(blank + text + broken + [0x0A] + [0xE2, 0x82] + [UInt8](repeating: 0x20, count: size), pieces: 100_000)
        #expect(
            result.lines == [
                .tooLong(2, Int64(blank.count), isValidUTF8: true),
                .tooLong(3, Int64(blank.count + text.count), isValidUTF8: false),
                .tooLong(4, Int64(blank.count + text.count + broken.count + 1), isValidUTF8: false)
            ])
        // A blank line ending in \r is blank; one with \r inside is not.
        let carriage = [UInt8](repeating: 0x20, count: size) + [0x0D, 0x20, 0x0A] + tail
        #expect(try Self.lines(carriage).lines == [.tooLong(1, 0, isValidUTF8: true), .text(2, Int64(size + 3), tail)])
    }

    @Test("a byte limit stops reading there, mid-line or not")
    func byteLimit() throws {
        let result = try Self.lines(Array("{}\n{\"a\":1}\nrest".utf8), pieces: 2, limit: 6)
        #expect(result.lines == [.text(1, 0, Array("{}".utf8)), .text(2, 3, Array("{\"a".utf8))])
        #expect(result.bytes == 6)
    }

    @Test("the UTF-8 check agrees with the standard library on random bytes cut anywhere")
    func utf8Validator() {
        var random = SplitMix64(seed: 0x0123_4567)
        let alphabet: [[UInt8]] = [
            [0x41], [0xC3, 0xA9], [0xE2, 0x82, 0xAC], [0xF0, 0x9F, 0x98, 0x80], [0x80], [0xBF], [0xC0], [0xC1, 0x80],
            [0xE0, 0x80], [0xE0, 0xA0, 0x80], [0xED, 0xA0, 0x80], [0xED, 0x9F, 0xBF], [0xF4, 0x8F, 0xBF, 0xBF],
            [0xF4, 0x90, 0x80, 0x80], [0xF5], [0xFF], [0xF0, 0x90], [0xE2]
        ]
        for _ in 0..<20_000 {
            var bytes: [UInt8] = []
            for _ in 0..<Int(random.next() % 6) { bytes += alphabet[Int(random.next() % UInt64(alphabet.count))] }
            var validator = UTF8Validator()
            var start = 0
            while start < bytes.count {
                let end = min(bytes.count, start + 1 + Int(random.next() % 4))
                bytes[start..<end].withUnsafeBytes { validator.feed($0) }
                start = end
            }
            #expect(validator.isValid == (String(validating: bytes, as: UTF8.self) != nil), "bytes \(bytes)")
        }
    }
}
