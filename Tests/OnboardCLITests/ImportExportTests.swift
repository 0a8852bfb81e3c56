import Foundation
import OnboardingModel
import Testing
import TestSupport

@Suite(.slow) struct ImportExportTests {
    @Test func corpusRoundTripsByteIdentically() async throws {
        try await onOwnThread {
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
    }

    @Test func exportSinceSeqAndCSV() async throws {
        try await onOwnThread {
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
            #expect(
                rows[1].hasSuffix(
                    ",user_added,\"{\"\"display_name\"\":\"\"Zoë Ångström-Łukasiewicz\"\",\"\"subtitle\"\":\"\"Infirmière 👩‍⚕️\"\",\"\"image_ref\"\":\"\"avatars/zoë.png\"\",\"\"passcode_policy\"\":\"\"numeric\"\",\"\"passcode_min_length\"\":6}\""
                ))
            #expect(csv.stdout.contains("Z,,,captcha_presented,\"{\"\"purpose\"\":\"\"create_account\"\"}\"\n"))
        }
    }

    @Test func importWithoutSeqsLetsTheStoreAssignThem() async throws {
        try await onOwnThread {
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
    }

    /// Each bad line: exit 65, the line number and field named, nothing appended.
    @Test(arguments: [
        ("{\"id\": ", "line 3: malformed JSON at column 8: unexpected end of input"),
        (
            #"{"id":"00000000-0000-4000-8000-0000000000aa","device":"d","at":"2026-11-29T16:00:00.123Z","user":null,"session":null,"type":"sign_in_exploded"}"#,
            "line 3: field \"type\": unknown event type \"sign_in_exploded\"; see docs/events.md for the vocabulary"
        ),
        (
            #"{"id":"00000000-0000-4000-8000-0000000000aa","device":"d","at":"2026-11-29T16:00:00.123Z","user":"u","session":null,"type":"sign_in_failed","method":"password"}"#,
            "line 3: field \"reason\": is required for sign_in_failed (one of: invalid_password, invalid_passcode, unknown_user, biometric_failed, network_unavailable, server_error, cancelled)"
        ),
        (
            #"{"id":"00000000-0000-4000-8000-0000000000aa","device":"d","at":"2026-11-29T16:00:00.123Z","user":"u","session":null,"type":"sign_in_succeeded","method":"password","second_factor":"yes"}"#,
            "line 3: field \"second_factor\": must be true or false, got a string"
        ),
        (
            #"{"id":"00000000-0000-4000-8000-0000000000aa","device":"d","at":"2026-11-29T16:00:00.123Z","user":"u","session":null,"type":"signed_out","reason":"user","colour":"blue"}"#,
            "line 3: field \"colour\": is not a field of signed_out (its payload fields: reason)"
        ),
        (
            #"{"id":"00000000-0000-4000-8000-0000000000aa","device":"d","at":"2026-11-29T16:00:00.123Z","user":"u","session":null,"type":"sign_in_failed","method":"password","reason":"invalid_password","password":"hunter2"}"#,
            "line 3: field \"password\": looks like a secret; OnboardingStore never stores passwords, codes, tokens or answers — remove the field"
        ),
        (
            #"{"id":"00000000-0000-4000-8000-0000000000aa","device":"d","at":"2026-11-29T16:00:00.123Z","user":"u","session":null,"type":"second_factor_failed","method":"totp","otp":"123456"}"#,
            "line 3: field \"otp\": looks like a secret; OnboardingStore never stores passwords, codes, tokens or answers — remove the field"
        ),
        (
            #"{"id":"00000000-0000-4000-8000-0000000000aa","device":"d","at":"2026-11-29T16:00:00.123Z","user":null,"session":null,"type":"captcha_failed","captcha_answer":"xk2f"}"#,
            "line 3: field \"captcha_answer\": looks like a secret; OnboardingStore never stores passwords, codes, tokens or answers — remove the field"
        ),
        (
            #"{"id":"00000000-0000-4000-8000-0000000000aa","device":"d","at":"2026-11-29T16:00:00.123Z","user":"u","session":null,"type":"sign_in_succeeded","method":"password","second_factor":false,"refresh_token":"abc"}"#,
            "line 3: field \"refresh_token\": looks like a secret; OnboardingStore never stores passwords, codes, tokens or answers — remove the field"
        ),
        // field_edited says which field was filled, never with what: its content is refused in any name.
        (
            #"{"id":"00000000-0000-4000-8000-0000000000aa","device":"d","at":"2026-11-29T16:00:00.123Z","user":"u","session":null,"type":"field_edited","field":"passcode","filled":true,"passcode":"4711"}"#,
            "line 3: field \"passcode\": looks like a secret; OnboardingStore never stores passwords, codes, tokens or answers — remove the field"
        ),
        (
            #"{"id":"00000000-0000-4000-8000-0000000000aa","device":"d","at":"2026-11-29T16:00:00.123Z","user":"u","session":null,"type":"field_edited","field":"second_factor_code","filled":true,"second_factor_code":"123456"}"#,
            "line 3: field \"second_factor_code\": looks like a secret; OnboardingStore never stores passwords, codes, tokens or answers — remove the field"
        ),
        (
            #"{"id":"00000000-0000-4000-8000-0000000000aa","device":"d","at":"2026-11-29T16:00:00.123Z","user":"u","session":null,"type":"field_edited","field":"email","filled":true,"value":"ann@example.org"}"#,
            "line 3: field \"value\": is not a field of field_edited (its payload fields: field, filled, valid)"
        ),
        (
            #"{"id":"00000000-0000-4000-8000-0000000000aa","device":"d","at":"2026-11-29T16:00:00.123Z","user":"u","session":null,"type":"sign_in_started","method":"password","identifier_kind":"ann@example.org"}"#,
            "line 3: field \"identifier_kind\": \"ann@example.org\" is not one of: username, email, phone"
        ),
        (
            #"{"id":"00000000-0000-4000-8000-0000000000aa","device":"d","at":"2026-11-29T16:00:00.123Z","user":"u","session":null,"type":"field_edited","field":"passcode","filled":1}"#,
            "line 3: field \"filled\": must be true or false, got a number"
        ),
        (
            #"{"id":"not-a-uuid","device":"d","at":"2026-11-29T16:00:00.123Z","user":"u","session":null,"type":"passcode_set"}"#,
            "line 3: field \"id\": \"not-a-uuid\" is not a UUID like 0f8fad5b-d9cb-469f-a165-70867728950e"
        ),
        (
            #"{"id":"00000000-0000-4000-8000-0000000000aa","device":"d","at":"yesterday","user":"u","session":null,"type":"passcode_set"}"#,
            "line 3: field \"at\": \"yesterday\" is not an ISO-8601 UTC time like 2026-11-29T16:00:00.123Z (at most 3 fraction digits, Z suffix)"
        ),
        (
            #"{"device":"d","at":"2026-11-29T16:00:00.123Z","user":"u","session":null,"type":"passcode_set"}"#,
            "line 3: field \"id\": is required (a UUID; it makes re-imports idempotent)"
        )
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

    @Test func severalBadLinesAreListedAndNothingIsAppended() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let file = try directory.write("bad.jsonl", "{}\n[1]\n" + EventJSON.encode(Corpus.everyType()[0], seq: nil) + "\nnull\n")
            let store = directory.appending("store")
            let result = try CLI.run(["import", file, "--store", store])
            #expect(result.status == 65)
            #expect(
                result.stderr == """
                    onboard import: \(file): line 1: field "type": is required (one of: \(EventType.wireNames.joined(separator: ", "))); nothing was imported (2 more bad lines below)
                      line 2: expected a JSON object, got an array
                      line 4: expected a JSON object, got null

                    """)
            #expect(try CLI.run(["export", "--store", store]).status == 66, "the failed import must not even create the store")
        }
    }

