import Foundation
import Testing

/// Runs `tools/validate_ocsf.py`, the official OCSF schema applied by validators someone else
/// wrote (`ocsf-json-schema`, `jsonschema`), on a file of OCSF lines.
enum OCSFValidator {
    /// The virtual environment `tools/setup.sh` installs the validator's packages into; the
    /// two name the same path. `$ONBOARD_TEST_PYTHON` points elsewhere.
    static let python = ProcessInfo.processInfo.environment["ONBOARD_TEST_PYTHON"] ?? "/opt/onboardingstore/venv/bin/python3"

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("tools/validate_ocsf.py").path

    /// How many violations the report prints in full: enough to see a pattern, short enough
    /// to read in a test failure.
    static let shownViolations = 8

    struct Report: Sendable {
        let status: Int32
        /// The summary line, the count of each kind of violation, the first few violations.
        let output: String

        /// `N` from the summary line `validated N lines against OCSF …`, `nil` without one.
        var linesValidated: Int? {
            guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("validated ") }) else { return nil }
            return Int(line.dropFirst("validated ".count).prefix { $0.isNumber })
        }
    }

    /// Validates every line of `file`. The child blocks a thread for seconds, so it runs on a
    /// thread of its own rather than on Swift's cooperative pool.
    static func validate(_ file: String) async throws -> Report {
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw TestFailure("no \(python): run tools/setup.sh, which installs the OCSF validator")
        }
        return try await OwnThread.run { try run(file) }
    }

    private static func run(_ file: String) throws -> Report {
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        // Output to a file, not a pipe: a report longer than a pipe's buffer cannot stall the child.
        let outputPath = scratch.appending("output")
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [script, "--show", String(shownViolations), file]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = output
        try process.run()
        process.waitUntilExit()
        try output.close()
        let text = String(decoding: try Data(contentsOf: URL(fileURLWithPath: outputPath)), as: UTF8.self)
        return Report(status: process.terminationStatus, output: text)
    }
}
