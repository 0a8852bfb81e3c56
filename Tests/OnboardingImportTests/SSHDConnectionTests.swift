import Foundation
import Testing
@testable import OnboardingImport
import OnboardingModel

/// The sshd parser reading a log as connections (docs/importers.md § One connection at a time),
/// its line formats, and the addresses a client's own text must not choose. Every line is ours,
/// written in the forms OpenSSH, PAM, rsyslog and journald write, with documentation addresses.
@Suite struct SSHDConnectionTests {
    static let utc = TimeZone(identifier: "UTC") ?? .gmt

    /// `lines` read as one log: each event as `user reason address`, and the skipped kinds.
    static func read(_ lines: [String], mode: SSHDMode = .normal) -> (events: [String], skipped: [String]) {
        var parser = SSHDLogParser(startYear: 2026, timeZone: utc, mode: mode)
        var events: [String] = []
        var skipped: [String] = []
        for (offset, line) in lines.enumerated() {
            let reading = parser.read(line, number: offset + 1)
            events += reading.events.map { describe($0.event) }
            skipped += reading.skipped
        }
        skipped += parser.finish().skipped
        return (events, skipped)
    }

    static func describe(_ event: AuthLogEvent) -> String {
        let what: String
        switch event.payload {
        case .signInFailed(_, let reason, _): what = reason.rawValue
        case .signInAborted(let reason, _): what = "aborted:" + reason.rawValue
        case .signInSucceeded: what = "succeeded"
        default: what = event.payload.type.rawValue
        }
        return "\(event.user ?? "-") \(what) \(event.payload.clientAddress ?? "-")"
    }

    static func line(_ time: String, _ pid: Int, _ message: String) -> String { "Dec  3 \(time) gw-4 sshd[\(pid)]: \(message)" }

    // MARK: One attempt, one event

    @Test("the four lines of one guess count once, with the Failed line's user; the next guess counts again")
    func fourLinesOneGuess() {
        let log = [
            Self.line("10:00:00", 300, "Invalid user mallory from 198.51.100.9 port 5100"),
            Self.line("10:00:02", 300, "pam_unix(sshd:auth): check pass; user unknown"),
            Self.line("10:00:02", 300, "pam_unix(sshd:auth): authentication failure; logname= uid=0 euid=0 tty=ssh ruser= rhost=198.51.100.9"),
            Self.line("10:00:02", 300, "error: PAM: Authentication failure for illegal user mallory from 198.51.100.9"),
            Self.line("10:00:04", 300, "Failed password for invalid user mallory from 198.51.100.9 port 5100 ssh2"),
            Self.line("10:00:06", 300, "pam_unix(sshd:auth): authentication failure; logname= uid=0 euid=0 tty=ssh ruser= rhost=198.51.100.9"),
            Self.line("10:00:07", 300, "Failed password for invalid user mallory from 198.51.100.9 port 5100 ssh2")
        ]
        let (events, skipped) = Self.read(log)
        #expect(events == ["mallory unknown_user 198.51.100.9", "mallory unknown_user 198.51.100.9"])
        // Three lines of the first guess, and the second guess's PAM line (its Failed line is the event).
        #expect(skipped.filter { $0 == "same attempt" }.count == 4)
    }

    @Test("a log of pam_unix lines only counts each guess: rhost the address, user unknown for unknown names")
    func pamUnixOnly() {
        let log = [
            "Dec  3 10:00:00 legacy-1 sshd(pam_unix)[4410]: check pass; user unknown",
            "Dec  3 10:00:00 legacy-1 sshd(pam_unix)[4410]: authentication failure; logname= uid=0 euid=0 tty=NODEVssh ruser= rhost=203.0.113.40",
            "Dec  3 10:00:05 legacy-1 sshd(pam_unix)[4410]: authentication failure; logname= uid=0 euid=0 tty=NODEVssh ruser= rhost=203.0.113.40  user=root",
            "Dec  3 10:00:09 legacy-1 sshd(pam_unix)[4411]: authentication failure; logname= uid=0 euid=0 tty=NODEVssh ruser= rhost=203.0.113.41  user=ops",
            // Three minutes on: no connection is still unauthenticated, so the failures stand.
            "Dec  3 10:03:30 legacy-1 sshd(pam_unix)[4420]: session opened for user backup by (uid=0)"
        ]
        let (events, skipped) = Self.read(log)
        #expect(events == ["- unknown_user 203.0.113.40", "root invalid_password 203.0.113.40", "ops invalid_password 203.0.113.41"])
        #expect(!skipped.contains("attempt open at the log's end"))
        // The log ending within two minutes of a PAM failure leaves it open, reported; a failure
        // of another name on the same connection showed the first one was a guess.
        let (short, open) = Self.read(Array(log.prefix(4)))
        #expect(short == ["- unknown_user 203.0.113.40"])
        #expect(open.filter { $0 == "attempt open at the log's end" }.count == 2)
    }

