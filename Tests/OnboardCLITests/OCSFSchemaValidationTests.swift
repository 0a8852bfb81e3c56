import Foundation
import OnboardingModel
import Testing
import TestSupport

/// Every line `onboard export --format ocsf` writes, checked against the official OCSF 1.8.0
/// schema by validators we did not write (`tools/validate_ocsf.py`).
@Suite(.slow) struct OCSFSchemaValidationTests {
    /// A store holding every scenario `onboard generate` knows, every type and choice of the
    /// vocabulary, two forgotten users (one with a profile, seen again afterwards) and their
    /// `user_forgotten` events. Returns the store's path and its events' types in seq order.
    /// Runs off the test's task (child processes), so it throws rather than records issues.
    static func buildStore(in directory: TemporaryDirectory) throws -> (store: String, types: [String]) {
        let store = directory.appending("store")
        @discardableResult func onboard(_ arguments: [String]) throws -> CLI.Result {
            let result = try CLI.run(arguments)
            guard result.status == 0 else {
                throw TestFailure("onboard \(arguments.joined(separator: " ")) exited \(result.status): \(result.stderr)")
            }
            return result
        }
        for (offset, scenario) in OCSFCorpus.scenarios.enumerated() {
            let file = directory.appending("\(scenario).jsonl")
            try onboard(OCSFCorpus.generateArguments(scenario, seed: offset + 1, output: file))
            try onboard(["import", file, "--store", store])
        }
        let unusual = try directory.write("unusual.jsonl", OCSFCorpus.unusualEvents().joined(separator: "\n") + "\n")
        // The corpus reaches the year 9999, which the store refuses by default (an event from the
        // future); an auditor's store of a log with known-wrong clocks takes it with this option.
        try onboard(["import", unusual, "--store", store, "--max-clock-skew", "none"])
        for user in [OCSFCorpus.profiledForgotten, OCSFCorpus.plainForgotten] {
            try onboard(["forget-user", user, "--store", store])
        }
        let after = try directory.write("after.jsonl", OCSFCorpus.afterForgetting().joined(separator: "\n") + "\n")
        try onboard(["import", after, "--store", store, "--max-clock-skew", "none"])

        let export = try onboard(["export", "--store", store])
        let types = try export.stdout.split(separator: "\n").map { line in
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let type = object["type"] as? String
            else { throw TestFailure("not an event: \(line)") }
            return type
        }
        return (store, types)
    }

    @Test func everyExportedLineIsValidOCSF() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (store, types) = try await OwnThread.run { try Self.buildStore(in: directory) }
        #expect(Set(types) == Set(EventType.allCases.map(\.rawValue)), "the log must hold every type")
        let skipped = OCSFExportTests.skippedTypes

        // Control characters cannot reach the export: the log refuses them in every string.
        for line in OCSFCorpus.controlCharacterEvents() {
            let file = try directory.write("control.jsonl", line + "\n")
            let refused = try await OwnThread.run { try CLI.run(["import", file, "--store", store]) }
            #expect(refused.status == 65 && refused.stderr.contains("control characters"), "\(line): \(refused.stderr)")
        }

        for (name, options, expected) in [
            ("ocsf", [String](), types.filter { !skipped.contains($0) }.count),
            ("ocsf-all", ["--all-events"], types.count)
        ] {
            let export = try await OwnThread.run { try CLI.run(["export", "--format", "ocsf"] + options + ["--store", store]) }
            #expect(export.status == 0, "\(export.stderr)")
            let file = directory.appending("\(name).jsonl")
            try export.stdoutBytes.write(to: URL(fileURLWithPath: file))
            let lines = export.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            #expect(lines.count == expected)
            // A forgotten user's readable id is nowhere, before or after the forgetting.
            #expect(!export.stdout.contains(OCSFCorpus.profiledForgotten) && !export.stdout.contains("\"carol\""))
            #expect(export.stdout.contains(#""user":{"name":"~"#))
            // The corpus reached the edges: no user, the first and last instants.
            #expect(export.stdout.contains(#""user":{"type_id":0,"type":"Unknown","uid":""}"#))
            #expect(export.stdout.contains(#""time":\#(Timestamp.minimum.millisecondsSince1970),"#))
            #expect(export.stdout.contains(#""time":\#(Timestamp.maximum.millisecondsSince1970),"#))

            let report = try await OCSFValidator.validate(file)
            #expect(report.status == 0, "export --format ocsf \(options.joined(separator: " ")) breaks OCSF 1.8.0:\n\(report.output)")
            #expect(report.linesValidated == expected, "\(report.output)")
        }
    }

    /// The validator fails on what the export used to get wrong, naming the kind, the line and
    /// the attribute: a passing export above means something.
    @Test func theValidatorReportsViolationsReadably() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let captcha = #"{"id":"00000000-0000-4000-8000-000000000001","device":"kiosk-7","at":"2026-06-01T10:00:00.000Z","type":"captcha_failed"}"#
        let file = try directory.write("events.jsonl", captcha + "\n")
        let store = directory.appending("store")
        let (imported, export) = try await OwnThread.run {
            (try CLI.run(["import", file, "--store", store]), try CLI.run(["export", "--format", "ocsf", "--store", store]))
        }
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(export.status == 0, "\(export.stderr)")
        let valid = try #require(try JSONSerialization.jsonObject(with: Data(export.stdout.utf8)) as? [String: Any])

        func variant(_ change: (inout [String: Any]) -> Void) throws -> String {
            var object = valid
            change(&object)
            return String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
        }
        let lines = [
            try variant { _ in },
            try variant { $0["user"] = ["type_id": 0, "type": "Unknown"] },
            try variant { $0["type_name"] = "Authentication: CAPTCHA" },
            try variant {
                $0["status"] = "Other"; $0["status_id"] = 99
            },
            try variant { $0["time"] = "2026-06-01T10:00:00.000Z" },
            try variant { $0["captcha_answer"] = "x" },
            try variant { $0["device"] = ["type_id": 5, "type": "Unknown", "uid": "kiosk-7"] },
            try variant {
                $0["type_uid"] = 300201; $0["type_name"] = "Authentication: Logon"
            },
            "{\"class_uid\":3002"
        ]
        let broken = try directory.write("broken.jsonl", lines.joined(separator: "\n") + "\n")
        let report = try await OCSFValidator.validate(broken)
        #expect(report.status == 1)
        #expect(report.linesValidated == lines.count)
        for expected in [
            "validated 9 lines against OCSF 1.8.0", ": 8 invalid",
            "user: at least one of account/name/uid", "line 2: $.user: has none of account/name/uid",
            "type_name: not the caption of type_uid",
            "line 3: $.type_name: type_uid 300299 is 'Authentication: Other', type_name is 'Authentication: CAPTCHA'",
            "status: repeats the caption of 99", "time: type",
            "captcha_answer: unknown attribute", "line 6: $.captcha_answer: not an attribute of Authentication",
            "device.type: not the caption of type_id (first on line 7)",
            "type_uid: not class_uid x 100 + activity_id (first on line 8)",
            "(line): not JSON (first on line 9)"
        ] {
            #expect(report.output.contains(expected), "missing \(expected) in:\n\(report.output)")
        }
        #expect(!report.output.contains("line 1:"), "\(report.output)")
    }
}
