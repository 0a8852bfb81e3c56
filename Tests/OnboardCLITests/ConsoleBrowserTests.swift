import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// The audit console (`/console`) in a real browser: Debian's headless Chromium driven by
/// Selenium (tools/console_browser.py, one check per feature of docs/console.md) against a real
/// `onboard serve` that real device stores were synced into with `onboard sync`. The script
/// compares the page with the scenario it was built from (``ConsoleScenario``), never with the
/// server's answers; the OCSF file it exports goes through the official schema validator here.
///
/// Screenshots of every view at 1280×800 and at a phone's 390×844 go to the test's directory;
/// with `ONBOARD_CONSOLE_SCREENSHOTS=1` (on the LMDB run) to docs/console/, which
/// docs/console.md shows.
@Suite(.serialized, .heavy, .slow) struct ConsoleBrowserTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let script = repository.appendingPathComponent("tools/console_browser.py").path
    /// Debian's python3 (python3-selenium is a Debian package, not in the test tools' venv).
    static let python = "/usr/bin/python3"
    static let chromium = "/usr/bin/chromium"
    static let chromedriver = "/usr/bin/chromedriver"
    /// The whole browser run: about a minute on a quiet 2-core machine (its longest waits are
    /// the live tail's, each bounded at 30 s); past this it is stopped and fails.
    static let deadlineSeconds: TimeInterval = 420
    /// After SIGTERM the script quits the browser; what is still alive this long after is killed.
    static let terminationGraceSeconds: TimeInterval = 10

    @Test(arguments: TestDatabase.storages) func theConsoleWorksInARealBrowser(storage: String) async throws {
        for path in [Self.python, Self.chromium, Self.chromedriver] where !FileManager.default.isExecutableFile(atPath: path) {
            throw TestFailure("no \(path): run tools/setup.sh, which installs chromium, chromium-driver and python3-selenium")
        }
        let run = try await OwnThread.run { try Self.check(storage: storage) }
        defer { run.directory.remove() }
        #expect(run.status == 0, "the browser checks failed on \(storage):\n\(run.output)")
        let passed = run.output.split(separator: "\n").filter { $0.hasPrefix("ok ") }.map { String($0.dropFirst(3)) }
        #expect(passed == Self.checks, "checks passed on \(storage): \(passed)\n\(run.output)")

        // The OCSF file the page saved, through the official OCSF schema.
        let ocsf = run.directory.appending("downloads/josé-history.json")
        if FileManager.default.fileExists(atPath: ocsf) {
            let report = try await OCSFValidator.validate(ocsf)
            #expect(report.status == 0 && (report.linesValidated ?? 0) > 0, "the exported OCSF fails the schema:\n\(report.output)")
        } else {
            Issue.record("the page saved no OCSF export at \(ocsf)")
        }
    }

    /// Every check of tools/console_browser.py, in its order: a check the script skipped or
    /// lost shows here.
    static let checks = [
        "sign-in refuses unknown and device tokens",
        "keyboard sign-in keeps the token in sessionStorage only",
        "an auditor sees the lockout without the clear action",
        "sign-out forgets the token and the data",
        "an admin clears a lockout and the action is in the timeline",
        "search folds case and diacritics",
        "timeline is newest first and loads more through the cursor",
        "filters show as chips and live in the URL",
        "dragging across the chart zooms into its range",
        "the chart zooms from the keyboard",
        "export saves the filtered history as CSV, JSONL and OCSF",
        "the live tail shows a synced attempt and reconnects after errors",
        "hostile names render as text and nothing runs",
        "an erased user shows as erased",
        "devices show sync, heads, audit and tokens; an admin revokes one",
        "empty, loading and error states",
        "every control has a label and the keyboard reaches them",
        "the views fit 1280 and 390 pixels",
        "no script error and no CSP violation"
    ]

    struct Run: Sendable {
        let status: Int32
        let output: String
        let directory: TemporaryDirectory
    }

    static func check(storage: String) throws -> Run {
        let directory = try TemporaryDirectory()
        do {
            return try check(storage: storage, in: directory)
        } catch {
            directory.remove()
            throw error
        }
    }

    static func check(storage: String, in directory: TemporaryDirectory) throws -> Run {
        let scenario = ConsoleScenario(now: .now)
        // The device stores, made with the CLI from the scenario's logs.
        var stores: [String: String] = [:]
        for device in ConsoleScenario.devices {
            let file = try directory.write("\(device).jsonl", scenario.jsonl(device: device))
            let store = directory.appending("store-\(device)")
            try cli(["import", file, "--store", store, "--device", device])
            stores[device] = store
        }

        // The server, with kiosk-7 enrolled with its signing key, phone-2 without one.
        var database: (url: String, drop: @Sendable () -> Void)?
        defer { database?.drop() }
        let place: [String]
        if storage == "postgres" {
            database = try TestDatabase.freshDatabase()
            place = ["--database", database!.url]
        } else {
            place = ["--data", directory.appending("server-data")]
        }
        let key = try cli(["verify", "--store", stores["kiosk-7"]!])
        guard let range = key.range(of: "key "), case let hex = String(key[range.upperBound...].prefix { $0.isHexDigit }), hex.count == 64 else {
            throw TestFailure("onboard verify printed no signing key: \(key)")
        }
        var tokens: [String: String] = [:]
        tokens["kiosk-7"] = try cli(["enroll"] + place + ["--device", "kiosk-7", "--public-key", hex])
        tokens["phone-2"] = try cli(["enroll"] + place + ["--device", "phone-2"])
        let spare = [
            try cli(["enroll"] + place + ["--device", ConsoleScenario.spareDevice]),
            try cli(["enroll"] + place + ["--device", ConsoleScenario.spareDevice])
        ]
        let auditor = try cli(["enroll"] + place + ["--auditor"])
        let server =
            storage == "postgres"
            ? try SyncProcessTests.Server(database: database!.url, scratch: directory, name: "console")
            : try SyncProcessTests.Server(data: directory.appending("server-data"), scratch: directory)
        defer { server.stop() }
        let adminFile = storage == "postgres" ? directory.appending("console-admin.token") : directory.appending("server-data/admin.token")
        let admin = try String(contentsOfFile: adminFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)

        for device in ConsoleScenario.devices {
            try cli(["sync", "--store", stores[device]!, "--server", server.url, "--token", tokens[device]!])
        }
        // carol forgotten by the server: her records there now read as a pseudonym.
        let forget = try CLI.run(
            [
                "-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", "-H", "Authorization: Bearer \(admin)",
                server.url + "/v1/users/carol/forget"
            ], executable: URL(fileURLWithPath: "/usr/bin/curl"))
        guard forget.stdout == "200" else { throw TestFailure("forgetting carol answered \(forget.stdout): \(forget.stderr)") }

        let screenshots =
            storage == "lmdb" && !(ProcessInfo.processInfo.environment["ONBOARD_CONSOLE_SCREENSHOTS"] ?? "").isEmpty
            ? repository.appendingPathComponent("docs/console").path : directory.appending("screenshots")
        let configuration: [String: Any] = [
            "url": server.url,
            "storage": storage,
            "onboard": CLI.binary.path,
            "chromium": chromium,
            "chromedriver": chromedriver,
            "tokens": ["auditor": auditor, "admin": admin, "device": tokens["kiosk-7"]!],
            "tail": ["store": stores["phone-2"]!, "token": tokens["phone-2"]!, "device": "phone-2", "user": ConsoleScenario.jose],
            "spare": ["device": ConsoleScenario.spareDevice, "tokens": spare],
            "devices": ConsoleScenario.devices.map { ["device": $0, "acknowledged_seq": scenario.logs[$0]!.count, "signed": $0 == "kiosk-7"] },
            "users": try JSONSerialization.jsonObject(with: JSONEncoder().encode(scenario.users)),
            "screenshots": screenshots,
            "downloads": directory.appending("downloads"),
            "profile": directory.appending("chromium-profile")
        ]
        let configurationFile = directory.appending("console.json")
        try JSONSerialization.data(withJSONObject: configuration, options: [.sortedKeys]).write(to: URL(fileURLWithPath: configurationFile))
        let (status, output) = try runScript(configurationFile, in: directory)
        return Run(status: status, output: output, directory: directory)
    }

    /// `onboard` with `arguments`; its stdout trimmed (a token, a report), or a failure naming the command.
    @discardableResult
    static func cli(_ arguments: [String]) throws -> String {
        let result = try CLI.run(arguments)
        guard result.status == 0 else { throw TestFailure("onboard \(arguments.prefix(2).joined(separator: " ")): \(result.stderr)") }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Runs the browser script with a deadline; its output goes to a file (a long report cannot
    /// stall it on a full pipe). The script leads its own process group, so whatever it started
    /// (chromedriver, Chromium) goes with it.
    static func runScript(_ configuration: String, in directory: TemporaryDirectory) throws -> (Int32, String) {
        try runScript(arguments: [script, configuration], in: directory, deadline: deadlineSeconds)
    }

    /// `python` with `arguments` (a browser script and its own), stopped past `deadline` seconds;
    /// also the lab report's browser test (LabReportBrowserTests).
    static func runScript(arguments: [String], in directory: TemporaryDirectory, deadline deadlineSeconds: TimeInterval) throws -> (Int32, String) {
        let outputPath = directory.appending(
            arguments[0] == script ? "console-browser.out" : "\(URL(fileURLWithPath: arguments[0]).deletingPathExtension().lastPathComponent).out")
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = arguments
        process.currentDirectoryURL = directory.url
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let deadline = Date().addingTimeInterval(deadlineSeconds)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.2) }
        let timedOut = process.isRunning
        if timedOut {
            kill(process.processIdentifier, SIGTERM)
            let grace = Date().addingTimeInterval(terminationGraceSeconds)
            while process.isRunning && Date() < grace { Thread.sleep(forTimeInterval: 0.2) }
        }
        // Nothing of the script's group outlives the test, whatever state it ended in.
        kill(-process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        try output.close()
        let text = String(decoding: try Data(contentsOf: URL(fileURLWithPath: outputPath)), as: UTF8.self)
        if timedOut { return (-1, "the browser script ran past \(Int(deadlineSeconds)) s and was stopped\n" + text) }
        return (process.terminationStatus, text)
    }
}
