import Foundation
import OnboardingModel

/// How much of an sshd log is read as events (`onboard import --sshd-mode`).
public enum SSHDMode: String, Sendable, CaseIterable {
    /// Sign-in attempts, successes, and the server's cuts: what fail2ban's sshd filter counts in
    /// its default mode.
    case normal
    /// Also pre-authentication abuse (no identification, failed key exchange, a connection
    /// closed before it authenticated): fail2ban's `ddos`, `extra` and `aggressive` modes.
    case aggressive
}

/// One event read from an sshd log, with the line it comes from: its id is made from that line,
/// so that reading the log again gives it the same id.
public struct SSHDEvent: Equatable, Sendable {
    public var event: AuthLogEvent
    /// The line it was read from (numbered from 1, as the import counts them).
    public var line: Int
    /// Its place among the events of that line: `message repeated 5 times: [ … ]` gives 5.
    public var index: Int
    /// Where the line is in the input, and its text (for the id).
    var origin: SSHDOrigin
}

/// The line an event comes from.
struct SSHDOrigin: Equatable, Sendable {
    var number: Int
    var offset: Int64
    var length: Int
    var text: String
}

/// What one line gave: the events it completed (its own, or earlier lines' it released) and the
/// kinds of the lines it skipped (its own, or earlier lines' it showed were no attempt).
public struct SSHDLineReading: Equatable, Sendable {
    public var events: [SSHDEvent] = []
    public var skipped: [String] = []
    /// The line each of `skipped` is (the same order).
    public var skippedLines: [Int] = []

    init() {}

    init(_ kind: String, line: Int) {
        skip(kind, line: line)
    }

    mutating func skip(_ kind: String, line: Int) {
        skipped.append(kind)
        skippedLines.append(line)
    }
}

/// Reads the lines of an OpenSSH sshd log (`/var/log/auth.log`, `/var/log/secure`,
/// `journalctl -u ssh -o short-iso`, `-o json`, RFC 5424 syslog) into authentication events
/// (docs/importers.md § OpenSSH sshd).
///
/// A syslog line is `TIME HOST PROGRAM[PID]: MESSAGE` (``SSHDLine`` reads every form). The
/// parser follows each sshd process (host and PID: one client connection) so that:
/// - one guess is one event, whichever of its lines the log holds (`pam_unix`, `error: PAM:`,
///   `Failed …`), and a name refused before its password (`Invalid user …`) is one with it;
/// - a PAM module's failure waits until the connection shows how it ended: a success of the same
///   user drops it (a stacked module let the user in), anything else counts it;
/// - a line that names no address (`Disconnecting: Too many authentication failures`) takes the
///   connection's, from a line before or after it.
///
/// ```swift
/// var parser = SSHDLogParser(startYear: 2026, timeZone: .gmt)
/// let reading = parser.read("Dec  1 15:30:30 bastion-1 sshd[811]: Failed password for root from 203.0.113.9 port 50122 ssh2", number: 1)
/// // reading.events[0].event: at 2026-12-01T15:30:30Z, host "bastion-1", user "root",
/// //   .signInFailed(method: .password, reason: .invalidPassword, clientAddress: "203.0.113.9")
/// let open = parser.finish() // the lines still waiting at the log's end
/// ```
///
/// The year of BSD-syslog times starts at `startYear` (``YearInference`` finds it from the
/// file), and every BSD-syslog line, of any program, whose month is two or more months earlier
/// than the previous BSD-syslog line's moves it to the next year (Dec → Jan). A line one month
/// earlier is taken as written out of order and stays in the year.
public struct SSHDLogParser: Sendable {
    private var tracker: BSDYearTracker
    private let startYear: Int
    private let calendar: Calendar
    public let mode: SSHDMode
    private var connections = SSHDConnections()
    /// Whether any line had a BSD-syslog time (one without a year and a zone).
    public private(set) var sawLocalTime = false

    /// A parser whose first BSD-syslog line is in `startYear`; BSD-syslog times are local times
    /// of `timeZone` (DST included); times with an offset ignore it.
    public init(startYear: Int, timeZone: TimeZone, mode: SSHDMode = .normal) {
        self.startYear = startYear
        self.mode = mode
        tracker = BSDYearTracker()
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        self.calendar = calendar
    }

    /// The events and skipped kinds of the next line of the log (without its newline).
    public mutating func read(_ line: String, number: Int) -> SSHDLineReading {
        read(line, origin: SSHDOrigin(number: number, offset: 0, length: line.utf8.count, text: line))
    }

    /// The log has ended: the kinds of the lines whose events still wait for more of their
    /// connection (a PAM failure in the log's last two minutes, a cut whose address no line
    /// names). They give no event: a longer log gives them.
    public mutating func finish() -> SSHDLineReading {
        connections.finish()
    }

    /// One line read as a log of its own: its first event, or the kind of line it is. For
    /// tests and tools that look at lines one at a time.
    public mutating func parse(_ line: String) -> AuthLogLine {
        var reading = read(line, number: 1)
        reading.skipped += finish().skipped
        if let first = reading.events.first { return .event(first.event) }
        return .skipped(reading.skipped.first ?? SSHDSkip.other)
    }

    mutating func read(_ text: String, origin: SSHDOrigin) -> SSHDLineReading {
        guard let line = SSHDLine(Substring(text)) else { return SSHDLineReading(SSHDSkip.unreadableTimestamp, line: origin.number) }
        var year = startYear
        if case .local(let local) = line.stamp {
            year = startYear + tracker.note(month: local.month)
            sawLocalTime = true
        }
        guard line.isSSHD else { return SSHDLineReading(SSHDSkip.notSSHD, line: origin.number) }
        guard let at = instant(line.stamp, year: year) else { return SSHDLineReading(SSHDSkip.unreadableTimestamp, line: origin.number) }
        let host = line.host.map(String.init)
        if let host, (try? Event.validate(deviceID: host)) == nil { return SSHDLineReading(SSHDSkip.unreadableHost, line: origin.number) }
        var message = line.message
        var repeats = 1
        if let repeated = SSHDLine.repeated(message) {
            guard let count = repeated.count else { return SSHDLineReading(SSHDSkip.unreadableRepeat, line: origin.number) }
            (message, repeats) = (repeated.message, count)
        }
        let context = SSHDLineContext(at: at, host: host, pid: line.pid.map(String.init), origin: origin, repeats: repeats, mode: mode)
        return connections.apply(SSHDMessage.read(message), context)
    }

    private func instant(_ stamp: SyslogTimestamp, year: Int) -> Timestamp? {
        switch stamp {
        case .instant(let at): at
        case .local(let local): local.instant(year: year, calendar: calendar)
        }
    }
}
