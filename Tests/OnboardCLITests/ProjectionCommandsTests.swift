import Foundation
import OnboardingModel
import Testing
import TestSupport

/// `onboard lockout`, `session`, `users` and `history` on a real store.
@Suite(.slow) struct ProjectionCommandsTests {
    static let start = Timestamp(millisecondsSince1970: 1_796_054_400_000) // 2026-11-30T16:00:00.000Z

    static func event(
        _ index: Int, _ payload: Payload, user: String? = "alice", device: String = "kiosk-7",
        seconds: Int64
    ) -> Event {
        Event(
            id: Corpus.uuid(9000 + index), device: device, at: start.adding(milliseconds: seconds * 1000),
            user: user, flow: Corpus.uuid(77), payload: payload)
    }

    /// Five wrong passwords in a minute on kiosk-7, one on phone-1, a network error (not counted).
    static func lockoutLog() -> [Event] {
        var events = (0..<5).map { event($0, .signInFailed(method: .password, reason: .invalidPassword), seconds: Int64($0) * 10) }
        events.append(event(5, .signInFailed(method: .password, reason: .networkUnavailable), seconds: 45))
        events.append(event(6, .signInFailed(method: .passcode, reason: .invalidPasscode), device: "phone-1", seconds: 50))
        events.append(event(7, .secondFactorFailed(method: .totp), user: "bob", seconds: 55))
        return events
    }

    func importLog(_ events: [Event], into directory: TemporaryDirectory) throws -> String {
        let store = directory.appending("store")
        let file = try directory.write("log.jsonl", Corpus.jsonl(events))
        let result = try CLI.run(["import", file, "--store", store, "--device", "kiosk-7"])
        #expect(result.status == 0, "\(result.stderr)")
        return store
    }

