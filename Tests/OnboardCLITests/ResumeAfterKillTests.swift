import Foundation
import OnboardingModel
import Testing
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Kills the real `onboard import --commit-every 1000` of a generated file with SIGKILL, resumes
/// it, and checks that every user still reads by its readable id (docs/store.md, "Write
/// closures"). A store reopened with a map exactly its file's size can fill the map at the
/// commit of the first chunk it writes, after the chunk's closure ran; the store then grows the
/// map and runs the chunk again. Whether a given kill leads there depends on LMDB's free pages,
/// so the resume is run with the debug build's `ONBOARD_TEST_FAULTS=map-full-after-put`, which
/// makes that first commit fill the map every time. Replay a failure with
/// ONBOARD_CRASH_SEED=<seed from the message>.
@Suite(.slow) struct ResumeAfterKillTests {
    static let eventCount = 20_000
    static let commitEvery = 1000
    /// Resumed kills to check: each costs about three seconds in a debug build.
    static let requiredTrials = 3
    /// Bound on import attempts (a kill that lands after the import finished does not count).
    static let maximumAttempts = 14
    /// Users screens checked per trial: the export already shows every user; a few screens show
    /// the projections agree.
    static let devicesChecked = 3

    @Test func resumeAfterKillKeepsEveryUserReadable() async throws {
        try await onOwnThread {
            let seed = ProcessInfo.processInfo.environment["ONBOARD_CRASH_SEED"].flatMap(UInt64.init) ?? 0x5EED_0011
            var random = SplitMix64(seed: seed)
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let file = directory.appending("generated.jsonl")
            let generated = try CLI.run(["generate", "--events", String(Self.eventCount), "--seed", String(seed), "--output", file])
            try #require(generated.status == 0, "\(generated.stderr)")
            let text = try String(contentsOfFile: file, encoding: .utf8)
            let lines = text.split(separator: "\n").map { String($0) + "\n" }
            try #require(!text.contains("\"user\":\"~"), "the generated file names every user by a readable id")
            let importArguments = ["import", file, "--commit-every", String(Self.commitEvery)]

            // An uninterrupted run measures how long an import takes, so kills land inside it.
            let started = Date()
            let reference = try CLI.run(importArguments + ["--store", directory.appending("reference")])
            let fullDuration = Date().timeIntervalSince(started)
            #expect(reference.status == 0, "seed \(seed): \(reference.stderr)")

            var trials = 0
            var attempts = 0
            // The reference run may have been slower than these (a busy machine at its start):
            // an import that finished before its kill shortens the estimate for the next one.
            var estimate = fullDuration
            while trials < Self.requiredTrials && attempts < Self.maximumAttempts {
                attempts += 1
                let store = directory.appending("store-\(attempts)")
                let process = ChildProcess()
                process.executableURL = CLI.binary
                process.arguments = importArguments + ["--store", store]
                process.standardOutput = FileHandle.nullDevice
                process.standardError = FileHandle.nullDevice
                try process.run()
                // Parsing the file takes the first part of the run: kill while chunks commit.
                let delay = Double.random(in: (estimate * 0.35)...(estimate * 0.95), using: &random)
                Thread.sleep(forTimeInterval: delay)
                let wasRunning = process.isRunning
                if wasRunning { kill(process.processIdentifier, SIGKILL) }
                process.waitUntilExit()
                guard wasRunning && process.terminationReason == .uncaughtSignal else {
                    estimate *= 0.6
                    continue
                }
                let before = try exportedLines(store)
                // Killed while closing, after the last chunk: the resume would write nothing.
                guard before.count < lines.count else { continue }
                trials += 1
                let context = "seed \(seed), attempt \(attempts), killed after \(String(format: "%.3f", delay)) s"

                let resumed = try CLI.run(importArguments + ["--store", store], environment: ["ONBOARD_TEST_FAULTS": "map-full-after-put"])
                #expect(resumed.status == 0, "\(context): \(resumed.stderr)")
                let exported = try exportedLines(store)
                let pseudonymous = exported.filter { $0.contains("\"user\":\"~") }
                #expect(
                    pseudonymous.count == 0,
                    "\(context): \(pseudonymous.count) events read with a pseudonym after the resume (killed at \(before.count) events), e.g. \(pseudonymous.first ?? "")"
                )
                // The export adds each event's seq; otherwise it is the file, line for line.
                let withoutSeqs = exported.map(removingSeq)
                let firstDifference = zip(withoutSeqs, lines).enumerated().first { $0.element.0 != $0.element.1 }?.offset
                #expect(
                    withoutSeqs.count == lines.count && firstDifference == nil,
                    "\(context): the resumed store exports \(exported.count) events, not the file's \(lines.count); first difference at line \(firstDifference.map { $0 + 1 } ?? 0)"
                )
                let verify = try CLI.run(["verify", "--store", store])
                #expect(verify.status == 0, "\(context): \(verify.stderr)")
                // The users screens of (a few of) the devices whose users were added after the kill.
                for device in devicesAddingUsers(lines.dropFirst(before.count)).prefix(Self.devicesChecked) {
                    let users = try CLI.run(["users", "--store", store, "--device", device, "--json"])
                    #expect(users.status == 0, "\(context): \(users.stderr)")
                    #expect(!users.stdout.contains("\"id\":\"~"), "\(context): a user of \(device) reads as a pseudonym")
                }
            }
            #expect(trials == Self.requiredTrials, "seed \(seed): only \(trials) kills landed in \(attempts) attempts")
        }
    }

    /// The store's export, one string per line (nothing when the kill came before the store existed).
    private func exportedLines(_ store: String) throws -> [String] {
        guard FileManager.default.fileExists(atPath: store + "/data.mdb") else { return [] }
        let exported = try CLI.run(["export", "--store", store])
        #expect(exported.status == 0, "\(exported.stderr)")
        return exported.stdout.split(separator: "\n").map { String($0) + "\n" }
    }

    /// `line` without its `"seq":N` member (the export writes it after the device).
    private func removingSeq(_ line: String) -> String {
        guard let start = line.range(of: ",\"seq\":") else { return line }
        let end = line[start.upperBound...].firstIndex { !$0.isNumber } ?? line.endIndex
        return String(line[..<start.lowerBound] + line[end...])
    }

    /// The devices of the `user_added` events among `lines`, each once.
    private func devicesAddingUsers(_ lines: ArraySlice<String>) -> [String] {
        var devices: [String] = []
        for line in lines where line.contains("\"type\":\"user_added\"") {
            guard let start = line.range(of: "\"device\":\"")?.upperBound,
                let end = line[start...].firstIndex(of: "\"")
            else { continue }
            let device = String(line[start..<end])
            if !devices.contains(device) { devices.append(device) }
        }
        return devices
    }
}