    @Test("a PAM module's failure before the same user's success is dropped; before another user's it counts")
    func stackedModules() {
        let sameUser = [
            Self.line("10:00:00", 310, "pam_unix(sshd:auth): authentication failure; logname= uid=0 euid=0 tty=ssh ruser= rhost=192.0.2.80  user=rda"),
            Self.line("10:00:00", 310, "Accepted password for rda from 192.0.2.80 port 52100 ssh2")
        ]
        #expect(Self.read(sameUser).events == ["rda succeeded 192.0.2.80"])
        #expect(Self.read(sameUser).skipped == ["pam failure before a success"])
        let otherUser = [
            Self.line("10:00:00", 311, "pam_unix(sshd:auth): authentication failure; logname= uid=0 euid=0 tty=ssh ruser=root rhost=192.0.2.81"),
            Self.line("10:00:01", 311, "Accepted password for known from 192.0.2.81 port 52100 ssh2")
        ]
        #expect(Self.read(otherUser).events == ["root invalid_password 192.0.2.81", "known succeeded 192.0.2.81"])
    }

    @Test("message repeated N times counts N attempts; N past the limit is unreadable")
    func repeated() {
        let (events, _) = Self.read([
            Self.line("10:00:00", 320, "message repeated 5 times: [ Failed password for root from 198.51.100.20 port 4100 ssh2]")
        ])
        #expect(events == Array(repeating: "root invalid_password 198.51.100.20", count: 5))
        for count in ["0", "100001", "18446744073709551615", "-1", "x"] {
            let (none, skipped) = Self.read([
                Self.line("10:00:00", 320, "message repeated \(count) times: [ Failed password for root from 198.51.100.20 port 4100 ssh2]")
            ])
            #expect(none.isEmpty && skipped == ["unreadable repeat"], "\(count)")
        }
    }

    @Test("a cut without an address takes its connection's, from a line before or after; not another PID's")
    func cutTakesTheConnectionsAddress() {
        let before = [
            Self.line("10:00:00", 330, "Connection from 203.0.113.50 port 51353 on 192.0.2.1 port 22"),
            Self.line("10:00:03", 330, "Disconnecting: Too many authentication failures for root [preauth]")
        ]
        #expect(Self.read(before).events == ["root aborted:too_many_failures 203.0.113.50"])
        let after = [
            Self.line("10:00:03", 331, "Disconnecting: Too many authentication failures for root [preauth]"),
            Self.line("10:00:03", 331, "Connection closed by 203.0.113.51 port 7 [preauth]")
        ]
        #expect(Self.read(after).events == ["root aborted:too_many_failures 203.0.113.51"])
        let otherPID = [
            Self.line("10:00:03", 332, "Disconnecting: Too many authentication failures for root [preauth]"),
            Self.line("10:00:03", 333, "Connection closed by 203.0.113.52")
        ]
        #expect(Self.read(otherPID).events.isEmpty)
        #expect(Self.read(otherPID).skipped.contains("attempt open at the log's end"))
        // Past sshd's grace time it is given without an address.
        let late = otherPID + [Self.line("10:05:00", 334, "Server listening on :: port 22.")]
        #expect(Self.read(late).events == ["root aborted:too_many_failures -"])
    }

