import Foundation
import OnboardingModel

/// One line of a log that sshd wrote to, in any of the forms syslog daemons and journald write
/// (docs/importers.md § Line formats), split into its time, host, program, process and message.
///
/// - BSD syslog: `Dec  1 15:30:30 HOST sshd[811]: MESSAGE` (RFC 3164; a `<PRI>` before the time
///   is allowed), also without a host, and with `[sshd]` or `sshd(pam_unix)` as the tag.
/// - RFC 3339 times (rsyslog's high-precision format, `journalctl -o short-iso`).
/// - RFC 5424: `<PRI>1 TIME HOST APP PROCID MSGID [SD…] MESSAGE`.
/// - `journalctl -o json`: one JSON object a line, with `__REALTIME_TIMESTAMP`,
///   `SYSLOG_IDENTIFIER`, `_PID` (else `SYSLOG_PID`), `_HOSTNAME` and `MESSAGE` (a string, or an
///   array of bytes when it is not UTF-8).
///
/// A CR before the newline (a log copied from Windows) is dropped, and so is a kernel-style
/// `kernel:[ 970.699396]:` prefix in front of the message (some journald setups write it).
struct SSHDLine {
    var stamp: SyslogTimestamp
    var host: Substring?
    var program: Substring
    var pid: Substring?
    var message: Substring

    /// The programs OpenSSH's server logs as (`sshd(pam_unix)`: old PAM's own tag).
    static let sshdPrograms: Set<Substring> = ["sshd", "sshd-session", "sshd-auth", "sshd(pam_unix)"]
    /// The most `message repeated N times` is believed (more is read as an unreadable line):
    /// rsyslog folds only repeats within its flush interval, far fewer than this.
    static let maximumRepeats = 100_000

    var isSSHD: Bool { Self.sshdPrograms.contains(program) }

    init?(_ raw: Substring) {
        var text = raw.before(suffix: "\r") ?? raw
        if text.utf8.first == UInt8(ascii: "{") {
            guard let journal = Self.journalJSON(text) else { return nil }
            self = journal
            return
        }
        if let pri = Self.afterPriority(text) {
            text = pri
            if let rest = text.after(prefix: "1 ") {
                guard let line = Self.rfc5424(rest) else { return nil }
                self = line
                return
            }
        }
        guard let (stamp, rest) = SyslogTimestamp.read(text), let header = Self.header(rest) else { return nil }
        self.stamp = stamp
        (host, program, pid, message) = header
        message = Self.withoutKernelPrefix(message)
    }

    /// The text after a leading `<PRI>` (1 to 3 digits), or `nil` when there is none.
    private static func afterPriority(_ text: Substring) -> Substring? {
        guard let open = text.after(prefix: "<"), let close = open.firstRange(of: ">") else { return nil }
        let digits = open[..<close.lowerBound]
        guard digits.isDigits, digits.utf8.count <= 3 else { return nil }
        return open[close.upperBound...]
    }

    /// ` HOST PROGRAM[PID]: MESSAGE` after a syslog time, or `PROGRAM[PID]: MESSAGE` with no
    /// host; the tag may also be `[PROGRAM]:` or `[PROGRAM]` (fail2ban's test logs hold both).
    /// A line with no readable tag has no program: it is no sshd line.
    private static func header(_ text: Substring) -> (Substring?, Substring, Substring?, Substring)? {
        let (first, afterFirst) = text.splitAtFirstSpace()
        if let (program, pid) = tag(first) { return (nil, program, pid, afterFirst ?? "") }
        guard let afterFirst, !first.isEmpty else { return (nil, "", nil, "") }
        let (second, afterSecond) = afterFirst.splitAtFirstSpace()
        guard let (program, pid) = tag(second) else { return (nil, "", nil, "") }
        return (first, program, pid, afterSecond ?? "")
    }

    /// The program and PID of a tag: `NAME[PID]:`, `NAME:`, `[NAME]:` or `[NAME]`.
    static func tag(_ token: Substring) -> (Substring, Substring?)? {
        if let bracketed = token.after(prefix: "["), let name = bracketed.before(suffix: "]:") ?? bracketed.before(suffix: "]") {
            guard !name.isEmpty, name.firstRange(of: "[") == nil else { return nil }
            return (name, nil)
        }
        guard let tag = token.before(suffix: ":"), !tag.isEmpty, tag.firstRange(of: ":") == nil else { return nil }
        guard let open = tag.lastRange(of: "[") else { return (tag, nil) }
        guard let pid = tag[open.upperBound...].before(suffix: "]"), pid.isDigits, open.lowerBound > tag.startIndex else { return nil }
        return (tag[..<open.lowerBound], pid)
    }

