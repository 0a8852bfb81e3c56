import Foundation
import OnboardingModel
import Testing
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// `onboard serve` and `onboard sync` as real processes on loopback, killed with SIGKILL at seeded
/// random moments. After every kill the server's copy must be a prefix of the device's log (same
/// seqs, same hashes); in the end exactly the device's log. Replay with ONBOARD_CRASH_SEED.
@Suite(.serialized, .slow) struct SyncProcessTests {
    static let eventCount = 6_000
    static let kills = 6
    /// Bound on the server kills of `serverKilledMidUpload…` (a kill before any batch landed, or
    /// after the last, is not one in the middle of an upload).
    static let maximumKillAttempts = 14

    /// A running `onboard serve`, and the port it printed.
    final class Server {
        let process = ChildProcess()
        let port: Int
        /// What it printed on stdout (the banner).
        let output: String

        convenience init(data: String, scratch: TemporaryDirectory) throws {
            try self.init(storage: ["--data", data], scratch: scratch, name: "serve-\(UUID().uuidString.prefix(6))")
        }

        /// `onboard serve --port 0` with `storage` (`--data PATH` or `--database URL …`).
        init(storage: [String], scratch: TemporaryDirectory, name: String) throws {
            output = scratch.appending("\(name).out")
            _ = FileManager.default.createFile(atPath: output, contents: nil)
            process.executableURL = CLI.binary
            process.arguments = ["serve", "--port", "0"] + storage
            process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
            process.standardError = FileHandle.nullDevice
            try process.run()
            let deadline = Date().addingTimeInterval(20)
            var found: Int?
            while found == nil && Date() < deadline {
                let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
                if let range = text.range(of: "listening on http://127.0.0.1:") {
                    found = Int(text[range.upperBound...].prefix { $0.isNumber })
                } else {
                    Thread.sleep(forTimeInterval: 0.05)
                }
            }
            guard let found else {
                kill(process.processIdentifier, SIGKILL)
                throw TestFailure("onboard serve did not report its port")
            }
            port = found
        }

        var url: String { "http://127.0.0.1:\(port)" }
        var banner: String { (try? String(contentsOfFile: output, encoding: .utf8)) ?? "" }
        /// The server key the banner names.
        var serverKey: String {
            guard let range = banner.range(of: "server key ") else { return "" }
            return String(banner[range.upperBound...].prefix { $0.isHexDigit })
        }

        func crash() {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }

        func stop() {
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
        }
    }

    struct Setup {
        let directory: TemporaryDirectory
        let device: String
        let data: String
        let token: String
        let lines: [String]

        init(seed: UInt64, count: Int = SyncProcessTests.eventCount) throws {
            directory = try TemporaryDirectory()
            device = directory.appending("device")
            data = directory.appending("server-data")
            let text = Corpus.jsonl(Corpus.generated(count: count, seed: seed))
            lines = text.split(separator: "\n").map { $0 + "\n" }
            let file = try directory.write("events.jsonl", text)
            let imported = try CLI.run(["import", file, "--store", device, "--device", "kiosk-7"])
            guard imported.status == 0 else { throw TestFailure("import failed: \(imported.stderr)") }
            let enrolled = try CLI.run(["enroll", "--data", data, "--device", "kiosk-7"])
            guard enrolled.status == 0 else { throw TestFailure("enroll failed: \(enrolled.stderr)") }
            token = enrolled.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }

        /// The server's copy, read with the server stopped: its store directory is the device id in hex.
        var replica: String { data + "/devices/" + Array("kiosk-7".utf8).map { String(format: "%02x", $0) }.joined() }

        func replicaLines() throws -> [String] {
            guard FileManager.default.fileExists(atPath: replica + "/data.mdb") else { return [] }
            let verify = try CLI.run(["verify", "--store", replica])
            #expect(verify.status == 0, "the server's copy fails verify: \(verify.stderr)")
            return try CLI.run(["export", "--store", replica]).stdout.split(separator: "\n").map { $0 + "\n" }
        }

        func startSync(url: String) throws -> ChildProcess {
            let process = ChildProcess()
            process.executableURL = CLI.binary
            process.arguments = ["sync", "--store", device, "--server", url, "--token", token, "--batch", "100"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            return process
        }
    }

    static var seed: UInt64 { ProcessInfo.processInfo.environment["ONBOARD_CRASH_SEED"].flatMap(UInt64.init) ?? 0x51C_2026 }

