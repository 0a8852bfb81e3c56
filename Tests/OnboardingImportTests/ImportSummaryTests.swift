import Foundation
import Testing
@testable import OnboardingImport
import OnboardingModel
import OnboardingStore
import TestSupport

/// What an import left out, as the summary reports it (first lines per kind) and as the store
/// keeps it (`log_imported`, docs/importers.md § The summary).
@Suite struct ImportSummaryTests {
    static let utc = TimeZone(identifier: "UTC")!

    static func failure(_ second: Int, user: String = "alice") -> String {
        String(format: "Dec  3 09:14:%02d bastion-1 sshd[7]: Failed password for %@ from 192.0.2.9 port 4%04d ssh2", second, user, second)
    }
    static func cron(_ second: Int) -> String { String(format: "Dec  3 09:14:%02d bastion-1 CRON[9]: (root) CMD (true)", second) }
    static func pam(_ second: Int) -> String {
        String(format: "Dec  3 09:14:%02d bastion-1 sshd[7]: pam_unix(sshd:auth): check pass; user unknown", second)
    }

    @Test("each kind keeps its count and its first five line numbers, blank lines counted as lines")
    func firstLinesPerKind() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // Lines 1–3 events, 4 blank, then cron on 5, 7, 9, 11, 13, 15, 17 and pam on 6 and 18.
        var lines = [Self.failure(1), Self.failure(2), Self.failure(3), ""]
        for index in 0..<7 {
            lines.append(Self.cron(10 + index))
            lines.append(index == 0 ? Self.pam(20) : Self.failure(30 + index))
        }
        lines.append(Self.pam(50))
        let file = try directory.write("auth.log", lines.joined(separator: "\n") + "\n")
        let summary = try LogImportTests.importer(directory.appending("store"), .sshd(year: 2026, timeZone: Self.utc))
            .run(try ImportInput(path: file))
        #expect(summary.skipped == ["not sshd": 7, "pam": 2])
        #expect(summary.skippedLines.firstLines == ["not sshd": [5, 7, 9, 11, 13], "pam": [6, 19]])
        #expect(summary.skippedLines.kinds.map(\.kind) == ["not sshd", "pam"], "most common first")
        #expect(summary.events == 9)
    }

    @Test("Keycloak's skipped events are numbered as in the file, not in the time order the import reads")
    func keycloakLinesAreTheFiles() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // Newest first: the CODE_TO_TOKEN (element 1) is the newest, sorted last.
        let array = """
            [{"time": 1795860009000, "type": "CODE_TO_TOKEN", "realmId": "acme", "userId": "5e7c"},
             {"time": 1795860005000, "type": "LOGIN", "realmId": "acme", "userId": "5e7c", "details": {"username": "alice"}},
             {"time": 1795860001000, "type": "REFRESH_TOKEN", "realmId": "acme", "userId": "5e7c"},
             {"time": 1795860000000, "type": "LOGIN", "realmId": "acme", "userId": "5e7c", "details": {"username": "alice"}}]
            """
        let file = try directory.write("events.json", array)
        let summary = try LogImportTests.importer(directory.appending("store"), .keycloak(timeZone: Self.utc)).run(try ImportInput(path: file))
        #expect(summary.skippedLines.firstLines == ["not authentication": [1, 3]])

        // As lines, with a line too long to read on line 3 (dropped before the sort) and a blank line 2.
        let long = #"{"time": 1795860002000, "type": "LOGIN", "pad": ""# + String(repeating: "x", count: Limits.maximumJSONLineBytes) + #""}"#
        let jsonl = try directory.write(
            "events.jsonl",
            [
                #"{"time": 1795860009000, "type": "CODE_TO_TOKEN", "realmId": "acme"}"#, "", long,
                #"{"time": 1795860000000, "type": "LOGIN", "realmId": "acme", "details": {"username": "bob"}}"#,
                #"{"time": 1795860001000, "type": "REFRESH_TOKEN", "realmId": "acme"}"#
            ].joined(separator: "\n") + "\n")
        let lines = try LogImportTests.importer(directory.appending("store2"), .keycloak(timeZone: Self.utc)).run(try ImportInput(path: jsonl))
        #expect(lines.skippedLines.firstLines == ["not authentication": [1, 5], "too long": [3]])
    }

    @Test("the lowest line numbers are kept whatever the order they come in; merging keeps the lowest of both")
    func lowestLinesAreKept() {
        var skipped = SkippedLines()
        for line in [90, 7, Int.max, 3, 50, 1, 8, 2] { skipped.add("pam", line: line) }
        #expect(skipped.firstLines["pam"] == [1, 2, 3, 7, 8] && skipped.counts["pam"] == 8)
        var other = SkippedLines()
        other.add("pam", line: 0)
        other.add("too long", line: 4)
        let merged = skipped.merging(other)
        #expect(merged.firstLines == ["pam": [0, 1, 2, 3, 7], "too long": [4]] && merged.total == 10)
    }

    @Test("the recorded kinds fit the event's bound: the most common kinds, the rest summed")
    func recordedKindsAreBounded() throws {
        #expect(SkippedLines().recordedDescription == nil)
        var skipped = SkippedLines()
        for kind in 0..<100 {
            for line in 0...kind { skipped.add("kind \(String(format: "%03d", kind)) " + String(repeating: "é", count: 20), line: line) }
        }
        let text = try #require(skipped.recordedDescription)
        #expect(text.utf8.count <= SkippedLines.maximumRecordedBytes)
        #expect(text.hasPrefix("100 kind 099 "), "the most common kind first: \(text.prefix(40))")
        let tail = try #require(text.split(separator: ", ").last)
        let kept = text.split(separator: ", ").count - 1
        let summed = (1...(100 - kept)).reduce(0, +)
        #expect(tail == "\(summed) of \(100 - kept) other kinds", "\(tail)")
        // One kind longer than the bound is summed too, and the event stays valid.
        var huge = SkippedLines()
        huge.add(String(repeating: "k", count: 5_000), line: 1)
        #expect(huge.recordedDescription == "1 of 1 other kind")
    }

    @Test("an import that fails appends nothing, no summary either")
    func aFailedImportRecordsNothing() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = directory.appending("store")
        let first = try directory.write("first.log", Self.failure(1) + "\n" + Self.cron(2) + "\n")
        _ = try LogImportTests.importer(store, .sshd(year: 2026, timeZone: Self.utc)).run(try ImportInput(path: first))
        let before = try EventImporterTests.storedEvents(store)
        #expect(before.map(\.type) == [.signInFailed, .logImported])

        // A line in the far future (year 9999) is refused by the clock check: nothing is appended.
        var importer = LogImportTests.importer(store, .sshd(year: 9999, timeZone: Self.utc), commitEvents: 1)
        importer.storeOptions.maximumClockSkewMilliseconds = 300_000
        let refused = try directory.write("refused.log", [Self.cron(1), Self.failure(2), Self.failure(3)].joined(separator: "\n") + "\n")
        #expect(throws: ImportError.self) { try importer.run(try ImportInput(path: refused)) }
        #expect(try EventImporterTests.storedEvents(store) == before)
    }

    @Test("a rerun appends nothing; a resumed import records what it appended; the summary rides the last full commit")
    func rerunsAndResumes() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = directory.appending("store")
        let lines = (1...10).map { Self.failure($0) } + [Self.cron(20)]
        let part = try directory.write("part.log", lines.prefix(4).joined(separator: "\n") + "\n")
        let whole = try directory.write("auth.log", lines.joined(separator: "\n") + "\n")
        let format = ImportFormat.sshd(year: 2026, timeZone: Self.utc)

        let first = try LogImportTests.importer(store, format, commitEvents: 2).run(try ImportInput(path: part))
        #expect(first.appended == 4 && first.commits == 2 && first.summarySeq == 5, "4 events in 2 full commits, the summary in the second")
        let resumed = try LogImportTests.importer(store, format, commitEvents: 5).run(try ImportInput(path: whole))
        #expect(resumed.appended == 6 && resumed.alreadyStored == 4 && resumed.commits == 2 && resumed.summarySeq == 12)
        let stored = try EventImporterTests.storedEvents(store)
        guard case let .logImported(_, events, appended, skipped, kinds, firstAt, lastAt)? = stored.last?.payload else {
            Issue.record("no summary last: \(stored.map(\.type))")
            return
        }
        #expect(events == 10 && appended == 6 && skipped == 1 && kinds == "1 not sshd")
        #expect(firstAt.iso8601 == "2026-12-03T09:14:01.000Z" && lastAt.iso8601 == "2026-12-03T09:14:10.000Z")

        let again = try LogImportTests.importer(store, format).run(try ImportInput(path: whole))
        #expect(again.appended == 0 && again.summarySeq == nil && again.commits == 0)
        #expect(try EventImporterTests.storedEvents(store).count == stored.count)
    }

    @Test("a JSONL import records no summary: an export imported elsewhere reads back as the same events")
    func jsonlRecordsNoSummary() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let event = Event(
            id: UUID(), device: "kiosk-7", at: Timestamp(millisecondsSince1970: 1_795_968_000_000), user: "alice", flow: nil,
            payload: .signInFailed(method: .password, reason: .invalidPassword))
        let file = try directory.write("events.jsonl", EventJSON.encode(event, seq: nil) + "\n")
        let summary = try LogImportTests.importer(directory.appending("store"), .jsonl).run(try ImportInput(path: file))
        #expect(summary.appended == 1 && summary.summarySeq == nil)
        #expect(try EventImporterTests.storedEvents(directory.appending("store")) == [event])
    }
}