    @Test func lockoutJSONFollowsTheMediaWikiPolicyAtEveryTime() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let store = try importLog(Self.lockoutLog(), into: directory)
            func lockout(at seconds: Int64, _ extra: [String] = []) throws -> String {
                let result = try CLI.run(["lockout", "--store", store, "--json", "--at", Self.start.adding(milliseconds: seconds * 1000).iso8601] + extra)
                #expect(result.status == 0, "\(result.stderr)")
                return result.stdout
            }
            // The fifth failure (at +40 s) locks alice on kiosk-7 until the window from the first (+0 s) ends: +300 s.
            #expect(
                try lockout(at: 60) == """
                    [{"user":"alice","device":"kiosk-7","factor":"password","failures":5,"locked_until":"2026-11-30T16:05:00.000Z","permanent":false},\
                    {"user":"alice","device":"phone-1","factor":"password","failures":1,"locked_until":null,"permanent":false},\
                    {"user":"bob","device":"kiosk-7","factor":"second_factor","failures":1,"locked_until":null,"permanent":false}]

                    """)
            #expect(try lockout(at: 299).contains(#""locked_until":"2026-11-30T16:05:00.000Z""#))
            #expect(!(try lockout(at: 300)).contains("2026-11-30T16:05:00.000Z"), "at exactly the window end the key is free")
            // The same log under NIST: five failures are far from 100, nothing is locked.
            #expect(!(try lockout(at: 60, ["--policy", "nist"])).contains(#""locked_until":"2"#))
            // OWASP: every failure locks, doubling; the fourth consecutive one is permanent.
            #expect(
                try lockout(at: 60, ["--policy", "owasp"])
                    .hasPrefix(#"[{"user":"alice","device":"kiosk-7","factor":"password","failures":"#))

            let table = try CLI.run(["lockout", "--store", store, "--at", Self.start.adding(milliseconds: 60_000).iso8601])
            #expect(table.stdout.contains("policy mediawiki, at 2026-11-30T16:01:00.000Z"))
            #expect(table.stdout.contains("until 2026-11-30T16:05:00.000Z"))
        }
    }

    @Test func customPolicyFilesAndTheirErrors() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let store = try importLog(Self.lockoutLog(), into: directory)
            let printed = try CLI.run(["lockout", "--policy", "mediawiki", "--print-policy"])
            #expect(printed.status == 0)
            // Three failures per minute instead of five per five minutes.
            let custom = printed.stdout.replacingOccurrences(of: #"{"limit":5,"window_seconds":300}"#, with: #"{"limit":3,"window_seconds":60}"#)
                .replacingOccurrences(of: #""name":"mediawiki""#, with: #""name":"strict""#)
            let file = try directory.write("strict.json", custom)
            let result = try CLI.run(["lockout", "--store", store, "--policy", file, "--json", "--at", Self.start.adding(milliseconds: 25_000).iso8601])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains(#""failures":3,"locked_until":"2026-11-30T16:01:00.000Z""#))

            let bad = try directory.write("bad.json", #"{"name":"x","password":{"tiers":[{"limit":0,"window_seconds":60}]}}"#)
            let refused = try CLI.run(["lockout", "--store", store, "--policy", bad])
            #expect(refused.status == 65)
            #expect(
                refused.stderr
                    == "onboard lockout: policy file \(bad): policy.password.tiers[0].limit: must be a whole number from 1 to 1000000; see docs/lockout.md for the schema\n"
            )
            let typo = try directory.write("typo.json", #"{"name":"x","passwrd":{}}"#)
            #expect(try CLI.run(["lockout", "--store", store, "--policy", typo]).stderr.contains(#"unknown key "passwrd""#))
            let unknown = try CLI.run(["lockout", "--store", store, "--policy", "lenient"])
            #expect(unknown.status == 64)
            #expect(
                unknown.stderr
                    == "onboard lockout: --policy lenient is neither a preset (mediawiki, keycloak, owasp, nist, local_passcode, fail2ban) nor a file\n")
            let badTime = try CLI.run(["lockout", "--store", store, "--at", "noon"])
            #expect(badTime.status == 64)
            #expect(badTime.stderr.hasPrefix("onboard lockout: --at: \"noon\" is not an ISO-8601 UTC time"))
        }
    }

    @Test func sessionShowsThePartiallyFilledSignInAndItsSubmitButton() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            var events = [
                Self.event(
                    40, .userAdded(displayName: "José Álvarez", subtitle: nil, imageRef: nil, passcodePolicy: .numeric, passcodeMinLength: 6),
                    user: "jose", seconds: 0),
                Self.event(41, .biometricEnabled(kind: .face), user: "jose", seconds: 1),
                Self.event(42, .userSelected, user: "jose", seconds: 2),
                Self.event(43, .fieldEdited(field: .passcode, filled: true, valid: false), user: "jose", seconds: 3)
            ]
            let store = try importLog(events, into: directory)
            let disabled = try CLI.run(["session", "--store", store])
            #expect(disabled.status == 0, "\(disabled.stderr)")
            #expect(
                disabled.stdout == """
                    device     kiosk-7
                    signed in  nobody
                    screen     sign_in (partially_filled) for jose
                    fields     passcode filled (invalid)
                    biometric  face (badge on the sign-in button)
                    submit     disabled

                    """)
            events.append(Self.event(44, .fieldEdited(field: .passcode, filled: true, valid: true), user: "jose", seconds: 4))
            let file = try directory.write("more.jsonl", Corpus.jsonl(events))
            #expect(try CLI.run(["import", file, "--store", store]).status == 0)
            let enabled = try JSONValue.parse(try CLI.run(["session", "--store", store, "--json"]).stdout)
            #expect(enabled["flow"]?["state"] == .string("partially_filled"))
            #expect(enabled["flow"]?["submit_enabled"] == .bool(true))
            #expect(enabled["flow"]?["biometric"] == .string("face"))
            #expect(enabled["flow"]?["identifier_kind"] == .null)
            #expect(
                enabled["flow"]?["fields"]
                    == .array([
                        .object([
                            .init("field", .string("passcode")), .init("filled", .bool(true)),
                            .init("valid", .bool(true))
                        ])
                    ]))
        }
    }

    @Test func sessionAtATimeShowsTheLockUntilItEndsThenTheForm() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            // Alice types a password, then five failures from +0 s to +40 s: locked until +300 s.
            let store = try importLog(
                [Self.event(20, .fieldEdited(field: .password, filled: true, valid: nil), seconds: -5)] + Self.lockoutLog().prefix(5), into: directory)
            func session(at seconds: Int64, json: Bool = true) throws -> String {
                let at = Self.start.adding(milliseconds: seconds * 1000).iso8601
                let result = try CLI.run(["session", "--store", store, "--at", at] + (json ? ["--json"] : []))
                #expect(result.status == 0, "\(result.stderr)")
                return result.stdout
            }
            let locked = try JSONValue.parse(try session(at: 40))
            #expect(locked["flow"]?["screen"] == .string("locked_out"))
            #expect(locked["flow"]?["locked_until"] == .string("2026-11-30T16:05:00.000Z"))
            #expect(
                locked["flow"]?["system_message"]?["text"]
                    == .string("You have made too many recent login attempts. Please wait 5 minutes before trying again."))
            let sevenSeconds = try JSONValue.parse(try session(at: 293))
            #expect(
                sevenSeconds["flow"]?["system_message"]?["text"]
                    == .string("You have made too many recent login attempts. Please wait 7 seconds before trying again."))
            #expect(try session(at: 293, json: false).contains("locked until 2026-11-30T16:05:00.000Z (7 seconds left at 2026-11-30T16:04:53.000Z)"))
            // An hour after: the form is back, submit enabled, nothing pending.
            let later = try JSONValue.parse(try session(at: 3_600))
            #expect(later["flow"]?["screen"] == .string("sign_in"))
            #expect(later["flow"]?["state"] == .string("partially_filled"))
            #expect(later["flow"]?["locked_until"] == .null)
            #expect(later["flow"]?["system_message"] == .null)
            #expect(later["flow"]?["submit_enabled"] == .bool(true))
            // Without --at it is now: the lock of 2026-11-30 ended long ago.
            let now = try JSONValue.parse(try CLI.run(["session", "--store", store, "--json"]).stdout)
            #expect(now["flow"]?["screen"] == .string("sign_in"))
            // A bad time is a usage error naming the option.
            let bad = try CLI.run(["session", "--store", store, "--at", "yesterday"])
            #expect(bad.status == 64)
            #expect(bad.stderr.contains("--at"), "\(bad.stderr)")
        }
    }

    @Test func sessionUsersAndHistoryCommands() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            var events = [
                Self.event(
                    20, .userAdded(displayName: "José Álvarez", subtitle: "Physician", imageRef: nil, passcodePolicy: .numeric, passcodeMinLength: 6),
                    user: "jose", seconds: 0),
                Self.event(
                    21,
                    .userAdded(displayName: "Åsa Berg", subtitle: "Night nurse", imageRef: "img/asa.png", passcodePolicy: .alphanumeric, passcodeMinLength: 8),
                    user: "asa", seconds: 1),
                Self.event(22, .userSelected, user: "jose", seconds: 2),
                Self.event(23, .signInFailed(method: .passcode, reason: .invalidPasscode), user: "jose", seconds: 3),
                Self.event(24, .signInSucceeded(method: .passcode, secondFactor: false), user: "jose", seconds: 10),
                Self.event(25, .signedOut(reason: .user), user: "jose", seconds: 70)
            ]
            events.append(Self.event(26, .signInSucceeded(method: .biometric, secondFactor: false), user: "jose", device: "phone-1", seconds: 100))
            let store = try importLog(events, into: directory)

            let session = try CLI.run(["session", "--store", store, "--json"])
            #expect(session.status == 0, "\(session.stderr)")
            let sessionValue = try JSONValue.parse(session.stdout.trimmingCharacters(in: .newlines))
            #expect(sessionValue["device"] == .string("kiosk-7"))
            #expect(sessionValue["signed_in"] == .null, "jose signed out on kiosk-7")
            let phone = try JSONValue.parse(try CLI.run(["session", "--store", store, "--device", "phone-1", "--json"]).stdout)
            #expect(phone["signed_in"]?["user"] == .string("jose"))
            #expect(phone["signed_in"]?["method"] == .string("biometric"))

            let users = try JSONValue.parse(try CLI.run(["users", "--store", store, "--json", "--at", Self.start.adding(milliseconds: 200_000).iso8601]).stdout)
            guard case .array(let sections)? = users["sections"] else { Issue.record("no sections: \(users)"); return }
            #expect(sections.map { $0["title"] } == [.string("Selected"), .string("All")])
            #expect(users["selected"]?["id"] == .string("jose"))
            #expect(users["selected"]?["initials"] == .string("JÁ"))
            let found = try CLI.run(["users", "--store", store, "--search", "ÅSA"])
            #expect(found.stdout.contains("Åsa Berg"))
            #expect(!found.stdout.contains("José"))
            #expect(try CLI.run(["users", "--store", store, "--search", "jose"]).stdout.contains("José Álvarez"))
            #expect(try CLI.run(["users", "--store", store, "--search", "night"]).stdout.contains("Åsa Berg"))

            let history = try JSONValue.parse(try CLI.run(["history", "--store", store, "--user", "jose", "--format", "json"]).stdout)
            guard case .array(let attempts)? = history["attempts"], case .array(let sessions)? = history["sessions"] else {
                Issue.record("history: \(history)"); return
            }
            #expect(attempts.map { $0["outcome"] } == [.string("failed"), .string("succeeded"), .string("succeeded")])
            #expect(sessions.first?["duration_ms"] == .number("60000"))
            #expect(sessions.first?["end_reason"] == .string("user"))
            let onPhone = try JSONValue.parse(try CLI.run(["history", "--store", store, "--user", "jose", "--device", "phone-1", "--format", "json"]).stdout)
            if case .array(let phoneAttempts)? = onPhone["attempts"] { #expect(phoneAttempts.count == 1) } else { Issue.record("no attempts") }
            let csv = try CLI.run(["history", "--store", store, "--user", "jose", "--format", "csv"])
            #expect(csv.stdout.hasPrefix("kind,seq,at,device,factor,method,outcome,reason,start,end,duration_ms,second_factor,end_reason,user\nattempt,4,"))
            let table = try CLI.run(["history", "--store", store, "--user", "jose"])
            #expect(table.stdout.contains("attempts of jose: 3"))
            #expect(table.stdout.contains("1 minute"))

            let missingUser = try CLI.run(["history", "--store", store])
            #expect(missingUser.status == 64)
            #expect(missingUser.stderr.hasPrefix("onboard history: --user or --device is required"))
            #expect(try CLI.run(["history", "--store", store, "--user", "jose", "--format", "xml"]).status == 64)
            #expect(try CLI.run(["session", "--store", directory.appending("absent")]).status == 66)
        }
    }

    @Test func demoShowsScreensAndLockoutAfterEachStep() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let demo = try CLI.run(["demo", "--store", directory.appending("demo")])
            #expect(demo.status == 0, "\(demo.stderr)")
            for expected in [
                "screen   ", "lockout  allowed (1 counted failure)", "locked_out (error)",
                "You have made too many recent login attempts. Please wait 5 minutes before trying again.",
                "lockout  locked until", "event    sign_in_throttled", "Switch or Add User", "(AM) Alice Martin",
                "search \"jose\" finds: José Álvarez",
                // The clock alone ends the lock: the screen read again with no event.
                "no new event", "the lock has ended by itself",
                "locked_out (error) · \"You have made too many recent login attempts. Please wait 4 minutes before trying again.\"",
                "seconds before trying again.\" [error]\n   …    the five minutes are over: the lock has ended by itself, the form is back as it was left\n        time     ",
                "no new event\n        screen   sign_in (partially_filled) · submit enabled · Face ID badge · password filled",
                // The newer screens (docs/projections.md): the sign-in options and guideline 4.8,
                // Switch or Add User, Forgot Passcode, the CAPTCHA's alternatives, a removed user.
                "guideline 4.8: Sign in with Apple is not the first provider on iOS (google comes before it)",
                "options    apple, google, password, passcode, biometric (ios, shown ",
                "event    user_switch_opened\n        screen   switch_user (empty)",
                "event    user_switch_closed\n        screen   sign_in (empty) · submit disabled",
                "screen   forgot_passcode (empty) · submit disabled",
                "screen   forgot_passcode (partially_filled) · submit enabled · passcode filled",
                "\"Can't complete the CAPTCHA? You can also create an account on the website, or ask an administrator to create one for you.\" [info]",
                "event    user_removed  reason=admin\n        screen   sign_in (empty) · submit disabled · Face ID badge"
            ] {
                #expect(demo.stdout.contains(expected), "demo output lacks \(expected)")
            }
        }
    }

    @Test func demoShowsPartiallyFilledFormsAndWhenTheirSubmitButtonEnables() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let demo = try CLI.run(["demo", "--store", directory.appending("demo")])
            #expect(demo.status == 0, "\(demo.stderr)")
            let screens = demo.stdout.split(separator: "\n").compactMap { line -> String? in
                let text = line.trimmingCharacters(in: .whitespaces)
                return text.hasPrefix("screen   ") ? String(text.dropFirst("screen   ".count)) : nil
            }
            /// `expected` appears among the screen lines in this order (others may come between).
            func inOrder(_ expected: [String]) {
                var rest = screens[...]
                for line in expected {
                    guard let index = rest.firstIndex(of: line) else {
                        Issue.record("no screen line \"\(line)\" after the ones before it in\n\(screens.joined(separator: "\n"))")
                        return
                    }
                    rest = rest[(index + 1)...]
                }
            }
            // José on the shared device: selected with the passcode field empty, a passcode too short
            // for his policy, then one that fits; the app empties the field after a wrong one.
            inOrder([
                "sign_in (empty) · submit disabled",
                "sign_in (partially_filled) · submit disabled · passcode filled (invalid)",
                "sign_in (partially_filled) · submit enabled · passcode filled",
                "sign_in (loading) · submit disabled · passcode filled",
                "sign_in (error) · submit enabled · passcode filled · passcode: \"Invalid passcode\" [error]",
                "sign_in (error) · submit disabled · passcode empty · passcode: \"Invalid passcode\" [error]",
                "sign_in (partially_filled) · submit enabled · passcode filled",
                "signed_in (success)"
            ])
            // Alice turned Face ID on: her sign-in screen shows the badge on its button; José's does not.
            #expect(screens.contains("sign_in (empty) · submit disabled · Face ID badge"))
            #expect(screens.contains("sign_in (partially_filled) · submit enabled · Face ID badge · password filled"))
            // Alice's reset: no network first, then the mail goes out.
            inOrder([
                "forgot_password (empty) · submit disabled",
                "forgot_password (partially_filled) · submit enabled · email filled",
                "forgot_password (loading) · submit disabled · email filled",
                "forgot_password (error) · submit enabled · email filled · \"No internet connection. Check your connection and try again.\" [error]",
                "forgot_password (loading) · submit disabled · email filled"
            ])
            #expect(screens.contains { $0.hasPrefix("reset_sent (success) · \"Temporary password sent via email\" [success] · resend from ") })
            #expect(demo.stdout.contains("event    password_reset_failed  reason=network_unavailable"))
            #expect(demo.stdout.contains("event    field_edited  field=passcode filled=true valid=false"))
            // The newcomer's form shows loading once sent.
            inOrder([
                "create_account (partially_filled) · submit disabled · username filled",
                "create_account (partially_filled) · submit enabled · password filled, username filled",
                "create_account (loading) · submit disabled · password filled, password_confirmation filled, username filled",
                "create_account (success) · submit disabled · \"Your account has been created.\" [success]"
            ])
        }
    }
}