    @Test("a locked account's refusal waits for the connection's address")
    func lockedAccount() {
        let log = [
            Self.line("10:00:00", 340, "User root not allowed because account is locked"),
            Self.line("10:00:00", 340, "input_userauth_request: invalid user root [preauth]"),
            Self.line("10:00:00", 340, "error: Received disconnect from 198.51.100.34: 11: Bye Bye [preauth]")
        ]
        #expect(Self.read(log).events == ["root unknown_user 198.51.100.34"])
    }

    // MARK: Addresses a client cannot choose

    @Test(
        "the address is where sshd writes it, never in the user name or after ssh2:",
        arguments: [
            ("Failed password for invalid user from 10.9.9.9 from 192.0.2.30 port 58946 ssh2", "from 10.9.9.9", "192.0.2.30"),
            ("Failed password for invalid user t from 10.9.9.9 port 1 ssh2 from 192.0.2.30 port 58946 ssh2", "t from 10.9.9.9 port 1 ssh2", "192.0.2.30"),
            ("Failed password for invalid user t from 192.0.2.30 port 58946 ssh2: from 10.9.9.9 port 1 ssh2", "t", "192.0.2.30"),
            ("Failed password for u from 192.0.2.30 port 20000 ssh1: ruser from 10.9.9.9", "u", "192.0.2.30"),
            ("Failed password for invalid user x from 1.2.3.4 port 22 ssh2 from 2001:db8::44 port 22 ssh2", "x from 1.2.3.4 port 22 ssh2", "2001:db8::44"),
            ("Failed password for invalid user 2001:db8::66 from 192.0.2.31 port 22 ssh2", "2001:db8::66", "192.0.2.31"),
            ("Invalid user a from 10.9.9.9 from 192.0.2.32 port 22", "a from 10.9.9.9", "192.0.2.32"),
            ("Connection closed by authenticating user t 10.9.9.9 port 12345 192.0.2.33 port 46039 [preauth]", "t 10.9.9.9 port 12345", "192.0.2.33"),
            ("Bad protocol version identification 'x' from 10.9.9.9' from 192.0.2.34 port 31778", "-", "192.0.2.34")
        ] as [(String, String, String)])
    func injection(message: String, user: String, address: String) {
        let (events, _) = Self.read([Self.line("10:00:00", 350, message)], mode: .aggressive)
        #expect(events.count == 1)
        let parts = events.first?.split(separator: " ").map(String.init) ?? []
        #expect(parts.last == address, "\(events)")
        #expect(events.first?.hasPrefix(user + " ") == true, "\(events)")
    }

    @Test("a hostile name never hides the attempt: control characters, 100 KB, an empty name count without a user")
    func hostileNames() {
        for name in ["ev\u{1B}]0;pwn\u{07}il", String(repeating: "n", count: 100_000), "", "\u{7F}"] {
            let (events, _) = Self.read([Self.line("10:00:00", 351, "Failed password for invalid user \(name) from 192.0.2.35 port 22 ssh2")])
            #expect(events == ["- unknown_user 192.0.2.35"])
        }
    }

    // MARK: Line formats

