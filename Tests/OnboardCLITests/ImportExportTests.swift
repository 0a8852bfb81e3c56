import Foundation
import OnboardingModel
import Testing

@Suite struct ImportExportTests {
    @Test func corpusRoundTripsByteIdentically() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let text = Corpus.jsonl(Corpus.everyType())
        let file = try directory.write("corpus.jsonl", text)
        let store = directory.appending("store")

        let imported = try CLI.run(["import", file, "--store", store])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout == "imported \(Corpus.everyType().count) events (seq 1–\(Corpus.everyType().count))\n")

        let exported = try CLI.run(["export", "--store", store])
        #expect(exported.status == 0)
        #expect(exported.stdoutBytes == Data(text.utf8))

        let again = try CLI.run(["import", file, "--store", store])
        #expect(again.status == 0)
        #expect(again.stdout == "nothing new to import: all \(Corpus.everyType().count) events of \(file) are already in the store\n")
        #expect(try CLI.run(["export", "--store", store]).stdoutBytes == Data(text.utf8))

        // Into a second, fresh store through stdin: the same bytes again.
        let second = directory.appending("second")
        #expect(try CLI.run(["import", "-", "--store", second], input: exported.stdoutBytes).status == 0)
        #expect(try CLI.run(["export", "--store", second]).stdoutBytes == Data(text.utf8))
    }

    @Test func exportSinceSeqAndCSV() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let events = Corpus.everyType()
        let file = try directory.write("corpus.jsonl", Corpus.jsonl(events))
        let store = directory.appending("store")
        #expect(try CLI.run(["import", file, "--store", store]).status == 0)

        let tail = try CLI.run(["export", "--since-seq", "30", "--store", store])
        let tailLines = tail.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(tailLines.count == events.count - 29)
        #expect(tailLines.first?.contains("\"seq\":30,") == true)

        let csv = try CLI.run(["export", "--format", "csv", "--store", store])
        #expect(csv.status == 0)
        let rows = csv.stdout.components(separatedBy: "\n")
        #expect(rows[0] == "seq,id,device,at,user,session,type,details")
        #expect(rows[1].hasPrefix("1,00000000-0000-4000-8000-000000000001,kiosk-7,2026-11-30T16:00:00.123Z,zoë,"))
        #expect(rows[1].hasSuffix(",user_added,\"{\"\"display_name\"\":\"\"Zoë Ångström-Łukasiewicz\"\",\"\"subtitle\"\":\"\"Infirmière 👩‍⚕️\"\",\"\"image_ref\"\":\"\"avatars/zoë.png\"\",\"\"passcode_policy\"\":\"\"numeric\"\",\"\"passcode_min_length\"\":6}\""))
        #expect(csv.stdout.contains("Z,,,captcha_presented,\"{\"\"purpose\"\":\"\"create_account\"\"}\"\n"))
    }

    @Test func importWithoutSeqsLetsTheStoreAssignThem() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let events = Array(Corpus.everyType().prefix(5))
        let lines = events.map { EventJSON.encode($0, seq: nil) + "\n" }.joined()
        let file = try directory.write("noseq.jsonl", "\n" + lines + "\n\n")
        let store = directory.appending("store")
        let result = try CLI.run(["import", file, "--store", store])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "imported 5 events (seq 1–5)\n")
        #expect(try CLI.run(["export", "--store", store]).stdout == Corpus.jsonl(events))
    }

    /// Each bad line: exit 65, the line number and field named, nothing appended.
    @Test(arguments: [
        ("{\"id\": ", "line 3: malformed JSON at column 8: unexpected end of input"),
        (#"{"id":"00000000-0000-4000-8000-0000000000aa","device":"d","at":"2026-11-29T16:00:00.123Z","user":null,"session":null,"type":"sign_in_exploded"}"#,
         "line 3: field \"type\": unknown event type \"sign_in_exploded\"; see docs/events.md for the vocabulary"),
        (#"{"id":"00000000-0000-4000-8000-0000000000aa","device":"d","at":"2026-11-29T16:00:00.123Z","user":"u","session":null,"type":"sign_in_failed","method":"password"}"#,
         "line 3: field \"reason\": is required for sign_in_failed (one of: invalid_password, invalid_passcode, unknown_user, biometric_failed, network_unavailable, server_error, cancelled)"),
        (#"{"id":"00000000-0000-4000-8000-0000000000aa","device":"d","at":"2026-11-29T16:00:00.123Z","user":"u","session":null,"type":"sign_in_succeeded","method":"password","second_factor":"yes"}"#,
         "line 3: field \"second_factor\": must be true or false, got a string"),
        (#"{"id":"00000000-0000-4000-8000-0000000000aa","device":"d","at":"2026-11-29T16:00:00.123Z","user":"u","session":null,"type":"signed_out","reason":"user","colour":"blue"}"#,
         "line 3: field \"colour\": is not a field of signed_out (its payload fields: reason)"),
        (#"{"id":"00000000-0000-4000-8000-0000000000aa","device":"d","at":"2026-11-29T16:00:00.123Z","user":"u","session":null,"type":"sign_in_failed","method":"password","reason":"invalid_password","password":"hunter2"}"#,
         "line 3: field \"password\": looks like a secret; OnboardingStore never stores passwords, codes, tokens or answers — remove the field"),
        (#"{"id":"00000000-0000-4000-8000-0000000000aa","device":"d","at":"2026-11-29T16:00:00.123Z","user":"u","session":null,"type":"second_factor_failed","method":"totp","otp":"123456"}"#,
         "line 3: field \"otp\": looks like a secret; OnboardingStore never stores passwords, codes, tokens or answers — remove the field"),
        (#"{"id":"00000000-0000-4000-8000-0000000000aa","device":"d","at":"2026-11-29T16:00:00.123Z","user":null,"session":null,"type":"captcha_failed","captcha_answer":"xk2f"}"#,
         "line 3: field \"captcha_answer\": looks like a secret; OnboardingStore never stores passwords, codes, tokens or answers — remove the field"),
        (#"{"id":"00000000-0000-4000-8000-0000000000aa","device":"d","at":"2026-11-29T16:00:00.123Z","user":"u","session":null,"type":"sign_in_succeeded","method":"password","second_factor":false,"refresh_token":"abc"}"#,
         "line 3: field \"refresh_token\": looks like a secret; OnboardingStore never stores passwords, codes, tokens or answers — remove the field"),
        (#"{"id":"not-a-uuid","device":"d","at":"2026-11-29T16:00:00.123Z","user":"u","session":null,"type":"passcode_set"}"#,
         "line 3: field \"id\": \"not-a-uuid\" is not a UUID like 0f8fad5b-d9cb-469f-a165-70867728950e"),
        (#"{"id":"00000000-0000-4000-8000-0000000000aa","device":"d","at":"yesterday","user":"u","session":null,"type":"passcode_set"}"#,
         "line 3: field \"at\": \"yesterday\" is not an ISO-8601 UTC time like 2026-11-29T16:00:00.123Z (at most 3 fraction digits, Z suffix)"),
        (#"{"device":"d","at":"2026-11-29T16:00:00.123Z","user":"u","session":null,"type":"passcode_set"}"#,
         "line 3: field \"id\": is required (a UUID; it makes re-imports idempotent)"),
    ])
    func badLineRejectsTheWholeFile(line: String, message: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let good = Corpus.everyType().prefix(2).map { EventJSON.encode($0, seq: nil) + "\n" }.joined()
        let file = try directory.write("bad.jsonl", good + line + "\n")
        let store = directory.appending("store")
        // The store already holds one event: the failed import must leave exactly that.
        let seed = Corpus.everyType()[5]
        #expect(try CLI.run(["record", EventJSON.encode(seed, seq: nil), "--store", store]).status == 0)

        let result = try CLI.run(["import", file, "--store", store])
        #expect(result.status == 65)
        #expect(result.stderr == "onboard import: \(file): \(message); nothing was imported\n")
        let exported = try CLI.run(["export", "--store", store])
        #expect(exported.stdout == EventJSON.encode(seed, seq: 1) + "\n")
    }

    @Test func severalBadLinesAreListedAndNothingIsAppended() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = try directory.write("bad.jsonl", "{}\n[1]\n" + EventJSON.encode(Corpus.everyType()[0], seq: nil) + "\nnull\n")
        let store = directory.appending("store")
        let result = try CLI.run(["import", file, "--store", store])
        #expect(result.status == 65)
        #expect(result.stderr == """
            onboard import: \(file): line 1: field "type": is required (one of: \(EventType.wireNames.joined(separator: ", "))); nothing was imported (2 more bad lines below)
              line 2: expected a JSON object, got an array
              line 4: expected a JSON object, got null

            """)
        #expect(try CLI.run(["export", "--store", store]).status == 66, "the failed import must not even create the store")
    }

    @Test func reusedIDWithOtherContentIsAConflict() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = directory.appending("store")
        var event = Corpus.everyType()[14]
        let first = try directory.write("a.jsonl", EventJSON.encode(event, seq: nil) + "\n")
        #expect(try CLI.run(["import", first, "--store", store]).status == 0)
        event.at = event.at.adding(milliseconds: 1)
        let other = Corpus.everyType()[15]
        let second = try directory.write("b.jsonl", EventJSON.encode(other, seq: nil) + "\n" + EventJSON.encode(event, seq: nil) + "\n")
        let result = try CLI.run(["import", second, "--store", second.replacingOccurrences(of: "b.jsonl", with: "store")])
        #expect(result.status == 65)
        #expect(result.stderr.hasPrefix("onboard import: \(second): line 2: event \(event.id.uuidString.lowercased()) is already stored at seq 1 with different content"))
        #expect(try CLI.run(["export", "--store", store]).stdout.split(separator: "\n").count == 1)

        // Within one file, an id reused for another event is refused before anything is written.
        let inFile = try directory.write("c.jsonl", EventJSON.encode(Corpus.everyType()[14], seq: nil) + "\n" + EventJSON.encode(event, seq: nil) + "\n")
        let fresh = directory.appending("fresh")
        let refused = try CLI.run(["import", inFile, "--store", fresh])
        #expect(refused.status == 65)
        #expect(refused.stderr.contains("line 2: event id \(event.id.uuidString.lowercased()) was used on line 1 for a different event"))
    }

    @Test func seqThatDisagreesWithTheStoreIsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let events = Array(Corpus.everyType().prefix(3))
        let file = try directory.write("gap.jsonl", EventJSON.encode(events[0], seq: 1) + "\n" + EventJSON.encode(events[1], seq: 5) + "\n")
        let result = try CLI.run(["import", file, "--store", directory.appending("store")])
        #expect(result.status == 65)
        #expect(result.stderr == "onboard import: \(file): line 2: event claims seq 5 but the store's next seq is 2; omit \"seq\" to let the store assign it\n")
    }

    @Test func missingInputFileIsExit66() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let result = try CLI.run(["import", directory.appending("absent.jsonl"), "--store", directory.appending("store")])
        #expect(result.status == 66)
        #expect(result.stderr == "onboard import: cannot read \(directory.appending("absent.jsonl")): no such file\n")
    }

    @Test func chunkedImportCommitsInPiecesAndResumes() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let events = Corpus.generated(count: 1_000, seed: 7)
        let text = Corpus.jsonl(events)
        let file = try directory.write("big.jsonl", text)
        let store = directory.appending("store")
        // A store holding the first 350 events stands for an import that was interrupted.
        let partial = try directory.write("partial.jsonl", Corpus.jsonl(Array(events.prefix(350))))
        #expect(try CLI.run(["import", partial, "--store", store, "--commit-every", "50"]).status == 0)
        let resumed = try CLI.run(["import", file, "--store", store, "--commit-every", "128", "--durability", "relaxed"])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(resumed.stdout == "imported 650 events (seq 351–1000); 350 already in the store were skipped\n")
        #expect(try CLI.run(["export", "--store", store]).stdoutBytes == Data(text.utf8))
        #expect(try CLI.run(["verify", "--store", store]).status == 0)
    }
}
