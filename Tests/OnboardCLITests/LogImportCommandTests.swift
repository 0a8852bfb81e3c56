import Foundation
import OnboardingModel
import Testing
import TestSupport

/// `onboard import --from sshd|keycloak`: real authentication logs into a store, then the lab on
/// them (docs/importers.md, docs/lab.md).
@Suite(.slow) struct LogImportCommandTests {
    /// A password spray from one address, one guess per user, 20 s apart; two honest users who
    /// mistype and then sign in from their own addresses; and the lines around them that are not
    /// authentication. Syslog times (no year), UTC.
    static func sprayLog(users: Int = 15) -> String {
        var lines: [String] = ["Nov 28 09:59:58 bastion-1 sshd[900]: Server listening on 0.0.0.0 port 22."]
        for index in 0..<users {
            let second = index * 20
            let time = String(format: "Nov 28 10:%02d:%02d", second / 60, second % 60)
            let pid = 1000 + index
            lines.append("\(time) bastion-1 sshd[\(pid)]: Invalid user svc\(index) from 203.0.113.9 port \(40000 + index)")
            lines.append("\(time) bastion-1 sshd[\(pid)]: pam_unix(sshd:auth): check pass; user unknown")
            lines.append("\(time) bastion-1 sshd[\(pid)]: Failed password for invalid user svc\(index) from 203.0.113.9 port \(40000 + index) ssh2")
            lines.append("\(time) bastion-1 sshd[\(pid)]: Connection closed by invalid user svc\(index) 203.0.113.9 port \(40000 + index) [preauth]")
        }
        for (user, address) in [("alice", "198.51.100.20"), ("bob", "198.51.100.21")] {
            lines.append("Nov 28 11:00:01 bastion-1 sshd[2001]: Failed password for \(user) from \(address) port 51000 ssh2")
            lines.append("Nov 28 11:00:09 bastion-1 sshd[2001]: Accepted password for \(user) from \(address) port 51000 ssh2")
            lines.append("Nov 28 11:00:09 bastion-1 sshd[2001]: pam_unix(sshd:session): session opened for user \(user)(uid=1000) by (uid=0)")
        }
        lines.append("Nov 28 11:00:10 bastion-1 CRON[3000]: pam_unix(cron:session): session opened for user root(uid=0) by (uid=0)")
        return lines.joined(separator: "\n") + "\n"
    }

    @Test func anSSHDSprayIsImportedOnceAndFail2banRefusesWhatThePerUserPresetsLetThrough() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let log = try directory.write("auth.log", Self.sprayLog())
            let store = directory.appending("lab.lmdb")
            let imported = try CLI.run(["import", "--from", "sshd", log, "--store", store, "--year", "2026", "--timezone", "UTC"])
            #expect(imported.status == 0, "\(imported.stderr)")
            // 15 × one guess (Invalid user and its Failed line are one attempt) + 2 × (failed + succeeded).
            #expect(imported.stdout.contains("imported 19 events (seq 1–19)"), "\(imported.stdout)")
            #expect(imported.stderr.contains("skipped 49 lines that are not authentication events"), "\(imported.stderr)")
            #expect(imported.stderr.contains("syslog times read in UTC, the first line in 2026"), "\(imported.stderr)")
            #expect(!imported.stderr.contains("inferred"))

            // The same log again appends nothing: every line's event has the id it had.
            let again = try CLI.run(["import", "--from", "sshd", log, "--store", store, "--year", "2026", "--timezone", "UTC"])
            #expect(again.status == 0 && again.stdout.contains("nothing new to import: all 19 events"), "\(again.stdout)\(again.stderr)")

