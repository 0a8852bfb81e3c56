import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import Testing
import TestSupport

/// docs/openapi.yaml checked against a real `onboard serve` by schemathesis, a generator and a set
/// of checks someone else wrote (pinned in tools/test-requirements.txt, configured by
/// tools/schemathesis.toml): requests the schema calls valid must be accepted, requests it calls
/// invalid refused, every answer must have a documented status, content type, headers and body,
/// 405 must carry `Allow`, and no request may crash the server. One pass per role, each with the
/// operations of its tag: the device (cursor and upload, with the device's own token), the
/// auditor (histories, lockout, audit, and the console's reads: users, devices, actions, counts,
/// exports) and the admin (enrolment, tokens, erasure, lockout clears, health, the console's files).
/// On each storage: `onboard serve --data` and `onboard serve --database`.
@Suite(.slow) struct OpenAPISchemathesisTests {
    static let schemathesis = URL(fileURLWithPath: OCSFValidator.python).deletingLastPathComponent()
        .appendingPathComponent("schemathesis").path
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    /// Replay another sequence of generated requests with ONBOARD_SCHEMATHESIS_SEED.
    static var seed: String { ProcessInfo.processInfo.environment["ONBOARD_SCHEMATHESIS_SEED"] ?? "20261129" }
    /// Generated requests per operation in the fuzzing phase, after the examples and the coverage
    /// phase's boundary values: schemathesis's own default, about 25 s for all three passes on a
    /// quiet 2-core machine, per storage. A count, not `--max-time`, bounds the run: schemathesis spends a time
    /// budget whole, repeating the fuzzing until it is gone.
    static let examplesPerOperation = 100
    /// A pass still running after this long is stopped and fails the test: the count above
    /// finishes well within it even on a loaded machine, so only a hang gets here.
    static let passDeadlineSeconds: TimeInterval = 300
    /// A request the server has not answered in this long fails schemathesis's run.
    static let requestTimeoutSeconds = 10

    struct Pass {
        let role: String
        let tags: [String]
        let token: String
        /// Operations of the tags in docs/openapi.yaml: a pass that tests fewer lost some.
        let operations: Int
        var environment: [String: String] = [:]
    }

    struct Outcome {
        let status: Int32
        let output: String
        /// How to run the pass again by hand (the token left out).
        var command = ""

        /// `N` of schemathesis's `N generated, …` summary line.
        var generated: Int? { number(before: " generated") }
        /// `N` of its `Tested: N` line.
        var tested: Int? { number(after: "Tested: ") }

        /// From the list of failures to the end: what failed and how to reproduce it.
        var failures: String {
            let start = output.range(of: "= FAILURES =")?.lowerBound ?? output.range(of: "= ERRORS =")?.lowerBound
            return String(output[(start ?? output.startIndex)...].suffix(OpenAPISchemathesisTests.shownOutputCharacters))
        }

        private func number(before marker: String) -> Int? {
            guard let range = output.range(of: marker) else { return nil }
            return Int(String(output[..<range.lowerBound].reversed().prefix { $0.isNumber }.reversed()))
        }

        private func number(after marker: String) -> Int? {
            guard let range = output.range(of: marker) else { return nil }
            return Int(output[range.upperBound...].prefix { $0.isNumber })
        }
    }

    /// Enough of schemathesis's report to read every failure of a bad run, short enough to read.
    static let shownOutputCharacters = 20_000

    /// What a pass must at least send per operation. Hypothesis stops early on an operation with
    /// few distinct requests (`POST /v1/auditors` has no parameters), so this is well under the
    /// fuzzing count; fewer means the pass was cut short or generated nothing.
    static let minimumRequestsPerOperation = 50

    struct Passes {
        var outcomes: [(Pass, Outcome)] = []
        /// After the device pass: the device's cursor and alice's first history page of one attempt.
        var acknowledgedSeq: Int?
        var nextCursor: String?
        var answers = ""
    }

