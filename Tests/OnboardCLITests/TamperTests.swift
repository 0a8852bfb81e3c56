import Foundation
import LMDB
import OnboardingModel
import Testing
import TestSupport

/// Tampering with a closed store's LMDB file directly, the way an attacker holding the device
/// would, then `onboard verify` (the real binary) names what was done and the first bad seq.
@Suite(.slow) struct TamperTests {
    enum Tampering: String, CaseIterable, CustomTestStringConvertible {
        case modifyValue, deleteRecord, swapRecords, truncateAndResign
        var testDescription: String { rawValue }
    }

    /// An imported store of every event type (`import` closes the store, which signs its head).
    private static func makeStore(_ directory: TemporaryDirectory) throws -> (store: String, count: UInt64) {
        let store = directory.appending("store")
        let file = try directory.write("corpus.jsonl", Corpus.jsonl(Corpus.everyType()))
        #expect(try CLI.run(["import", file, "--store", store]).status == 0)
        let ok = try CLI.run(["verify", "--store", store])
        #expect(ok.status == 0)
        #expect(ok.stdout.contains("1 signed head valid up to seq \(Corpus.everyType().count)"), "got: \(ok.stdout)")
        return (store, UInt64(Corpus.everyType().count))
    }

    @Test(arguments: Tampering.allCases)
    func verifyNamesTheTampering(_ tampering: Tampering) async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let (store, count) = try Self.makeStore(directory)
            let expected: (seq: UInt64, kind: String, words: String)
            switch tampering {
            case .modifyValue:
                try flipByte(store: store, seq: 5, offset: 80)
                expected = (5, "modified", "no longer match its hash")
            case .deleteRecord:
                try RawLog.edit(store) { log in _ = try log.transaction.delete(log.events, key: RawLog.key(4)) }
                expected = (4, "missing", "seq 4 deleted from the log")
            case .swapRecords:
                try RawLog.edit(store) { log in
                    let third = try #require(try log.transaction.get(log.events, key: RawLog.key(3)))
                    let sixth = try #require(try log.transaction.get(log.events, key: RawLog.key(6)))
                    try log.transaction.put(log.events, key: RawLog.key(3), value: sixth)
                    try log.transaction.put(log.events, key: RawLog.key(6), value: third)
                }
                expected = (3, "reordered", "the record of seq 6 is stored here")
            case .truncateAndResign:
                // Drop the tail with everything that points at it, then sign the new head with a key
                // of the attacker's: only the signature gives it away.
                try RawLog.edit(store) { log in
                    try log.dropTail(after: 5, of: count)
                    let forger = SigningKeyPair.generate()
                    let forged = SignedHead.sign(device: try log.deviceID(), seq: 5, hash: try log.hash(at: 5), with: forger)
                    try log.transaction.put(log.signedHeads, key: RawLog.key(5), value: forged.hash.bytes + forged.signature)
                }
                expected = (5, "bad signature", "does not verify with the store's public key")
            }

            let verify = try CLI.run(["verify", "--store", store])
            #expect(verify.status == 1, "stdout: \(verify.stdout)")
            #expect(verify.stderr.contains("  first bad seq \(expected.seq): \(expected.kind)\n"), "stderr: \(verify.stderr)")
            #expect(verify.stderr.contains("  seq \(expected.seq): \(expected.kind): "), "stderr: \(verify.stderr)")
            #expect(verify.stderr.contains(expected.words), "stderr: \(verify.stderr)")
        }
    }

    @Test func theSecretKeyStaysOutOfTheLogAndTheExport() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let (store, _) = try Self.makeStore(directory)
            let keyFile = (store as NSString).appendingPathComponent("signing.key")
            let attributes = try FileManager.default.attributesOfItem(atPath: keyFile)
            #expect((attributes[.posixPermissions] as? Int).map { $0 & 0o777 } == 0o600)
            let secret = try Data(contentsOf: URL(fileURLWithPath: keyFile))
            #expect(secret.count == 64)
            let seed = HexBytes.encode(Array(secret.prefix(32)))
            let export = try CLI.run(["export", "--store", store])
            #expect(export.status == 0)
            #expect(!export.stdout.contains(seed))
            let data = try Data(contentsOf: URL(fileURLWithPath: (store as NSString).appendingPathComponent("data.mdb")))
            #expect(data.range(of: secret.prefix(32)) == nil, "the seed is not in the LMDB file")
            #expect(data.range(of: secret.suffix(32)) != nil, "the public key is, in meta")
        }
    }
}

/// A closed store's log opened with the plain LMDB wrapper, inside one write transaction.
struct RawLog {
    let transaction: Transaction
    let events: Database
    let meta: Database
    let signedHeads: Database
    let indexes: [Database]

    static func key(_ seq: UInt64) -> [UInt8] { withUnsafeBytes(of: seq.bigEndian) { Array($0) } }

    static func edit(_ store: String, _ body: (RawLog) throws -> Void) throws {
        let environment = try Environment.open(path: store)
        defer { environment.close() }
        func database(_ name: String) throws -> Database {
            try #require(try environment.openDatabase(name, create: false))
        }
        let events = try database("events"), meta = try database("meta"), signedHeads = try database("signed_heads")
        let indexes = [try database("by_id"), try database("by_user"), try database("by_session")]
        try environment.write { transaction in
            try body(RawLog(transaction: transaction, events: events, meta: meta, signedHeads: signedHeads, indexes: indexes))
        }
    }

    func deviceID() throws -> String {
        String(decoding: try #require(try transaction.get(meta, key: Array("device_id".utf8))), as: UTF8.self)
    }

    /// The stored hash of the record at `seq` (bytes 1…32 of its value).
    func hash(at seq: UInt64) throws -> Digest {
        Digest(bytes: Array(try #require(try transaction.get(events, key: RawLog.key(seq)))[1...32]))
    }

    /// Deletes seq `last + 1…count`, their index entries and signed heads, and moves the head in
    /// `meta` back to `last`: a truncation that leaves every index consistent.
    func dropTail(after last: UInt64, of count: UInt64) throws {
        for seq in (last + 1)...count {
            _ = try transaction.delete(events, key: RawLog.key(seq))
            _ = try transaction.delete(signedHeads, key: RawLog.key(seq))
        }
        for index in indexes {
            var doomed: [[UInt8]] = []
            try transaction.withCursor(index) { cursor in
                var entry = try cursor.first()
                while let current = entry {
                    // by_id holds the seq as its value; by_user and by_session end their key with it.
                    let seqBytes = current.value.count == 8 ? Array(current.value) : Array(current.key.suffix(8))
                    if number(seqBytes) > last { doomed.append(Array(current.key)) }
                    entry = try cursor.next()
                }
            }
            for key in doomed { _ = try transaction.delete(index, key: key) }
        }
        try transaction.put(meta, key: Array("head".utf8), value: RawLog.key(last) + (try hash(at: last)).bytes)
    }
}

private func number(_ bytes: [UInt8]) -> UInt64 { bytes.reduce(UInt64(0)) { $0 << 8 | UInt64($1) } }
