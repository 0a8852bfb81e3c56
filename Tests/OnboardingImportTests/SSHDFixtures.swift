/// sshd log fixtures, written for these tests (no real server's log): the lines OpenSSH writes,
/// with documentation addresses (192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24, 2001:db8::/32).
/// One string per scenario, lines separated by `\n`; ``lines(_:)`` splits one.
enum SSHDFixtures {
    /// The lines of a fixture.
    static func lines(_ fixture: String) -> [String] {
        fixture.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    /// The address of ``sprayAndHonest``'s spray.
    static let sprayAddress = "203.0.113.77"
    /// The 12 users the spray tries, one password each, in order (root and admin exist on the
    /// host; the others do not).
    static let sprayedUsers = [
        "root", "admin", "oracle", "postgres", "test", "ubuntu", "git",
        "deploy", "jenkins", "ftpuser", "guest", "support"
    ]

    /// Host `bastion-1`, December 2026, BSD syslog, UTC (`/var/log/auth.log` of Debian):
    /// 203.0.113.77 sprays the 12 ``sprayedUsers`` with one password each; alice (from
    /// 198.51.100.20) mistypes twice, then signs in, and signs out; bob (from 2001:db8::5, through
    /// keyboard-interactive/PAM) mistypes once, then signs in; carol signs in with a key. The
    /// other programs' lines (CRON, systemd-logind) are skipped.
    static let sprayAndHonest = """
        Dec  3 09:14:02 bastion-1 sshd[4101]: Connection from 203.0.113.77 port 40112 on 192.0.2.10 port 22 rdomain ""
        Dec  3 09:14:03 bastion-1 sshd[4101]: pam_unix(sshd:auth): authentication failure; logname= uid=0 euid=0 tty=ssh ruser= rhost=203.0.113.77  user=root
        Dec  3 09:14:05 bastion-1 sshd[4101]: Failed password for root from 203.0.113.77 port 40112 ssh2
        Dec  3 09:14:05 bastion-1 sshd[4101]: Connection closed by authenticating user root 203.0.113.77 port 40112 [preauth]
        Dec  3 09:14:09 bastion-1 sshd[4104]: pam_unix(sshd:auth): authentication failure; logname= uid=0 euid=0 tty=ssh ruser= rhost=203.0.113.77  user=admin
        Dec  3 09:14:11 bastion-1 sshd[4104]: Failed password for admin from 203.0.113.77 port 40130 ssh2
        Dec  3 09:14:11 bastion-1 sshd[4104]: Connection closed by authenticating user admin 203.0.113.77 port 40130 [preauth]
        Dec  3 09:14:15 bastion-1 sshd[4107]: Invalid user oracle from 203.0.113.77 port 40154
        Dec  3 09:14:15 bastion-1 sshd[4107]: pam_unix(sshd:auth): check pass; user unknown
        Dec  3 09:14:15 bastion-1 sshd[4107]: pam_unix(sshd:auth): authentication failure; logname= uid=0 euid=0 tty=ssh ruser= rhost=203.0.113.77
        Dec  3 09:14:17 bastion-1 sshd[4107]: Failed password for invalid user oracle from 203.0.113.77 port 40154 ssh2
        Dec  3 09:14:21 bastion-1 sshd[4110]: Invalid user postgres from 203.0.113.77 port 40170
        Dec  3 09:14:23 bastion-1 sshd[4110]: Failed password for invalid user postgres from 203.0.113.77 port 40170 ssh2
        Dec  3 09:14:27 bastion-1 sshd[4113]: Invalid user test from 203.0.113.77 port 40188
        Dec  3 09:14:29 bastion-1 sshd[4113]: Failed password for invalid user test from 203.0.113.77 port 40188 ssh2
        Dec  3 09:14:29 bastion-1 sshd[4113]: Connection closed by invalid user test 203.0.113.77 port 40188 [preauth]
        Dec  3 09:14:33 bastion-1 sshd[4116]: Invalid user ubuntu from 203.0.113.77 port 40202
        Dec  3 09:14:35 bastion-1 sshd[4116]: Failed password for invalid user ubuntu from 203.0.113.77 port 40202 ssh2
        Dec  3 09:14:39 bastion-1 sshd[4119]: Invalid user git from 203.0.113.77 port 40216
        Dec  3 09:14:41 bastion-1 sshd[4119]: Failed password for invalid user git from 203.0.113.77 port 40216 ssh2
        Dec  3 09:15:01 bastion-1 CRON[4121]: pam_unix(cron:session): session opened for user root(uid=0) by (uid=0)
        Dec  3 09:15:02 bastion-1 sshd[4122]: Invalid user deploy from 203.0.113.77 port 40240
        Dec  3 09:15:04 bastion-1 sshd[4122]: Failed password for invalid user deploy from 203.0.113.77 port 40240 ssh2
        Dec  3 09:15:08 bastion-1 sshd[4125]: Invalid user jenkins from 203.0.113.77 port 40262
        Dec  3 09:15:10 bastion-1 sshd[4125]: Failed password for invalid user jenkins from 203.0.113.77 port 40262 ssh2
        Dec  3 09:15:14 bastion-1 sshd[4128]: Invalid user ftpuser from 203.0.113.77 port 40284
        Dec  3 09:15:16 bastion-1 sshd[4128]: Failed password for invalid user ftpuser from 203.0.113.77 port 40284 ssh2
        Dec  3 09:15:20 bastion-1 sshd[4131]: Invalid user guest from 203.0.113.77 port 40306
        Dec  3 09:15:22 bastion-1 sshd[4131]: Failed password for invalid user guest from 203.0.113.77 port 40306 ssh2
        Dec  3 09:15:26 bastion-1 sshd[4134]: Invalid user support from 203.0.113.77 port 40328
        Dec  3 09:15:28 bastion-1 sshd[4134]: Failed password for invalid user support from 203.0.113.77 port 40328 ssh2
        Dec  3 09:15:28 bastion-1 sshd[4134]: Received disconnect from 203.0.113.77 port 40328:11: Bye Bye [preauth]
        Dec  3 09:15:28 bastion-1 sshd[4134]: Disconnected from invalid user support 203.0.113.77 port 40328 [preauth]
        Dec  3 09:20:41 bastion-1 sshd[4170]: Failed password for alice from 198.51.100.20 port 52011 ssh2
        Dec  3 09:20:47 bastion-1 sshd[4170]: Failed password for alice from 198.51.100.20 port 52011 ssh2
        Dec  3 09:20:52 bastion-1 sshd[4170]: Accepted password for alice from 198.51.100.20 port 52011 ssh2
        Dec  3 09:20:52 bastion-1 sshd[4170]: pam_unix(sshd:session): session opened for user alice(uid=1001) by (uid=0)
        Dec  3 09:20:52 bastion-1 systemd-logind[612]: New session 41 of user alice.
        Dec  3 09:31:05 bastion-1 sshd[4201]: Postponed keyboard-interactive for bob from 2001:db8::5 port 61022 ssh2 [preauth]
        Dec  3 09:31:09 bastion-1 sshd[4201]: Failed keyboard-interactive/pam for bob from 2001:db8::5 port 61022 ssh2
        Dec  3 09:31:15 bastion-1 sshd[4201]: Accepted keyboard-interactive/pam for bob from 2001:db8::5 port 61022 ssh2
        Dec  3 09:31:15 bastion-1 sshd[4201]: pam_unix(sshd:session): session opened for user bob(uid=1002) by (uid=0)
        Dec  3 09:40:00 bastion-1 sshd[4230]: Accepted publickey for carol from 198.51.100.31 port 49152 ssh2: ED25519 SHA256:Zm9yIHRlc3RzIG9ubHksIG5vdCBhIHJlYWwga2V5
        Dec  3 10:02:13 bastion-1 sshd[4170]: Received disconnect from 198.51.100.20 port 52011:11: disconnected by user
        Dec  3 10:02:13 bastion-1 sshd[4170]: Disconnected from user alice 198.51.100.20 port 52011
        Dec  3 10:02:13 bastion-1 sshd[4170]: pam_unix(sshd:session): session closed for user alice
        """

    /// A year's end in BSD syslog (host `bastion-1`, UTC): Dec 31 2026 → Jan 1 2027.
    static let rollover = """
        Dec 31 23:59:58 bastion-1 sshd[900]: Failed password for root from 192.0.2.50 port 41000 ssh2
        Jan  1 00:00:03 bastion-1 sshd[900]: Failed password for root from 192.0.2.50 port 41000 ssh2
        Jan  1 00:00:09 bastion-1 sshd[900]: error: maximum authentication attempts exceeded for root from 192.0.2.50 port 41000 ssh2 [preauth]
        Jan  1 00:00:09 bastion-1 sshd[900]: Disconnecting authenticating user root 192.0.2.50 port 41000: Too many authentication failures [preauth]
        """

    /// Europe/Berlin's DST changes of 2026 in BSD syslog (host `fra-gw`): clocks go 02:00 →
    /// 03:00 on Mar 29 and 03:00 → 02:00 on Oct 25 (times outside the repeated hour).
    static let berlinDST = """
        Mar 29 01:59:30 fra-gw sshd[77]: Failed password for dora from 198.51.100.40 port 50000 ssh2
        Mar 29 03:00:30 fra-gw sshd[77]: Accepted password for dora from 198.51.100.40 port 50000 ssh2
        Oct 25 01:59:30 fra-gw sshd[78]: Failed password for dora from 198.51.100.40 port 50001 ssh2
        Oct 25 03:00:30 fra-gw sshd[78]: Accepted password for dora from 198.51.100.40 port 50001 ssh2
        """

    /// The same kind of lines with an offset: rsyslog's RFC 3339 (`RSYSLOG_FileFormat`) and
    /// journalctl `-o short-iso` / `-o short-iso-precise`, from OpenSSH 9.8's sshd-session.
    static let iso = """
        2026-12-01T15:30:30.123456+01:00 bastion-2 sshd[2001]: Failed password for erin from 192.0.2.60 port 33000 ssh2
        2026-12-01T14:30:31.5Z bastion-2 sshd[2001]: Accepted password for erin from 192.0.2.60 port 33000 ssh2
        2026-12-01T15:30:32+0100 bastion-2 sshd-session[2002]: Failed password for invalid user x from 192.0.2.61 port 33001 ssh2
        2026-12-01T09:30:33.999999-0500 bastion-2 sshd-session[2002]: Invalid user y from 192.0.2.61 port 33002
        """

    /// Lines a hostile or broken log may hold; none may crash the parser.
    static let hostile = [
        "Dec  3 09:00:00 bastion-1 sshd[1]: Invalid user a b from 192.0.2.1 port 22",
        "Dec  3 09:00:00 bastion-1 sshd[1]: Failed password for invalid user x from 10.0.0.1 port 22 ssh2 from 192.0.2.2 port 22 ssh2",
        "Dec  3 09:00:00 bastion-1 sshd[1]: Failed password for invalid user ev\u{1B}[31mil from 192.0.2.3 port 22 ssh2",
        "Dec  3 09:00:00 bastion-1 sshd[1]: Failed password for root",
        "Dec  3 09:00:00 bastion-1 sshd[1]: Failed password for root from 192.0.2.4 port 0 ssh2",
        "Dec  3 09:00:00 bastion-1 sshd[1]: Failed password for root from 192.0.2.5 port 99999999999999999999 ssh2",
        "Dec  3 09:00:00 bastion-1 sshd[1]: Failed password for root from ::ffff:192.0.2.6 port 22 ssh2",
        "Dec  3 09:00:00 bastion-1 sshd[1]: Failed password for root from fe80::1%eth0 port 22 ssh2",
        "Dec  3 09:00:00 bastion-1 sshd[1]: Failed password for root from scanner.example.net port 22 ssh2",
        "Dec  3 09:00:00 bastion-1 sshd[1]: Failed password for root from 192.0.2.7 po",
        "Dec  3 09:00:00 bastion-1 sshd[1]: Failed",
        "Dec  3 09:00:00 bastion-1 sshd[1]:",
        "Dec  3 09:00:00 bastion-1",
        "Dec  3 09:00",
        "",
        "\u{0}\u{1}\u{7F}",
        "Dec  3 09:00:00 bastion-1 sshd[1]: Invalid user  from 192.0.2.8 port 22",
        "Dec  3 09:00:00 bastion-1 sshd[x]: Failed password for root from 192.0.2.9 port 22 ssh2",
        "Dec 32 09:00:00 bastion-1 sshd[1]: Failed password for root from 192.0.2.9 port 22 ssh2",
        "Feb 30 09:00:00 bastion-1 sshd[1]: Failed password for root from 192.0.2.9 port 22 ssh2",
        "2026-13-01T00:00:00Z bastion-1 sshd[1]: Failed password for root from 192.0.2.9 port 22 ssh2",
        "Dec  3 09:00:00 bastion-1 sshd[1]: Failed password for \u{301}from 192.0.2.10 port 22 ssh2",
        "Dec  3 09:00:00 bástion sshd[1]: Failed password for root from 192.0.2.11 port 22 ssh2"
    ]
}