            // The events are on the host's device, with the user and the address.
            let export = try CLI.run(["export", "--store", store])
            #expect(export.status == 0)
            let first = export.stdout.split(separator: "\n").first { $0.contains("\"sign_in_failed\"") } ?? ""
            #expect(
                first.contains("\"device\":\"bastion-1\"") && first.contains("\"user\":\"svc0\"")
                    && first.contains("\"client_address\":\"203.0.113.9\"") && first.contains("\"reason\":\"unknown_user\"")
                    && first.contains("\"at\":\"2026-11-28T10:00:00.000Z\""), "\(first)")

            // The lab: the spray is one address's attack; only the per-address preset sees it.
            let compare = try CLI.run(["lab", "compare", "--store", store, "--policies", "fail2ban,keycloak", "--json"])
            #expect(compare.status == 0, "\(compare.stderr)")
            let results = try Self.results(compare.stdout)
            let fail2ban = try #require(results["fail2ban"]), keycloak = try #require(results["keycloak"])
            #expect(keycloak.guesses == 15, "one guess per user: a per-user lock never fires")
            #expect(fail2ban.guesses == 5, "fail2ban bans the address after maxretry (5) failures")
            #expect(fail2ban.honestLockedOut == 0 && keycloak.honestLockedOut == 0, "the honest users mistyped once")
        }
    }

    @Test func aYearIsInferredFromTheFileAndTheZoneMovesLocalTimes() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let log = try directory.write("auth.log", "Nov 28 11:00:01 bastion-1 sshd[2001]: Failed password for alice from 198.51.100.20 port 51000 ssh2\n")
            // Written on 2026-12-01: the November line is of 2026.
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_796_083_200)], ofItemAtPath: log)
            let store = directory.appending("lab.lmdb")
            let imported = try CLI.run(["import", "--from", "sshd", log, "--store", store, "--timezone", "Europe/Berlin"])
            #expect(imported.status == 0, "\(imported.stderr)")
            #expect(
                imported.stderr.contains("syslog times read in Europe/Berlin, the first line in 2026 (inferred; give --year to choose)"), "\(imported.stderr)")
            let export = try CLI.run(["export", "--store", store])
            #expect(export.stdout.contains("\"at\":\"2026-11-28T10:00:01.000Z\""), "11:00 in Berlin is 10:00 UTC in November: \(export.stdout)")
        }
    }

    @Test func keycloaksArrayNewestFirstIsImportedOldestFirst() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            // 2026-11-28T10:00:00Z and 10:00:05Z, newest first as the admin API answers.
            let array = """
                [
                  {"time": 1795860005000, "type": "LOGIN", "realmId": "acme", "clientId": "account", "userId": "5e7c",
                   "ipAddress": "198.51.100.20", "details": {"username": "alice", "auth_method": "openid-connect"}},
                  {"time": 1795860000000, "type": "LOGIN_ERROR", "realmId": "acme", "clientId": "account", "userId": "5e7c",
                   "ipAddress": "198.51.100.20", "error": "invalid_user_credentials", "details": {"username": "alice"}},
                  {"time": 1795860001000, "type": "CODE_TO_TOKEN", "realmId": "acme", "clientId": "account", "userId": "5e7c"}
                ]
                """
            let file = try directory.write("events.json", array)
            let store = directory.appending("lab.lmdb")
            let imported = try CLI.run(["import", "--from", "keycloak", file, "--store", store])
            #expect(imported.status == 0 && imported.stdout.contains("imported 2 events"), "\(imported.stdout)\(imported.stderr)")
            #expect(imported.stderr.contains("skipped 1 line that is not an authentication event: 1 not authentication"), "\(imported.stderr)")
            // The events, then the import's summary.
            let lines = try CLI.run(["export", "--store", store]).stdout.split(separator: "\n")
            #expect(lines.count == 3)
            #expect(lines.first?.contains("\"sign_in_failed\"") == true && lines.first?.contains("\"device\":\"acme\"") == true, "oldest first: \(lines)")
            #expect(lines.dropLast().last?.contains("\"sign_in_succeeded\"") == true)
            #expect(
                lines.last?.contains(#""type":"log_imported","format":"keycloak","events":2,"appended":2,"skipped":1,"skipped_kinds":"1 not authentication""#)
                    == true)
            // The same events as JSON Lines, in another order, are the same events.
            let jsonl = try directory.write(
                "events.jsonl",
                array.split(separator: "\n").dropFirst().dropLast()
                    .joined(separator: " ").replacingOccurrences(of: "}},", with: "}}\n").replacingOccurrences(of: "},", with: "}\n") + "\n")
            let again = try CLI.run(["import", "--from", "keycloak", jsonl, "--store", store])
            #expect(again.status == 0 && again.stdout.contains("nothing new to import"), "\(again.stdout)\(again.stderr)")
        }
    }

    @Test func aCutArrayOrAnUnplaceableEventAppendsNothing() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let store = directory.appending("lab.lmdb")
            let cut = try directory.write(
                "cut.json", #"[{"time": 1795860000000, "type": "LOGIN", "realmId": "acme", "details": {"username": "alice"}}, {"time": 17"#)
            let result = try CLI.run(["import", "--from", "keycloak", cut, "--store", store])
            #expect(result.status == 65, "\(result.stderr)")
            #expect(result.stderr.contains("cut.json") && result.stderr.contains("nothing was imported"), "\(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: store), "no store was created")
            // An event without a realm has no device unless --device names one.
            let noRealm = try directory.write("no-realm.jsonl", #"{"time": 1795860000000, "type": "LOGIN", "details": {"username": "alice"}}"# + "\n")
            let refused = try CLI.run(["import", "--from", "keycloak", noRealm, "--store", store])
            #expect(refused.status == 65 && refused.stderr.contains("give --device"), "\(refused.stderr)")
            let placed = try CLI.run(["import", "--from", "keycloak", noRealm, "--store", store, "--device", "sso-1"])
            #expect(placed.status == 0 && placed.stdout.contains("imported 1 events"), "\(placed.stdout)\(placed.stderr)")
        }
    }

    /// An Okta System Log through the command line: the provider's own lock imported as
    /// `account_locked`, the summary on stderr; a file that is not the format exits 65 with one line.
    @Test func anOktaLogIsImportedWithItsLockAndAFileOfAnotherFormatIsRefusedInOneLine() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            func event(_ time: String, _ type: String, _ result: String, _ reason: String = "") -> String {
                #"{"published":"2026-11-28T10:00:\#(time)Z","eventType":"\#(type)","actor":{"alternateId":"tom@acme.example"},"client":{"ipAddress":"203.0.113.9"},"outcome":{"result":"\#(result)","reason":"\#(reason)"}}"#
            }
            let log = try directory.write(
                "okta.json",
                "["
                    + [
                        event("30", "user.session.start", "FAILURE", "LOCKED_OUT"), event("20", "user.account.lock", "SUCCESS"),
                        event("10", "user.session.start", "FAILURE", "INVALID_CREDENTIALS"), event("05", "policy.evaluate_sign_on", "ALLOW")
                    ].joined(separator: ",") + "]")
            let store = directory.appending("lab.lmdb")
            let imported = try CLI.run(["import", "--from", "okta", log, "--store", store, "--device", "okta-acme"])
            #expect(imported.status == 0, "\(imported.stderr)")
            #expect(imported.stdout.contains("imported 3 events (seq 1–3)"), "\(imported.stdout)")
            #expect(imported.stderr.contains("skipped 1 line that is not an authentication event: 1 not authentication"), "\(imported.stderr)")
            let exported = try CLI.run(["export", "--store", store])
            #expect(exported.stdout.contains(#""type":"account_locked","source":"okta","client_address":"203.0.113.9""#), "\(exported.stdout)")

            let syslog = try directory.write("auth.log", Self.sprayLog(users: 1))
            let refused = try CLI.run(["import", "--from", "entra", syslog, "--store", directory.appending("other.lmdb"), "--device", "x"])
            #expect(refused.status == 65)
            #expect(
                refused.stderr
                    == "onboard import: \(syslog): not Entra ID sign-in JSON: it starts with 'N', expected a JSON array ('['), an object with \"value\": [...], one JSON object per line ('{'); nothing was imported\n",
                "\(refused.stderr)")
        }
    }

    @Test(
        arguments: [
            (["import", "--from", "syslog", "x.log"], "--from must be jsonl, sshd, keycloak, okta, entra, cloudtrail or windows"),
            (["import", "--from", "keycloak", "--year", "2026", "x.json"], "--year applies to --from sshd only"),
            (["import", "--timezone", "UTC", "x.jsonl"], "--timezone applies to --from sshd and keycloak only"),
            (["import", "--from", "sshd", "--year", "-1", "x.log"], "--year must be a year from 1970 to 9999"),
            (["import", "--from", "sshd", "--year", "18446744073709551615", "x.log"], "--year must be a year"),
            (["import", "--from", "sshd", "--timezone", "Mars/Olympus", "x.log"], "is not a time zone"),
            (["import", "--from", "sshd", "--timezone", "UTC\u{1b}[2J", "x.log"], "is not a time zone")
        ] as [([String], String)])
    func usageErrorsExit64(arguments: [String], message: String) async throws {
        try await onOwnThread {
            let result = try CLI.run(arguments)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
            #expect(!result.stderr.contains("\u{1b}"), "control characters are escaped")
        }
    }

    @Test func aLogWithNoAuthenticationLinesSaysToCheckFrom() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let log = try directory.write("cron.log", "Nov 28 11:00:10 bastion-1 CRON[3000]: (root) CMD (run-parts /etc/cron.hourly)\n")
            let store = directory.appending("lab.lmdb")
            let result = try CLI.run(["import", "--from", "sshd", log, "--store", store, "--year", "2026"])
            #expect(result.status == 0 && result.stdout.contains("has no sshd authentication lines; check --from"), "\(result.stdout)")
            #expect(result.stderr.contains("1 not sshd"), "\(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: store))
        }
    }

    @Test func anSSHDLogOnStdinIsDatedAndImportedFromTheSpooledCopy() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let store = directory.appending("lab.lmdb")
            // journalctl -o short-iso: the offset is on every line, so neither the year nor the
            // zone is asked; the year pass still reads stdin first, then the passes read its copy.
            let text =
                Self.sprayLog(users: 3).split(separator: "\n").map { line -> String in
                    line.replacingOccurrences(of: "Nov 28 ", with: "2026-11-28T").replacingOccurrences(of: " bastion-1", with: "+0000 bastion-1")
                }.joined(separator: "\n") + "\n"
            let imported = try CLI.run(["import", "--from", "sshd", "-", "--store", store], input: Data(text.utf8))
            #expect(imported.status == 0 && imported.stdout.contains("imported 7 events"), "\(imported.stdout)\(imported.stderr)")
            // No line had a syslog time: no year was used, and the summary says none.
            #expect(!imported.stderr.contains("syslog times read in"), "\(imported.stderr)")
            let again = try CLI.run(["import", "--from", "sshd", "-", "--store", store], input: Data(text.utf8))
            #expect(again.status == 0 && again.stdout.contains("nothing new to import"), "\(again.stdout)\(again.stderr)")
        }
    }

    /// What the import of `sprayLog(users: 6)` leaves out, as the summary names it.
    static let kinds6 = "8 pam, 6 pre-authentication (aggressive mode reads it), 6 same attempt, 1 not sshd, 1 other sshd"

    @Test func theSummaryNamesEachKindsFirstLinesAndTheLabSaysWhatTheImportLeftOut() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let log = try directory.write("auth.log", Self.sprayLog(users: 6))
            let store = directory.appending("lab.lmdb")
            let imported = try CLI.run(["import", "--from", "sshd", log, "--store", store, "--year", "2026", "--timezone", "UTC", "--device", "lab-1"])
            #expect(imported.status == 0, "\(imported.stderr)")
            // Line 1 listens; each sprayed user's 4 lines (2–25) are the guess (`Invalid user`), PAM's
            // line, the guess's Failed line and the preauth disconnect; each honest user's 3 lines
            // (26–31) end with PAM's session line; cron on 32.
            #expect(
                imported.stderr.contains(
                    """
                    onboard import: \(log): skipped 22 lines that are not authentication events:
                      8 pam (lines 3, 7, 11, 15, 19, …)
                      6 pre-authentication (aggressive mode reads it) (lines 5, 9, 13, 17, 21, …)
                      6 same attempt (lines 4, 8, 12, 16, 20, …)
                      1 not sshd (line 32)
                      1 other sshd (line 1)
                    """), "\(imported.stderr)")
            // 6 guesses + 2 × (failed + succeeded); the summary after them.
            #expect(imported.stdout == "imported 10 events (seq 1–10); the import's summary is seq 11 (log_imported)\n", "\(imported.stdout)")

            // The lab's text and JSON say what was left out.
            let compare = try CLI.run(["lab", "compare", "--store", store, "--policies", "fail2ban"])
            #expect(compare.status == 0, "\(compare.stderr)")
            let today = String(Timestamp(Date()).iso8601.prefix(10))
            #expect(
                compare.stdout.contains(
                    "import: the sshd import of \(today) read 10 events of 2026-11-28 and skipped 22 lines: \(Self.kinds6)\n"
                ), "\(compare.stdout)")
            let json = try CLI.run(["lab", "compare", "--store", store, "--policies", "fail2ban", "--json"])
            let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
            let imports = try #require((object?["log"] as? [String: Any])?["imports"] as? [[String: Any]])
            #expect(imports.count == 1)
            #expect(imports.first?["skipped_kinds"] as? String == Self.kinds6)
            #expect(imports.first?["skipped"] as? Int == 22 && imports.first?["device"] as? String == "lab-1")
            #expect(imports.first?["events"] as? Int == 10 && imports.first?["appended"] as? Int == 10 && imports.first?["format"] as? String == "sshd")
            #expect(imports.first?["first_at"] as? String == "2026-11-28T10:00:00.000Z" && imports.first?["last_at"] as? String == "2026-11-28T11:00:09.000Z")

            // The HTML report lists it, escaped.
            let report = directory.appending("report.html")
            #expect(try CLI.run(["lab", "compare", "--store", store, "--policies", "fail2ban", "--report", report]).status == 0)
            let html = try String(contentsOfFile: report, encoding: .utf8)
            #expect(html.contains("<section id=\"imports\">") && html.contains("skipped 22 lines: \(Self.kinds6)</li>"))

            // A rerun appends nothing and records no second summary.
            let again = try CLI.run(["import", "--from", "sshd", log, "--store", store, "--year", "2026", "--timezone", "UTC"])
            #expect(again.status == 0 && again.stdout.hasPrefix("nothing new to import"), "\(again.stdout)")
            let exported = try CLI.run(["export", "--store", store]).stdout
            #expect(exported.components(separatedBy: "\"type\":\"log_imported\"").count == 2, "one summary: \(exported)")
        }
    }

    @Test func importJSONIsOneObjectWithEveryMember() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let log = try directory.write("auth.log", Self.sprayLog(users: 2))
            let store = directory.appending("lab.lmdb")
            let result = try CLI.run(["import", "--from", "sshd", log, "--store", store, "--year", "2026", "--timezone", "UTC", "--json"])
            #expect(result.status == 0 && result.stderr.isEmpty, "\(result.stderr)")
            #expect(result.stdout.hasSuffix("}\n") && result.stdout.split(separator: "\n").count == 1, "one line: \(result.stdout)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
            #expect(
                Set(object.keys) == [
                    "format", "input", "events", "appended", "already_stored", "repeats", "repeat_lines", "commits", "first_seq",
                    "last_seq", "first_at", "last_at", "skipped", "skipped_kinds", "start_year", "summary_seq"
                ])
            #expect(object["format"] as? String == "sshd" && object["input"] as? String == log)
            #expect(object["events"] as? Int == 6 && object["appended"] as? Int == 6 && object["already_stored"] as? Int == 0)
            #expect(object["repeats"] as? Int == 0 && (object["repeat_lines"] as? [Any])?.isEmpty == true && object["commits"] as? Int == 1)
            #expect(object["first_seq"] as? Int == 1 && object["last_seq"] as? Int == 6 && object["summary_seq"] as? Int == 7)
            #expect(object["first_at"] as? String == "2026-11-28T10:00:00.000Z" && object["last_at"] as? String == "2026-11-28T11:00:09.000Z")
            #expect(object["skipped"] as? Int == 10 && object["start_year"] as? Int == 2026)
            // Lines: 1 listens, 2–9 two sprayed users (PAM 3 and 7, the guesses' Failed lines 4 and
            // 8, preauth disconnects 5 and 9), 10–15 the honest users (PAM's session lines 12 and
            // 15), 16 cron.
            let kinds = try #require(object["skipped_kinds"] as? [[String: Any]])
            #expect(kinds.map { $0["kind"] as? String } == ["pam", "pre-authentication (aggressive mode reads it)", "same attempt", "not sshd", "other sshd"])
            #expect(kinds.map { $0["count"] as? Int } == [4, 2, 2, 1, 1])
            #expect(kinds.map { $0["first_lines"] as? [Int] } == [[3, 7, 12, 15], [5, 9], [4, 8], [16], [1]])

            // Again: nothing appended, the members that do not apply are null.
            let again = try CLI.run(["import", "--from", "sshd", log, "--store", store, "--year", "2026", "--timezone", "UTC", "--json"])
            let second = try #require(try JSONSerialization.jsonObject(with: Data(again.stdout.utf8)) as? [String: Any])
            #expect(second["appended"] as? Int == 0 && second["already_stored"] as? Int == 6 && second["commits"] as? Int == 0)
            #expect(second["first_seq"] is NSNull && second["last_seq"] is NSNull && second["summary_seq"] is NSNull)

            // A refused import prints no JSON: the error on stderr, exit 65.
            let bad = try directory.write("no-host.jsonl", #"{"time": 1795860000000, "type": "LOGIN", "details": {"username": "a"}}"# + "\n")
            let refused = try CLI.run(["import", "--from", "keycloak", bad, "--store", store, "--json"])
            #expect(refused.status == 65 && refused.stdout.isEmpty && refused.stderr.contains("give --device"), "\(refused.stderr)")
        }
    }

    struct Figures {
        var guesses: Int
        var honestLockedOut: Int
    }

    /// `lab compare --json`'s results by policy, read with Foundation's parser (not ours).
    static func results(_ json: String) throws -> [String: Figures] {
        let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        let results = try #require(object?["results"] as? [[String: Any]])
        var figures: [String: Figures] = [:]
        for result in results {
            guard let policy = result["policy"] as? String else { continue }
            figures[policy] = Figures(
                guesses: (result["guesses_let_through"] as? Int) ?? -1,
                honestLockedOut: (result["honest_users_locked_out"] as? Int) ?? -1)
        }
        return figures
    }
}