    @Test("RFC 5424, journald JSON (text and byte-array messages), CRLF, PRI, kernel and Solaris prefixes, [sshd] tags")
    func lineFormats() throws {
        let message = "Failed password for root from 192.0.2.40 port 22 ssh2"
        let bytes = Array(message.utf8).map(String.init).joined(separator: ",")
        let lines = [
            "<38>1 2026-12-03T10:00:00.250-04:00 gw-5 sshd 57915 - - \(message)",
            "<38>1 2026-12-03T10:00:00Z gw-5 sshd 55555 - [timeQuality tzKnown=\"1\"][x@1 t=\"[b\\\"]\"] \(message)",
            #"{"__REALTIME_TIMESTAMP":"1796292000000000","_PID":"77","SYSLOG_IDENTIFIER":"sshd","_HOSTNAME":"gw-5","MESSAGE":"\#(message)"}"#,
            #"{"__REALTIME_TIMESTAMP":"1796292000000000","SYSLOG_PID":"78","SYSLOG_IDENTIFIER":"sshd-session","MESSAGE":[\#(bytes)]}"#,
            "Dec  3 10:00:00 gw-5 sshd[79]: \(message)\r",
            "<86>Dec  3 10:00:00 gw-5 sshd[80]: \(message)",
            "Dec  3 10:00:00 gw-5 sshd[81]: kernel:[  970.699396]: \(message)",
            "Dec  3 10:00:00 gw-5 sshd[82]: kernel: [ 970.699397] \(message)",
            "Dec  3 10:00:00 gw-5 sshd[83]: [ID 800047 auth.info] \(message)",
            "Dec  3 10:00:00 [sshd]: \(message)",
            "Dec  3 10:00:00 [sshd] \(message)"
        ]
        var parser = SSHDLogParser(startYear: 2026, timeZone: Self.utc)
        for (offset, line) in lines.enumerated() {
            let reading = parser.read(line, number: offset + 1)
            #expect(reading.events.map { Self.describe($0.event) } == ["root invalid_password 192.0.2.40"], "line \(offset + 1)")
        }
        let rfc = try #require(SSHDLine(Substring(lines[0])))
        #expect(rfc.host == "gw-5" && rfc.pid == "57915")
        #expect(rfc.stamp == .instant(try Timestamp(iso8601: "2026-12-03T14:00:00.250Z")))
        #expect(parser.sawLocalTime, "the BSD lines were read with a year")
        var isoOnly = SSHDLogParser(startYear: 2026, timeZone: Self.utc)
        _ = isoOnly.read(lines[0], number: 1)
        #expect(!isoOnly.sawLocalTime, "no BSD time: no year was used")
        for broken in [
            "<38>1 2026-12-03T10:00:00Z gw-5 sshd 1 - [unterminated \(message)", #"{"__REALTIME_TIMESTAMP":"-1","MESSAGE":"x"}"#,
            #"{"__REALTIME_TIMESTAMP":"18446744073709551615","SYSLOG_IDENTIFIER":"sshd","MESSAGE":"x"}"#,
            #"{"__REALTIME_TIMESTAMP":"1","SYSLOG_IDENTIFIER":"sshd","MESSAGE":[300]}"#, "{", "<999999>1 x"
        ] {
            #expect(parser.read(broken, number: 99).skipped == ["unreadable timestamp"], "\(broken)")
        }
    }

    // MARK: Aggressive mode

    @Test("aggressive mode reads pre-authentication abuse as sign_in_aborted; normal mode skips it")
    func aggressive() {
        let log = [
            Self.line("10:00:00", 360, "Did not receive identification string from 192.0.2.50 port 35836"),
            Self.line("10:00:00", 361, "Bad protocol version identification 'GET / HTTP/1.1' from 192.0.2.51 port 31778"),
            Self.line("10:00:00", 362, "Connection from 192.0.2.52 port 62004 on 192.0.2.1 port 22"),
            Self.line("10:00:00", 362, "error: kex_exchange_identification: client sent invalid protocol identifier \"\""),
            Self.line("10:00:00", 363, "Unable to negotiate with 192.0.2.53 port 55419: no matching cipher found. Their offer: aes256-cbc [preauth]"),
            Self.line("10:00:00", 364, "Received disconnect from 192.0.2.54 port 1684:14: No supported authentication methods available [preauth]"),
            Self.line("10:00:00", 365, "banner exchange: Connection from 192.0.2.55 port 22: invalid format"),
            Self.line("10:00:00", 366, "fatal: Timeout before authentication for 192.0.2.56 port 22"),
            Self.line("10:00:00", 367, "Connection closed by authenticating user root 192.0.2.57 port 46038 [preauth]")
        ]
        #expect(
            Self.read(log, mode: .aggressive).events == [
                "- aborted:no_identification 192.0.2.50", "- aborted:bad_protocol 192.0.2.51", "- aborted:bad_protocol 192.0.2.52",
                "- aborted:negotiation_failed 192.0.2.53", "- aborted:no_authentication_methods 192.0.2.54",
                "- aborted:banner_error 192.0.2.55", "- aborted:timeout 192.0.2.56", "root aborted:closed_before_authentication 192.0.2.57"
            ])
        let normal = Self.read(log, mode: .normal)
        #expect(normal.events.isEmpty)
        #expect(normal.skipped.filter { $0 == "pre-authentication (aggressive mode reads it)" }.count == 8)
    }
}
