import Foundation
import OnboardingModel
import Testing
import TestSupport

/// `onboard history` from the real binary: filters, paging, JSON and CSV shapes, and exit 64 with
/// one line for a bad filter.
@Suite(.slow) struct HistoryCommandTests {
    static let oNeil = "O\"Neil, Jr"

    /// Alice fails three passcodes and is throttled on kiosk-7, then signs in; O"Neil, Jr signs
    /// in with a password and out again on phone-1; alice signs in with a biometric on phone-1.
    static func log() -> [Event] {
        typealias Make = ProjectionCommandsTests
        return [
            Make.event(40, .signInFailed(method: .passcode, reason: .invalidPasscode), seconds: 1),
            Make.event(41, .signInFailed(method: .passcode, reason: .invalidPasscode), seconds: 2),
            Make.event(42, .signInFailed(method: .passcode, reason: .invalidPasscode), seconds: 3),
            Make.event(43, .signInThrottled(method: .passcode, retryAfter: Make.start.adding(milliseconds: 300_000)), seconds: 4),
            Make.event(44, .signInFailed(method: .password, reason: .invalidPassword), user: oNeil, device: "phone-1", seconds: 5),
            Make.event(45, .signInSucceeded(method: .password, secondFactor: false), user: oNeil, device: "phone-1", seconds: 6),
            Make.event(46, .signedOut(reason: .user), user: oNeil, device: "phone-1", seconds: 66),
            Make.event(47, .signInSucceeded(method: .passcode, secondFactor: false), seconds: 400),
            Make.event(48, .signInSucceeded(method: .biometric, secondFactor: false), device: "phone-1", seconds: 500)
        ]
    }

    func store(_ directory: TemporaryDirectory) throws -> String {
        try ProjectionCommandsTests().importLog(Self.log(), into: directory)
    }

    static func attempts(_ output: String) throws -> [JSONValue] {
        guard case .array(let attempts)? = try JSONValue.parse(output)["attempts"] else { throw TestFailure("no attempts in \(output)") }
        return attempts
    }

    @Test func jsonAndCSVShapesAndFilters() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let store = try store(directory)

            let json = try CLI.run(["history", "--store", store, "--user", "alice", "--json"])
            #expect(json.status == 0, "\(json.stderr)")
            #expect(json.stdout == (try CLI.run(["history", "--store", store, "--user", "alice", "--format", "json"])).stdout)
            let value = try JSONValue.parse(json.stdout)
            #expect(value["next_cursor"] == .null)
            let attempts = try Self.attempts(json.stdout)
            #expect(attempts.map { $0["outcome"] } == ["failed", "failed", "failed", "throttled", "succeeded", "succeeded"].map { .string($0) })
            guard case .object(let members)? = attempts.first else { Issue.record("attempt is not an object"); return }
            #expect(members.map(\.key) == ["seq", "at", "device", "factor", "method", "outcome", "reason", "user"])
            guard case .array(let sessions)? = value["sessions"], case .object(let session)? = sessions.first else { Issue.record("no session"); return }
            #expect(session.map(\.key) == ["seq", "device", "start", "end", "duration_ms", "method", "second_factor", "end_reason", "user"])

            let filtered = try CLI.run(["history", "--store", store, "--user", "alice", "--outcome", "failed,throttled", "--json"])
            #expect(try Self.attempts(filtered.stdout).map { $0["seq"] } == [1, 2, 3, 4].map { .number(String($0)) })
            let biometric = try CLI.run(["history", "--store", store, "--user", "alice", "--method", "biometric", "--outcome", "success", "--json"])
            #expect(try Self.attempts(biometric.stdout).map { $0["device"] } == [.string("phone-1")])
            let ranged = try CLI.run([
                "history", "--store", store, "--user", "alice", "--since", "2026-11-30T16:00:02Z",
                "--until", "2026-11-30T16:00:04Z", "--json"
            ])
            #expect(try Self.attempts(ranged.stdout).map { $0["seq"] } == [.number("2"), .number("3")])

