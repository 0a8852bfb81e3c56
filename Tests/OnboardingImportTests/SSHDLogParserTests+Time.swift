import Foundation
import Testing
@testable import OnboardingImport
import OnboardingModel

/// Times, years and time zones of the sshd parser, its year inference and the shared fixtures.
extension SSHDLogParserTests {
    /// The times of `lines`' events (lines that give none give `nil`), read as one log.
    static func times(_ lines: [String], year: Int = 2026, timeZone: TimeZone = utc) -> [String?] {
        var parser = SSHDLogParser(startYear: year, timeZone: timeZone)
        return lines.enumerated().map { offset, line in
            parser.read(line, number: offset + 1).events.first?.event.at.iso8601
        }
    }

    static func date(_ text: String) throws -> Date {
        Date(timeIntervalSince1970: Double(try at(text).millisecondsSince1970) / 1000)
    }

    static let failure = " bastion-1 sshd[1]: Failed password for root from 192.0.2.1 port 2 ssh2"

    // MARK: Timestamps

    @Test("BSD syslog: the day space-padded, unpadded or zero-padded")
    func bsdTimes() {
        #expect(
            Self.times(["Dec  1 15:30:30", "Dec 1 15:30:31", "Dec 01 15:30:32", "Dec 21 15:30:33"].map { $0 + Self.failure })
                == ["2026-12-01T15:30:30.000Z", "2026-12-01T15:30:31.000Z", "2026-12-01T15:30:32.000Z", "2026-12-21T15:30:33.000Z"])
    }

    @Test("RFC 3339 and journalctl short-iso(-precise): the offset is used, the fraction cut to milliseconds, the time zone ignored")
    func isoTimes() {
        let expected = ["2026-12-01T14:30:30.123Z", "2026-12-01T14:30:31.500Z", "2026-12-01T14:30:32.000Z", "2026-12-01T14:30:33.999Z"]
        #expect(Self.times(SSHDFixtures.lines(SSHDFixtures.iso)) == expected)
        #expect(Self.times(SSHDFixtures.lines(SSHDFixtures.iso), year: 1999, timeZone: Self.berlin) == expected)
    }

    @Test(
        "a time that cannot be read skips the line",
        arguments: [
            "Dec  1 24:00:00", "Dec  1 15:30:60", "dec  1 15:30:30", "Dex  1 15:30:30", "Dec   1 15:30:30", "Dec 123 15:30:30",
            "Dec  0 15:30:30", "Dec  1 15:30", "Dec  1 15:30:30bastion-1", "2026-12-01 15:30:30Z", "2026-12-01T15:30:30",
            "2026-12-01T15:30:30.+01:00", "2026-12-01T15:30:30+1:00", "2026-12-01T15:30:30+01", "2026-02-29T15:30:30Z",
            "0000-01-01T00:00:00Z", "0001-01-01T00:30:00+01:00", "26-12-01T15:30:30Z", "1795968000 "
        ])
    func unreadableTimes(stamp: String) {
        let line = stamp.hasSuffix("bastion-1") ? stamp + " sshd[1]: Invalid user x from 192.0.2.1" : stamp + Self.failure
        #expect(Self.parse(line) == .skipped("unreadable timestamp"))
    }

    @Test("Feb 29 reads in a leap year only")
    func leapDay() {
        #expect(Self.times(["Feb 29 12:00:00" + Self.failure], year: 2028) == ["2028-02-29T12:00:00.000Z"])
        #expect(Self.parse("Feb 29 12:00:00" + Self.failure, year: 2026) == .skipped("unreadable timestamp"))
    }

    @Test("BSD syslog times are local times of the time zone, DST included (Europe/Berlin, 2026)")
    func berlinDST() {
        #expect(
            Self.times(SSHDFixtures.lines(SSHDFixtures.berlinDST), timeZone: Self.berlin) == [
                "2026-03-29T00:59:30.000Z", "2026-03-29T01:00:30.000Z", "2026-10-24T23:59:30.000Z", "2026-10-25T02:00:30.000Z"
            ])
    }

    @Test("a time in the hour the autumn change repeats reads as one of its two instants")
    func repeatedHour() {
        let time = Self.times(["Oct 25 02:30:00" + Self.failure], timeZone: Self.berlin).first ?? nil
        #expect(["2026-10-25T00:30:00.000Z", "2026-10-25T01:30:00.000Z"].contains(time))
    }

    // MARK: Years

    @Test("Dec 31 → Jan 1 moves to the next year")
    func rollover() {
        #expect(
            Self.times(SSHDFixtures.lines(SSHDFixtures.rollover)) == [
                "2026-12-31T23:59:58.000Z", "2027-01-01T00:00:03.000Z", "2027-01-01T00:00:09.000Z", nil
            ])
    }

    @Test("one month back is out of order, not a new year; two months back is one")
    func rolloverMargin() {
        let lines = [
            "Feb  1 00:00:00", "Jan 31 23:59:59", "Mar  1 00:00:00", "Dec  1 00:00:00", "Nov 30 23:59:59",
            "Dec  2 00:00:00", "Oct  1 00:00:00"
        ]
        #expect(
            Self.times(lines.map { $0 + Self.failure }) == [
                "2026-02-01T00:00:00.000Z", "2026-01-31T23:59:59.000Z", "2026-03-01T00:00:00.000Z",
                "2026-12-01T00:00:00.000Z", "2026-11-30T23:59:59.000Z", "2026-12-02T00:00:00.000Z", "2027-10-01T00:00:00.000Z"
            ])
    }

    @Test("every program's BSD line moves the year; lines with an offset neither use nor move it")
    func rolloverSources() {
        let lines = [
            "Dec 31 10:00:00" + Self.failure, "Jan 15 10:00:00 bastion-1 CRON[5]: (root) CMD (true)",
            "2027-06-01T10:00:00Z" + Self.failure, "Dec  1 10:00:00" + Self.failure
        ]
        #expect(Self.times(lines) == ["2026-12-31T10:00:00.000Z", nil, "2027-06-01T10:00:00.000Z", "2027-12-01T10:00:00.000Z"])
        let isoBetween = ["Dec 31 10:00:00" + Self.failure, "2027-01-02T10:00:00Z" + Self.failure, "Dec 31 11:00:00" + Self.failure]
        #expect(Self.times(isoBetween) == ["2026-12-31T10:00:00.000Z", "2027-01-02T10:00:00.000Z", "2026-12-31T11:00:00.000Z"])
    }

    @Test("year inference: the last line is placed not after the reference, then the rollovers are counted back")
    func yearInference() throws {
        var inference = YearInference()
        SSHDFixtures.lines(SSHDFixtures.rollover).forEach { inference.note($0) }
        #expect(inference.rollovers == 1)
        #expect(inference.startYear(endingBy: try Self.date("2027-01-05T12:00:00Z"), timeZone: Self.utc) == 2026)
        #expect(inference.startYear(endingBy: try Self.date("2027-01-01T00:00:00Z"), timeZone: Self.utc) == 2026)
        #expect(inference.startYear(endingBy: try Self.date("2027-12-31T00:00:00Z"), timeZone: Self.utc) == 2026)
        #expect(inference.startYear(endingBy: try Self.date("2028-01-01T00:00:00Z"), timeZone: Self.utc) == 2027)

        var spray = YearInference()
        SSHDFixtures.lines(SSHDFixtures.sprayAndHonest).forEach { spray.note($0) }
        #expect(spray.rollovers == 0)
        #expect(spray.startYear(endingBy: try Self.date("2026-12-04T00:00:00Z"), timeZone: Self.utc) == 2026)
        #expect(spray.startYear(endingBy: try Self.date("2027-03-01T00:00:00Z"), timeZone: Self.utc) == 2026)
        #expect(spray.startYear(endingBy: try Self.date("2026-12-02T23:59:59Z"), timeZone: Self.utc) == 2025)
    }

    @Test("year inference reads the reference in the time zone; without BSD lines it is the reference's year")
    func yearInferenceZones() throws {
        var inference = YearInference()
        ["Dec 31 23:00:00" + Self.failure, "Jan  1 01:00:00" + Self.failure].forEach { inference.note($0) }
        let reference = try Self.date("2027-01-01T00:30:00Z")
        #expect(inference.startYear(endingBy: reference, timeZone: Self.berlin) == 2026)
        #expect(inference.startYear(endingBy: reference, timeZone: TimeZone(identifier: "America/New_York") ?? .gmt) == 2025)

        var none = YearInference()
        SSHDFixtures.lines(SSHDFixtures.iso).forEach { none.note($0) }
        none.note("garbage")
        #expect(none.startYear(endingBy: reference, timeZone: Self.utc) == 2027)
    }

    @Test("the parser and the inference agree: the inferred start year puts the last line before the reference")
    func inferenceThenParse() throws {
        var inference = YearInference()
        let lines = SSHDFixtures.lines(SSHDFixtures.rollover)
        lines.forEach { inference.note($0) }
        let year = inference.startYear(endingBy: try Self.date("2027-02-01T00:00:00Z"), timeZone: Self.utc)
        #expect(Self.times(lines, year: year)[2] == "2027-01-01T00:00:09.000Z")
    }

    // MARK: The shared fixture

    @Test("sprayAndHonest: one address tries 12 users once each; two honest users mistype, then sign in")
    func sprayAndHonest() throws {
        let lines = SSHDFixtures.lines(SSHDFixtures.sprayAndHonest)
        #expect(lines.count >= 30)
        var parser = SSHDLogParser(startYear: 2026, timeZone: Self.utc)
        let (events, skipped) = parser.readAll(lines)
        #expect(events.allSatisfy { $0.host == "bastion-1" && $0.at.iso8601.hasPrefix("2026-12-03T") })
        let sprayFailures = events.filter { $0.payload.type == .signInFailed && $0.payload.clientAddress == SSHDFixtures.sprayAddress }
        #expect(sprayFailures.compactMap(\.user) == SSHDFixtures.sprayedUsers)
        #expect(events.filter { $0.payload.clientAddress == SSHDFixtures.sprayAddress }.count == 12)
        // One event an attempt: `Invalid user`, PAM's lines and `Failed …` of one guess are one.
        #expect(events.filter { $0.payload.type == .signInStarted }.isEmpty)
        #expect(skipped.filter { $0 == "same attempt" }.count == 13)

        let honest = events.filter { ["alice", "bob"].contains($0.user) && $0.payload.type != .signedOut }
        #expect(
            honest.map { "\($0.user ?? "") \($0.payload.type.rawValue) \($0.payload.clientAddress ?? "-")" } == [
                "alice sign_in_failed 198.51.100.20", "alice sign_in_failed 198.51.100.20", "alice sign_in_succeeded 198.51.100.20",
                "bob sign_in_failed 2001:db8::5", "bob sign_in_succeeded 2001:db8::5"
            ])
        #expect(events.last?.payload == .signedOut(reason: .user))
        #expect(skipped.filter { $0 == "not sshd" }.count == 2)
        #expect(!skipped.contains { $0.hasPrefix("unreadable") })
    }
}

extension SSHDLogParser {
    /// The events and skipped kinds of `lines` read as one log, its end included.
    mutating func readAll(_ lines: [String]) -> (events: [AuthLogEvent], skipped: [String]) {
        var events: [AuthLogEvent] = []
        var skipped: [String] = []
        for (offset, line) in lines.enumerated() where !line.trimmingCharacters(in: .whitespaces).isEmpty {
            let reading = read(line, number: offset + 1)
            events += reading.events.map(\.event)
            skipped += reading.skipped
        }
        skipped += finish().skipped
        return (events, skipped)
    }
}
