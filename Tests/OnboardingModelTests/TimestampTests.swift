import Testing
@testable import OnboardingModel

@Suite("Timestamp: ISO-8601 UTC with milliseconds")
struct TimestampTests {
    // MARK: Known instants

    @Test(
        "known instants parse to the right milliseconds and print canonically",
        arguments: [
            ("1970-01-01T00:00:00.000Z", Int64(0)),
            ("1970-01-01T00:00:00.001Z", 1),
            ("1969-12-31T23:59:59.999Z", -1),
            ("1969-12-31T00:00:00.000Z", -86_400_000),
            ("1900-01-01T00:00:00.000Z", -2_208_988_800_000),
            ("2000-01-01T00:00:00.000Z", 946_684_800_000),
            ("2001-09-09T01:46:40.000Z", 1_000_000_000_000),
            ("2026-11-29T16:00:00.123Z", 1_795_968_000_123),
            ("2038-01-19T03:14:08.000Z", 2_147_483_648_000),
            ("0001-01-01T00:00:00.000Z", -62_135_596_800_000),
            ("9999-12-31T23:59:59.999Z", 253_402_300_799_999)
        ])
    func knownInstants(text: String, milliseconds: Int64) throws {
        let parsed = try Timestamp(iso8601: text)
        #expect(parsed.millisecondsSince1970 == milliseconds)
        #expect(Timestamp(millisecondsSince1970: milliseconds).iso8601 == text)
        #expect(parsed.description == text)
    }

    @Test("minimum and maximum are the first and last millisecond of years 0001 and 9999")
    func bounds() throws {
        #expect(Timestamp.minimum.iso8601 == "0001-01-01T00:00:00.000Z")
        #expect(Timestamp.maximum.iso8601 == "9999-12-31T23:59:59.999Z")
        #expect(try Timestamp(iso8601: "0001-01-01T00:00:00Z") == .minimum)
        #expect(try Timestamp(iso8601: "9999-12-31T23:59:59.999Z") == .maximum)
    }

    // MARK: Calendar edges

    @Test(
        "leap days exist exactly in leap years (÷4, not ÷100 unless ÷400)",
        arguments: [
            (2024, true), (2000, true), (1600, true), (2400, true), (4, true), (1996, true),
            (2023, false), (1900, false), (2100, false), (1800, false), (1, false), (2025, false)
        ])
    func leapDays(year: Int, isLeap: Bool) throws {
        let yyyy = String(repeating: "0", count: 4 - String(year).count) + String(year)
        let leapDay = "\(yyyy)-02-29T12:34:56.789Z"
        if isLeap {
            let parsed = try Timestamp(iso8601: leapDay)
            #expect(parsed.iso8601 == leapDay)
            // Feb 29 is followed by Mar 1, and preceded by Feb 28.
            #expect(parsed.adding(milliseconds: 86_400_000).iso8601 == "\(yyyy)-03-01T12:34:56.789Z")
            #expect(parsed.adding(milliseconds: -86_400_000).iso8601 == "\(yyyy)-02-28T12:34:56.789Z")
        } else {
            #expect(throws: TimestampError.self) { try Timestamp(iso8601: leapDay) }
            let feb28 = try Timestamp(iso8601: "\(yyyy)-02-28T12:34:56.789Z")
            #expect(feb28.adding(milliseconds: 86_400_000).iso8601 == "\(yyyy)-03-01T12:34:56.789Z")
        }
    }

    @Test(
        "the last millisecond of a year is followed by the first of the next",
        arguments: [
            ("1969-12-31T23:59:59.999Z", "1970-01-01T00:00:00.000Z"),
            ("1999-12-31T23:59:59.999Z", "2000-01-01T00:00:00.000Z"),
            ("2024-12-31T23:59:59.999Z", "2025-01-01T00:00:00.000Z"),
            ("1899-12-31T23:59:59.999Z", "1900-01-01T00:00:00.000Z"),
            ("0001-12-31T23:59:59.999Z", "0002-01-01T00:00:00.000Z"),
            ("2026-02-28T23:59:59.999Z", "2026-03-01T00:00:00.000Z"),
            ("2026-04-30T23:59:59.999Z", "2026-05-01T00:00:00.000Z")
        ])
    func yearAndMonthBoundaries(before: String, after: String) throws {
        let first = try Timestamp(iso8601: before)
        let second = try Timestamp(iso8601: after)
        #expect(second.millisecondsSince1970 - first.millisecondsSince1970 == 1)
        #expect(first.adding(milliseconds: 1) == second)
        #expect(first < second)
    }

