import Foundation
import LMDB
import OnboardingModel
import Testing
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

@Suite(.slow) struct StoreCommandsTests {
    @Test func recordFillsDefaultsAndIsIdempotent() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let store = directory.appending("store")
            let first = try CLI.run([
                "record", #"{"type":"sign_in_failed","user":"alice","method":"password","reason":"invalid_password"}"#,
                "--store", store, "--device", "kiosk-7"
            ])
            #expect(first.status == 0, "\(first.stderr)")
            let stored = try EventJSON.decode(line: first.stdout.trimmingCharacters(in: .newlines))
            #expect(stored.seq == 1)
            #expect(stored.event.device == "kiosk-7")
            #expect(stored.event.payload == .signInFailed(method: .password, reason: .invalidPassword))
            #expect(abs(stored.event.at.millisecondsSince1970 - Int64(Date().timeIntervalSince1970 * 1000)) < 60_000)

            // The same event again, on stdin: the original seq, nothing written.
            let again = try CLI.run(["record", "--store", store], input: Data(first.stdout.utf8))
            #expect(again.status == 0)
            #expect(again.stdout == first.stdout)
            #expect(again.stderr == "already recorded at seq 1; nothing written\n")
            let stats = try CLI.run(["stats", "--json", "--store", store])
            let value = try JSONValue.parse(stats.stdout.trimmingCharacters(in: .newlines))
            #expect(value["events"] == .number("1"))
            #expect(value["device"] == .string("kiosk-7"))
            #expect(value["types"] == .object([.init("sign_in_failed", .number("1"))]))
        }
    }

    @Test func recordRefusesSecretsAndBadJSON() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let store = directory.appending("store")
            let secret = try CLI.run(["record", #"{"type":"passcode_set","user":"bob","passcode":"1234"}"#, "--store", store])
            #expect(secret.status == 65)
            #expect(
                secret.stderr
                    == "onboard record: field \"passcode\": looks like a secret; OnboardingStore never stores passwords, codes, tokens or answers — remove the field\n"
            )
            let broken = try CLI.run(["record", "{", "--store", store])
            #expect(broken.status == 65)
            #expect(broken.stderr == "onboard record: malformed JSON at column 2: expected a quoted key\n")
            let nothing = try CLI.run(["record", "--store", store], input: Data())
            #expect(nothing.status == 64)
        }
    }

    @Test func storeProblemsHaveDistinctExitCodes() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            // Missing store, for a reading command.
            let missing = try CLI.run(["export", "--store", directory.appending("nope")])
            #expect(missing.status == 66)
            #expect(
                missing.stderr
                    == "onboard export: no store at \(directory.appending("nope")); record or import events to create one, or pass --store with an existing store\n"
            )

            // Not creatable: a parent that is a regular file (root ignores permission bits, not this).
            let file = try directory.write("plain-file", "x")
            let unwritable = try CLI.run(["record", #"{"type":"passcode_set","user":"u"}"#, "--store", file + "/store"])
            #expect(unwritable.status == 73)
            #expect(unwritable.stderr == "onboard record: cannot create store at \(file)/store: Not a directory; choose a writable location with --store\n")

            // Not a store: a plain file, and a directory holding a garbage data.mdb.
            let notStore = try CLI.run(["stats", "--store", file])
            #expect(notStore.status == 74)
            #expect(notStore.stderr == "onboard stats: \(file) is a file, not an OnboardingStore directory; pass --store with a directory path\n")
            let garbage = directory.appending("garbage")
            try FileManager.default.createDirectory(atPath: garbage, withIntermediateDirectories: true)
            try Data(repeating: 0x5A, count: 64 * 1024).write(to: URL(fileURLWithPath: garbage + "/data.mdb"))
            let notLMDB = try CLI.run(["verify", "--store", garbage])
            #expect(notLMDB.status == 74)
            #expect(notLMDB.stderr.hasPrefix("onboard verify: \(garbage) is not an OnboardingStore (LMDB: "))
            #expect(!notLMDB.stderr.contains("Fatal error"))

            // A newer format version.
            let newer = directory.appending("newer")
            #expect(try CLI.run(["record", #"{"type":"passcode_set","user":"u"}"#, "--store", newer]).status == 0)
            do {
                let environment = try Environment.open(path: newer)
                defer { environment.close() }
                let meta = try #require(try environment.openDatabase("meta", create: false))
                try environment.write { try $0.put(meta, key: Array("format_version".utf8), value: [0, 0, 0, 99]) }
            }
            let tooNew = try CLI.run(["export", "--store", newer])
            #expect(tooNew.status == 69)
            #expect(tooNew.stderr == "onboard export: store at \(newer) has format version 99, newer than this onboard reads (2); upgrade onboard\n")
            #expect(try CLI.run(["record", #"{"type":"passcode_set","user":"u"}"#, "--store", newer]).status == 69)
        }
    }

    @Test func corruptedRecordIsNamedByVerifyAndRefusedByExport() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let store = directory.appending("store")
            let file = try directory.write("corpus.jsonl", Corpus.jsonl(Corpus.everyType()))
            #expect(try CLI.run(["import", file, "--store", store]).status == 0)
            #expect(try CLI.run(["verify", "--store", store]).stdout.hasPrefix("ok: \(Corpus.everyType().count) records, hash chain intact"))

            try flipByte(store: store, seq: 7, offset: 80)
            let verify = try CLI.run(["verify", "--store", store])
            #expect(verify.status == 1)
            #expect(verify.stderr.hasPrefix("onboard verify: \(store) has 1 problem; restore it from a backup or a server copy\n"))
            #expect(verify.stderr.contains("  first bad seq 7: modified\n"))
            #expect(verify.stderr.contains("  seq 7: modified: record cannot be read: its bytes no longer match its hash (the record was changed)"))

            let export = try CLI.run(["export", "--store", store])
            #expect(export.status == 74)
            #expect(
                export.stderr
                    == "onboard export: record at seq 7 is damaged: hash does not match the record's bytes (the record was modified); run onboard verify\n")
            #expect(export.stdout.split(separator: "\n").count == 6, "the records before the damage are still written")
        }
    }

    @Test func logShowsReadableLinesAndFollows() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let store = directory.appending("store")
            let events = Corpus.everyType()
            let file = try directory.write("corpus.jsonl", Corpus.jsonl(Array(events.prefix(3))))
            #expect(try CLI.run(["import", file, "--store", store]).status == 0)
            let log = try CLI.run(["log", "--store", store])
            let lines = log.stdout.split(separator: "\n")
            #expect(lines.count == 3)
            #expect(
                lines[0]
                    == "      1  2026-11-30 16:00:00.123  kiosk-7  zoë  user_added  display_name=\"Zoë Ångström-Łukasiewicz\" subtitle=\"Infirmière 👩‍⚕️\" image_ref=\"avatars/zoë.png\" passcode_policy=numeric passcode_min_length=6"
            )

            // --follow prints events appended by another process while it runs.
            let output = directory.appending("follow.out")
            _ = FileManager.default.createFile(atPath: output, contents: nil)
            let process = ChildProcess()
            process.executableURL = CLI.binary
            process.arguments = ["log", "--follow", "--store", store]
            process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
            try process.run()
            // SIGTERM: `onboard` unblocks signals at start, so it ends even though the test runner's
            // threads (whose signal mask children inherit) block SIGTERM.
            defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
            #expect(try CLI.run(["record", EventJSON.encode(events[20], seq: nil), "--store", store]).status == 0)
            let deadline = Date().addingTimeInterval(10)
            var seen = ""
            while Date() < deadline {
                seen = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
                if seen.split(separator: "\n").count >= 4 { break }
                Thread.sleep(forTimeInterval: 0.05)
            }
            #expect(seen.split(separator: "\n").count == 4)
            #expect(seen.contains("      4  "))
            process.terminate()
            process.waitUntilExit()
            #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGTERM)
        }
    }

    @Test func demoTellsTheStoryOnAFreshStore() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let store = directory.appending("demo")
            let demo = try CLI.run(["demo", "--store", store])
            #expect(demo.status == 0, "\(demo.stderr)")
            for expected in [
                "1. A shared device is set up for two people", "wrong passcode", "2FA", "Verification failed",
                "Temporary password sent via email", "Username already in use", "Passwords do not match",
                "Wrong code. Please try again.", "hash chain: intact", "onboard log --store \(store)"
            ] {
                #expect(demo.stdout.contains(expected), "demo output lacks \(expected)")
            }
            #expect(try CLI.run(["verify", "--store", store]).status == 0)
            let stats = try JSONValue.parse(try CLI.run(["stats", "--json", "--store", store]).stdout.trimmingCharacters(in: .newlines))
            #expect(stats["device"] == .string("ward-3-ipad"))
            #expect(stats["users"] == .number("4"), "alice, jose, maria.k and the locum sam")
            // A demo refuses to write into an existing store.
            let again = try CLI.run(["demo", "--store", store])
            #expect(again.status == 64)
            #expect(again.stderr == "onboard demo: \(store) already exists; the demo needs a fresh store, pass a new --store path\n")
        }
    }

    @Test func otherToolsReadTheStore() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let store = directory.appending("store")
            let text = Corpus.jsonl(Corpus.everyType())
            let file = try directory.write("corpus.jsonl", text)
            #expect(try CLI.run(["import", file, "--store", store]).status == 0)

            let stat = try Tool.run("/usr/bin/mdb_stat", ["-a", store])
            #expect(stat.status == 0, "mdb_stat failed: \(stat.output)")
            #expect(stat.output.contains("Status of events"))
            #expect(stat.output.contains("Entries: \(Corpus.everyType().count)"))

            // A reader written in Python from docs/format.md alone decodes every record to the same JSONL.
            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("tools/decode_mdb_dump.py").path
            let decoded = try Tool.run("/usr/bin/env", ["python3", script, store])
            #expect(decoded.status == 0, "\(decoded.output)")
            #expect(decoded.stdout == text)
        }
    }

    @Test func filesAreOwnerOnly() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let store = directory.appending("store")
            #expect(try CLI.run(["record", #"{"type":"passcode_set","user":"u"}"#, "--store", store]).status == 0)
            for name in ["data.mdb", "lock.mdb"] {
                let attributes = try FileManager.default.attributesOfItem(atPath: store + "/" + name)
                #expect((attributes[.posixPermissions] as? Int) == 0o600, "\(name)")
            }
        }
    }
}

/// Flips one byte of the record stored at `seq`, as a disk fault or a tamperer would.
func flipByte(store: String, seq: UInt64, offset: Int) throws {
    let environment = try Environment.open(path: store)
    defer { environment.close() }
    let events = try #require(try environment.openDatabase("events", create: false))
    let key = withUnsafeBytes(of: seq.bigEndian) { Array($0) }
    try environment.write { transaction in
        var value = try #require(try transaction.get(events, key: key))
        value[min(offset, value.count - 1)] ^= 0x40
        try transaction.put(events, key: key, value: value)
    }
}

/// Runs another program (mdb_stat, python3) and captures its output.
enum Tool {
    struct Result {
        let status: Int32
        let stdout: String
        let output: String
    }

    static func run(_ executable: String, _ arguments: [String]) throws -> Result {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: stdout, as: UTF8.self)
        return Result(status: process.terminationStatus, stdout: text, output: text + String(decoding: stderr, as: UTF8.self))
    }
}
