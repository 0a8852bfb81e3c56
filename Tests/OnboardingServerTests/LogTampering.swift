import Foundation
import LMDB
import OnboardingModel
import PostgreSQL
import TestSupport

/// Someone with the server's disk or database editing one device's log behind the server's back:
/// the replica's LMDB file (with the server stopped, as only a stopped server lets go of it), or
/// the device's rows in PostgreSQL. Each edit is consistent where an attacker would make it so:
/// a record put at a seq brings its own hash, time and type to the row's columns.
final class LogTampering {
    private let device: String
    private let environment: Environment?
    private let connection: PGConnection?

    /// - Parameter replicaPath: the replica's directory (`server.replicaPath(for:)`, LMDB).
    init(_ storage: TestServerStorage, device: String, replicaPath: String?) throws {
        self.device = device
        if let url = storage.databaseURL {
            connection = try PGConnection(url: DatabaseURL(url))
            environment = nil
        } else {
            guard let replicaPath else { throw TestFailure("an LMDB replica is tampered with by its path") }
            environment = try Environment.open(path: replicaPath)
            connection = nil
        }
    }

    func close() {
        environment?.close()
        connection?.close()
    }

    private static func key(_ seq: UInt64) -> [UInt8] { withUnsafeBytes(of: seq.bigEndian) { Array($0) } }

    private func database(_ name: String, in environment: Environment) throws -> Database {
        guard let database = try environment.openDatabase(name, create: false) else { throw TestFailure("the replica has no \(name) database") }
        return database
    }

    /// The record stored at `seq`, as stored.
    func record(at seq: UInt64) throws -> [UInt8] {
        if let connection {
            let rows = try connection.execute("SELECT record FROM events WHERE device = $1 AND seq = $2", [.text(device), .int64(Int64(seq))])
            guard let row = rows.first else { throw TestFailure("\(device) has no record at seq \(seq)") }
            return try row.bytes(0)
        }
        let environment = environment!
        let events = try database("events", in: environment)
        return try environment.read { transaction in
            guard let bytes = try transaction.get(events, key: Self.key(seq)) else { throw TestFailure("\(device) has no record at seq \(seq)") }
            return bytes
        }
    }

    /// Stores `bytes` as the record at `seq` (replacing the one there).
    func put(_ bytes: [UInt8], at seq: UInt64) throws {
        if let connection {
            let hash = Array(bytes[RecordCodec.hashOffset..<(RecordCodec.hashOffset + Digest.byteCount)])
            // The columns derived from a record that reads: its time and type.
            let event = (try? RecordCodec.decode(bytes))?.event
            let changed = try connection.execute(
                """
                UPDATE events SET record = $3, hash = $4, at_ms = coalesce($5, at_ms), type = coalesce($6::int2, type) WHERE device = $1 AND seq = $2
                """,
                [
                    .text(device), .int64(Int64(seq)), .bytes(bytes), .bytes(hash), event.map { .int64($0.at.millisecondsSince1970) } ?? .null,
                    event.map { .int64(Int64($0.type.code)) } ?? .null
                ]
            ).affectedRows
            guard changed == 1 else { throw TestFailure("\(device) has no row at seq \(seq)") }
            return
        }
        let environment = environment!
        let events = try database("events", in: environment)
        try environment.write { transaction in try transaction.put(events, key: Self.key(seq), value: bytes) }
    }

    /// Removes the record at `seq`.
    func delete(_ seq: UInt64) throws {
        if let connection {
            try connection.execute("DELETE FROM events WHERE device = $1 AND seq = $2", [.text(device), .int64(Int64(seq))])
            return
        }
        let environment = environment!
        let events = try database("events", in: environment)
        _ = try environment.write { transaction in try transaction.delete(events, key: Self.key(seq)) }
    }

    /// Sets where the log says it ends.
    func setHead(_ seq: UInt64, _ hash: Digest) throws {
        if let connection {
            try connection.execute(
                "UPDATE devices SET head_seq = $2, head_hash = $3 WHERE device = $1",
                [.text(device), .int64(Int64(seq)), .bytes(hash.bytes)])
            return
        }
        let environment = environment!
        let meta = try database("meta", in: environment)
        try environment.write { transaction in try transaction.put(meta, key: Array("head".utf8), value: Self.key(seq) + hash.bytes) }
    }
}
