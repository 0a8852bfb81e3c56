import Foundation
import Testing
@testable import OnboardingImport
import OnboardingModel

@Suite struct SSHDLogParserTests {
    static let utc = TimeZone(identifier: "UTC") ?? .gmt
    static let berlin = TimeZone(identifier: "Europe/Berlin") ?? .gmt

    /// One line through a fresh parser (2026, UTC).
    static func parse(_ line: String, year: Int = 2026, timeZone: TimeZone = utc) -> AuthLogLine {
        var parser = SSHDLogParser(startYear: year, timeZone: timeZone)
        return parser.parse(line)
    }

    /// The event of one line, or `nil` when it is skipped.
    static func event(_ line: String) -> AuthLogEvent? {
        guard case .event(let event) = parse(line) else { return nil }
        return event
    }

    static func at(_ text: String) throws -> Timestamp { try Timestamp(iso8601: text) }

    /// `Dec  3 09:14:05 bastion-1 sshd[4101]: MESSAGE`.
    static func line(_ message: String) -> String { "Dec  3 09:14:05 bastion-1 sshd[4101]: " + message }

    // MARK: Mapping

    @Test("Failed password: a valid user is invalid_password, an invalid user unknown_user; address, user, host and time")
    func failedPassword() throws {
        let valid = try #require(Self.event(Self.line("Failed password for root from 203.0.113.77 port 40112 ssh2")))
        #expect(
            valid
                == AuthLogEvent(
                    at: try Self.at("2026-12-03T09:14:05Z"), host: "bastion-1", user: "root",
                    payload: .signInFailed(method: .password, reason: .invalidPassword, clientAddress: "203.0.113.77")))
        let invalid = try #require(Self.event(Self.line("Failed password for invalid user oracle from 203.0.113.77 port 40154 ssh2")))
        #expect(invalid.user == "oracle")
        #expect(invalid.payload == .signInFailed(method: .password, reason: .unknownUser, clientAddress: "203.0.113.77"))
    }

    @Test("Failed keyboard-interactive/pam is a password failure, for valid and invalid users")
    func failedKeyboardInteractive() throws {
        let valid = try #require(Self.event(Self.line("Failed keyboard-interactive/pam for bob from 2001:db8::5 port 61022 ssh2")))
        #expect(valid.user == "bob")
        #expect(valid.payload == .signInFailed(method: .password, reason: .invalidPassword, clientAddress: "2001:db8::5"))
        let invalid = try #require(Self.event(Self.line("Failed keyboard-interactive/pam for invalid user zed from 192.0.2.1 port 2 ssh2")))
        #expect(invalid.payload == .signInFailed(method: .password, reason: .unknownUser, clientAddress: "192.0.2.1"))
    }

    @Test("Failed publickey is method other; the key after ssh2: is ignored")
    func failedPublickey() throws {
        let valid = try #require(Self.event(Self.line("Failed publickey for git from 192.0.2.9 port 5000 ssh2: RSA SHA256:dGVzdA")))
        #expect(valid.user == "git")
        #expect(valid.payload == .signInFailed(method: .other, reason: .invalidPassword, clientAddress: "192.0.2.9"))
        let invalid = try #require(Self.event(Self.line("Failed publickey for invalid user git2 from 192.0.2.9 port 5000 ssh2: ED25519 SHA256:dGVzdA")))
        #expect(invalid.user == "git2")
        #expect(invalid.payload == .signInFailed(method: .other, reason: .unknownUser, clientAddress: "192.0.2.9"))
    }

    @Test(
        "Failed none is a probe, skipped",
        arguments: [
            "Failed none for invalid user admin from 192.0.2.1 port 22 ssh2",
            "Failed none for root from 192.0.2.1 port 22 ssh2 [preauth]",
            "Failed none for"
        ])
    func failedNone(message: String) {
        #expect(Self.parse(Self.line(message)) == .skipped("probe (method none)"))
    }

    @Test("Invalid user (with or without port) is sign_in_started, the user on the event, the address nowhere")
    func invalidUser() throws {
        for message in ["Invalid user oracle from 203.0.113.77 port 40154", "Invalid user oracle from 203.0.113.77"] {
            let event = try #require(Self.event(Self.line(message)))
            #expect(event.user == "oracle")
            #expect(event.payload == .signInStarted(method: .password, identifierKind: nil))
        }
    }

    @Test(
        "Accepted password and keyboard-interactive are password; publickey, gssapi-with-mic and hostbased are other",
        arguments: [
            ("password", SignInMethod.password), ("keyboard-interactive/pam", .password),
            ("publickey", .other), ("gssapi-with-mic", .other), ("hostbased", .other)
        ])
    func accepted(method: String, expected: SignInMethod) throws {
        let keyInfo = method == "publickey" ? ": ED25519 SHA256:dGVzdA" : ""
        let event = try #require(Self.event(Self.line("Accepted \(method) for alice from 198.51.100.20 port 52011 ssh2\(keyInfo)")))
        #expect(event.user == "alice")
        #expect(event.payload == .signInSucceeded(method: expected, secondFactor: false, clientAddress: "198.51.100.20"))
    }

    @Test("maximum authentication attempts exceeded is the throttle, retry after the line's own time")
    func maximumAttempts() throws {
        let at = try Self.at("2026-12-03T09:14:05Z")
        let valid = try #require(
            Self.event(
                Self.line(
                    "error: maximum authentication attempts exceeded for root from 192.0.2.50 port 41000 ssh2 [preauth]")))
        #expect(valid.user == "root")
        #expect(valid.payload == .signInThrottled(method: .password, retryAfter: at, clientAddress: "192.0.2.50"))
        let invalid = try #require(
            Self.event(
                Self.line(
                    "error: maximum authentication attempts exceeded for invalid user guest from 192.0.2.50 port 41002 ssh2 [preauth]")))
        #expect(invalid.user == "guest")
        #expect(invalid.payload == .signInThrottled(method: .password, retryAfter: at, clientAddress: "192.0.2.50"))
    }

    @Test(
        "every Disconnecting line, the server's cut included, is a disconnect: the error line before it is the throttle",
        arguments: [
            "Disconnecting authenticating user root 192.0.2.50 port 41000: Too many authentication failures [preauth]",
            "Disconnecting invalid user guest 192.0.2.50 port 41002: Too many authentication failures [preauth]",
            "Disconnecting user root 192.0.2.50 port 41000: Too many authentication failures [preauth]",
            "Disconnecting: Too many authentication failures [preauth]",
            "Disconnecting: Too many authentication failures for root [preauth]"
        ])
    func disconnecting(message: String) {
        #expect(Self.parse(Self.line(message)) == .skipped("disconnect"))
    }

    @Test("the server's cut is counted once: the error line and its Disconnecting line give one throttle")
    func oneCutOneThrottle() {
        var parser = SSHDLogParser(startYear: 2026, timeZone: Self.utc)
        let events = SSHDFixtures.lines(SSHDFixtures.rollover).map { parser.parse($0) }
        let throttles = events.filter { if case .event(let e) = $0, case .signInThrottled = e.payload { true } else { false } }
        #expect(throttles.count == 1)
        #expect(events.last == .skipped("disconnect"))
    }

    @Test("Disconnected from user after a session is signed_out by the user")
    func signedOut() throws {
        let event = try #require(Self.event(Self.line("Disconnected from user alice 198.51.100.20 port 52011")))
        #expect(event.user == "alice")
        #expect(event.payload == .signedOut(reason: .user))
        let spaced = try #require(Self.event(Self.line("Disconnected from user a b 198.51.100.20 port 52011")))
        #expect(spaced.user == "a b")
    }

    @Test(
        "preauth disconnects, closed and reset connections and received disconnects are skipped",
        arguments: [
            "Received disconnect from 198.51.100.20 port 52011:11: disconnected by user",
            "Received disconnect from 203.0.113.77 port 40328:11: Bye Bye [preauth]",
            "Disconnected from invalid user support 203.0.113.77 port 40328 [preauth]",
            "Disconnected from authenticating user root 203.0.113.77 port 40112 [preauth]",
            "Disconnected from 203.0.113.77 port 40328 [preauth]",
            "Disconnected from user root 203.0.113.77 port 40112 [preauth]",
            "Connection closed by authenticating user root 203.0.113.77 port 40112 [preauth]",
            "Connection closed by 203.0.113.77 port 40112 [preauth]",
            "Connection reset by 203.0.113.77 port 40112 [preauth]",
            "Connection reset by peer"
        ])
    func disconnects(message: String) {
        #expect(Self.parse(Self.line(message)) == .skipped("disconnect"))
    }

    @Test(
        "PAM's lines are skipped: the sshd line of the same attempt is the event",
        arguments: [
            "pam_unix(sshd:auth): authentication failure; logname= uid=0 euid=0 tty=ssh ruser= rhost=203.0.113.77  user=root",
            "PAM 2 more authentication failures; logname= uid=0 euid=0 tty=ssh ruser= rhost=203.0.113.77  user=root",
            "pam_unix(sshd:auth): check pass; user unknown",
            "pam_unix(sshd:session): session opened for user alice(uid=1001) by (uid=0)",
            "pam_unix(sshd:session): session closed for user alice",
            "PAM service(sshd) ignoring max retries; 6 > 3",
            "error: PAM: Authentication failure for illegal user x from 203.0.113.77",
            "pam_faillock(sshd:auth): User unknown"
        ])
    func pam(message: String) {
        #expect(Self.parse(Self.line(message)) == .skipped("pam"))
    }

    @Test("pam_faillock's temporary lock is a throttle of the user, without an address")
    func faillock() throws {
        let event = try #require(
            Self.event(
                Self.line(
                    "pam_faillock(sshd:auth): Consecutive login failures for user alice account temporarily locked")))
        #expect(event.user == "alice")
        #expect(event.payload == .signInThrottled(method: .password, retryAfter: try Self.at("2026-12-03T09:14:05Z"), clientAddress: nil))
    }

    @Test(
        "other sshd lines are skipped as other sshd",
        arguments: [
            "Server listening on 0.0.0.0 port 22.",
            "Server listening on :: port 22.",
            "Connection from 203.0.113.77 port 40112 on 192.0.2.10 port 22 rdomain \"\"",
            "Postponed keyboard-interactive for bob from 2001:db8::5 port 61022 ssh2 [preauth]",
            "Starting session: shell on pts/0 for alice from 198.51.100.20 port 52011 id 0",
            "Received signal 15; terminating.",
            "error: kex_exchange_identification: Connection closed by remote host",
            "Unable to negotiate with 203.0.113.77 port 40112: no matching key exchange method found. [preauth]",
            "banner exchange: Connection from 203.0.113.77 port 40112: invalid format",
            "Timeout before authentication for 203.0.113.77 port 40112",
            "Partial publickey for alice from 198.51.100.20 port 52011 ssh2: ED25519 SHA256:dGVzdA",
            "fatal: Timeout before authentication for 203.0.113.77 port 40112",
            "Failed",
            ""
        ])
    func otherSSHD(message: String) {
        #expect(Self.parse(Self.line(message)) == .skipped("other sshd"))
    }

    @Test("other programs are not sshd; sshd, sshd-session and sshd-auth are, with or without a pid")
    func programs() {
        for program in ["CRON[4121]", "sudo", "systemd-logind[612]", "sshd-keygen[3]", "sshdx[1]", "sshd[]", "sshd[1"] {
            #expect(Self.parse("Dec  3 09:14:05 bastion-1 \(program): Failed password for root from 192.0.2.1 port 2 ssh2") == .skipped("not sshd"))
        }
        for program in ["sshd[1]", "sshd", "sshd-session[1]", "sshd-auth[9]"] {
            let line = "Dec  3 09:14:05 bastion-1 \(program): Failed password for root from 192.0.2.1 port 2 ssh2"
            #expect(Self.event(line)?.host == "bastion-1", "\(program)")
        }
    }

    @Test("a line without a host field has no host; a host that is no device id is unreadable")
    func hosts() {
        let hostless = Self.event("Dec  3 09:14:05 sshd[1]: Failed password for root from 192.0.2.1 port 2 ssh2")
        #expect(hostless?.host == nil && hostless?.user == "root")
        #expect(Self.event("Dec  3 09:14:05 2001:db8::1 sshd[1]: Failed password for root from 192.0.2.1 port 2 ssh2")?.host == "2001:db8::1")
        #expect(Self.parse("Dec  3 09:14:05 bástion sshd[1]: Failed password for root from 192.0.2.1 port 2 ssh2") == .skipped("unreadable host"))
    }

    // MARK: Users and addresses

    @Test("users keep their spaces and a spoofed from: the suffix is read from the right")
    func usersFromTheRight() throws {
        let spaced = try #require(Self.event(Self.line("Invalid user a b from 1.2.3.4 port 22")))
        #expect(spaced.user == "a b")
        let spoofed = try #require(
            Self.event(
                Self.line(
                    "Failed password for invalid user x from 10.0.0.1 port 22 ssh2 from 192.0.2.2 port 22 ssh2")))
        #expect(spoofed.user == "x from 10.0.0.1 port 22 ssh2")
        #expect(spoofed.payload == .signInFailed(method: .password, reason: .unknownUser, clientAddress: "192.0.2.2"))
        let named = try #require(Self.event(Self.line("Failed password for invalid from 192.0.2.2 port 22 ssh2")))
        #expect(named.user == "invalid")
        #expect(named.payload == .signInFailed(method: .password, reason: .invalidPassword, clientAddress: "192.0.2.2"))
    }

    @Test(
        "addresses are canonical; a host name, a zone or garbage gives no address",
        arguments: [
            ("::ffff:192.0.2.6", "192.0.2.6"), ("2001:DB8:0::1", "2001:db8::1"), ("192.0.2.4", "192.0.2.4"),
            ("fe80::1%eth0", nil), ("scanner.example.net", nil), ("10.0.0.256", nil), ("[2001:db8::1]", nil)
        ] as [(String, String?)])
    func addresses(address: String, canonical: String?) throws {
        let event = try #require(Self.event(Self.line("Failed password for root from \(address) port 22 ssh2")))
        #expect(event.payload == .signInFailed(method: .password, reason: .invalidPassword, clientAddress: canonical))
    }

    @Test("ports are checked as digits, never converted: 0 and 20 digits read")
    func ports() {
        for port in ["0", "99999999999999999999"] {
            #expect(Self.event(Self.line("Failed password for root from 192.0.2.4 port \(port) ssh2"))?.user == "root")
        }
        #expect(Self.parse(Self.line("Failed password for root from 192.0.2.4 port x ssh2")) == .skipped("unreadable attempt"))
    }

    @Test("a user the envelope refuses is unreadable: control characters, empty, too long")
    func unreadableUsers() {
        for user in ["ev\u{1B}[31mil", "", "tab\there", "c1\u{85}", String(repeating: "u", count: 257)] {
            #expect(Self.parse(Self.line("Failed password for invalid user \(user) from 192.0.2.3 port 22 ssh2")) == .skipped("unreadable user"))
        }
        #expect(Self.parse(Self.line("Invalid user  from 192.0.2.8 port 22")) == .skipped("unreadable user"))
        #expect(Self.event(Self.line("Failed password for invalid user \(String(repeating: "u", count: 256)) from 192.0.2.3 port 22 ssh2")) != nil)
    }

    @Test(
        "an attempt line whose user and address cannot be told apart is an unreadable attempt",
        arguments: [
            "Failed password for root", "Failed password for root from 192.0.2.7 po", "Failed password for root from 192.0.2.7",
            "Failed password for root from  port 22 ssh2", "Failed password for root from 192.0.2.7 port 22 ssh",
            "Failed password root from 192.0.2.7 port 22 ssh2", "Accepted password for alice",
            "Invalid user x", "Invalid user x from ", "error: maximum authentication attempts exceeded for root",
            "Failed password for \u{301}from 192.0.2.10 port 22 ssh2"
        ])
    func unreadableAttempts(message: String) {
        #expect(Self.parse(Self.line(message)) == .skipped("unreadable attempt"))
    }

    @Test("hostile lines never crash, and each reads as expected")
    func hostileLines() {
        var parser = SSHDLogParser(startYear: 2026, timeZone: Self.utc)
        let kinds = SSHDFixtures.hostile.map { line -> String in
            switch parser.parse(line) {
            case .event(let event): "event \(event.user ?? "-") \(event.payload.clientAddress ?? "-")"
            case .skipped(let kind): kind
            }
        }
        #expect(
            kinds == [
                "event a b -", "event x from 10.0.0.1 port 22 ssh2 192.0.2.2", "unreadable user", "unreadable attempt",
                "event root 192.0.2.4", "event root 192.0.2.5", "event root 192.0.2.6", "event root -", "event root -",
                "unreadable attempt", "other sshd", "other sshd", "not sshd", "unreadable timestamp", "unreadable timestamp",
                "unreadable timestamp", "unreadable user", "not sshd", "unreadable timestamp", "unreadable timestamp",
                "unreadable timestamp", "unreadable attempt", "unreadable host"
            ])
    }

    @Test("huge lines read in linear time: a 1 MB user, a line of 200,000 froms")
    func hugeLines() {
        let user = String(repeating: "a", count: 1 << 20)
        #expect(Self.parse(Self.line("Failed password for \(user) from 192.0.2.1 port 22 ssh2")) == .skipped("unreadable user"))
        let froms = String(repeating: " from", count: 200_000)
        #expect(Self.parse(Self.line("Failed password for x\(froms)")) == .skipped("unreadable attempt"))
        #expect(Self.parse(Self.line("Invalid user\(froms) from 192.0.2.1 port 1")) == .skipped("unreadable user"))
    }
}
