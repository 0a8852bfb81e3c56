import Foundation
import OnboardingModel
import Testing
import TestSupport

/// `sign_in_options_shown` through the command line: `onboard session` shows a device's sign-in
/// options and their App Store Review Guideline 4.8 findings, `onboard verify` reports every
/// screen that breaks it apart from the integrity result, and `onboard import` refuses a hostile
/// list naming the field.
@Suite(.slow) struct SignInOptionsCommandTests {
    static let start = Timestamp(millisecondsSince1970: 1_795_968_000_000) // 2026-11-29T16:00:00.000Z

    static func event(_ index: Int, _ payload: Payload, device: String = "kiosk-7", user: String? = nil) -> Event {
        Event(
            id: Corpus.uuid(7000 + index), device: device, at: start.adding(milliseconds: Int64(index) * 1000), user: user,
            flow: user == nil ? nil : Corpus.uuid(70), payload: payload)
    }

    /// Seven screens that break the guideline (seqs 2…8) after one that keeps it (seq 1), then a sign-in attempt.
    static func log() -> [Event] {
        var events = [event(0, .signInOptionsShown(options: [.apple, .google, .password], platform: .ios))]
        for index in 1...7 {
            let payload: Payload =
                index % 2 == 0
                ? .signInOptionsShown(options: [.google, .apple, .password, .biometric], platform: .ios)
                : .signInOptionsShown(options: [.password, .facebook])
            events.append(event(index, payload, device: index == 7 ? "kiosk-7" : "phone-\(index)"))
        }
        events.append(event(8, .signInStarted(method: .password, identifierKind: .email), user: "ann"))
        return events
    }

    func importLog(_ events: [Event], into directory: TemporaryDirectory) throws -> String {
        let store = directory.appending("store")
        let file = try directory.write("log.jsonl", Corpus.jsonl(events))
        let result = try CLI.run(["import", file, "--store", store, "--max-clock-skew", "none"])
        #expect(result.status == 0, "\(result.stderr)")
        return store
    }

    @Test func sessionShowsTheOptionsAndTheirFindings() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            var events = Self.log()
            events.append(Self.event(9, .signInOptionsShown(options: [.google, .apple, .password], platform: .ios)))
            let store = try importLog(events, into: directory)
            let text = try CLI.run(["session", "--store", store, "--device", "kiosk-7"])
            #expect(text.status == 0, "\(text.stderr)")
            #expect(
                text.stdout == """
                    device     kiosk-7
                    signed in  nobody
                    screen     sign_in (loading) for ann
                    submit     disabled
                    options    google, apple, password (ios, shown 2026-11-29T16:00:09.000Z)
                      guideline 4.8: Sign in with Apple is not the first provider on iOS (google comes before it): put Apple first

                    """)
            let json = try CLI.run(["session", "--store", store, "--device", "kiosk-7", "--json"])
            #expect(json.status == 0)
            let value = try JSONValue.parse(json.stdout.trimmingCharacters(in: .newlines))
            #expect(
                value["sign_in_options"]
                    == (try JSONValue.parse(
                        #"{"options":["google","apple","password"],"platform":"ios","shown_at":"2026-11-29T16:00:09.000Z","guideline_4_8":[{"kind":"apple_not_first","problem":"Sign in with Apple is not the first provider on iOS (google comes before it): put Apple first"}]}"#
                    )))
            // A screen without a platform: only "without Apple" is checked.
            let phone = try CLI.run(["session", "--store", store, "--device", "phone-1"])
            #expect(
                phone.stdout.hasSuffix(
                    """
                    options    password, facebook (platform not recorded, shown 2026-11-29T16:00:01.000Z)
                      guideline 4.8: a third-party provider (facebook) is offered without Sign in with Apple: offer Apple too (App Store Review Guideline 4.8)

                    """), "\(phone.stdout)")
            // A device that recorded no screen has none.
            let none = try CLI.run(["session", "--store", store, "--device", "tablet-9", "--json"])
            #expect(try JSONValue.parse(none.stdout.trimmingCharacters(in: .newlines))["sign_in_options"] == .null)
            #expect(!(try CLI.run(["session", "--store", store, "--device", "tablet-9"])).stdout.contains("options"))
        }
    }

    @Test func verifyReportsDesignFindingsWithoutChangingTheExitStatus() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let store = try importLog(Self.log(), into: directory)
            let notFirst = "Sign in with Apple is not the first provider on iOS (google comes before it): put Apple first"
            let missing = "a third-party provider (facebook) is offered without Sign in with Apple: offer Apple too (App Store Review Guideline 4.8)"
            let design = """
                design: 7 sign_in_options_shown records break App Store Review Guideline 4.8 — findings about the app's sign-in screen, \
                not damage to the log, so the exit status stays that of the integrity checks
                  seq 2: \(missing)
                  seq 3: \(notFirst)
                  seq 4: \(missing)
                  seq 5: \(notFirst)
                  seq 6: \(missing)
                  … and 2 more

                """
            let verify = try CLI.run(["verify", "--store", store])
            #expect(verify.status == 0, "an intact log verifies, whatever its screens showed")
            #expect(verify.stderr.isEmpty)
            #expect(verify.stdout.hasPrefix("ok: 9 records, hash chain intact"))
            #expect(verify.stdout.hasSuffix("\n" + design), "\(verify.stdout)")

            // Damage: the integrity result decides the status; the design findings are still reported.
            try flipByte(store: store, seq: 9, offset: 80)
            let damaged = try CLI.run(["verify", "--store", store])
            #expect(damaged.status == 1)
            #expect(damaged.stderr.contains("  first bad seq 9: modified\n"))
            #expect(damaged.stdout == design)
        }
    }

    @Test func importRefusesHostileListsNamingTheField() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let allowed = "apple, google, facebook, microsoft, github, other, password, passcode, biometric"
            func line(_ index: Int, _ options: String) -> String {
                #"{"id":"\#(Corpus.uuid(8000 + index))","device":"kiosk-7","at":"2026-11-29T16:00:00.000Z","type":"sign_in_options_shown","options":\#(options)}"#
            }
            let lines = [
                line(1, #"["google","google"]"#), line(2, "[]"), line(3, #"["apple",["google"]]"#),
                line(4, "[" + Array(repeating: #""apple""#, count: 17).joined(separator: ",") + "]"), line(5, #"["orkut"]"#),
                line(6, #"["apple","google"]"#)
            ]
            let file = try directory.write("bad.jsonl", lines.joined(separator: "\n") + "\n")
            let result = try CLI.run(["import", file, "--store", directory.appending("store"), "--max-clock-skew", "none"])
            #expect(result.status == 65)
            #expect(
                result.stderr == """
                    onboard import: \(file): line 1: field "options": lists "google" twice; list each option at most once; nothing was imported (4 more bad lines below)
                      line 2: field "options": must list at least one of: \(allowed)
                      line 3: field "options": element 1 must be a string (one of: \(allowed)), got an array
                      line 4: field "options": lists 17 values; at most 16, each of: \(allowed) at most once
                      line 5: field "options": "orkut" is not one of: \(allowed)

                    """)
            #expect(!FileManager.default.fileExists(atPath: directory.appending("store")), "nothing is written when a line is bad")
        }
    }
}
