import Foundation
import Testing
import TestSupport

/// `onboard record` and `onboard import` refuse events dated after the device's clock by more
/// than the skew the sync server allows (docs/sync-protocol.md § Event times).
@Suite(.slow) struct ClockSkewCommandTests {
    @Test func importingAFutureDatedLineFailsNamingItAndAppendsNothing() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let store = directory.appending("store")
            let lines = [
                #"{"id":"6f1c7a9e-3b2d-4c8e-9f00-000000000001","device":"kiosk-7","at":"2026-11-29T16:00:00.000Z","user":"alice","session":null,"type":"sign_in_failed","method":"password","reason":"invalid_password"}"#,
                #"{"id":"6f1c7a9e-3b2d-4c8e-9f00-000000000002","device":"kiosk-7","at":"9999-12-31T23:59:59.999Z","user":"alice","session":null,"type":"sign_in_failed","method":"password","reason":"invalid_password"}"#
            ]
            let file = try directory.write("future.jsonl", lines.joined(separator: "\n") + "\n")
            let result = try CLI.run(["import", file, "--store", store])
            #expect(result.status == 65, "\(result.stderr)")
            #expect(
                result.stderr.contains("line 2: the event is dated 9999-12-31T23:59:59.999Z, more than 300 s after this machine's clock ("),
                "\(result.stderr)")
            #expect(result.stderr.contains("nothing was imported"), "\(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1)
            let stats = try CLI.run(["stats", "--json", "--store", store])
            #expect(stats.status != 0 || stats.stdout.contains(#""events":0"#), "nothing was appended: \(stats.stdout)")

            let record = try CLI.run([
                "record", #"{"type":"sign_in_failed","user":"bob","method":"password","reason":"invalid_password","at":"2999-01-01T00:00:00Z"}"#,
                "--store", store
            ])
            #expect(record.status == 65 && record.stderr.contains("more than 300 s after this store's clock"), "\(record.stderr)")
            // Far past the first commit of a larger import: still refused before anything is written.
            var many = (0..<2_500).map { index in
                #"{"id":"\#(UUID().uuidString.lowercased())","device":"kiosk-7","at":"2026-11-29T16:00:00.000Z","user":"u\#(index)","session":null,"type":"sign_in_started","method":"password"}"#
            }
            many.append(lines[1])
            let big = try directory.write("big.jsonl", many.joined(separator: "\n") + "\n")
            let chunked = try CLI.run(["import", big, "--store", store, "--commit-every", "1000"])
            #expect(chunked.status == 65 && chunked.stderr.contains("line 2501: the event is dated"), "\(chunked.stderr)")
            let statsAfter = try CLI.run(["stats", "--json", "--store", store])
            #expect(statsAfter.status != 0 || statsAfter.stdout.contains(#""events":0"#), "nothing of the first commits: \(statsAfter.stdout)")
            // An auditor's store of a log whose clock is known wrong takes it when told to.
            let taken = try CLI.run(["import", file, "--store", store, "--max-clock-skew", "none"])
            #expect(taken.status == 0 && taken.stdout.hasPrefix("imported 2 events"), "\(taken.stdout)\(taken.stderr)")
            for bad in ["-1", "86401", "soon", ""] {
                let usage = try CLI.run(["import", file, "--store", store, "--max-clock-skew", bad])
                #expect(
                    usage.status == 64
                        && usage.stderr == "onboard import: --max-clock-skew must be a whole number of seconds from 0 to 86400, or none, got \"\(bad)\"\n",
                    "\(usage.stderr)")
            }

            // Without "at", record stamps the clock: accepted.
            let now = try CLI.run(["record", #"{"type":"sign_in_failed","user":"bob","method":"password","reason":"invalid_password"}"#, "--store", store])
            #expect(now.status == 0, "\(now.stderr)")
        }
    }
}
