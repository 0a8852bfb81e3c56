import Foundation
import LMDB
import OnboardingModel
import Testing
import TestSupport

/// `onboard prune` with the real binary, against a store a real `onboard sync` acknowledged.
@Suite(.serialized, .slow) struct PruneCommandTests {
    /// A device store holding the first `synced` of `lines` acknowledged by a real `onboard serve`,
    /// then the rest appended unsynced.
    struct Device {
        let setup: SyncProcessTests.Setup
        var store: String { setup.device }

        init(seed: UInt64, synced: Int) throws {
            setup = try SyncProcessTests.Setup(seed: seed, count: synced)
        }

        func sync() throws {
            try withServer { url in
                let result = try CLI.run(["sync", "--store", store, "--server", url, "--token", setup.token])
                guard result.status == 0 else { throw TestFailure("sync failed: \(result.stderr)") }
            }
        }

        /// `onboard prune --before 2100-01-01` confirmed by the real server.
        func prune(_ extra: [String] = []) throws -> CLI.Result {
            try withServer { url in
                try CLI.run(["prune", "--before", "2100-01-01", "--store", store, "--server", url, "--token", setup.token] + extra)
            }
        }

        func withServer<T>(_ body: (String) throws -> T) throws -> T {
            let server = try SyncProcessTests.Server(data: setup.data, scratch: setup.directory)
            defer { server.stop() }
            return try body(server.url)
        }
    }

    @Test func prunesOnlyWhatTheServerAcknowledgedAndTheStoreStillVerifiesExportsAndSyncs() async throws {
        try await onOwnThread {
            let events = Corpus.generated(count: 500, seed: 11)
            let lines: [String] = Corpus.jsonl(events).split(separator: "\n").map { String($0) + "\n" }
            let device = try Device(seed: 11, synced: 400)
            defer { device.setup.directory.remove() }
            try device.sync()
            let rest = try device.setup.directory.write("rest.jsonl", lines[400...].joined())
            #expect(try CLI.run(["import", rest, "--store", device.store]).status == 0)
            let lockoutBefore = try CLI.run(["lockout", "--json", "--store", device.store, "--at", "2030-01-01T00:00:00Z"]).stdout

            let dryRun = try CLI.run(["prune", "--before", "2100-01-01", "--dry-run", "--store", device.store])
            #expect(dryRun.status == 0 && dryRun.stdout.contains("would prune 400 events (seq 1…400"), "\(dryRun.stdout)\(dryRun.stderr)")
            let prune = try device.prune()
            #expect(prune.status == 0, "\(prune.stderr)")
            #expect(prune.stdout.contains("pruned 400 events (seq 1…400"), "\(prune.stdout)")
            #expect(prune.stdout.contains("events after seq 400 are not acknowledged"), "\(prune.stdout)")

            let verify = try CLI.run(["verify", "--store", device.store])
            #expect(verify.status == 0, "\(verify.stderr)")
            #expect(verify.stdout.contains("ok: 100 records") && verify.stdout.contains("seq 1…400 pruned"), "\(verify.stdout)")
            // The projections come from the base snapshot and the remaining log: nothing changed.
            #expect(try CLI.run(["lockout", "--json", "--store", device.store, "--at", "2030-01-01T00:00:00Z"]).stdout == lockoutBefore)

            let export = try CLI.run(["export", "--store", device.store])
            #expect(export.status == 0)
            #expect(export.stdout == lines[400...].joined(), "the export is the retained log, byte for byte")
            #expect(export.stderr.contains("seq 1…400 of this store were pruned; the export starts at seq 401"), "\(export.stderr)")
            let log = try CLI.run(["log", "--store", device.store])
            #expect(log.stdout.split(separator: "\n").count == 100 && log.stderr.contains("the log starts at seq 401"))
            let stats = try CLI.run(["stats", "--json", "--store", device.store])
            #expect(stats.stdout.contains(#""events":100"#) && stats.stdout.contains(#""pruned_through_seq":400"#), "\(stats.stdout)")

            // An export of a pruned store cannot be imported with its seqs into a fresh store.
            let file = try device.setup.directory.write("pruned.jsonl", export.stdout)
            let fresh = device.setup.directory.appending("fresh")
            let refused = try CLI.run(["import", file, "--store", fresh])
            #expect(refused.status == 65)
            #expect(refused.stderr.contains("starts at seq 401 but this store's next seq is 1"), "\(refused.stderr)")
            #expect(!FileManager.default.fileExists(atPath: fresh), "the refusal leaves no store behind")

            // Sync goes on from the prune point, and then the rest may go too.
            try device.sync()
            let second = try device.prune()
            #expect(second.stdout.contains("pruned 100 events (seq 401…500"), "\(second.stdout)\(second.stderr)")
            #expect(try CLI.run(["verify", "--store", device.store]).status == 0)
            #expect(try device.setup.replicaLines() == lines, "the server keeps the full history")
        }
    }