    /// `TIME HOST APP PROCID MSGID SD MESSAGE` (after `<PRI>1 `); `-` is a nil value.
    private static func rfc5424(_ text: Substring) -> SSHDLine? {
        var scanner = ByteScanner(text)
        guard let at = SyslogTimestamp.readISO(&scanner), scanner.take(UInt8(ascii: " ")) else { return nil }
        var rest = scanner.rest
        var fields: [Substring] = []
        for _ in 0..<4 {
            let (field, tail) = rest.splitAtFirstSpace()
            guard let tail, !field.isEmpty else { return nil }
            fields.append(field)
            rest = tail
        }
        guard let message = skipStructuredData(rest) else { return nil }
        let host = fields[0] == "-" ? nil : fields[0]
        let pid = fields[2] == "-" ? nil : fields[2]
        var body = message
        if let withoutBOM = body.after(prefix: "\u{FEFF}") { body = withoutBOM }
        return SSHDLine(stamp: .instant(at), host: host, program: fields[1], pid: pid, message: withoutKernelPrefix(body))
    }

    /// The message after RFC 5424's structured data: `-`, or `[ID PARAM="VALUE" …]` elements
    /// (a value may hold `]`, and `\"` inside quotes).
    private static func skipStructuredData(_ text: Substring) -> Substring? {
        if let rest = text.after(prefix: "- ") { return rest }
        if text == "-" { return "" }
        var index = text.utf8.startIndex
        let bytes = text.utf8
        guard index < bytes.endIndex, bytes[index] == UInt8(ascii: "[") else { return nil }
        var inElement = false
        var inQuotes = false
        while index < bytes.endIndex {
            let byte = bytes[index]
            if inQuotes {
                if byte == UInt8(ascii: "\\") {
                    index = bytes.index(after: index)
                    guard index < bytes.endIndex else { return nil }
                } else if byte == UInt8(ascii: "\"") {
                    inQuotes = false
                }
            } else if inElement {
                if byte == UInt8(ascii: "\"") { inQuotes = true } else if byte == UInt8(ascii: "]") { inElement = false }
            } else if byte == UInt8(ascii: "[") {
                inElement = true
            } else if byte == UInt8(ascii: " ") {
                return text[bytes.index(after: index)...]
            } else {
                return nil
            }
            index = bytes.index(after: index)
        }
        return inElement || inQuotes ? nil : ""
    }

    /// `journalctl -o json`'s object for one entry.
    private static func journalJSON(_ text: Substring) -> SSHDLine? {
        guard let value = try? JSONValue.parse(bytes: Array(text.utf8)), case .object(let list) = value else { return nil }
        let members = JSONValue.Members(list)
        guard case .string(let micros)? = members["__REALTIME_TIMESTAMP"], let microseconds = Int64(micros), microseconds >= 0 else {
            return nil
        }
        let milliseconds = microseconds / 1000
        guard milliseconds <= Timestamp.maximum.millisecondsSince1970 else { return nil }
        let at = Timestamp(millisecondsSince1970: milliseconds)
        guard at >= Timestamp.minimum else { return nil }
        let message: String
        switch members["MESSAGE"] {
        case .string(let text)?: message = text
        case .array(let bytes)?:
            var raw: [UInt8] = []
            for byte in bytes {
                guard case .number(let digits) = byte, let value = UInt8(digits) else { return nil }
                raw.append(value)
            }
            guard let text = String(validating: raw, as: UTF8.self) else { return nil }
            message = text
        default: return nil
        }
        let program = members["SYSLOG_IDENTIFIER"]?.stringValue ?? members["_COMM"]?.stringValue ?? ""
        let pid = (members["_PID"]?.stringValue ?? members["SYSLOG_PID"]?.stringValue).flatMap { Substring($0).isDigits ? Substring($0) : nil }
        let host = members["_HOSTNAME"]?.stringValue.map { Substring($0) }
        return SSHDLine(stamp: .instant(at), host: host, program: Substring(program), pid: pid, message: withoutKernelPrefix(Substring(message)))
    }

    private init(stamp: SyslogTimestamp, host: Substring?, program: Substring, pid: Substring?, message: Substring) {
        self.stamp = stamp
        self.host = host
        self.program = program
        self.pid = pid
        self.message = message
    }

    /// The message without a `kernel:[  970.699396]: ` or `kernel: [ 970.699397] ` prefix.
    static func withoutKernelPrefix(_ message: Substring) -> Substring {
        guard var rest = message.after(prefix: "kernel:") else { return message }
        rest = rest.after(prefix: " ") ?? rest
        guard let open = rest.after(prefix: "["), let close = open.firstRange(of: "]") else { return message }
        rest = open[close.upperBound...]
        rest = rest.after(prefix: ":") ?? rest
        return rest.after(prefix: " ") ?? rest
    }

    /// rsyslog's `message repeated N times: [ MESSAGE]`: the message and N (`nil` when N is not a
    /// number from 1 to ``maximumRepeats``), or `nil` when the line is no such fold.
    static func repeated(_ message: Substring) -> (message: Substring, count: Int?)? {
        guard let rest = message.after(prefix: "message repeated "), let times = rest.firstRange(of: " times: [") else { return nil }
        let digits = rest[..<times.lowerBound]
        var inner = rest[times.upperBound...]
        inner = inner.before(suffix: "]") ?? inner
        inner = inner.after(prefix: " ") ?? inner
        guard digits.isDigits, digits.utf8.count <= 6, let count = Int(digits), (1...maximumRepeats).contains(count) else {
            return (inner, nil)
        }
        return (inner, count)
    }
}
