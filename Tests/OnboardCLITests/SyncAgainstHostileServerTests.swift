import Foundation
import OnboardingModel
import Testing
import TestSupport

/// `onboard sync` as a real process against a scripted liar on loopback and against a real
/// `onboard serve`: the exit statuses and one-line messages a user or a script sees, the server
/// key pinned at the first sync, and enrolments while the server runs.
@Suite(.serialized, .timed, .slow) struct SyncAgainstHostileServerTests {
    static func sync(_ setup: SyncProcessTests.Setup, _ url: String, _ extra: [String] = []) throws -> CLI.Result {
        try CLI.run(["sync", "--store", setup.device, "--server", url, "--token", setup.token] + extra)
    }

    @Test func protocolViolationsRedirectsAndTheTimeLimitHaveTheirOwnExitStatus() async throws {
        try await onOwnThread {
            let setup = try SyncProcessTests.Setup(seed: 21, count: 50)
            defer { setup.directory.remove() }

            let garbled = try ScriptedHTTPServer { _ in .answer(200, body: Array(#"{"device": "kiosk-7", "acknowledged_seq": "#.utf8)) }
            defer { garbled.stop() }
            let violation = try Self.sync(setup, "http://127.0.0.1:\(garbled.port)")
            #expect(violation.status == 76, "\(violation.stderr)")
            #expect(violation.stderr.hasPrefix("onboard sync: the server's cursor is unreadable ("), "\(violation.stderr)")
            #expect(violation.stderr.split(separator: "\n").count == 1)

            let redirecting = try ScriptedHTTPServer { _ in .answer(308, headers: ["location": "http://198.51.100.7:8443/v1/devices/kiosk-7/cursor"]) }
            defer { redirecting.stop() }
            let redirected = try Self.sync(setup, "http://127.0.0.1:\(redirecting.port)")
            #expect(redirected.status == 78, "\(redirected.stderr)")
            #expect(
                redirected.stderr
                    == "onboard sync: the server answered reading the server's cursor with HTTP 308, a redirect to http://198.51.100.7:8443; redirects are never followed, so the device token was sent nowhere else — if that is the sync server, give its address itself (--server)\n"
            )
            #expect(redirecting.requests.count == 1)

            let dripping = try ScriptedHTTPServer { _ in
                .drip(Array("HTTP/1.1 200 OK\r\ncontent-length: 500\r\n\r\n".utf8) + [UInt8](repeating: 32, count: 500), interval: .milliseconds(500))
            }
            defer { dripping.stop() }
            let started = Date()
            let limited = try Self.sync(setup, "http://127.0.0.1:\(dripping.port)", ["--max-time", "2"])
            let took = Date().timeIntervalSince(started)
            #expect(limited.status == 75, "\(limited.stderr)")
            #expect(
                limited.stderr
                    == "onboard sync: the sync of device kiosk-7 passed its time limit of 2 s; the server holds seq 0 (kept as acknowledged) — sync again to go on\n"
            )
            #expect(took >= 2 && took < 15, "took \(took) s")

            for bad in ["0", "-1", "18446744073709551615", "soon"] {
                let usage = try Self.sync(setup, "http://127.0.0.1:\(garbled.port)", ["--max-time", bad])
                #expect(usage.status == 64, "--max-time \(bad)")
            }
            let badKey = try Self.sync(setup, "http://127.0.0.1:\(garbled.port)", ["--server-key", "zz"])
            #expect(badKey.status == 64 && badKey.stderr.contains("--server-key must be 64 hex digits"), "\(badKey.stderr)")
            let status = try CLI.run(["sync", "--status", "--store", setup.device])
            #expect(status.stdout.contains("acknowledged by the server up to seq 0, 50 pending"), "\(status.stdout)")
        }
    }

    @Test func enrolPrintsTheServerKeyAndTheFirstSyncPinsIt() async throws {
        try await onOwnThread {
            let setup = try SyncProcessTests.Setup(seed: 22, count: 40)
            defer { setup.directory.remove() }
            let again = try CLI.run(["enroll", "--data", setup.data, "--device", "kiosk-7"])
            let marker = "onboard sync --server-key "
            let range = try #require(again.stderr.range(of: marker), "\(again.stderr)")
            let key = String(again.stderr[range.upperBound...].prefix(64))
            #expect(SigningPublicKey(hex: key) != nil)

            let server = try SyncProcessTests.Server(data: setup.data, scratch: setup.directory)
            defer { server.stop() }
            let other = SigningKeyPair.generate().publicKey.hex
            #expect(try Self.sync(setup, server.url, ["--server-key", key]).status == 0)
            let mismatch = try Self.sync(setup, server.url, ["--server-key", other])
            #expect(mismatch.status == 77, "\(mismatch.stderr)")
            #expect(mismatch.stderr.contains("is pinned to the sync server key \(key), not \(other)"), "\(mismatch.stderr)")
            #expect(!mismatch.stderr.contains(setup.token))
            // The pinned key is used without the option.
            #expect(try Self.sync(setup, server.url).status == 0)
        }
    }

    /// An enrolment from the data directory while `onboard serve` runs, then two syncs of the new
    /// device at once: neither may find its replica closed under it, then or later.
    @Test func enrollingWhileTheServerRunsNeverBreaksAReplicaInUse() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let data = directory.appending("server-data")
            let server = try SyncProcessTests.Server(data: data, scratch: directory)
            defer { server.stop() }
            let text = Corpus.jsonl(Corpus.generated(count: 300, seed: 23))
            for round in 0..<8 {
                let device = "race-\(round)"
                let store = directory.appending(device)
                let file = try directory.write("\(device).jsonl", text.replacingOccurrences(of: "\"kiosk-7\"", with: "\"\(device)\""))
                #expect(try CLI.run(["import", file, "--store", store, "--device", device]).status == 0)
                let enrolled = try CLI.run(["enroll", "--data", data, "--device", device])
                #expect(enrolled.status == 0, "\(enrolled.stderr)")
                let token = enrolled.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
                let outputs = (0..<2).map { directory.appending("\(device)-sync-\($0).err") }
                let syncs = try outputs.map { output -> ChildProcess in
                    _ = FileManager.default.createFile(atPath: output, contents: nil)
                    let process = ChildProcess()
                    process.executableURL = CLI.binary
                    process.arguments = ["sync", "--store", store, "--server", server.url, "--token", token, "--batch", "50"]
                    process.standardOutput = FileHandle.nullDevice
                    process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
                    try process.run()
                    return process
                }
                for (process, output) in zip(syncs, outputs) {
                    process.waitUntilExit()
                    let stderr = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
                    // Two runs on one store: the second may wait for the first (the store's writer
                    // lock) or be told 429 and retry; both end synced.
                    #expect(process.terminationStatus == 0, "round \(round): \(stderr)")
                    #expect(!stderr.contains("closed"), "round \(round): \(stderr)")
                }
                let after = try CLI.run(["sync", "--store", store, "--server", server.url, "--token", token])
                #expect(after.status == 0 && after.stdout.contains("the server holds seq 300"), "round \(round): \(after.stdout)\(after.stderr)")
            }
        }
    }
}