    @Test func serverKilledMidUploadLosesNothingAndDoublesNothing() async throws {
        try await onOwnThread {
            var random = SplitMix64(seed: Self.seed)
            let setup = try Setup(seed: Self.seed)
            defer { setup.directory.remove() }
            var previous = 0
            // A kill lands in the middle of an upload when the sync was still running and the
            // server's copy grew in that round but is still short of the device log. A round too
            // short for any batch to land (a busy machine) widens the window for the next one.
            var window = 0.05...0.6
            var midUpload = 0
            var attempts = 0
            while midUpload < Self.kills && attempts < Self.maximumKillAttempts && previous < setup.lines.count {
                attempts += 1
                let server = try Server(data: setup.data, scratch: setup.directory)
                let sync = try setup.startSync(url: server.url)
                Thread.sleep(forTimeInterval: Double.random(in: window, using: &random))
                let wasRunning = sync.isRunning
                server.crash()
                kill(sync.processIdentifier, SIGKILL)
                sync.waitUntilExit()
                let held = try setup.replicaLines()
                let context = "seed \(Self.seed), kill \(attempts)"
                #expect(held.count >= previous, "\(context): the server lost acknowledged records")
                #expect(Array(setup.lines.prefix(held.count)) == held, "\(context): the server's copy is not a prefix of the device log")
                if wasRunning && held.count > previous && held.count < setup.lines.count {
                    midUpload += 1
                } else if held.count == previous {
                    window = window.lowerBound...(window.upperBound * 1.5)
                }
                previous = held.count
            }
            #expect(
                midUpload >= Self.kills,
                "seed \(Self.seed): only \(midUpload) of \(attempts) kills landed in the middle of an upload (server copy \(previous) of \(setup.lines.count) records)"
            )
            let server = try Server(data: setup.data, scratch: setup.directory)
            let finish = try CLI.run(["sync", "--store", setup.device, "--server", server.url, "--token", setup.token])
            server.stop()
            #expect(finish.status == 0, "\(finish.stderr)")
            #expect(try setup.replicaLines() == setup.lines, "after the last sync the server holds exactly the device log")
        }
    }

    @Test func clientKilledAfterAcknowledgementResendsOnlyDuplicates() async throws {
        try await onOwnThread {
            var random = SplitMix64(seed: Self.seed ^ 0xC11E)
            let setup = try Setup(seed: Self.seed ^ 1)
            defer { setup.directory.remove() }
            let server = try Server(data: setup.data, scratch: setup.directory)
            for _ in 1...Self.kills {
                let sync = try setup.startSync(url: server.url)
                Thread.sleep(forTimeInterval: Double.random(in: 0.05...0.5, using: &random))
                kill(sync.processIdentifier, SIGKILL)
                sync.waitUntilExit()
            }
            let finish = try CLI.run(["sync", "--store", setup.device, "--server", server.url, "--token", setup.token])
            let status = try CLI.run(["sync", "--store", setup.device, "--status"])
            server.stop()
            #expect(finish.status == 0, "\(finish.stderr)")
            #expect(status.stdout.contains("0 pending"))
            #expect(try setup.replicaLines() == setup.lines, "nothing lost, nothing doubled")
        }
    }

    @Test func aRevokedTokenExits77WithWhatToDo() async throws {
        try await onOwnThread {
            let setup = try Setup(seed: 3, count: 20)
            defer { setup.directory.remove() }
            let revoked = try CLI.run(["enroll", "--data", setup.data, "--device", "kiosk-7", "--revoke"])
            #expect(revoked.status == 0, "\(revoked.stderr)")
            let server = try Server(data: setup.data, scratch: setup.directory)
            defer { server.stop() }
            let sync = try CLI.run(["sync", "--store", setup.device, "--server", server.url, "--token", setup.token])
            #expect(sync.status == 77, "authentication failures have their own code: \(sync.stderr)")
            #expect(sync.stderr.hasPrefix("onboard sync: ") && sync.stderr.contains("revoked"), "\(sync.stderr)")
            #expect(sync.stderr.split(separator: "\n").count == 1)
            // Another device's valid token: forbidden, the same code.
            let other = try CLI.run(["enroll", "--data", setup.data, "--device", "kiosk-8"])
            let wrong = try CLI.run([
                "sync", "--store", setup.device, "--server", server.url, "--token",
                other.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            ])
            #expect(wrong.status == 77, "\(wrong.stderr)")
            #expect(try setup.replicaLines().isEmpty, "nothing was uploaded")
        }
    }

