import Foundation
import OnboardingModel
import Testing
import TestSupport

@Suite(.slow) struct ForgetUserCommandTests {
    static let lines = [
        #"{"id":"00000000-0000-4000-8000-000000000001","device":"kiosk-7","at":"2026-06-01T10:00:00.000Z","user":"alice@example.org","type":"user_added","display_name":"Alice Quixotic","subtitle":"Ward 3","passcode_policy":"numeric","passcode_min_length":4}"#,
        #"{"id":"00000000-0000-4000-8000-000000000002","device":"kiosk-7","at":"2026-06-01T10:01:00.000Z","user":"bob","type":"user_added","display_name":"Bob Qwerty","passcode_policy":"numeric","passcode_min_length":4}"#,
        #"{"id":"00000000-0000-4000-8000-000000000003","device":"kiosk-7","at":"2026-06-01T10:02:00.000Z","user":"alice@example.org","type":"sign_in_failed","method":"password","reason":"invalid_password"}"#
    ]

    @Test func forgetUserErasesExportKeepsVerifyAndLeavesNoTraceInTheFile() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let store = directory.appending("store")
            let file = try directory.write("events.jsonl", Self.lines.joined(separator: "\n") + "\n")
            #expect(try CLI.run(["import", file, "--store", store]).status == 0)

            let forget = try CLI.run(["forget-user", "alice@example.org", "--store", store])
            #expect(forget.status == 0, "\(forget.stderr)")
            let pseudonym = try #require(forget.stdout.split(separator: " ").last.map { String($0).trimmingCharacters(in: .newlines) })
            #expect(UserRef.isLiteral(pseudonym), "\(forget.stdout)")
            #expect(forget.stdout.hasPrefix("forgot alice@example.org: key destroyed, user_forgotten at seq 4"))

            let export = try CLI.run(["export", "--store", store])
            #expect(export.status == 0)
            let exported = export.stdout.split(separator: "\n").map(String.init)
            #expect(exported.count == 4)
            #expect(
                exported[0]
                    == #"{"id":"00000000-0000-4000-8000-000000000001","device":"kiosk-7","seq":1,"at":"2026-06-01T10:00:00.000Z","user":"\#(pseudonym)","session":null,"type":"user_added","display_name":"[erased]","passcode_policy":"numeric","passcode_min_length":4}"#
            )
            #expect(
                exported[1]
                    == #"{"id":"00000000-0000-4000-8000-000000000002","device":"kiosk-7","seq":2,"at":"2026-06-01T10:01:00.000Z","user":"bob","session":null,"type":"user_added","display_name":"Bob Qwerty","passcode_policy":"numeric","passcode_min_length":4}"#
            )
            #expect(exported[2].contains(#""user":"\#(pseudonym)""#))
            #expect(exported[3].contains(#""user":"\#(pseudonym)","session":null,"type":"user_forgotten"}"#))
            #expect(!export.stdout.contains("alice") && !export.stdout.contains("Quixotic") && !export.stdout.contains("Ward 3"))

            let verify = try CLI.run(["verify", "--store", store])
            #expect(verify.status == 0, "\(verify.stderr)")
            let bytes = try Data(contentsOf: URL(fileURLWithPath: store + "/data.mdb"))
            for secret in ["alice@example.org", "Alice Quixotic", "Ward 3"] {
                #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(secret) is still in data.mdb")
            }
            // The reference decoder written from docs/format.md reads the erased store the same way.
            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("tools/decode_mdb_dump.py").path
            let decoded = try Tool.run("/usr/bin/env", ["python3", script, store])
            #expect(decoded.status == 0, "\(decoded.output)")
            #expect(decoded.stdout == export.stdout)

            let again = try CLI.run(["forget-user", "alice@example.org", "--store", store])
            #expect(again.status == 0)
            #expect(again.stderr == "onboard forget-user: alice@example.org was already forgotten; the store file was compacted\n")
            // By its pseudonym (what a sync at the server's request reports) it is the same user.
            let literal = try CLI.run(["forget-user", pseudonym, "--store", store])
            #expect(literal.status == 0)
            #expect(literal.stderr == "onboard forget-user: \(pseudonym) was already forgotten; the store file was compacted\n")
        }
    }
}