    /// Heads signed below the prune point name records that are gone: verify says what they prove
    /// and what not, and does not count them as checked against the log.
    @Test func verifySaysWhatSignedHeadsBelowThePrunePointProve() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let store = directory.appending("store")
            let data = directory.appending("server-data")
            let lines = Corpus.jsonl(Corpus.generated(count: 30, seed: 5)).split(separator: "\n").map { String($0) + "\n" }
            let enrolled = try CLI.run(["enroll", "--data", data, "--device", "kiosk-7"])
            let token = enrolled.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            let server = try SyncProcessTests.Server(data: data, scratch: directory)
            defer { server.stop() }
            // Each import signs the head on close: signed heads at seq 10, 20, 25 and 30; the server
            // holds seq 1…25.
            for range in [0..<10, 10..<20, 20..<25, 25..<30] {
                let file = try directory.write("part-\(range.lowerBound).jsonl", lines[range].joined())
                #expect(try CLI.run(["import", file, "--store", store, "--device", "kiosk-7"]).status == 0)
                if range.upperBound == 25 {
                    #expect(try CLI.run(["sync", "--store", store, "--server", server.url, "--token", token]).status == 0)
                }
            }
            #expect(try CLI.run(["prune", "--before", "2100-01-01", "--store", store, "--server", server.url, "--token", token]).status == 0)

