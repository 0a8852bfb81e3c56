import Foundation
import OnboardingModel
import Testing
import TestSupport

/// `onboard export --format ocsf` through the real binary.
@Suite(.slow) struct OCSFExportTests {
    /// The types the OCSF export leaves out unless `--all-events` (docs/audit.md).
    static let skippedTypes: Set<String> = [
        "user_added", "user_profile_updated", "user_selected", "user_removed", "passcode_set", "biometric_enabled",
        "biometric_disabled", "captcha_alternatives_viewed", "account_creation_started", "field_validated",
        "account_creation_failed", "account_created", "user_forgotten", "field_edited", "account_creation_submitted",
        "user_switch_opened", "user_switch_closed",
        "sign_in_options_shown", "log_imported"
    ]

    static func objects(_ output: String) throws -> [[String: Any]] {
        #expect(output.hasSuffix("\n"))
        return try output.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8))
            return try #require(object as? [String: Any], "not a JSON object: \(line)")
        }
    }

    @Test func exportsSignInEventsAsOCSFAuthentication() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let events = Corpus.everyType()
            let file = try directory.write("corpus.jsonl", Corpus.jsonl(events))
            let store = directory.appending("store")
            #expect(try CLI.run(["import", file, "--store", store]).status == 0)

            let result = try CLI.run(["export", "--format", "ocsf", "--store", store])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stderr.isEmpty)
            let objects = try Self.objects(result.stdout)
            let expected = events.enumerated().filter { !Self.skippedTypes.contains($0.element.type.rawValue) }
            #expect(objects.count == expected.count)
            #expect(objects.count == 23) // 44 events in the corpus, 21 of them not sign-in related
            for (object, (offset, event)) in zip(objects, expected) {
                #expect(object["class_uid"] as? Int == 3002)
                #expect(object["category_uid"] as? Int == 3)
                let activity = try #require(object["activity_id"] as? Int)
                #expect([1, 2, 99].contains(activity))
                #expect(object["type_uid"] as? Int == 300200 + activity)
                #expect([1, 2, 99].contains(try #require(object["status_id"] as? Int)))
                #expect(object["time"] as? Int64 == event.at.millisecondsSince1970)
                let metadata = try #require(object["metadata"] as? [String: Any])
                #expect(metadata["version"] as? String == "1.8.0")
                #expect(metadata["uid"] as? String == event.id.uuidString.lowercased())
                #expect(metadata["sequence"] as? Int == offset + 1)
                #expect((metadata["product"] as? [String: Any])?["name"] as? String == "OnboardingStore")
                let unmapped = try #require(object["unmapped"] as? [String: Any])
                #expect(unmapped["type"] as? String == event.type.rawValue)
                #expect((unmapped["hash"] as? String)?.count == 64)
                #expect(object["user"] is [String: Any])
                #expect((object["device"] as? [String: Any])?["uid"] as? String == event.device)
            }
            // The activities a SIEM keys on.
            let byType = Dictionary(zip(expected.map(\.element.type.rawValue), objects), uniquingKeysWith: { first, _ in first })
            #expect(byType["sign_in_succeeded"]?["activity_id"] as? Int == 1)
            #expect(byType["sign_in_succeeded"]?["is_mfa"] as? Bool == true)
            #expect(byType["signed_out"]?["activity_id"] as? Int == 2)
            #expect(byType["sign_in_throttled"]?["status_detail"] as? String == "ACCOUNT_LOCKED_OUT")

            // Deterministic: the same store gives the same bytes.
            #expect(try CLI.run(["export", "--format", "ocsf", "--store", store]).stdoutBytes == result.stdoutBytes)
        }
    }

    @Test func allEventsAndSinceSeq() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let events = Corpus.everyType()
            let file = try directory.write("corpus.jsonl", Corpus.jsonl(events))
            let store = directory.appending("store")
            #expect(try CLI.run(["import", file, "--store", store]).status == 0)

            let all = try CLI.run(["export", "--format", "ocsf", "--all-events", "--store", store])
            #expect(all.status == 0, "\(all.stderr)")
            let objects = try Self.objects(all.stdout)
            #expect(objects.count == events.count)
            let first = try #require(objects.first)
            #expect(first["activity_id"] as? Int == 99)
            #expect(first["activity_name"] as? String == "User Added")
            #expect(objects.allSatisfy { $0["class_uid"] as? Int == 3002 })

            let tail = try Self.objects(try CLI.run(["export", "--format", "ocsf", "--since-seq", "30", "--store", store]).stdout)
            let expectedTail = events.dropFirst(29).filter { !Self.skippedTypes.contains($0.type.rawValue) }
            #expect(tail.count == expectedTail.count)
            #expect(tail.allSatisfy { (($0["metadata"] as? [String: Any])?["sequence"] as? Int ?? 0) >= 30 })
        }
    }

    @Test func helpListsTheFormats() async throws {
        try await onOwnThread {
            let help = try CLI.run(["export", "--help"])
            #expect(help.status == 0)
            #expect(help.stdout.contains("[--format jsonl|csv|ocsf]"))
            #expect(help.stdout.contains("--all-events"))
            #expect(help.stdout.contains("docs/audit.md"))
        }
    }
}
