import Foundation
import OnboardingModel
import OnboardingProjections
@testable import OnboardingServer
import OnboardingStore
import Testing
import TestSupport

/// `GET /v1/users/{user}/export` and `GET /v1/devices/{device}/export`: the whole filtered
/// history, oldest first, from a file (never one buffer), CSV read back by Python's own csv
/// module, JSONL line for line as the history answer has them.
@Suite struct ExportEndpointTests {
    typealias Clock = ServerHardeningTests.ManualServerClock

    /// Users whose ids a spreadsheet would read as formulas, on two devices, and a clear whose
    /// reason is one too (with a comma and quotes).
    static let users = ["=cmd|' /C calc'!A0", "+1", "-2", "@SUM(A1)", "alice", "josé, \"the\" one"]

    static func scenario(_ fixture: ConsoleFixture, clock: Clock) async throws {
        try await fixture.record(users.enumerated().map { ConsoleFixture.event("a", $0.offset * 2, user: $0.element) })
        try await fixture.record(
            users.enumerated().map {
                ConsoleFixture.event("b", $0.offset * 2 + 1, user: $0.element, .signInSucceeded(method: .password, secondFactor: false))
            })
        for device in ["a", "b"] {
            try await fixture.record((0..<750).map { ConsoleFixture.event(device, 100 + $0 / 5, user: "alice") })
        }
        clock.set(ConsoleFixture.start.adding(milliseconds: 150_500))
        #expect(ServerActionTests.clear(fixture, "alice", reason: "=HYPERLINK(\"http://x\",\"a, b\")").status == 200)
        clock.set(ConsoleFixture.start.adding(milliseconds: 900_000))
    }