            let verify = try CLI.run(["verify", "--store", store])
            #expect(verify.status == 0, "\(verify.stderr)")
            let output = verify.stdout.split(separator: "\n").map(String.init)
            #expect(output.count == 2, "\(verify.stdout)")
            #expect(output.first?.contains("4 signed heads (key ") == true, "\(verify.stdout)")
            #expect(
                output.first?.contains("2 checked against the log up to seq 30, 2 below the prune point with only their signature checked") == true,
                "\(verify.stdout)")
            let note = output.last ?? ""
            #expect(
                note.hasPrefix(
                    "note: the signed heads at seq 10, 20 are below the prune point (seq 25): their signatures are valid for (device, seq, hash), but their records were pruned"
                ), "\(note)")
            #expect(note.contains("cannot be compared with any record the store holds"), "\(note)")
            #expect(note.contains("not that the kept log continues from them"), "\(note)")
            #expect(note.contains("to which the first kept record links; a signed head at the prune point vouches for that hash."), "\(note)")
        }
    }

    /// A store whose cursor claims more than the server holds (what an older client recorded on a
    /// lying server's word): prune believes only what the server confirms now.
    @Test func pruneDeletesOnlyWhatTheServerConfirmsNow() async throws {
        try await onOwnThread {
            let device = try Device(seed: 12, synced: 400)
            defer { device.setup.directory.remove() }
            try device.sync()
            let rest = try device.setup.directory.write(
                "rest.jsonl", Corpus.jsonl(Corpus.generated(count: 500, seed: 12)).split(separator: "\n").dropFirst(400).map { $0 + "\n" }.joined())
            #expect(try CLI.run(["import", rest, "--store", device.store]).status == 0)
            try acknowledge(device.store, through: 500)

            let prune = try device.prune()
            #expect(prune.status == 0, "\(prune.stderr)")
            #expect(
                prune.stderr
                    == "onboard prune: the server now holds only seq 1…400 of the 500 it acknowledged before; pruning stops there (the next sync resends the rest)\n"
            )
            #expect(prune.stdout.contains("pruned 400 events (seq 1…400"), "\(prune.stdout)")
            let status = try CLI.run(["sync", "--status", "--store", device.store])
            #expect(status.stdout.contains("acknowledged by the server up to seq 400, 100 pending"), "\(status.stdout)")
            try device.sync()
            #expect(try device.setup.replicaLines().count == 500, "the events the lie had marked acknowledged reached the server")
        }
    }

    @Test func nothingIsPrunedWhenTheServerCannotConfirm() async throws {
        try await onOwnThread {
            let device = try Device(seed: 13, synced: 100)
            defer { device.setup.directory.remove() }
            try device.sync()
            func pruned() throws -> Bool { try CLI.run(["verify", "--store", device.store]).stdout.contains("pruned") }

            let missing = try CLI.run(["prune", "--before", "2100-01-01", "--store", device.store])
            #expect(missing.status == 64)
            #expect(
                missing.stderr.hasPrefix("onboard prune: --server URL is required: prune asks the sync server what it holds right before deleting"),
                "\(missing.stderr)")

            // A liar claiming seq 100 with another hash.
            let liar = try ScriptedHTTPServer { _ in
                .answer(200, body: Array(#"{"device":"kiosk-7","acknowledged_seq":100,"head_hash":"\#(String(repeating: "ab", count: 32))"}"#.utf8))
            }
            defer { liar.stop() }
            let lied = try CLI.run([
                "prune", "--before", "2100-01-01", "--store", device.store, "--server", "http://127.0.0.1:\(liar.port)", "--token", device.setup.token
            ])
            #expect(lied.status == 65, "\(lied.stderr)")
            #expect(
                lied.stderr.hasPrefix(
                    "onboard prune: nothing pruned: the server did not confirm what it holds: the server's record at seq 100 of device kiosk-7 has hash abab"),
                "\(lied.stderr)")
            #expect(lied.stderr.split(separator: "\n").count == 1)
            #expect(try !pruned())

            let unreachable = try CLI.run([
                "prune", "--before", "2100-01-01", "--store", device.store, "--server", "http://127.0.0.1:9", "--token", device.setup.token
            ])
            #expect(unreachable.status == 69, "\(unreachable.stderr)")
            #expect(
                unreachable.stderr.hasPrefix(
                    "onboard prune: nothing pruned: the server did not confirm what it holds: reading the server's cursor for device kiosk-7 failed 8 times in a row (last: http://127.0.0.1:9 refused the connection"
                ), "\(unreachable.stderr)")
            #expect(try !pruned())
        }
    }

    /// Records a sync cursor of `seq` in the closed store's meta, as `onboard sync` does.
    private func acknowledge(_ store: String, through seq: UInt64) throws {
        let environment = try Environment.open(path: store)
        defer { environment.close() }
        let meta = try #require(try environment.openDatabase("meta", create: false))
        try environment.write { try $0.put(meta, key: Array("sync_cursor".utf8), value: withUnsafeBytes(of: seq.bigEndian) { Array($0) }) }
    }

    @Test func aBadDateIsAUsageErrorAndNothingAcknowledgedPrunesNothing() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let store = directory.appending("store")
            let file = try directory.write("events.jsonl", Corpus.jsonl(Corpus.generated(count: 50, seed: 3)))
            #expect(try CLI.run(["import", file, "--store", store]).status == 0)

            for bad in ["yesterday", "2026-13-01", "2026-06-01T12:00:00+02:00", "2026-6-1"] {
                let result = try CLI.run(["prune", "--before", bad, "--store", store])
                #expect(result.status == 64, "\(bad)")
                #expect(result.stderr == "onboard prune: --before \"\(bad)\" is not an ISO 8601 UTC date (2026-06-01) or date-time (2026-06-01T12:00:00Z)\n")
            }
            let missing = try CLI.run(["prune", "--store", store])
            #expect(missing.status == 64 && missing.stderr.contains("--before DATE is required"))

            let unsynced = try CLI.run(["prune", "--before", "2100-01-01", "--dry-run", "--store", store])
            #expect(unsynced.status == 75)
            #expect(unsynced.stderr.contains("nothing pruned: the sync server has acknowledged no event"), "\(unsynced.stderr)")
            #expect(unsynced.stderr.split(separator: "\n").count == 1)
            let verify = try CLI.run(["verify", "--store", store])
            #expect(verify.stdout.contains("ok: 50 records") && !verify.stdout.contains("pruned"))
        }
    }
}
