import Foundation
import Testing
@testable import OnboardingImport
import OnboardingModel
import OnboardingStore
import TestSupport

/// The import pipeline on foreign logs (`EventImporter.format`): the fixtures of the sshd and
/// Keycloak parsers imported into a store, the way `onboard import --from` does.
@Suite struct LogImportTests {
    /// A store whose clock allows the fixtures' December 2026 times.
    static func importer(_ store: String, _ format: ImportFormat, device: String? = nil, commitEvents: Int = 10) -> EventImporter {
        var options = OnboardingStore.Options()
        options.durability = .relaxed
        options.maximumClockSkewMilliseconds = nil
        options.deviceID = device
        var importer = EventImporter(storePath: store, storeOptions: options, commitEvents: commitEvents)
        importer.format = format
        return importer
    }

    static let utc = TimeZone(identifier: "UTC")!

    @Test func theSprayFixtureImportsEveryMappedLineInOrderAndCountsTheRest() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = try directory.write("auth.log", SSHDFixtures.sprayAndHonest)
        let store = directory.appending("store")
        let summary = try Self.importer(store, .sshd(year: 2026, timeZone: Self.utc), device: "lab-1").run(try ImportInput(path: file))

        var parser = SSHDLogParser(startYear: 2026, timeZone: Self.utc)
        let (expected, skippedKinds) = parser.readAll(SSHDFixtures.lines(SSHDFixtures.sprayAndHonest))
        var skips: [String: Int] = [:]
        for kind in skippedKinds { skips[kind, default: 0] += 1 }
        #expect(summary.appended == expected.count && summary.skipped == skips)
        #expect(summary.startYear == 2026 && summary.commits > 1, "committed in several commits of 10")
        // The summary is the last record, in the last commit, on the store's device, naming no user.
        let all = try EventImporterTests.storedEvents(store)
        let stored = Array(all.dropLast())
        let recorded = try #require(all.last)
        #expect(recorded.user == nil && recorded.device == "lab-1" && summary.summarySeq == UInt64(all.count))
        #expect(
            recorded.payload
                == .logImported(
                    format: .sshd, events: expected.count, appended: expected.count, skipped: skips.values.reduce(0, +),
                    skippedKinds: summary.skippedDescription, firstAt: expected.map(\.at).min()!, lastAt: expected.map(\.at).max()!))
        #expect(stored.map(\.payload) == expected.map(\.payload) && stored.map(\.at) == expected.map(\.at))
        #expect(Set(stored.map(\.device)) == ["bastion-1"])
        let sprayed = stored.filter { $0.payload.clientAddress == SSHDFixtures.sprayAddress && $0.type == .signInFailed }
        #expect(Set(sprayed.compactMap(\.user)) == Set(SSHDFixtures.sprayedUsers))
        #expect(Set(stored.map(\.id)).count == stored.count, "every line its own id")

        // A rerun finds every event stored; the ids are the lines', not random.
        let again = try Self.importer(store, .sshd(year: 2026, timeZone: Self.utc)).run(try ImportInput(path: file))
        #expect(again.appended == 0 && again.alreadyStored == expected.count && again.events == expected.count)
        let afterRerun = try EventImporterTests.storedEvents(store)
        #expect(again.summarySeq == nil && afterRerun.count == all.count, "a rerun records no second summary")
    }

    @Test func aGrowingLogImportedAgainGivesTheLinesThatWaitedTheirEventsOnce() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = directory.appending("store")
        let head = [
            "Dec  3 10:00:00 gw-9 sshd[503]: message repeated 3 times: [ Failed password for root from 192.0.2.91 port 4100 ssh2]",
            "Dec  3 10:00:01 gw-9 sshd[502]: Disconnecting: Too many authentication failures for root [preauth]",
            "Dec  3 10:00:02 gw-9 sshd[501]: pam_unix(sshd:auth): authentication failure; logname= uid=0 euid=0 tty=ssh ruser= rhost=192.0.2.90  user=ops"
        ]
        let tail = [
            "Dec  3 10:00:03 gw-9 sshd[502]: Connection closed by 192.0.2.92 port 4 [preauth]",
            "Dec  3 10:00:03 gw-9 sshd[501]: Failed password for ops from 192.0.2.90 port 5 ssh2"
        ]
        let file = try directory.write("auth.log", head.joined(separator: "\n") + "\n")
        let first = try Self.importer(store, .sshd(year: 2026, timeZone: Self.utc)).run(try ImportInput(path: file))
        // The repeat's three attempts, each its own id; the PAM failure and the cut wait.
        #expect(first.appended == 3 && first.skipped["attempt open at the log's end"] == 2, "\(first)")
        let grown = try directory.write("auth.log", (head + tail).joined(separator: "\n") + "\n")
        let second = try Self.importer(store, .sshd(year: 2026, timeZone: Self.utc)).run(try ImportInput(path: grown))
        #expect(second.appended == 2 && second.alreadyStored == 3, "\(second)")
        let stored = try EventImporterTests.storedEvents(store).filter { $0.type != .logImported }
        #expect(Set(stored.map(\.id)).count == 5)
        #expect(
            stored.map { "\($0.user ?? "-") \($0.payload.clientAddress ?? "-")" } == [
                "root 192.0.2.91", "root 192.0.2.91", "root 192.0.2.91", "root 192.0.2.92", "ops 192.0.2.90"
            ])
        #expect(stored.last?.payload == .signInFailed(method: .password, reason: .invalidPassword, clientAddress: "192.0.2.90"))
    }

    @Test func theYearIsInferredAcrossNewYearFromTheFilesTime() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = try directory.write("auth.log", SSHDFixtures.rollover)
        // Written on 2027-01-02: the log ran from 2026 into 2027.
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_798_848_000)], ofItemAtPath: file)
        let store = directory.appending("store")
        let summary = try Self.importer(store, .sshd(year: nil, timeZone: Self.utc)).run(try ImportInput(path: file))
        #expect(summary.startYear == 2026)
        let times = try EventImporterTests.storedEvents(store).filter { $0.type != .logImported }.map(\.at.iso8601)
        #expect(times == ["2026-12-31T23:59:58.000Z", "2027-01-01T00:00:03.000Z", "2027-01-01T00:00:09.000Z"], "\(times)")
        #expect(summary.skipped == ["same cut": 1])
    }

    @Test func hostileLinesAreSkippedOrImportedNeverFatal() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = try directory.write("hostile.log", SSHDFixtures.hostile.joined(separator: "\n") + "\n\u{0}\u{7f}\n")
        let store = directory.appending("store")
        let summary = try Self.importer(store, .sshd(year: 2026, timeZone: Self.utc)).run(try ImportInput(path: file))
        // Every line that is not blank is an event or a skip (the reader drops the one blank line).
        #expect(summary.events + summary.skipped.values.reduce(0, +) == SSHDFixtures.hostile.filter { !$0.isEmpty }.count + 1)
        for event in (try? EventImporterTests.storedEvents(store)) ?? [] {
            #expect((try? event.validate()) != nil)
        }
    }

    @Test func theKeycloakFixtureIsImportedOldestFirstAndAgainAsLinesAppendsNothing() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = try directory.write("events.json", KeycloakFixtures.stuffingAndHonest)
        let store = directory.appending("store")
        let summary = try Self.importer(store, .keycloak(timeZone: Self.utc)).run(try ImportInput(path: file))
        #expect(summary.appended == 27 && summary.skipped.values.reduce(0, +) == 8, "\(summary)")
        let stored = try EventImporterTests.storedEvents(store).filter { $0.type != .logImported }
        #expect(stored.map(\.at) == stored.map(\.at).sorted(), "oldest first, though the API answers newest first")
        #expect(stored.filter { $0.payload.clientAddress == KeycloakFixtures.stufferAddress }.count == 17)
        #expect(Set(stored.map(\.device)) == ["acme"])

        // The same events as JSON Lines (jq -c '.[]'), oldest first: the same ids.
        var splitter = JSONArraySplitter()
        var lines: [String] = []
        try Array(KeycloakFixtures.stuffingAndHonest.utf8).withUnsafeBytes { bytes in
            try splitter.feed(bytes) { lines.append(String(decoding: $0, as: UTF8.self)) }
        }
        let jsonl = try directory.write("events.jsonl", lines.reversed().joined(separator: "\n") + "\n")
        let again = try Self.importer(store, .keycloak(timeZone: Self.utc)).run(try ImportInput(path: jsonl))
        #expect(again.appended == 0 && again.events == 27, "\(again)")
    }

    @Test func aCutKeycloakArrayAppendsNothingAndCreatesNoStore() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let text = KeycloakFixtures.stuffingAndHonest
        let file = try directory.write("cut.json", String(text.prefix(text.count / 2)))
        let store = directory.appending("store")
        #expect(throws: ImportError.self) { try Self.importer(store, .keycloak(timeZone: Self.utc)).run(try ImportInput(path: file)) }
        #expect(!FileManager.default.fileExists(atPath: store))
    }

    @Test func aUserNameSpelledLikeAPseudonymIsImportedWithoutAUserAndKeepsItsAddress() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let pseudonym = "~" + String(repeating: "ab", count: 16)
        let file = try directory.write(
            "auth.log", "Dec  3 09:00:00 bastion-1 sshd[1]: Failed password for invalid user \(pseudonym) from 203.0.113.5 port 22 ssh2\n")
        let store = directory.appending("store")
        let summary = try Self.importer(store, .sshd(year: 2026, timeZone: Self.utc)).run(try ImportInput(path: file))
        #expect(summary.appended == 1)
        let stored = try EventImporterTests.storedEvents(store)
        #expect(stored.first?.user == nil)
        #expect(stored.first?.payload.clientAddress == "203.0.113.5", "not read as an erased address")
    }
}
