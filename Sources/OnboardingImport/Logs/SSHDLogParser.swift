import Foundation
import OnboardingModel

/// Reads the lines of an OpenSSH sshd log (`/var/log/auth.log`, `/var/log/secure`, or
/// `journalctl -u ssh -o short-iso`) into authentication events, one line at a time
/// (docs/importers.md § OpenSSH sshd).
///
/// A line is `TIME HOST PROGRAM[PID]: MESSAGE`. `TIME` is a BSD-syslog time (`Dec  1 15:30:30`,
/// local, no year), RFC 3339 as rsyslog writes it (`2026-12-01T15:30:30.123456+01:00`, or `Z`),
/// or journalctl's `short-iso` / `short-iso-precise` (`2026-12-01T15:30:30+0100`); a fraction is
/// cut to milliseconds. `PROGRAM` is `sshd`, `sshd-session` or `sshd-auth` (newer OpenSSH logs
/// from those), with or without `[PID]`; any other program's line is skipped as `"not sshd"`.
///
/// ```swift
/// var parser = SSHDLogParser(startYear: 2026, timeZone: .gmt)
/// parser.parse("Dec  1 15:30:30 bastion-1 sshd[811]: Failed password for root from 203.0.113.9 port 50122 ssh2")
/// // .event(at 2026-12-01T15:30:30Z, host "bastion-1", user "root",
/// //        .signInFailed(method: .password, reason: .invalidPassword, clientAddress: "203.0.113.9"))
/// ```
///
/// The parser holds state only for the year of BSD-syslog times: it starts at `startYear`
/// (``YearInference`` finds it from the file), and every BSD-syslog line, of any program, whose
/// month is two or more months earlier than the previous BSD-syslog line's moves it to the next
/// year (Dec → Jan). A line one month earlier is taken as written out of order (a Jan 31 line
/// after a Feb 1 line) and stays in the year. Lines with an offset neither use nor move it.
public struct SSHDLogParser: Sendable {
    private var tracker: BSDYearTracker
    private let startYear: Int
    private let calendar: Calendar

    /// A parser whose first BSD-syslog line is in `startYear`; BSD-syslog times are local times
    /// of `timeZone` (DST included); times with an offset ignore it.
    public init(startYear: Int, timeZone: TimeZone) {
        self.startYear = startYear
        tracker = BSDYearTracker()
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        self.calendar = calendar
    }

    /// What `line` (without its newline) says: an event, or the kind of line it is. Never fails.
    public mutating func parse(_ line: String) -> AuthLogLine {
        guard let (stamp, rest) = SyslogTimestamp.read(Substring(line)) else {
            return .skipped(SSHDSkip.unreadableTimestamp)
        }
        var year = startYear
        if case .local(let local) = stamp { year = startYear + tracker.note(month: local.month) }
        guard let header = SyslogHeader(rest), header.isSSHD else { return .skipped(SSHDSkip.notSSHD) }
        guard let at = instant(stamp, year: year) else { return .skipped(SSHDSkip.unreadableTimestamp) }
        switch SSHDMessage.read(header.message) {
        case .skipped(let kind):
            return .skipped(kind)
        case .event(let kind, let user, let address):
            return event(kind, at: at, host: header.host, user: String(user), address: address)
        }
    }

    /// The event, once its user and host are known to be fit for the envelope.
    private func event(_ kind: SSHDEventKind, at: Timestamp, host: Substring?, user: String, address: Substring?) -> AuthLogLine {
        guard (try? Event.validate(userID: user)) != nil else { return .skipped(SSHDSkip.unreadableUser) }
        let hostID = host.map(String.init)
        if let hostID, (try? Event.validate(deviceID: hostID)) == nil { return .skipped(SSHDSkip.unreadableHost) }
        let clientAddress = address.flatMap { ClientAddress.canonical($0) }
        return .event(AuthLogEvent(at: at, host: hostID, user: user, payload: kind.payload(at: at, clientAddress: clientAddress)))
    }

    private func instant(_ stamp: SyslogTimestamp, year: Int) -> Timestamp? {
        switch stamp {
        case .instant(let at): at
        case .local(let local): local.instant(year: year, calendar: calendar)
        }
    }
}

/// ` HOST PROGRAM[PID]: MESSAGE` after a syslog time (the space before HOST already read).
struct SyslogHeader {
    /// `nil` when the line has no host field (the program's tag follows the time).
    var host: Substring?
    var program: Substring
    var message: Substring

    /// The programs OpenSSH's server logs as.
    static let sshdPrograms: Set<Substring> = ["sshd", "sshd-session", "sshd-auth"]

    var isSSHD: Bool { Self.sshdPrograms.contains(program) }

    init?(_ text: Substring) {
        let (first, afterFirst) = text.splitAtFirstSpace()
        if let program = Self.tagProgram(first) {
            (host, self.program, message) = (nil, program, afterFirst ?? "")
            return
        }
        guard let afterFirst, !first.isEmpty else { return nil }
        let (tag, afterTag) = afterFirst.splitAtFirstSpace()
        guard let program = Self.tagProgram(tag) else { return nil }
        (host, self.program, message) = (first, program, afterTag ?? "")
    }

    /// The program of a tag `NAME[PID]:` or `NAME:`, or `nil` when `token` is no tag.
    static func tagProgram(_ token: Substring) -> Substring? {
        guard let tag = token.before(suffix: ":"), !tag.isEmpty, tag.firstRange(of: ":") == nil else { return nil }
        guard let open = tag.firstRange(of: "[") else { return tag }
        guard let pid = tag[open.upperBound...].before(suffix: "]"), pid.isDigits else { return nil }
        return tag[..<open.lowerBound]
    }
}