    /// The CSV parsed by Python's csv module, as JSON rows (a parser we did not write).
    static func pythonRows(_ csv: [UInt8], in directory: TemporaryDirectory) throws -> [[String]] {
        let file = directory.appending("export-\(UUID().uuidString.prefix(6)).csv")
        try Data(csv).write(to: URL(fileURLWithPath: file))
        let output = directory.appending("rows-\(UUID().uuidString.prefix(6)).json")
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [
            "-c",
            "import csv, json, sys\nwith open(sys.argv[1], newline='', encoding='utf-8') as f:\n    rows = list(csv.reader(f, strict=True))\njson.dump(rows, open(sys.argv[2], 'w'))",
            file, output
        ]
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw TestFailure("python3's csv module refused the export") }
        let rows = try JSONValue.parse(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: output))))
        return ConsoleFixture.array(rows).map { ConsoleFixture.array($0).compactMap(\.stringValue) }
    }

    static func export(_ fixture: ConsoleFixture, _ path: String) -> SyncServer.Answer {
        let answer = HistoryConsoleTests.PendingAnswer()
        let file = FileBox()
        fixture.server.handle(SyncRequest(method: "GET", path: path, headers: ["authorization": "Bearer \(fixture.auditor)"])) { reply in
            file.set(reply.file)
            answer.set(reply.response)
        }
        return SyncServer.Answer(response: answer.response!, file: file.value)
    }

    final class FileBox: @unchecked Sendable {
        private(set) var value: HTTPBodyFile?
        func set(_ file: HTTPBodyFile?) { value = file }
    }

    @Test(arguments: TestDatabase.storages) func theCSVIsTheWholeHistoryGuardedAndReadBackByPython(storage: String) async throws {
        let clock = Clock(ConsoleFixture.start)
        let fixture = try ConsoleFixture(storage: storage, clock: { clock.now })
        defer { fixture.close() }
        try await Self.scenario(fixture, clock: clock)
        let answer = Self.export(fixture, "/v1/users/alice/export?format=csv")
        #expect(answer.response.status == 200)
        let file = try #require(answer.file, "the export is sent from a file")
        #expect(answer.response.body.isEmpty, "never the whole result in one buffer")
        #expect(answer.response.headers["content-type"] == "text/csv; charset=utf-8")
        #expect(answer.response.headers["content-disposition"] == "attachment; filename=\"alice-history.csv\"; filename*=UTF-8''alice-history.csv")
        #expect(answer.response.headers["content-security-policy"] == SyncServer.contentSecurityPolicy)
        let csv = try #require(file.readAll())
        let rows = try Self.pythonRows(csv, in: fixture.directory)
        #expect(rows.first == ["at", "device", "seq", "user", "factor", "method", "outcome", "reason", "kind"])
        let history = try HistoryConsoleTests.allPages(fixture, SyncPaths.history(user: "alice"), limit: 400).attempts
        let attempts = rows.dropFirst().filter { $0.last == "attempt" }
        #expect(attempts.count == history.count && history.count == 1_502)
        #expect(
            attempts.map { [$0[0], $0[1], $0[2], $0[6]] }
                == history.map {
                    [
                        $0["at"]?.stringValue ?? "", $0["device"]?.stringValue ?? "", String(ConsoleFixture.integer($0["seq"]) ?? 0),
                        $0["outcome"]?.stringValue ?? ""
                    ]
                })
        let actions = rows.filter { $0.last == "action:lockout_cleared" }
        #expect(actions.count == 1)
        #expect(actions.first?[7] == "'=HYPERLINK(\"http://x\",\"a, b\")", "the guard's quote, then the reason as written")
        #expect(actions.first?[0] == "2026-11-30T16:02:30.500Z")
        let actionIndex = try #require(rows.firstIndex { $0.last == "action:lockout_cleared" })
        #expect(rows[actionIndex - 1][0] < "2026-11-30T16:02:30.500Z" && rows[actionIndex + 1][0] > "2026-11-30T16:02:30.500Z", "in time order")

        // Every user whose id starts a formula: one quote in front, the rest as it is.
        let device = Self.export(fixture, "/v1/devices/a/export?format=csv&until=2026-11-30T16:01:00Z")
        let deviceRows = try Self.pythonRows(try #require(device.file?.readAll()), in: fixture.directory)
        #expect(deviceRows.dropFirst().map { $0[3] } == ["'=cmd|' /C calc'!A0", "'+1", "'-2", "'@SUM(A1)", "alice", "josé, \"the\" one"])
        #expect(device.response.headers["content-disposition"] == "attachment; filename=\"a-history.csv\"; filename*=UTF-8''a-history.csv")
        #expect(deviceRows.allSatisfy { $0.count == 9 })
        #expect(String(decoding: csv.prefix(200), as: UTF8.self).contains("\r\n"), "RFC 4180 line ends")
    }

    @Test(arguments: TestDatabase.storages) func theJSONLIsTheHistoryAnswersAttemptsAndTheActions(storage: String) async throws {
        let clock = Clock(ConsoleFixture.start)
        let fixture = try ConsoleFixture(storage: storage, clock: { clock.now })
        defer { fixture.close() }
        try await Self.scenario(fixture, clock: clock)
        let answer = Self.export(fixture, "/v1/users/alice/export?format=jsonl&outcome=failed")
        #expect(answer.response.headers["content-type"] == "application/x-ndjson")
        let lines = String(decoding: try #require(answer.file?.readAll()), as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.last == "", "every line ends with a line feed")
        let values = try lines.dropLast().map { try JSONValue.parse(String($0)) }
        let history = try HistoryConsoleTests.allPages(fixture, SyncPaths.history(user: "alice") + "?outcome=failed", limit: 10_000)
        #expect(values.filter { $0["action"] == nil } == history.attempts)
        #expect(values.compactMap { $0["action"] } == history.actions)
        #expect(values.count == 1_502)
        // A name that is no file name goes as _ in filename and exactly in filename*.
        let other = Self.export(fixture, "/v1/users/\(SyncPaths.percentEncoded("josé, \"the\" one"))/export?format=jsonl")
        #expect(
            other.response.headers["content-disposition"]
                == "attachment; filename=\"jos____the__one-history.jsonl\"; filename*=UTF-8''jos%C3%A9%2C%20%22the%22%20one-history.jsonl")
    }

    @Test(arguments: TestDatabase.storages) func aBadExportIs400BeforeAnyByte(storage: String) async throws {
        let clock = Clock(ConsoleFixture.start)
        let fixture = try ConsoleFixture(storage: storage, clock: { clock.now })
        defer { fixture.close() }
        try await Self.scenario(fixture, clock: clock)
        for (query, message) in [
            ("", "query parameter format is required: csv, jsonl or ocsf"),
            ("format=", "query parameter format is required: csv, jsonl or ocsf"),
            ("format=xlsx", "query parameter format: format \"xlsx\" must be csv, jsonl or ocsf"),
            ("format=CSV", "query parameter format: format \"CSV\" must be csv, jsonl or ocsf"),
            ("format=csv%00", "query parameter format: format \"csv\\u{0000}\" must be csv, jsonl or ocsf"),
            ("format=csv&limit=10", "unknown query parameter limit; this endpoint takes device, since, until, outcome, factor, method, format"),
            (
                "format=csv&since=2026-12-01T00:00:00Z&until=2026-11-01T00:00:00Z",
                "query parameter until: until (2026-11-01T00:00:00.000Z) is before since (2026-12-01T00:00:00.000Z)"
            ),
            ("format=csv&device=a%2Fb", nil)
        ] {
            let answer = Self.export(fixture, "/v1/users/alice/export?" + query)
            #expect(answer.response.status == 400 && answer.file == nil, "\(query)")
            if let message { #expect(SyncWire.error(from: answer.response.body)?.message == message, "\(query)") }
        }
        #expect(Self.export(fixture, "/v1/devices/nobody/export?format=csv").response.status == 404)
        let (_, device) = try fixture.device("a")
        #expect(fixture.call("GET", "/v1/users/alice/export?format=csv", token: device).status == 403)
        // Far past to far future is the whole history; an export of nobody is the header alone.
        let whole = Self.export(fixture, "/v1/users/alice/export?format=jsonl&since=0001-01-01T00:00:00Z&until=9999-12-31T23:59:59.999Z")
        #expect(whole.file.map { $0.byteCount > 100_000 } == true)
        let nobody = Self.export(fixture, "/v1/users/nobody/export?format=csv")
        #expect(nobody.file?.readAll() == Array((SyncServer.exportCSVHeader + "\r\n").utf8))
    }

    /// Exports beyond the bound get 503 while the others are written.
    @Test func aThirdConcurrentExportIs503() throws {
        let fixture = try ConsoleFixture(storage: "lmdb")
        defer { fixture.close() }
        _ = fixture.server.exportsRunning.wrappingAdd(SyncServer.maximumConcurrentExports, ordering: .relaxed)
        let refused = Self.export(fixture, "/v1/users/alice/export?format=csv")
        #expect(refused.response.status == 503 && refused.response.headers["retry-after"] == "5")
        _ = fixture.server.exportsRunning.wrappingSubtract(SyncServer.maximumConcurrentExports, ordering: .relaxed)
        #expect(Self.export(fixture, "/v1/users/alice/export?format=csv").response.status == 200)
    }

    @Test func theCSVGuardQuotesEveryFormulaStartAndRFC4180Specials() {
        #expect(SyncServer.csvCell("=1+1") == "'=1+1")
        #expect(SyncServer.csvCell("+1") == "'+1")
        #expect(SyncServer.csvCell("-1") == "'-1")
        #expect(SyncServer.csvCell("@A1") == "'@A1")
        #expect(SyncServer.csvCell("\tx") == "'\tx")
        #expect(SyncServer.csvCell("\rx") == "\"'\rx\"")
        #expect(SyncServer.csvCell("a,b") == "\"a,b\"")
        #expect(SyncServer.csvCell("say \"hi\"") == "\"say \"\"hi\"\"\"")
        #expect(SyncServer.csvCell("line\r\nbreak") == "\"line\r\nbreak\"")
        #expect(SyncServer.csvCell("=a,\"b\"") == "\"'=a,\"\"b\"\"\"")
        #expect(SyncServer.csvCell("x=1") == "x=1")
        #expect(SyncServer.csvCell("") == "")
    }
}
