import Foundation
import Testing
import TestSupport

/// `onboard lab compare|sweep` on a generated workload, and its refusals (docs/lab.md).
@Suite(.slow) struct LabCommandTests {
    @Test func compareAndSweepAGeneratedWorkloadAndWriteAPolicyTheLockoutCommandReads() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let file = directory.appending("workload.jsonl"), store = directory.appending("store")
            #expect(try CLI.run(["generate", "--events", "10000", "--seed", "4", "--policy", "nist", "--output", file]).status == 0)
            let compare = try CLI.run(["lab", "compare", file])
            #expect(compare.status == 0, "\(compare.stderr)")
            #expect(compare.stdout.contains("parties: the generated workload's ground truth; hash checks: off"))
            for preset in ["mediawiki", "keycloak", "owasp", "nist", "local_passcode", "fail2ban"] {
                #expect(compare.stdout.contains("\n\(preset) "), "\(preset) has a row")
            }
            #expect(compare.stdout.contains("brute force"))
            // The store gives the same figures as the file it was imported from.
            #expect(try CLI.run(["import", file, "--store", store]).status == 0)
            let fromStore = try CLI.run(["lab", "compare", "--store", store, "--policies", "mediawiki,nist", "--json"])
            let fromFile = try CLI.run(["lab", "compare", file, "--policies", "mediawiki,nist", "--json"])
            #expect(fromStore.status == 0 && fromStore.stdout == fromFile.stdout, "\(fromStore.stderr)")
            let policy = directory.appending("recommended.json")
            let sweep = try CLI.run(["lab", "sweep", file, "--limit", "3..8", "--window", "1m..1h", "--steps", "4", "--write-policy", policy])
            #expect(sweep.status == 0, "\(sweep.stderr)")
            #expect(sweep.stdout.contains("24 policies; the Pareto frontier"))
            #expect(sweep.stderr.contains("lab sweep: 24/24 policies"), "progress on stderr")
            let lockout = try CLI.run(["lockout", "--policy", policy, "--store", store, "--json"])
            #expect(lockout.status == 0, "the written policy loads: \(lockout.stderr)")
        }
    }

    @Test(
        arguments: [
            (["lab"], "onboard lab"),
            (["lab", "judge"], "compare or sweep"),
            (["lab", "sweep", "x.jsonl"], "--limit LOW..HIGH and --window LOW..HIGH are required"),
            (["lab", "sweep", "x.jsonl", "--limit", "0..5", "--window", "1m..1h"], "--limit must be LOW..HIGH"),
            (["lab", "sweep", "x.jsonl", "--limit", "5..3", "--window", "1m..1h"], "--limit must be LOW..HIGH"),
            (["lab", "sweep", "x.jsonl", "--limit", "-1..3", "--window", "1m..1h"], "--limit must be LOW..HIGH"),
            (["lab", "sweep", "x.jsonl", "--limit", "3..18446744073709551615", "--window", "1m..1h"], "--limit must be LOW..HIGH"),
            (["lab", "sweep", "x.jsonl", "--limit", "3..5", "--window", "1m..2y"], "--window must be LOW..HIGH"),
            (["lab", "sweep", "x.jsonl", "--limit", "3..5", "--window", "1m\u{1b}..1h"], "--window must be LOW..HIGH"),
            (["lab", "sweep", "x.jsonl", "--limit", "1..1000", "--window", "1s..1d", "--steps", "64"], "at most 10000"),
            (["lab", "sweep", "x.jsonl", "--limit", "3..5", "--window", "1m..1h", "--honest-minute-weight", "nan"], "--honest-minute-weight"),
            (["lab", "compare", "x.jsonl", "--limit", "3..5"], "--limit is a sweep option"),
            (["lab", "sweep", "x.jsonl", "--policies", "nist"], "--policies is a compare option"),
            (["lab", "compare", "x.jsonl", "--policies", "nist,,owasp"], "empty entry"),
            (["lab", "compare", "x.jsonl", "--policies", "no-such-policy"], "onboard lab compare: --policies no-such-policy is neither a preset")
        ] as [([String], String)])
    func usageErrorsExit64(arguments: [String], message: String) async throws {
        try await onOwnThread {
            let result = try CLI.run(arguments)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count <= 3 && result.stdout.isEmpty)
        }
    }

    @Test func aMissingFileExits66AndABadLineExits65WithItsNumber() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let missing = try CLI.run(["lab", "compare", directory.appending("nope.jsonl")])
            #expect(missing.status == 66, "\(missing.stderr)")
            let bad = directory.appending("bad.jsonl")
            try Data("{\"id\":\"x\"}\n".utf8).write(to: URL(fileURLWithPath: bad))
            let result = try CLI.run(["lab", "compare", bad])
            #expect(result.status == 65 && result.stderr.contains("line 1"), "\(result.stderr)")
            let empty = directory.appending("empty.jsonl")
            try Data().write(to: URL(fileURLWithPath: empty))
            let nothing = try CLI.run(["lab", "compare", empty])
            #expect(nothing.status == 65 && nothing.stderr.contains("no sign-in attempt"), "\(nothing.stderr)")
        }
    }
}
