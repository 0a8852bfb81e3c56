import Foundation
import Testing
import TestSupport

/// `onboard generate`: its output imports cleanly and verifies; usage errors exit 64.
@Suite(.slow) struct GenerateCommandTests {
    @Test func generatedWorkloadImportsAndVerifies() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let file = directory.appending("workload.jsonl")
            let store = directory.appending("store")
            let generated = try CLI.run(["generate", "--events", "10000", "--seed", "7", "--output", file])
            #expect(generated.status == 0, "\(generated.stderr)")
            #expect(generated.stdout.isEmpty)
            let again = try CLI.run(["generate", "--events", "10000", "--seed", "7"])
            #expect(again.stdoutBytes == (try Data(contentsOf: URL(fileURLWithPath: file))), "same seed, same bytes")
            #expect(again.stdout.contains("\"type\":\"field_edited\""), "the form events are in the workload")
            let imported = try CLI.run(["import", file, "--store", store])
            #expect(imported.status == 0, "\(imported.stderr)")
            #expect(imported.stdout == "imported 10000 events (seq 1–10000)\n")
            let verified = try CLI.run(["verify", "--store", store])
            #expect(verified.status == 0, "\(verified.stdout)\(verified.stderr)")
        }
    }

    @Test(arguments: ["brute_force", "stuffing", "spraying", "shared_device", "honest"])
    func everyScenarioImports(scenario: String) async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let generated = try CLI.run([
                "generate", "--events", "2000", "--scenario", scenario, "--policy", "owasp",
                "--users", "50", "--devices", "20"
            ])
            #expect(generated.status == 0, "\(generated.stderr)")
            let imported = try CLI.run(["import", "-", "--store", directory.appending("store")], input: generated.stdoutBytes)
            #expect(imported.status == 0, "\(imported.stderr)")
        }
    }

    @Test func noFormEventsWritesTheSignInTrafficAlone() async throws {
        try await onOwnThread {
            let withForms = try CLI.run(["generate", "--events", "4000", "--seed", "3", "--scenario", "honest"])
            let without = try CLI.run(["generate", "--events", "4000", "--seed", "3", "--scenario", "honest", "--no-form-events"])
            #expect(withForms.status == 0 && without.status == 0, "\(withForms.stderr)\(without.stderr)")
            let formTypes = ["field_edited", "password_reset_started", "account_creation_submitted", "account_created"]
            for type in formTypes {
                #expect(withForms.stdout.contains("\"type\":\"\(type)\""), "no \(type) by default")
                #expect(!without.stdout.contains("\"type\":\"\(type)\""), "\(type) with --no-form-events")
            }
            // The sign-in lines of the default output are the other's first lines (identifier_kind aside).
            let signInLines = without.stdout.split(separator: "\n")
            let ids = Set(signInLines.map { $0.prefix(44) })
            let kind = try Regex(#","identifier_kind":"(username|email|phone)""#)
            let kept = withForms.stdout.split(separator: "\n").filter { ids.contains($0.prefix(44)) }.map { String($0.replacing(kind, with: "")) }
            #expect(kept.count > 2_000 && kept.count < 4_000)
            #expect(kept == signInLines.prefix(kept.count).map(String.init))
        }
    }

    @Test func effectivenessJSONHasOneRowPerPreset() async throws {
        try await onOwnThread {
            let result = try CLI.run(["generate", "--effectiveness", "--json"])
            #expect(result.status == 0, "\(result.stderr)")
            for name in ["mediawiki", "keycloak", "owasp", "nist", "local_passcode"] {
                #expect(result.stdout.contains("\"policy\":\"\(name)\""))
            }
        }
    }

    @Test(arguments: [
        (["generate"], "onboard generate: --events N is required (how many events to write)\n"),
        (["generate", "--events", "0"], "onboard generate: --events needs a whole number above 0, got \"0\"\n"),
        (
            ["generate", "--events", "10", "--scenario", "ddos"],
            "onboard generate: --scenario must be one of mixed, honest, brute_force, stuffing, spraying, shared_device, got \"ddos\"\n"
        ),
        (
            ["generate", "--events", "10", "--seed", "-1"],
            "onboard generate: --seed needs a whole number from 0 to 18446744073709551615, got \"-1\"\n"
        ),
        (
            ["generate", "--events", "10", "--policy", "strict"],
            "onboard generate: --policy strict is neither a preset (mediawiki, keycloak, owasp, nist, local_passcode, fail2ban) nor a file\n"
        ),
        (["generate", "--events", "10", "--json"], "onboard generate: --json only applies to --effectiveness\n"),
        (
            ["generate", "--effectiveness", "--no-form-events"],
            "onboard generate: --no-form-events does not apply to --effectiveness (no lockout counts form events: the report is the same)\n"
        )
    ])
    func usageErrorsExit64(arguments: [String], message: String) throws {
        let result = try CLI.run(arguments)
        #expect(result.status == 64)
        #expect(result.stderr == message)
        #expect(result.stdout.isEmpty)
    }
}
