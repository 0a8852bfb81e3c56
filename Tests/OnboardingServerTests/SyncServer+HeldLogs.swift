import Foundation
import OnboardingModel
@testable import OnboardingServer
import OnboardingStore
import PostgreSQL
import TestSupport

/// What a server holds of one device's log, read the same way on either storage (LMDB replicas or
/// PostgreSQL), for tests that compare it with the device's own log.
extension SyncServer {
    func heldHead(of device: String) throws -> (seq: UInt64, hash: Digest) {
        try withDeviceLog(of: device) { try $0.head() }
    }

    func heldRecords(of device: String, in range: ClosedRange<UInt64>) throws -> [Record] {
        try withDeviceLog(of: device) { try $0.records(in: range) }
    }

    func heldRecord(of device: String, at seq: UInt64) throws -> Record? {
        try withDeviceLog(of: device) { try $0.storedRecord(at: seq) }
    }

    func heldForgetRequests(of device: String) throws -> [UserRef] {
        try withDeviceLog(of: device) { try $0.forgetRequests() }
    }

    func heldSigningPublicKey(of device: String) throws -> SigningPublicKey? {
        try withDeviceLog(of: device) { try $0.signingPublicKey() }
    }

    /// Whether the server destroyed its copy of `user`'s key in `device`'s log (the user's
    /// records there read by the pseudonym).
    func holdsForgotten(_ user: String, on device: String) throws -> Bool {
        if replicaStorage != nil { return try withReplica(of: device) { try $0.isForgotten(user) } }
        return try withDeviceLog(of: device) { log in
            guard let log = log as? PostgresDeviceLog else { throw TestFailure("a device log of neither storage: \(type(of: log))") }
            return log.users.isForgotten(log.users.ref(of: user))
        }
    }

    /// The seqs of every signed head the server kept for `device`, in order.
    func heldSignedHeadSeqs(of device: String) throws -> [UInt64] {
        if replicaStorage != nil { return try withReplica(of: device) { try $0.signedHeads().map(\.seq) } }
        guard let postgres = storage as? PostgresStorage else { throw TestFailure("a server of neither storage") }
        return try postgres.pool.withConnection { connection in
            try connection.execute("SELECT seq FROM signed_heads WHERE device = $1 ORDER BY seq", [.text(device)]).map { UInt64(try $0.int64(0)) }
        }
    }

    /// The audit of `device`'s log (as `GET /v1/audit` reports it).
    func audit(of device: String) throws -> DeviceAudit {
        guard let audit = try audit().first(where: { $0.device == device }) else { throw TestFailure("the audit has no \(device)") }
        return audit
    }
}