    @Test("January 1 and March 1 of every year 0001…9999 agree with a closed-form day count")
    func everyYearAgreesWithIndependentDayCount() throws {
        // Days from 0001-01-01 to Y-01-01, counted without the parser's algorithm.
        func daysBeforeYear(_ year: Int64) -> Int64 {
            let y = year - 1
            return y * 365 + y / 4 - y / 100 + y / 400
        }
        func isLeap(_ year: Int64) -> Bool { (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 }
        let epochDays = daysBeforeYear(1970) // 719_162
        #expect(epochDays == 719_162)
        for year in Int64(1)...9999 {
            let yyyy = String(repeating: "0", count: 4 - String(year).count) + String(year)
            let january = try Timestamp(iso8601: "\(yyyy)-01-01T00:00:00Z")
            let expectedJanuary = (daysBeforeYear(year) - epochDays) * 86_400_000
            let march = try Timestamp(iso8601: "\(yyyy)-03-01T00:00:00Z")
            let expectedMarch = expectedJanuary + (isLeap(year) ? 60 : 59) * 86_400_000
            guard january.millisecondsSince1970 == expectedJanuary, march.millisecondsSince1970 == expectedMarch,
                Timestamp(millisecondsSince1970: expectedMarch).iso8601 == "\(yyyy)-03-01T00:00:00.000Z"
            else {
                Issue.record(
                    "year \(year): Jan 1 = \(january.millisecondsSince1970) (expected \(expectedJanuary)), Mar 1 = \(march.millisecondsSince1970) (expected \(expectedMarch))"
                )
                return
            }
        }
    }

    @Test("format then parse returns the same instant for random milliseconds across 0001…9999")
    func randomRoundTrip() throws {
        let seed = testSeed(fallback: 0x7157_A3B0)
        var rng = SplitMix64(seed: seed)
        for iteration in 0..<20_000 {
            let instant = Timestamp(
                millisecondsSince1970: rng.int64(
                    in: Timestamp.minimum.millisecondsSince1970...Timestamp.maximum.millisecondsSince1970))
            let text = instant.iso8601
            let parsed = try Timestamp(iso8601: text)
            guard parsed == instant, text.utf8.count == 24 else {
                Issue.record("seed \(seed) iteration \(iteration): \(instant.millisecondsSince1970) → \(text) → \(parsed.millisecondsSince1970)")
                return
            }
        }
    }

    // MARK: Fraction digits

    @Test(
        "0 to 3 fraction digits are accepted and always printed as 3",
        arguments: [
            ("2026-11-29T16:00:00Z", "2026-11-29T16:00:00.000Z"),
            ("2026-11-29T16:00:00.1Z", "2026-11-29T16:00:00.100Z"),
            ("2026-11-29T16:00:00.12Z", "2026-11-29T16:00:00.120Z"),
            ("2026-11-29T16:00:00.123Z", "2026-11-29T16:00:00.123Z"),
            ("2026-11-29T16:00:00.05Z", "2026-11-29T16:00:00.050Z"),
            ("2026-11-29T16:00:00.005Z", "2026-11-29T16:00:00.005Z"),
            ("2026-11-29T16:00:00.0Z", "2026-11-29T16:00:00.000Z"),
            ("1969-12-31T23:59:59.9Z", "1969-12-31T23:59:59.900Z")
        ])
    func fractionDigits(input: String, canonical: String) throws {
        let parsed = try Timestamp(iso8601: input)
        #expect(parsed.iso8601 == canonical)
        #expect(try Timestamp(iso8601: canonical) == parsed)
    }

    @Test("negative instants print the millisecond of the day counted forward from midnight")
    func negativeFraction() {
        #expect(Timestamp(millisecondsSince1970: -1).iso8601 == "1969-12-31T23:59:59.999Z")
        #expect(Timestamp(millisecondsSince1970: -1000).iso8601 == "1969-12-31T23:59:59.000Z")
        #expect(Timestamp(millisecondsSince1970: -1001).iso8601 == "1969-12-31T23:59:58.999Z")
        #expect(Timestamp(millisecondsSince1970: -86_400_001).iso8601 == "1969-12-30T23:59:59.999Z")
    }

    // MARK: Refusals

    @Test(
        "non-canonical or impossible times are refused with a message quoting the input",
        arguments: [
            "2026-11-29T16:00:00.1234Z", // 4 fraction digits would lose precision
            "2026-11-29T16:00:00.123456Z", // microseconds
            "2026-11-29T16:00:00.Z", // dot without digits
            "2026-11-29T16:00:00+00:00", // offsets, even +00:00
            "2026-11-29T16:00:00.123+01:00",
            "2026-11-29T16:00:00-05:00",
            "2026-11-29T16:00:00.123", // missing Z
            "2026-11-29T16:00:00",
            "2026-11-29T16:00:00.123z", // lower-case z
            "2026-11-29T16:00:00.123ZZ", // trailing text
            "2026-11-29T16:00:00.123Z ",
            " 2026-11-29T16:00:00.123Z",
            "2026-02-30T00:00:00Z", // Feb 30
            "2026-02-29T00:00:00Z", // not a leap year
            "1900-02-29T00:00:00Z",
            "2026-04-31T00:00:00Z", // April has 30 days
            "2026-11-29T24:00:00Z", // hour 24
            "2026-11-29T23:60:00Z", // minute 60
            "2026-12-31T23:59:60Z", // leap second
            "2026-13-01T00:00:00Z", // month 13
            "2026-00-01T00:00:00Z", // month 0
            "2026-11-00T00:00:00Z", // day 0
            "2026-11-32T00:00:00Z",
            "0000-01-01T00:00:00Z", // year 0
            "2026-11-29 16:00:00Z", // space instead of T
            "2026-11-29t16:00:00Z",
            "2026-11-29", // date only
            "16:00:00Z",
            "20261129T160000Z", // basic format
            "+2026-11-29T16:00:00Z",
            "-0001-01-01T00:00:00Z",
            "12026-11-29T16:00:00Z", // five-digit year
            "2026-1-29T16:00:00Z", // one-digit month
            "２０２６-11-29T16:00:00Z", // full-width digits
            "2026-11-29T16:00:00.1a3Z",
            "",
            "Z"
        ])
    func refusals(text: String) {
        let error = #expect(throws: TimestampError.self) { try Timestamp(iso8601: text) }
        #expect(error?.text == text)
        #expect(error?.description == "\"\(text)\" is not an ISO-8601 UTC time like 2026-11-29T16:00:00.123Z (at most 3 fraction digits, Z suffix)")
    }

    @Test("instants just outside 0001…9999 still format (without trapping) but do not parse back")
    func outsideRangeFormats() {
        let afterMaximum = Timestamp.maximum.adding(milliseconds: 1).iso8601
        #expect(afterMaximum == "10000-01-01T00:00:00.000Z")
        #expect(throws: TimestampError.self) { try Timestamp(iso8601: afterMaximum) }
        let beforeMinimum = Timestamp.minimum.adding(milliseconds: -1).iso8601
        #expect(beforeMinimum == "0000-12-31T23:59:59.999Z")
        #expect(throws: TimestampError.self) { try Timestamp(iso8601: beforeMinimum) }
        #expect(!Timestamp(millisecondsSince1970: .min).iso8601.isEmpty)
        #expect(!Timestamp(millisecondsSince1970: .max).iso8601.isEmpty)
    }

    // MARK: Ordering and arithmetic

    @Test("ordering follows the instant; adding moves in both directions")
    func orderingAndArithmetic() throws {
        let a = try Timestamp(iso8601: "1969-12-31T23:59:59.999Z")
        let b = try Timestamp(iso8601: "1970-01-01T00:00:00.000Z")
        let c = try Timestamp(iso8601: "2026-11-29T16:00:00.123Z")
        #expect(a < b && b < c)
        #expect([c, a, b].sorted() == [a, b, c])
        #expect(c.adding(milliseconds: 0) == c)
        #expect(c.adding(milliseconds: 3_600_000).iso8601 == "2026-11-29T17:00:00.123Z")
        #expect(c.adding(milliseconds: -c.millisecondsSince1970) == b)
        #expect(Set([a, b, c, Timestamp(millisecondsSince1970: 0)]).count == 3)
    }
}
