import Foundation
import OnboardingModel
import OnboardingStore

/// What auditing one device's replica found: the replica's own `verify()` (chain, indexes,
/// signed heads against the key recorded in the replica) plus the check that this key is the one
/// registered at enrolment.
///
/// ```swift
/// for device in try ReplicaAudit.run(dataDirectory: "/var/lib/onboard") where !device.isValid {
///     print(device.device, device.firstProblem!)
/// }
/// ```
public struct DeviceAudit: Sendable {
    public var device: String
    public var records = 0
    public var headSeq: UInt64 = 0
    /// The highest seq a signed head the server accepted vouches for (and that still verifies).
    public var signedHeadSeq: UInt64?
    public var signedHeadCount = 0
    /// The key registered at enrolment, `nil` for a device enrolled without one.
    public var registeredKey: SigningPublicKey?
    public var problems: [VerifyReport.Problem] = []

    public var isValid: Bool { problems.isEmpty }

    /// The problem at the lowest seq, or the first one without a seq.
    public var firstProblem: VerifyReport.Problem? {
        problems.filter { $0.seq != nil }.min { $0.seq! < $1.seq! } ?? problems.first
    }

    /// `{"device", "ok", "records", "head_seq", "signed_head_seq", "signed_heads", "public_key",
    /// "first_bad_seq", "problems": [{"seq", "kind", "message"}]}` (docs/sync-protocol.md).
    public var jsonValue: JSONValue {
        .object([
            .init("device", .string(device)), .init("ok", .bool(isValid)), .init("records", .number(String(records))),
            .init("head_seq", .number(String(headSeq))),
            .init("signed_head_seq", signedHeadSeq.map { .number(String($0)) } ?? .null),
            .init("signed_heads", .number(String(signedHeadCount))),
            .init("public_key", registeredKey.map { .string($0.hex) } ?? .null),
            .init("first_bad_seq", firstProblem?.seq.map { .number(String($0)) } ?? .null),
            .init(
                "problems",
                .array(
                    problems.map { problem in
                        .object([
                            .init("seq", problem.seq.map { .number(String($0)) } ?? .null),
                            .init("kind", .string(problem.kind.rawValue)), .init("message", .string(problem.message))
                        ])
                    }))
        ])
    }
}

/// Audits every device replica a sync server holds. One function serves `onboard audit --data`
/// (on the data directory, also while the server runs) and `GET /v1/audit` (on the open server).
public enum ReplicaAudit {
    /// Audits the replicas under `dataDirectory`, opened read-only.
    public static func run(dataDirectory: String) throws -> [DeviceAudit] {
        let tokens = try TokenStore(directory: (dataDirectory as NSString).appendingPathComponent("server"))
        defer { tokens.close() }
        let replicas = try DeviceReplicas(directory: (dataDirectory as NSString).appendingPathComponent("devices"))
        return try run(tokens: tokens) { device throws(StoreError) in
            var options = OnboardingStore.Options()
            options.readOnly = true
            options.maintainProjections = false
            options.signsHeads = false
            let path = replicas.path(for: device)
            // Enrolled with `onboard enroll` and never uploaded: no replica yet, nothing to check.
            guard FileManager.default.fileExists(atPath: path) else { return nil }
            return try OnboardingStore.open(at: path, options: options)
        } release: {
            $0.close()
        }
    }

    /// Audits each enrolled device's replica (or each of `devices`) as `open` returns it (`nil`: the device never
    /// uploaded, so there is nothing to check); `release` is called on every opened store.
    ///
    /// - Parameter detailed: whether problems may quote the store's errors, which name files
    ///   (`onboard audit --data`, on the operator's machine); not in `GET /v1/audit`.
    static func run(
        tokens: TokenStore, devices: [String]? = nil, detailed: Bool = true, open: (String) throws(StoreError) -> OnboardingStore?,
        release: (OnboardingStore) -> Void
    ) throws -> [DeviceAudit] {
        var audits: [DeviceAudit] = []
        for device in try devices ?? tokens.enrolledDevices() {
            var audit = DeviceAudit(device: device)
            audit.registeredKey = tokens.publicKey(for: device)
            do {
                guard let store = try open(device) else {
                    audits.append(audit)
                    continue
                }
                defer { release(store) }
                let report = try store.verify()
                audit.records = report.recordsChecked
                audit.headSeq = report.headSeq
                audit.signedHeadSeq = report.signedHeadSeq
                audit.signedHeadCount = report.signedHeadCount
                audit.problems = report.problems
                if let registered = audit.registeredKey, let recorded = report.signingPublicKey, registered != recorded {
                    audit.problems.insert(
                        .init(
                            seq: nil, kind: .badSignature,
                            message:
                                "the replica records the signing key \(recorded.hex), but \(device) enrolled with \(registered.hex): the replica's key was replaced"
                        ), at: 0)
                }
                if audit.registeredKey == nil, report.signedHeadCount > 0 {
                    audit.problems.insert(
                        .init(
                            seq: nil, kind: .badSignature,
                            message: "the replica keeps signed heads but \(device) has no key registered at enrolment (the registration was removed)"), at: 0)
                }
            } catch {
                if detailed {
                    audit.problems.append(.init(seq: nil, kind: .damaged, message: "the replica cannot be read: \(error)"))
                } else {
                    // Not the store's own words, which name its directory: this audit goes to clients.
                    let reason = "\(error.code)"
                    audit.problems.append(
                        .init(
                            seq: nil, kind: .damaged, message: "the replica cannot be read (\(reason)); run onboard audit --data on the server for the details")
                    )
                }
            }
            audits.append(audit)
        }
        return audits
    }

    /// `{"ok", "devices": [...]}` — the body of `GET /v1/audit`.
    public static func body(_ audits: [DeviceAudit]) -> [UInt8] {
        SyncWire.encode(
            .object([
                .init("ok", .bool(audits.allSatisfy(\.isValid))),
                .init("devices", .array(audits.map(\.jsonValue)))
            ]))
    }
}

extension SyncServer {
    /// Audits every device's log this server holds, as ``ReplicaAudit/run(dataDirectory:)`` does for replicas.
    public func audit() throws -> [DeviceAudit] { try storage.audit() }
}