    @Test(arguments: TestDatabase.storages) func theServerAnswersTheRequestsOfEveryRoleAsTheDocumentSays(storage: String) async throws {
        guard FileManager.default.isExecutableFile(atPath: Self.schemathesis) else {
            throw TestFailure("no \(Self.schemathesis): run tools/setup.sh, which installs schemathesis")
        }
        let passes = try await OwnThread.run { try Self.check(storage: storage) }
        // The documented upload example, sent in the examples phase of the device pass, is held:
        // the server is at seq 2 and alice's history has two attempts.
        #expect(passes.acknowledgedSeq == 2, "the upload example of docs/openapi.yaml was not accepted: \(passes.answers)")
        #expect(passes.nextCursor != nil, "no next_cursor on a page of one of alice's two attempts: \(passes.answers)")
        for (pass, outcome) in passes.outcomes {
            #expect(outcome.status == 0, "schemathesis found failures in the \(pass.role) pass (\(outcome.command)):\n\(outcome.failures)")
            #expect(outcome.tested == pass.operations, "the \(pass.role) pass tested \(outcome.tested ?? 0) operations:\n\(outcome.failures)")
            #expect(
                (outcome.generated ?? 0) >= pass.operations * Self.minimumRequestsPerOperation,
                "the \(pass.role) pass generated \(outcome.generated ?? 0) requests:\n\(outcome.failures)")
        }
        #expect(passes.outcomes.map(\.0.role) == ["device", "auditor", "admin"])
    }

    /// The three passes against `onboard serve` on `storage`: `lmdb` (`--data`, a new data
    /// directory) or `postgres` (`--database`, a new database, dropped afterwards).
    static func check(storage: String) throws -> Passes {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = storage == "postgres" ? try TestDatabase.freshDatabase() : nil
        defer { database?.drop() }
        let place = database.map { ["--database", $0.url] } ?? ["--data", directory.appending("server-data")]
        // kiosk-7 is the device of the documented upload example, enrolled without a key as it is there.
        let device = try enrol(place + ["--device", "kiosk-7"])
        let auditor = try enrol(place + ["--auditor"])
        // Without rate limits: schemathesis checks that a request without its Authorization header
        // is 401, and sends hundreds of them — past the failure limit they are 429 (as documented;
        // RateLimitTests covers the limits).
        let noLimits = ["--rate-per-token", "off", "--rate-failed-auth", "off", "--rate-anonymous", "off"]
        let server =
            try database.map { database in
                try SyncProcessTests.Server(
                    storage: ["--database", database.url, "--admin-token-file", directory.appending("serve-admin.token")] + noLimits,
                    scratch: directory, name: "serve")
            }
            ?? SyncProcessTests.Server(
                storage: ["--data", directory.appending("server-data")] + noLimits, scratch: directory,
                name: "serve-\(UUID().uuidString.prefix(6))")
        defer { server.stop() }
        let adminFile = database == nil ? directory.appending("server-data/admin.token") : directory.appending("serve-admin.token")
        let admin = try String(contentsOfFile: adminFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)

        var passes = Passes()
        let devicePass = Pass(role: "device", tags: ["device"], token: device, operations: 3)
        passes.outcomes.append((devicePass, try run(devicePass, server: server, in: directory)))
        let (cursor, cursorText) = try get(server, "/v1/devices/kiosk-7/cursor", token: device)
        let (page, pageText) = try get(server, "/v1/users/alice/history?limit=1", token: auditor)
        passes.acknowledgedSeq = cursor["acknowledged_seq"] as? Int
        passes.nextCursor = page["next_cursor"] as? String
        passes.answers = cursorText + "\n" + pageText
        // Valid generated history requests carry a cursor this server issued (tools/schemathesis_hooks.py).
        let auditorPass = Pass(
            role: "auditor", tags: ["auditor"], token: auditor, operations: 14,
            environment: passes.nextCursor.map { ["ONBOARD_ISSUED_CURSOR": $0] } ?? [:])
        passes.outcomes.append((auditorPass, try run(auditorPass, server: server, in: directory)))
        // Last: the admin's examples revoke kiosk-7's tokens, register a key for it and forget alice.
        let adminPass = Pass(role: "admin", tags: ["admin", "health", "console"], token: admin, operations: 13)
        passes.outcomes.append((adminPass, try run(adminPass, server: server, in: directory)))
        return passes
    }

    static func enrol(_ arguments: [String]) throws -> String {
        let result = try CLI.run(["enroll"] + arguments)
        guard result.status == 0 else { throw TestFailure("onboard enroll \(arguments): \(result.stderr)") }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func run(_ pass: Pass, server: SyncProcessTests.Server, in directory: TemporaryDirectory) throws -> Outcome {
        let arguments =
            [
                "--config-file", "tools/schemathesis.toml", "run", "docs/openapi.yaml", "--url", server.url,
                "--header", "Authorization: Bearer \(pass.token)"
            ] + pass.tags.flatMap { ["--include-tag", $0] }
            + [
                "--checks", "all", "--phases", "examples,coverage,fuzzing", "--workers", "1", "--seed", seed,
                "--max-examples", String(examplesPerOperation), "--request-timeout", String(requestTimeoutSeconds)
            ]
        var outcome = try execute(arguments, environment: pass.environment, in: directory)
        outcome.command =
            "schemathesis "
            + arguments.map { $0.hasPrefix("Authorization") ? "'Authorization: Bearer <\(pass.role) token>'" : $0 }
            .joined(separator: " ")
        return outcome
    }

    /// Runs schemathesis from the repository root (the configuration names its hooks by a path
    /// from there), output to a file so a long report cannot stall it on a full pipe.
    static func execute(_ arguments: [String], environment: [String: String], in directory: TemporaryDirectory) throws -> Outcome {
        let outputPath = directory.appending("schemathesis-\(UUID().uuidString.prefix(6)).out")
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: schemathesis)
        process.arguments = arguments
        process.currentDirectoryURL = repository
        var variables = ProcessInfo.processInfo.environment
        variables["NO_COLOR"] = "1"
        // Hypothesis caches Unicode tables and constants in ./.hypothesis: in the test's directory
        // instead of the repository.
        variables["HYPOTHESIS_STORAGE_DIRECTORY"] = directory.appending("hypothesis")
        for (name, value) in environment { variables[name] = value }
        process.environment = variables
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let deadline = Date().addingTimeInterval(passDeadlineSeconds)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
        let timedOut = process.isRunning
        if timedOut { process.terminate() }
        process.waitUntilExit()
        try output.close()
        let text = String(decoding: try Data(contentsOf: URL(fileURLWithPath: outputPath)), as: UTF8.self)
        if timedOut {
            return Outcome(status: -1, output: "schemathesis ran past \(Int(passDeadlineSeconds)) s and was stopped\n" + text)
        }
        return Outcome(status: process.terminationStatus, output: text)
    }

    /// A GET answered 200 with a JSON object, and its text.
    static func get(_ server: SyncProcessTests.Server, _ path: String, token: String) throws -> ([String: Any], String) {
        guard let url = URL(string: server.url + path) else { throw TestFailure("not a URL: \(server.url + path)") }
        var request = URLRequest(url: url)
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var answer: (Data?, URLResponse?, Error?)
        URLSession.shared.dataTask(with: request) { data, response, error in
            answer = (data, response, error)
            done.signal()
        }.resume()
        done.wait()
        let (body, response, error) = answer
        if let error { throw error }
        let text = String(decoding: body ?? Data(), as: UTF8.self)
        guard (response as? HTTPURLResponse)?.statusCode == 200, let body,
            let object = try JSONSerialization.jsonObject(with: body) as? [String: Any]
        else {
            throw TestFailure("GET \(path): \((response as? HTTPURLResponse)?.statusCode ?? 0) \(text)")
        }
        return (object, text)
    }
}
