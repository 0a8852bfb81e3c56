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

    @Test("Failed publickey of a known user is a key offered, no guess; of an invalid user a failure of method other")
    func failedPublickey() throws {
        #expect(Self.parse(Self.line("Failed publickey for git from 192.0.2.9 port 5000 ssh2: RSA SHA256:dGVzdA")) == .skipped("key not accepted"))
        let invalid = try #require(Self.event(Self.line("Failed publickey for invalid user git2 from 192.0.2.9 port 5000 ssh2: ED25519 SHA256:dGVzdA")))
        #expect(invalid.user == "git2")
        #expect(invalid.payload == .signInFailed(method: .other, reason: .unknownUser, clientAddress: "192.0.2.9"))
    }

    @Test("Failed none of a known user is a probe, skipped; of an invalid user a failure (fail2ban counts it)")
    func failedNone() throws {
        #expect(Self.parse(Self.line("Failed none for root from 192.0.2.1 port 22 ssh2 [preauth]")) == .skipped("probe (method none)"))
        #expect(Self.parse(Self.line("Failed none for")) == .skipped("unreadable attempt"))
        let invalid = try #require(Self.event(Self.line("Failed none for invalid user admin from 192.0.2.1 port 22 ssh2")))
        #expect(invalid.payload == .signInFailed(method: .other, reason: .unknownUser, clientAddress: "192.0.2.1"))
    }

    @Test("Invalid user (with or without port) is a failure of an unknown user, with the address")
    func invalidUser() throws {
        for message in ["Invalid user oracle from 203.0.113.77 port 40154", "Invalid user oracle from 203.0.113.77", "Illegal user oracle from 203.0.113.77"] {
            let event = try #require(Self.event(Self.line(message)))
            #expect(event.user == "oracle")
            #expect(event.payload == .signInFailed(method: .password, reason: .unknownUser, clientAddress: "203.0.113.77"))
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

    @Test("maximum authentication attempts exceeded is the server's cut: sign_in_aborted, too_many_failures")
    func maximumAttempts() throws {
        let valid = try #require(
            Self.event(
                Self.line(
                    "error: maximum authentication attempts exceeded for root from 192.0.2.50 port 41000 ssh2 [preauth]")))
        #expect(valid.user == "root")
        #expect(valid.payload == .signInAborted(reason: .tooManyFailures, clientAddress: "192.0.2.50"))
        let invalid = try #require(
            Self.event(
                Self.line(
                    "error: maximum authentication attempts exceeded for invalid user guest from 192.0.2.50 port 41002 ssh2 [preauth]")))
        #expect(invalid.user == "guest")
        #expect(invalid.payload == .signInAborted(reason: .tooManyFailures, clientAddress: "192.0.2.50"))
    }

    @Test(
        "Disconnecting USER ADDR: Too many authentication failures is the cut; a change of user is abuse; other reasons a disconnect",
        arguments: [
            ("Disconnecting authenticating user root 192.0.2.50 port 41000: Too many authentication failures [preauth]", "root", "too_many_failures"),
            ("Disconnecting invalid user guest 192.0.2.50 port 41002: Too many authentication failures [preauth]", "guest", "too_many_failures"),
            ("Disconnecting user root 192.0.2.50 port 41000: Too many authentication failures [preauth]", "root", "too_many_failures"),
            (
                "Disconnecting invalid user a b 192.0.2.50 port 41002: Change of username or service not allowed: (a b,ssh-connection) -> (x,ssh-connection) [preauth]",
                "a b", "user_changed"
            ),
            ("Disconnecting authenticating user root 192.0.2.50 port 41000: Bye [preauth]", nil, "disconnect")
        ] as [(String, String?, String)])
    func disconnecting(message: String, user: String?, kind: String) throws {
        guard let user else {
            #expect(Self.parse(Self.line(message)) == .skipped(kind))
            return
        }
        let event = try #require(Self.event(Self.line(message)))
        #expect(event.user == user)
        #expect(event.payload == .signInAborted(reason: SignInAbortReason(rawValue: kind)!, clientAddress: "192.0.2.50"))
    }

    @Test("Disconnecting: Too many authentication failures is the cut, with the connection's address from any line of it")
    func tooManyTakesTheConnectionsAddress() throws {
        var parser = SSHDLogParser(startYear: 2026, timeZone: Self.utc)
        let cut = parser.read("Dec  3 09:14:05 bastion-1 sshd[77]: Disconnecting: Too many authentication failures for root [preauth]", number: 1)
        #expect(cut.events.isEmpty && cut.skipped.isEmpty)
        let closed = parser.read("Dec  3 09:14:05 bastion-1 sshd[77]: Connection closed by 192.0.2.61 port 4 [preauth]", number: 2)
        #expect(closed.events.map(\.event.payload) == [.signInAborted(reason: .tooManyFailures, clientAddress: "192.0.2.61")])
        #expect(closed.events.map(\.line) == [1])
        #expect(closed.events.first?.event.user == "root")
        // Another process's line names no address for it.
        var other = SSHDLogParser(startYear: 2026, timeZone: Self.utc)
        _ = other.read("Dec  3 09:14:05 bastion-1 sshd[78]: Disconnecting: Too many authentication failures [preauth]", number: 1)
        #expect(other.read("Dec  3 09:14:06 bastion-1 sshd[79]: Connection closed by 192.0.2.61", number: 2).events.isEmpty)
        // At the log's end it still waits: not given (a longer log may name the address), reported.
        #expect(other.finish().skipped == ["attempt open at the log's end"])
        // Past sshd's grace time the connection cannot be open: the cut is given without an address.
        let later = other.read("Dec  3 09:16:07 bastion-1 sshd[80]: Server listening on :: port 22.", number: 3)
        #expect(later.events.isEmpty, "finish ended the log")
    }

    @Test("the server's cut is counted once: the error line and its Disconnecting line give one sign_in_aborted")
    func oneCutOneAbort() {
        var parser = SSHDLogParser(startYear: 2026, timeZone: Self.utc)
        let (events, skipped) = parser.readAll(SSHDFixtures.lines(SSHDFixtures.rollover))
        #expect(events.filter { $0.payload == .signInAborted(reason: .tooManyFailures, clientAddress: "192.0.2.50") }.count == 1)
        #expect(skipped == ["same cut"])
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
        "closed and reset connections and received disconnects after authentication are disconnects",
        arguments: [
            "Received disconnect from 198.51.100.20 port 52011:11: disconnected by user",
            "Received disconnect from 203.0.113.77 port 40328:11: Bye Bye [preauth]",
            "Received disconnect from 2001:db8::7 port 40328:11: Bye Bye [preauth]",
            "Connection closed by 203.0.113.77 port 40112",
            "Connection reset by peer"
        ])
    func disconnects(message: String) {
        #expect(Self.parse(Self.line(message)) == .skipped("disconnect"))
    }

    @Test(
        "normal mode: connections closed before authentication are skipped as aggressive mode's",
        arguments: [
            "Disconnected from invalid user support 203.0.113.77 port 40328 [preauth]",
            "Disconnected from authenticating user root 203.0.113.77 port 40112 [preauth]",
            "Disconnected from 203.0.113.77 port 40328 [preauth]",
            "Disconnected from user root 203.0.113.77 port 40112 [preauth]",
            "Connection closed by authenticating user root 203.0.113.77 port 40112 [preauth]",
            "Connection closed by 203.0.113.77 port 40112 [preauth]",
            "Connection reset by 203.0.113.77 port 40112 [preauth]",
            "error: kex_exchange_identification: Connection closed by remote host",
            "Unable to negotiate with 203.0.113.77 port 40112: no matching key exchange method found. [preauth]",
            "banner exchange: Connection from 203.0.113.77 port 40112: invalid format",
            "Timeout before authentication for 203.0.113.77 port 40112",
            "fatal: Timeout before authentication for 203.0.113.77 port 40112",
            "Did not receive identification string from 203.0.113.77 port 40112"
        ])
    func preauthenticationInNormalMode(message: String) {
        #expect(Self.parse(Self.line(message)) == .skipped("pre-authentication (aggressive mode reads it)"))
    }

    @Test(
        "PAM's lines that are no failure are skipped",
        arguments: [
            "PAM 2 more authentication failures; logname= uid=0 euid=0 tty=ssh ruser= rhost=203.0.113.77  user=root",
            "pam_unix(sshd:auth): check pass; user unknown",
            "pam_unix(sshd:session): session opened for user alice(uid=1001) by (uid=0)",
            "pam_unix(sshd:session): session closed for user alice",
            "PAM service(sshd) ignoring max retries; 6 > 3",
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
            "Postponed keyboard-interactive for bob from 2001:db8::5 port 61022 ssh2 [preauth]",
            "Starting session: shell on pts/0 for alice from 198.51.100.20 port 52011 id 0",
            "Received signal 15; terminating.",
            "Partial publickey for alice from 198.51.100.20 port 52011 ssh2: ED25519 SHA256:dGVzdA",
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

    @Test("users keep their spaces and a spoofed from: the address is the first one sshd's own suffix follows")
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

    @Test("a user the envelope refuses is dropped and the attempt kept: control characters, empty, too long")
    func unreadableUsers() throws {
        for user in ["ev\u{1B}[31mil", "", "tab\there", "c1\u{85}", String(repeating: "u", count: 257)] {
            let event = try #require(Self.event(Self.line("Failed password for invalid user \(user) from 192.0.2.3 port 22 ssh2")))
            #expect(event.user == nil)
            #expect(event.payload == .signInFailed(method: .password, reason: .unknownUser, clientAddress: "192.0.2.3"))
        }
        let empty = try #require(Self.event(Self.line("Invalid user  from 192.0.2.8 port 22")))
        #expect(empty.user == nil && empty.payload.clientAddress == "192.0.2.8")
        #expect(Self.event(Self.line("Failed password for invalid user \(String(repeating: "u", count: 256)) from 192.0.2.3 port 22 ssh2")) != nil)
    }

    @Test(
        "an attempt line whose user and address cannot be told apart is an unreadable attempt",
        arguments: [
            "Failed password for root", "Failed password for root from 192.0.2.7 po",
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
                "event a b 192.0.2.1", "event x from 10.0.0.1 port 22 ssh2 192.0.2.2", "event - 192.0.2.3", "unreadable attempt",
                "event root 192.0.2.4", "event root 192.0.2.5", "event root 192.0.2.6", "event root -", "event root -",
                "unreadable attempt", "other sshd", "other sshd", "not sshd", "unreadable timestamp", "unreadable timestamp",
                "unreadable timestamp", "event - 192.0.2.8", "not sshd", "unreadable timestamp", "unreadable timestamp",
                "unreadable timestamp", "unreadable attempt", "unreadable host"
            ])
    }

    @Test("huge lines read in linear time: a 1 MB user, a line of 200,000 froms; the attempt counts without the name")
    func hugeLines() {
        let user = String(repeating: "a", count: 1 << 20)
        let huge = Self.event(Self.line("Failed password for \(user) from 192.0.2.1 port 22 ssh2"))
        #expect(huge?.user == nil && huge?.payload.clientAddress == "192.0.2.1")
        let froms = String(repeating: " from", count: 200_000)
        // The last `from` is read as a host name: no address, no user (1 MB), the attempt kept.
        let froms1 = Self.event(Self.line("Failed password for x\(froms)"))
        #expect(froms1?.user == nil && froms1?.payload.clientAddress == nil)
        let invalid = Self.event(Self.line("Invalid user\(froms) from 192.0.2.1 port 1"))
        #expect(invalid?.user == nil && invalid?.payload.clientAddress == "192.0.2.1")
    }
}
