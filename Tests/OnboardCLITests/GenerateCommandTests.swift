import Foundation
import Testing

/// `onboard generate`: its output imports cleanly and verifies; usage errors exit 64.
@Suite struct GenerateCommandTests {
    @Test func generatedWorkloadImportsAndVerifies() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.appending("workload.jsonl")
        let store = directory.appending("store")
        let generated = try CLI.run(["generate", "--events", "10000", "--seed", "7", "--output", file])
        #expect(generated.status == 0, "\(generated.stderr)")
        #expect(generated.stdout.isEmpty)
        let again = try CLI.run(["generate", "--events", "10000", "--seed", "7"])
        #expect(again.stdoutBytes == (try Data(contentsOf: URL(fileURLWithPath: file))), "same seed, same bytes")
        let imported = try CLI.run(["import", file, "--store", store])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout == "imported 10000 events (seq 1–10000)\n")
        let verified = try CLI.run(["verify", "--store", store])
        #expect(verified.status == 0, "\(verified.stdout)\(verified.stderr)")
    }

    @Test(arguments: ["brute_force", "stuffing", "spraying", "shared_device", "honest"])
    func everyScenarioImports(scenario: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let generated = try CLI.run(["generate", "--events", "2000", "--scenario", scenario, "--policy", "owasp",
                                     "--users", "50", "--devices", "20"])
        #expect(generated.status == 0, "\(generated.stderr)")
        let imported = try CLI.run(["import", "-", "--store", directory.appending("store")], input: generated.stdoutBytes)
        #expect(imported.status == 0, "\(imported.stderr)")
    }

    @Test func effectivenessJSONHasOneRowPerPreset() throws {
        let result = try CLI.run(["generate", "--effectiveness", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        for name in ["mediawiki", "keycloak", "owasp", "nist", "local_passcode"] {
            #expect(result.stdout.contains("\"policy\":\"\(name)\""))
        }
    }

    @Test(arguments: [
        (["generate"], "onboard generate: --events N is required (how many events to write)\n"),
        (["generate", "--events", "0"], "onboard generate: --events needs a whole number above 0, got \"0\"\n"),
        (["generate", "--events", "10", "--scenario", "ddos"],
         "onboard generate: --scenario must be one of mixed, honest, brute_force, stuffing, spraying, shared_device, got \"ddos\"\n"),
        (["generate", "--events", "10", "--seed", "-1"],
         "onboard generate: --seed needs a whole number from 0 to 18446744073709551615, got \"-1\"\n"),
        (["generate", "--events", "10", "--policy", "strict"],
         "onboard generate: --policy strict is neither a preset (mediawiki, keycloak, owasp, nist, local_passcode) nor a file\n"),
        (["generate", "--events", "10", "--json"], "onboard generate: --json only applies to --effectiveness\n"),
    ])
    func usageErrorsExit64(arguments: [String], message: String) throws {
        let result = try CLI.run(arguments)
        #expect(result.status == 64)
        #expect(result.stderr == message)
        #expect(result.stdout.isEmpty)
    }
}