    @Test func demoEndsWithASyncToALoopbackServer() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let demo = try CLI.run(["demo", "--store", directory.appending("demo")])
            #expect(demo.status == 0, "\(demo.stderr)")
            #expect(demo.stdout.contains("server acknowledged"), "\(demo.stdout.suffix(1500))")
            // The device was enrolled with its key, so the server kept the signed heads it checked:
            // the audit of its copy vouches for the whole log.
            #expect(demo.stdout.contains("enrolled with its signing key"), "\(demo.stdout.suffix(1500))")
            let audit = try CLI.run(["audit", "--data", directory.appending("demo") + "-server"])
            #expect(audit.status == 0, "\(audit.stdout)\(audit.stderr)")
            #expect(audit.stdout.contains("ok, 71 records, signed up to seq 71"), "\(audit.stdout)")
        }
    }

    @Test func forgetUserOnTheServersDataErasesEveryReplicaAndKeepsItsAuditValid() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            #expect(try CLI.run(["demo", "--store", directory.appending("demo")]).status == 0)
            let data = directory.appending("demo") + "-server"
            let forget = try CLI.run(["forget-user", "maria.k", "--data", data])
            #expect(forget.status == 0, "\(forget.stderr)")
            #expect(forget.stdout.contains("ward-3-ipad: key destroyed, reads as ~"), "\(forget.stdout)")
            #expect(forget.stdout.hasSuffix("forgot maria.k in 1 replica of \(data)\n"), "\(forget.stdout)")
            // The chain and the device's signed heads are untouched.
            let audit = try CLI.run(["audit", "--data", data])
            #expect(audit.status == 0, "\(audit.stdout)")
            #expect(audit.stdout.contains("ok, 71 records, signed up to seq 71"))
            // Compacted: the readable id is nowhere in the replica's file any more.
            let replicas = try FileManager.default.contentsOfDirectory(atPath: data + "/devices")
            #expect(replicas.count == 1)
            let bytes = try Data(contentsOf: URL(fileURLWithPath: data + "/devices/" + replicas[0] + "/data.mdb"))
            #expect(bytes.range(of: Data("maria.k".utf8)) == nil)
            #expect(bytes.range(of: Data("alice".utf8)) == nil, "ids are sealed even before a forget")
            let missing = try CLI.run(["forget-user", "maria.k", "--data", directory.appending("nowhere")])
            #expect(missing.status == 66)
            #expect(missing.stderr.contains("is not a sync server's data directory"))
        }
    }
}

/// The curl walkthrough of docs/sync-protocol.md, run as a script by a client that knows only the
/// document: curl for HTTP, python3 and mdb_dump to build the upload body.
@Suite(.slow) struct CurlWalkthroughTests {
    @Test func theProtocolDocumentPrintsTheUploadScriptItRuns() async throws {
        try await onOwnThread {
            let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            let document = try String(contentsOf: repository.appendingPathComponent("docs/sync-protocol.md"), encoding: .utf8)
            let script = try String(contentsOf: repository.appendingPathComponent("tools/make_upload.py"), encoding: .utf8)
            let body = script.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)[1] // without the #! line
            #expect(document.contains("```python\n" + body + "```\n"), "docs/sync-protocol.md must print tools/make_upload.py as it is")
        }
    }

    @Test func aClientWrittenFromTheProtocolDocumentEnrolsUploadsAndReadsBack() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            let process = ChildProcess()
            process.executableURL = URL(fileURLWithPath: "/bin/bash")
            process.arguments = [repository.appendingPathComponent("tools/curl_walkthrough.sh").path, directory.appending("work")]
            var environment = ProcessInfo.processInfo.environment
            environment["ONBOARD"] = CLI.binary.path
            process.environment = environment
            let output = directory.appending("out")
            _ = FileManager.default.createFile(atPath: output, contents: nil)
            process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
            process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
            try process.run()
            process.waitUntilExit()
            let text = try String(contentsOfFile: output, encoding: .utf8)
            #expect(process.terminationStatus == 0, "\(text)")
            let lines = Dictionary(
                text.split(separator: "\n").compactMap { line -> (String, String)? in
                    guard let colon = line.firstIndex(of: ":") else { return nil }
                    return (String(line[..<colon]), String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces))
                }, uniquingKeysWith: { first, _ in first })
            #expect(lines["health"] == #"{"status":"ok"}"#)
            #expect(lines["cursor"]?.contains(#""acknowledged_seq":0"#) == true)
            #expect(lines["upload"]?.contains(#"{"seq":1,"outcome":"appended","reason":null},{"seq":2,"outcome":"appended","reason":null}"#) == true)
            #expect(lines["again"]?.contains(#"{"seq":1,"outcome":"duplicate","reason":null},{"seq":2,"outcome":"duplicate","reason":null}"#) == true)
            #expect(lines["gap"] == "409")
            #expect(lines["rest"]?.contains(#""acknowledged_seq":5"#) == true)
            #expect(lines["history"]?.contains(#""devices":["kiosk-7"]"#) == true)
            #expect(lines["lockout"] == #"[{"user":"bob","device":null,"factor":"password","failures":3,"locked_until":null,"permanent":false}]"#)
        }
    }
}

extension SyncProcessTests.Server {
    convenience init(database: String, scratch: TemporaryDirectory, name: String) throws {
        try self.init(storage: ["--database", database, "--admin-token-file", scratch.appending("\(name)-admin.token")], scratch: scratch, name: name)
    }

    convenience init(dataDirectory: String, scratch: TemporaryDirectory, name: String) throws {
        try self.init(storage: ["--data", dataDirectory], scratch: scratch, name: name)
    }
}