            // A device's history without a user: every user on it, quoted as CSV needs.
            let csv = try CLI.run(["history", "--store", store, "--device", "phone-1", "--format", "csv"])
            #expect(csv.status == 0, "\(csv.stderr)")
            #expect(
                csv.stdout == """
                    kind,seq,at,device,factor,method,outcome,reason,start,end,duration_ms,second_factor,end_reason,user
                    attempt,5,2026-11-30T16:00:05.000Z,phone-1,password,password,failed,invalid_password,,,,,,"O""Neil, Jr"
                    attempt,6,2026-11-30T16:00:06.000Z,phone-1,password,password,succeeded,,,,,,,"O""Neil, Jr"
                    attempt,9,2026-11-30T16:08:20.000Z,phone-1,password,biometric,succeeded,,,,,,,alice
                    session,6,,phone-1,,password,,,2026-11-30T16:00:06.000Z,2026-11-30T16:01:06.000Z,60000,false,user,"O""Neil, Jr"
                    session,9,,phone-1,,biometric,,,2026-11-30T16:08:20.000Z,,,false,,alice

                    """)
            let table = try CLI.run(["history", "--store", store, "--device", "phone-1"])
            #expect(table.stdout.hasPrefix("attempts: 3\n"))
            #expect(table.stdout.contains("USER"))
        }
    }

    @Test func pagesConcatenateToTheWholeHistory() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let store = try store(directory)
            let whole = try Self.attempts(try CLI.run(["history", "--store", store, "--user", "alice", "--json"]).stdout)
            var collected: [JSONValue] = []
            var cursor: String?
            var pages = 0
            repeat {
                let result = try CLI.run(["history", "--store", store, "--user", "alice", "--limit", "4", "--json"] + (cursor.map { ["--cursor", $0] } ?? []))
                #expect(result.status == 0, "\(result.stderr)")
                collected += try Self.attempts(result.stdout)
                if case .string(let next)? = try JSONValue.parse(result.stdout)["next_cursor"] { cursor = next } else { cursor = nil }
                pages += 1
            } while cursor != nil && pages < 10
            #expect(pages == 2)
            #expect(collected == whole)

            // The table and CSV name the next page too: the table on its last line, CSV on stderr.
            let table = try CLI.run(["history", "--store", store, "--user", "alice", "--limit", "4"])
            let last = try #require(table.stdout.split(separator: "\n").last)
            #expect(last.hasPrefix("next page: --cursor "))
            let csv = try CLI.run(["history", "--store", store, "--user", "alice", "--limit", "4", "--format", "csv"])
            #expect(csv.stderr == String(last) + "\n")
            #expect(csv.stdout.split(separator: "\n").count == 1 + 4 + 0)
        }
    }

    @Test func badFiltersExit64WithOneLine() async throws {
        try await onOwnThread {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let store = try store(directory)
            for (arguments, message) in [
                (["--outcome", "won"], "onboard history: --outcome: unknown outcome \"won\"; expected one of succeeded, failed, throttled"),
                (
                    ["--method", "retina"],
                    "onboard history: --method: unknown method \"retina\"; expected one of password, passcode, biometric, apple, google, other, totp, sms, email, recovery_code"
                ),
                (["--factor", "pin"], "onboard history: --factor: unknown factor \"pin\"; expected one of password, second_factor"),
                (
                    ["--since", "2026-12-01T00:00:00Z", "--until", "2026-11-01T00:00:00Z"],
                    "onboard history: --until: until (2026-11-01T00:00:00.000Z) is before since (2026-12-01T00:00:00.000Z)"
                ),
                (
                    ["--cursor", "nonsense"],
                    "onboard history: --cursor: cursor \"nonsense\" is not a cursor this server or CLI issued; pass next_cursor from the previous page unchanged"
                ),
                (["--limit", "0"], "onboard history: --limit: limit \"0\" must be a whole number from 1 to 100000"),
                (["--json", "--format", "csv"], "onboard history: --json and --format csv contradict each other; give one")
            ] {
                let result = try CLI.run(["history", "--store", store, "--user", "alice"] + arguments)
                #expect(result.status == 64, "\(arguments)")
                #expect(result.stderr == message + "\n")
                #expect(result.stdout.isEmpty)
            }
        }
    }
}
