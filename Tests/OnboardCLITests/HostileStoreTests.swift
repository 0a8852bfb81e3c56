import Foundation
import LMDB
import OnboardingModel
import Testing
import TestSupport

/// Reading commands on a store whose meta was changed to the largest seq there is: each one
/// ends with an exit status and a line that says what it found, none traps.
@Suite(.slow) struct HostileStoreTests {
    static let maximum = UInt64.max

    /// Writes `values` into the closed store's meta and deletes every record.
    private func damage(_ store: String, meta values: [String: [UInt8]]) throws {
        let environment = try Environment.open(path: store)
        defer { environment.close() }
        let meta = try #require(try environment.openDatabase("meta", create: false))
        let events = try #require(try environment.openDatabase("events", create: false))
        try environment.write { transaction in
            try transaction.removeAll(events)
            for (key, value) in values { try transaction.put(meta, key: Array(key.utf8), value: value) }
        }
    }

    @Test func aPrunePointAtTheLargestSeqIsReportedNotTrapped() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let store = directory.appending("store")
            let file = try directory.write("events.jsonl", Corpus.jsonl(Corpus.generated(count: 20, seed: 4)))
            #expect(try CLI.run(["import", file, "--store", store]).status == 0)
            let point = withUnsafeBytes(of: Self.maximum.bigEndian) { Array($0) } + [UInt8](repeating: 0, count: 32)
            try damage(store, meta: ["pruned_through": point, "head": point, "sync_cursor": withUnsafeBytes(of: Self.maximum.bigEndian) { Array($0) }])
            let nothingFollows = "no seq (nothing follows seq \(Self.maximum))"

            let stats = try CLI.run(["stats", "--store", store])
            #expect(stats.status == 0, "\(stats.stderr)")
            #expect(stats.stdout.contains("seq 1…\(Self.maximum) (the log starts at \(nothingFollows))"), "\(stats.stdout)")
            let log = try CLI.run(["log", "--store", store])
            #expect(log.status == 0 && log.stderr.contains("the log starts at \(nothingFollows)"), "\(log.stderr)")
            let export = try CLI.run(["export", "--store", store])
            #expect(export.status == 0 && export.stdout.isEmpty, "\(export.stderr)")
            #expect(export.stderr.contains("the export starts at \(nothingFollows)"), "\(export.stderr)")
            let plan = try CLI.run(["prune", "--before", "2100-01-01", "--dry-run", "--store", store])
            #expect(
                plan.status == 0 && plan.stdout.hasPrefix("nothing to prune: the log starts at \(nothingFollows)"),
                "\(plan.status) \(plan.stdout)\(plan.stderr)")
            // A server that confirms the damaged cursor (seq 2^64−1, the zero hash kept at the point).
            let server = try ScriptedHTTPServer { request in
                let device = request.path.split(separator: "/").dropFirst(2).first.map(String.init) ?? ""
                return .answer(
                    200, body: Array(#"{"device":"\#(device)","acknowledged_seq":\#(Self.maximum),"head_hash":"\#(String(repeating: "0", count: 64))"}"#.utf8))
            }
            defer { server.stop() }
            let prune = try CLI.run(["prune", "--before", "2100-01-01", "--store", store, "--server", "http://127.0.0.1:\(server.port)", "--token", "t"])
            #expect(prune.status == 65, "\(prune.status) \(prune.stderr)")
            #expect(prune.stderr.contains("the base snapshot (pruned_base) is missing"), "\(prune.stderr)")
            // The records went without their index entries: verify names those.
            let verify = try CLI.run(["verify", "--store", store])
            #expect(verify.status == 1, "\(verify.stderr)")
            #expect(verify.stderr.contains("by_id has an entry"), "\(verify.stderr)")
        }
    }
}