    @Test func reusedIDWithOtherContentIsAConflict() async throws {
        try await onOwnThread {
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
            #expect(
                result.stderr.hasPrefix(
                    "onboard import: \(second): line 2: event \(event.id.uuidString.lowercased()) is already stored at seq 1 with different content"))
            #expect(try CLI.run(["export", "--store", store]).stdout.split(separator: "\n").count == 1)

            // Within one file, an id reused for another event is refused before anything is written.
            let inFile = try directory.write("c.jsonl", EventJSON.encode(Corpus.everyType()[14], seq: nil) + "\n" + EventJSON.encode(event, seq: nil) + "\n")
            let fresh = directory.appending("fresh")
            let refused = try CLI.run(["import", inFile, "--store", fresh])
            #expect(refused.status == 65)
            #expect(refused.stderr.contains("line 2: event id \(event.id.uuidString.lowercased()) was used on line 1 for a different event"))
            #expect(!FileManager.default.fileExists(atPath: fresh), "a refused import creates no store")
        }
    }

    @Test func seqThatDisagreesWithTheStoreIsRefused() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let events = Array(Corpus.everyType().prefix(3))
            let file = try directory.write("gap.jsonl", EventJSON.encode(events[0], seq: 1) + "\n" + EventJSON.encode(events[1], seq: 5) + "\n")
            let result = try CLI.run(["import", file, "--store", directory.appending("store")])
            #expect(result.status == 65)
            #expect(
                result.stderr == "onboard import: \(file): line 2: event claims seq 5 but the store's next seq is 2; omit \"seq\" to let the store assign it\n")
        }
    }

    @Test func missingInputFileIsExit66() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let result = try CLI.run(["import", directory.appending("absent.jsonl"), "--store", directory.appending("store")])
            #expect(result.status == 66)
            #expect(result.stderr == "onboard import: cannot read \(directory.appending("absent.jsonl")): no such file\n")
        }
    }

    @Test func chunkedImportCommitsInPiecesAndResumes() async throws {
        try await onOwnThread {
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

    @Test func reimportAfterForgetUserFindsTheErasedEventsStored() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let events = Corpus.everyType()
            let file = try directory.write("corpus.jsonl", Corpus.jsonl(events))
            let store = directory.appending("store")
            #expect(try CLI.run(["import", file, "--store", store]).status == 0)
            #expect(try CLI.run(["forget-user", "alice@example.org", "--store", store]).status == 0)
            // The readable events of a forgotten user read back erased: only the store can match them.
            let again = try CLI.run(["import", file, "--store", store])
            #expect(again.status == 0, "\(again.stderr)")
            #expect(again.stdout == "nothing new to import: all \(events.count) events of \(file) are already in the store\n")
            let exported = try directory.write("erased.jsonl", try CLI.run(["export", "--store", store]).stdout)
            #expect(
                try CLI.run(["import", exported, "--store", store]).stdout
                    == "nothing new to import: all \(events.count + 1) events of \(exported) are already in the store\n")
            #expect(try CLI.run(["verify", "--store", store]).status == 0)
        }
    }

    @Test func stdinNeedsAWritableTemporaryDirectory() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let missing = directory.appending("no-such-directory")
            let store = directory.appending("store")
            let result = try CLI.run(
                ["import", "-", "--store", store], input: Data(Corpus.jsonl(Corpus.everyType()).utf8),
                environment: ["TMPDIR": missing])
            #expect(result.status == 74)
            #expect(
                result.stderr
                    == "onboard import: cannot create a temporary file for a copy of stdin in \(missing)/: No such file or directory; set TMPDIR to a writable directory\n"
            )
            #expect(!FileManager.default.fileExists(atPath: store))
        }
    }

    // MARK: Byte order mark

    @Test func byteOrderMarkAtTheStartIsAcceptedAndOnlyThere() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let events = Array(Corpus.everyType().prefix(4))
            let text = Corpus.jsonl(events)
            let file = try directory.write("bom.jsonl", "\u{FEFF}" + text)
            let store = directory.appending("store")
            let imported = try CLI.run(["import", file, "--store", store])
            #expect(imported.status == 0, "\(imported.stderr)")
            #expect(imported.stdout == "imported 4 events (seq 1–4)\n")
            #expect(try CLI.run(["export", "--store", store]).stdoutBytes == Data(text.utf8), "the mark is not part of any event")
            // Through stdin as well.
            let piped = directory.appending("piped")
            #expect(try CLI.run(["import", "-", "--store", piped], input: Data(("\u{FEFF}" + text).utf8)).stdout == "imported 4 events (seq 1–4)\n")

            // Anywhere else it is refused, saying what it is.
            let lines = text.split(separator: "\n").map(String.init)
            let inside = try directory.write("inside.jsonl", lines[0] + "\n\u{FEFF}" + lines[1] + "\n")
            let refused = try CLI.run(["import", inside, "--store", directory.appending("other")])
            #expect(refused.status == 65)
            #expect(
                refused.stderr
                    == "onboard import: \(inside): line 2: malformed JSON at column 1: unexpected byte order mark (U+FEFF; one is allowed only at the very start of a file); nothing was imported\n"
            )
        }
    }

    // MARK: Repeats within the file

    @Test func lineRepeatingAnEarlierEventIsSkippedAndNamed() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let events = Array(Corpus.everyType().prefix(5))
            let lines = Corpus.jsonl(events).split(separator: "\n").map { $0 + "\n" }
            let file = try directory.write("repeats.jsonl", lines.joined() + lines[1] + lines[3])
            let store = directory.appending("store")
            let imported = try CLI.run(["import", file, "--store", store])
            #expect(imported.status == 0, "\(imported.stderr)")
            #expect(imported.stdout == "imported 5 events (seq 1–5); 2 repeats within the file were skipped\n")
            #expect(
                imported.stderr == """
                    onboard import: \(file): line 6 repeats the id of line 2 with the same content: skipped as a repeat within the file
                    onboard import: \(file): line 7 repeats the id of line 4 with the same content: skipped as a repeat within the file

                    """)
            #expect(try CLI.run(["export", "--store", store]).stdout == lines.joined())

            let again = try CLI.run(["import", file, "--store", store])
            #expect(again.stdout == "nothing new to import: all 5 events of \(file) are already in the store; 2 repeats within the file were skipped\n")
        }
    }

    // MARK: Checked before the first commit

    @Test func everyLineIsCheckedAgainstTheStoreBeforeTheFirstCommit() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let events = Corpus.generated(count: 30, seed: 11)
            var lines = Corpus.jsonl(events).split(separator: "\n").map { $0 + "\n" }
            lines[24] = EventJSON.encode(events[24], seq: 26) + "\n"
            let file = try directory.write("late.jsonl", lines.joined())
            let store = directory.appending("store")
            let result = try CLI.run(["import", file, "--store", store, "--commit-every", "10"])
            #expect(result.status == 65)
            #expect(
                result.stderr
                    == "onboard import: \(file): line 25: event claims seq 26 but the store's next seq is 25; omit \"seq\" to let the store assign it\n")
            #expect(!FileManager.default.fileExists(atPath: store), "nothing was committed, not even the first 20 events")
        }
    }

    // MARK: Hostile input

    static let hostileBase =
        #"{"id":"00000000-0000-4000-8000-0000000000aa","device":"d","at":"2026-11-29T16:00:00.123Z","user":"u","session":null,"type":"passcode_set"}"#

    static func hostile(_ target: String, _ replacement: String) -> [UInt8] {
        Array(hostileBase.replacingOccurrences(of: target, with: replacement).utf8)
    }

    /// Each line: exit 65, one line of error naming line 3 and what is wrong, no control
    /// character echoed, nothing appended.
    @Test(
        arguments: [
            (Array(#"{"id":"#.utf8) + [0x00] + Array("}".utf8), "malformed JSON at column 7: unexpected control character U+0000"),
            (Array(#"{"id":"a"#.utf8) + [0x00] + Array(#"b"}"#.utf8), "malformed JSON at column 9: control character in string (escape it)"),
            (Array(#"{"id":""#.utf8) + [0xFF, 0xFE] + Array(#""}"#.utf8), "is not valid UTF-8"),
            (Array(#"{"id":""#.utf8) + [0xED, 0xA0, 0x80] + Array(#""}"#.utf8), "is not valid UTF-8"),
            (hostile(#""u""#, #""a\u001b[2Jb""#), #"field "user": must not contain control characters"#),
            (hostile(#""u""#, #""a\u0085b""#), #"field "user": must not contain control characters"#),
            (
                hostile("00000000-0000-4000-8000-0000000000aa", #"a\nb\u001b[31m"#),
                #"field "id": "a\nb\u{001B}[31m" is not a UUID like 0f8fad5b-d9cb-469f-a165-70867728950e"#
            ),
            (hostile("passcode_set", #"\r\u202egnp.exe"#), #"field "type": unknown event type "\r\u{202E}gnp.exe"; see docs/events.md for the vocabulary"#),
            (hostile(#""session":null"#, #""\n":1"#), #"field "\n": is not a field of passcode_set (its payload fields: none)"#),
            (hostile(#""d""#, #""d\td""#), #"field "device": may only contain letters, digits and - _ . : (got "d\td")"#),
            (hostile(#""session":null"#, #""seq":-1"#), #"field "seq": must be a whole number ≥ 1, or omitted so the store assigns it"#),
            (hostile(#""session":null"#, #""seq":0"#), #"field "seq": must be a whole number ≥ 1, or omitted so the store assigns it"#),
            (hostile(#""session":null"#, #""seq":18446744073709551616"#), #"field "seq": must be a whole number ≥ 1, or omitted so the store assigns it"#),
            (hostile(#""session":null"#, #""seq":1e400"#), #"field "seq": must be a whole number ≥ 1, or omitted so the store assigns it"#),
            (
                hostile("2026-11-29T16:00:00.123Z", "0000-01-01T00:00:00Z"),
                #"field "at": "0000-01-01T00:00:00Z" is not an ISO-8601 UTC time like 2026-11-29T16:00:00.123Z (at most 3 fraction digits, Z suffix)"#
            ),
            (
                hostile("2026-11-29T16:00:00.123Z", "10000-01-01T00:00:00Z"),
                #"field "at": "10000-01-01T00:00:00Z" is not an ISO-8601 UTC time like 2026-11-29T16:00:00.123Z (at most 3 fraction digits, Z suffix)"#
            ),
            (
                hostile("2026-11-29T16:00:00.123Z", "-0001-01-01T00:00:00Z"),
                #"field "at": "-0001-01-01T00:00:00Z" is not an ISO-8601 UTC time like 2026-11-29T16:00:00.123Z (at most 3 fraction digits, Z suffix)"#
            ),
            (
                hostile(#""type":"passcode_set""#, #""type":"user_added","display_name":"x","passcode_policy":"numeric","passcode_min_length":1e400"#),
                #"field "passcode_min_length": must be a whole number, got a number"#
            ),
            (
                hostile(
                    #""type":"passcode_set""#, #""type":"user_added","display_name":"x","passcode_policy":"numeric","passcode_min_length":18446744073709551615"#
                ),
                #"field "passcode_min_length": must be a whole number, got a number"#
            ),
            (
                hostile(#""session":null"#, "\"" + String(repeating: "k", count: 60_000) + "\":1"),
                "field \"" + String(repeating: "k", count: 64) + "…\": is not a field of passcode_set (its payload fields: none)"
            ),
            (hostile("00000000-0000-4000-8000-0000000000aa", String(repeating: "9", count: 70_000)), "line is longer than 65536 bytes"),
            (Array(String(repeating: "[", count: 10_000).utf8), "malformed JSON at column 17: nested deeper than 16 levels")
        ] as [([UInt8], String)])
    func hostileLineIsRefusedOnOneLine(line: [UInt8], message: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let good = Corpus.everyType().prefix(2).map { EventJSON.encode($0, seq: nil) + "\n" }.joined()
        let file = directory.appending("hostile.jsonl")
        try Data(Array(good.utf8) + line + [0x0A]).write(to: URL(fileURLWithPath: file))
        let store = directory.appending("store")
        let seed = Corpus.everyType()[5]
        #expect(try CLI.run(["record", EventJSON.encode(seed, seq: nil), "--store", store]).status == 0)
        let storeFiles = try FileManager.default.contentsOfDirectory(atPath: store).sorted()
        let dataBefore = try Data(contentsOf: URL(fileURLWithPath: store + "/data.mdb"))

        let result = try CLI.run(["import", file, "--store", store])
        #expect(result.status == 65)
        #expect(result.stderr == "onboard import: \(file): line 3: \(message); nothing was imported\n")
        // Read, not written: no snapshot, no signed head, no new file.
        #expect(try Data(contentsOf: URL(fileURLWithPath: store + "/data.mdb")) == dataBefore)
        #expect(try FileManager.default.contentsOfDirectory(atPath: store).sorted() == storeFiles)
        let controls = Array(result.stderr.utf8.dropLast()).filter { $0 < 0x20 || $0 == 0x7F }
        #expect(controls.isEmpty, "the error is one line without control characters")
        #expect(try CLI.run(["export", "--store", store]).stdout == EventJSON.encode(seed, seq: 1) + "\n")
    }

    /// `onboard ARGUMENTS` under `sh -c 'ulimit -d KIB; exec …'`: its data segment (heap and
    /// private mappings) capped, so using more memory than that makes it fail.
    static func runWithDataLimit(kibibytes: Int, _ arguments: [String]) throws -> CLI.Result {
        try CLI.run(
            ["-c", "ulimit -d \(kibibytes) && exec \"$0\" \"$@\"", CLI.binary.path] + arguments,
            executable: URL(fileURLWithPath: "/bin/sh"))
    }

    /// The data segment allowed: the import's buffers, the runtime and room to spare (a debug
    /// build checks a large file in about 40 MB); far less than the files below, which import
    /// used to read whole (and parse whole) before looking at a line.
    static let boundedDataKiB = 80_000

    @Test func lineOfHundredMegabytesWithoutNewlineIsRefusedInBoundedMemory() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let file = directory.appending("long.jsonl")
            var bytes = Array((EventJSON.encode(Corpus.everyType()[0], seq: nil) + "\n{\"id\":\"").utf8)
            bytes += [UInt8](repeating: UInt8(ascii: "a"), count: 100 << 20)
            try Data(bytes).write(to: URL(fileURLWithPath: file))
            let store = directory.appending("store")
            let result = try Self.runWithDataLimit(kibibytes: Self.boundedDataKiB, ["import", file, "--store", store])
            #expect(result.status == 65, "\(result.stderr)")
            #expect(result.stderr == "onboard import: \(file): line 2: line is longer than 65536 bytes; nothing was imported\n")
            #expect(!FileManager.default.fileExists(atPath: store))
        }
    }

    @Test func largeFileIsCheckedInBoundedMemory() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            // 200,000 valid lines (over 40 MB) and a bad last one: the check reads them all, keeps none.
            let template = Array(EventJSON.encode(Corpus.generated(count: 1, seed: 3)[0], seq: nil).utf8)
            let idLastDigits = 7 + 24 // after `{"id":"` and the id's first 24 characters
            let hex = Array("0123456789abcdef".utf8)
            var bytes: [UInt8] = []
            bytes.reserveCapacity(200_001 * (template.count + 1))
            for index in 0..<200_000 {
                var line = template
                for digit in 0..<12 { line[idLastDigits + 11 - digit] = hex[(index >> (4 * digit)) & 0xF] }
                bytes += line
                bytes.append(0x0A)
            }
            bytes += Array("{}\n".utf8)
            let file = directory.appending("large.jsonl")
            try Data(bytes).write(to: URL(fileURLWithPath: file))
            let result = try Self.runWithDataLimit(kibibytes: Self.boundedDataKiB, ["import", file, "--store", directory.appending("store")])
            #expect(result.status == 65, "\(result.stderr)")
            #expect(result.stderr.hasPrefix("onboard import: \(file): line 200001: field \"type\": is required"), "\(result.stderr)")
        }
    }

    // MARK: Progress

    @Test func progressIsShownOnATerminalInEveryPhase() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let events = Corpus.generated(count: 30, seed: 5)
            let file = try directory.write("events.jsonl", Corpus.jsonl(events))
            let appended = try Terminal.run(["import", file, "--store", directory.appending("store"), "--commit-every", "10"])
            #expect(appended.status == 0)
            for committed in [10, 20, 30] {
                #expect(appended.output.contains("\rimport: committed \(committed) / 30 events"), "\(appended.output.debugDescription)")
            }

            // The check reports every 50,000 lines, with how far through the file it is.
            let line = EventJSON.encode(events[0], seq: nil) + "\n"
            let long = try directory.write("long.jsonl", String(repeating: line, count: 50_000) + "{}\n")
            let checked = try Terminal.run(["import", long, "--store", directory.appending("other")])
            #expect(checked.status == 65)
            #expect(checked.output.contains("\rimport: checked 50000 lines ("), "\(checked.output.debugDescription)")

            // Not on a terminal: no progress at all (the other tests compare stderr whole).
            #expect(try CLI.run(["import", file, "--store", directory.appending("third"), "--commit-every", "10"]).stderr == "")
        }
    }
}
