import Foundation
import OnboardingModel
import Testing
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Kills the real `onboard import` with SIGKILL at seeded random moments and checks, after every
/// kill, that the store opens, `verify` passes, and the log is exactly a prefix of the file with
/// every committed batch whole. Replay a failure with ONBOARD_CRASH_SEED=<seed from the message>.
@Suite(.slow) struct CrashTests {
    /// At least this many kills must land while the import is running.
    static let requiredKills = 20
    /// Bound on import attempts, so a pathological machine cannot loop forever.
    static let maximumAttempts = 120
    static let eventCount = 12_000
    static let commitEvery = 150

    @Test func killNineNeverLosesACommittedBatch() async throws {
        try await onOwnThread {
            let seed = ProcessInfo.processInfo.environment["ONBOARD_CRASH_SEED"].flatMap(UInt64.init) ?? 0x0B0A_4D11_2026
            var random = SplitMix64(seed: seed)
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let events = Corpus.generated(count: CrashTests.eventCount, seed: seed)
            let text = Corpus.jsonl(events)
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map { $0 + "\n" }
            let file = try directory.write("events.jsonl", text)

            // An uninterrupted run measures how long an import takes, so kills spread over all of it.
            let started = Date()
            let reference = try CLI.run(["import", file, "--store", directory.appending("reference"), "--commit-every", String(CrashTests.commitEvery)])
            let fullDuration = Date().timeIntervalSince(started)
            #expect(reference.status == 0, "seed \(seed): \(reference.stderr)")

            var kills = 0
            var attempts = 0
            var round = 0
            var store = directory.appending("store-0")
            while kills < CrashTests.requiredKills && attempts < CrashTests.maximumAttempts {
                attempts += 1
                let process = ChildProcess()
                process.executableURL = CLI.binary
                process.arguments = ["import", file, "--store", store, "--commit-every", String(CrashTests.commitEvery)]
                process.standardOutput = FileHandle.nullDevice
                process.standardError = FileHandle.nullDevice
                try process.run()
                let delay = Double.random(in: 0.02...max(0.05, fullDuration * 1.05), using: &random)
                Thread.sleep(forTimeInterval: delay)
                let wasRunning = process.isRunning
                if wasRunning { kill(process.processIdentifier, SIGKILL) }
                process.waitUntilExit()
                let killed = wasRunning && process.terminationReason == .uncaughtSignal
                if killed { kills += 1 }

                let context = "seed \(seed), attempt \(attempts), delay \(String(format: "%.3f", delay)) s"
                guard FileManager.default.fileExists(atPath: store + "/data.mdb") else { continue }
                let verify = try CLI.run(["verify", "--store", store])
                #expect(verify.status == 0, "\(context): verify failed after kill: \(verify.stderr)")
                let exported = try CLI.run(["export", "--store", store])
                #expect(exported.status == 0, "\(context): \(exported.stderr)")
                let got = exported.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map { $0 + "\n" }
                #expect(got.count <= lines.count, "\(context)")
                #expect(Array(lines.prefix(got.count)) == got, "\(context): the log is not a prefix of the file")
                #expect(
                    got.count % CrashTests.commitEvery == 0 || got.count == lines.count,
                    "\(context): \(got.count) events is not a whole number of \(CrashTests.commitEvery)-event commits")
                if got.count == lines.count {
                    // Finished: start a new round on a fresh store so later kills land mid-import again.
                    round += 1
                    store = directory.appending("store-\(round)")
                }
            }
            #expect(kills >= CrashTests.requiredKills, "seed \(seed): only \(kills) kills landed in \(attempts) attempts")
            print(
                "crash test: \(kills) kill -9 in \(attempts) attempts over \(round + 1) stores (seed \(seed), import \(String(format: "%.2f", fullDuration)) s)"
            )
        }
    }
}
