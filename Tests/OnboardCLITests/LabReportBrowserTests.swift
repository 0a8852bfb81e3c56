import Foundation
import OnboardingModel
import Testing
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// `onboard lab compare|sweep --report` in a real browser: the built `onboard` writes reports of
/// a generated workload and of a log of hostile names, and Debian's headless Chromium, driven by
/// Selenium (tools/lab_report_browser.py), opens each as a file:// URL: no SEVERE browser log
/// entry, every inline SVG rendered with a nonzero size, nothing loaded, no script element.
@Suite(.serialized, .heavy, .slow) struct LabReportBrowserTests {
    static let script = ConsoleBrowserTests.repository.appendingPathComponent("tools/lab_report_browser.py").path
    /// The browser part takes a few seconds; generating and sweeping in a debug build, about 30.
    static let deadlineSeconds: TimeInterval = 300

    @Test func reportsOpenInHeadlessChromiumWithoutAConsoleError() async throws {
        for path in [ConsoleBrowserTests.python, ConsoleBrowserTests.chromium, ConsoleBrowserTests.chromedriver]
        where !FileManager.default.isExecutableFile(atPath: path) {
            throw TestFailure("no \(path): run tools/setup.sh, which installs chromium, chromium-driver and python3-selenium")
        }
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let workload = directory.appending("workload.jsonl")
            try Self.cli(["generate", "--events", "20000", "--seed", "1", "--output", workload])
            let compare = directory.appending("compare.html"), sweep = directory.appending("sweep.html")
            let hostile = directory.appending("hostile.html")
            try Self.cli(["lab", "compare", workload, "--report", compare])
            try Self.cli(["lab", "sweep", workload, "--limit", "3..8", "--window", "1m..1h", "--steps", "4", "--report", sweep])
            try Self.cli(["lab", "compare", try Self.hostileLog(in: directory), "--report", hostile])
            for report in [compare, sweep, hostile] {
                let html = try String(contentsOfFile: report, encoding: .utf8)
                #expect(!html.contains("http://") && !html.contains("https://") && !html.contains("<script"), "\(report)")
            }

            let (status, output) = try ConsoleBrowserTests.runScript(
                arguments: [Self.script, compare, sweep, hostile], in: directory,
                deadline: Self.deadlineSeconds)
            #expect(status == 0, "the browser checks failed:\n\(output)")
            let passed = output.split(separator: "\n").filter { $0.hasPrefix("ok ") }
            #expect(passed.count == 3, "\(output)")
            for line in passed { #expect(line.hasSuffix(": 4 svgs"), "\(line)") }
        }
    }

    /// A log whose user names are hostile (device names and addresses are checked on reading).
    static func hostileLog(in directory: TemporaryDirectory) throws -> String {
        let names = [
            "<script>alert(1)</script>", "a&b\"c'd", "</svg><img src=x onerror=alert(2)>", "\u{202E}gpj.exe \u{FEFF}",
            String(repeating: "x", count: 256)
        ]
        var lines: [String] = []
        var second = 0
        for name in names {
            for attempt in 0..<7 {
                second += 7
                let at = Timestamp(millisecondsSince1970: 1_796_054_400_000 + Int64(second) * 1000).iso8601
                let type =
                    attempt == 6
                    ? "\"type\":\"sign_in_succeeded\",\"method\":\"password\",\"second_factor\":false"
                    : "\"type\":\"sign_in_failed\",\"method\":\"password\",\"reason\":\"invalid_password\""
                let object: [String: Any] = ["user": name, "device": "host-1"]
                let fields = String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
                lines.append(
                    "{\"id\":\"\(UUID().uuidString.lowercased())\",\"at\":\"\(at)\",\(fields.dropFirst().dropLast()),"
                        + "\"session\":\"\(UUID().uuidString.lowercased())\",\(type)}")
            }
        }
        return try directory.write("hostile.jsonl", lines.joined(separator: "\n") + "\n")
    }

    @Test func aReportThatCannotBeWrittenExits73WithOneLine() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let workload = try directory.write("workload.jsonl", try Self.hostileLogText(in: directory))
            let result = try CLI.run(["lab", "compare", workload, "--report", directory.appending("missing/report.html")])
            #expect(result.status == 73, "\(result.stderr)")
            #expect(result.stderr.hasPrefix("onboard lab compare: cannot write the report"), "\(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "one line: \(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: directory.appending("missing")))
        }
    }

    static func hostileLogText(in directory: TemporaryDirectory) throws -> String {
        try String(contentsOfFile: hostileLog(in: directory), encoding: .utf8)
    }

    @discardableResult
    static func cli(_ arguments: [String]) throws -> String {
        let result = try CLI.run(arguments)
        guard result.status == 0 else { throw TestFailure("onboard \(arguments.prefix(2).joined(separator: " ")): \(result.stderr)") }
        return result.stdout
    }
}
