import OnboardingModel

/// The skipped-line kinds of the sshd parser, as the import summary shows them.
enum SSHDSkip {
    static let notSSHD = "not sshd"
    static let unreadableTimestamp = "unreadable timestamp"
    static let unreadableUser = "unreadable user"
    static let unreadableHost = "unreadable host"
    /// An attempt's line (`Failed …`, `Accepted …`, `Invalid user …`) whose user and address
    /// cannot be told apart: truncated, or without `from ADDR`.
    static let unreadableAttempt = "unreadable attempt"
    static let probe = "probe (method none)"
    /// `Failed publickey for USER` of a user sshd knows: a client offering its keys in turn,
    /// not a guess (fail2ban does not count it either).
    static let publickeyOffered = "key not accepted"
    static let disconnect = "disconnect"
    static let pam = "pam"
    /// A line of an attempt already counted on an earlier line of the same connection (docs/importers.md § One attempt, one event).
    static let sameAttempt = "same attempt"
    /// A PAM module's failure that a success of the same user on the same connection followed:
    /// one module of a stack failed, another let the user in.
    static let pamBeforeSuccess = "pam failure before a success"
    /// The second line of one cut (`Disconnecting: Too many authentication failures` after
    /// `maximum authentication attempts exceeded`).
    static let sameCut = "same cut"
    /// Pre-authentication abuse, read as an event only with `--sshd-mode aggressive`.
    static let preauthentication = "pre-authentication (aggressive mode reads it)"
    /// A connection's opening, or its close after authentication: it names the address only.
    static let connection = "connection"
    static let other = "other sshd"
    /// A line whose event waited for more of its connection than the log holds (a PAM failure
    /// at the log's end, a cut whose address no line names); a longer log gives it.
    static let openAtTheEnd = "attempt open at the log's end"
    /// `message repeated N times` with N not a number from 1 to ``SSHDLine/maximumRepeats``.
    static let unreadableRepeat = "unreadable repeat"
}

/// The stage of one sign-in attempt a line reports: sshd writes the lines of one password guess
/// in this order, and a later stage on the same connection within ``SSHDConnections/attemptSeconds``
/// is the same guess (docs/importers.md § One attempt, one event).
enum SSHDStage: Int, Comparable {
    /// `Invalid user …`, `User … not allowed because …`, `ROOT LOGIN REFUSED`: the name is refused
    /// before any password; the password that follows (if any) is the same attempt, however late.
    case named
    /// A PAM module's own line (`pam_unix(sshd:auth): authentication failure; … rhost=H`).
    case pamModule
    /// sshd's report of what PAM said (`error: PAM: Authentication failure for U from H`).
    case pamReport
    /// `Failed METHOD for U from H port P ssh2`: the last line of a guess.
    case failed

    static func < (a: SSHDStage, b: SSHDStage) -> Bool { a.rawValue < b.rawValue }
}

/// Where a line's client address is.
enum SSHDAddress: Equatable {
    /// The line names it (an IP address, or a host name, which is kept as no address).
    case given(Substring)
    /// The line names none; the connection's (same host and process) is meant.
    case connection
}

/// What one sshd message says, before the connection it belongs to is looked at.
enum SSHDReading: Equatable {
    /// A line of a sign-in attempt that failed.
    case attempt(stage: SSHDStage, method: SignInMethod, reason: SignInFailureReason, user: Substring?, address: SSHDAddress)
    case succeeded(method: SignInMethod, user: Substring, address: Substring)
    /// A cut or pre-authentication abuse; `aggressive`: read as an event only in aggressive mode.
    case aborted(SignInAbortReason, user: Substring?, address: SSHDAddress, aggressive: Bool)
    case signedOut(user: Substring)
    /// pam_faillock locked the user.
    case throttled(user: Substring)
    /// `pam_unix(sshd:auth): check pass; user unknown`: the next PAM failure of the connection
    /// is of a name the system does not know.
    case userUnknown
    /// A line that names the connection's address and no attempt; `opens`: a new connection
    /// starts (sshd's first line of a process), `closes`: the connection ended.
    case connection(address: Substring, opens: Bool, closes: Bool, kind: String)
    /// The connection ended, with no address on the line.
    case closed(kind: String)
    case skipped(String)
}

/// Reads the message of one sshd line (after `sshd[PID]: `), by OpenSSH's own message texts
/// (docs/importers.md § OpenSSH sshd has the table).
///
/// Before the message is read, a Solaris `[ID 800047 auth.info] ` tag, sshd's `error: ` or
/// `fatal: ` level and a trailing ` [preauth]` are dropped. Addresses are read from where sshd
/// writes them, never from text a client chose: a user name is read up to the first ` from `
/// that is followed by what sshd writes after the address (` port P`, ` sshN`, then the end or
/// `: `), and lines that end in the address are read from the right.
enum SSHDMessage {
    static func read(_ message: Substring) -> SSHDReading {
        var text = message
        while let last = text.utf8.last, last == UInt8(ascii: " ") || last == UInt8(ascii: "\t") || last == UInt8(ascii: "\r") {
            text = text[..<text.utf8.index(before: text.utf8.endIndex)]
        }
        if let rest = text.after(prefix: "[ID "), let close = rest.firstRange(of: "] ") { text = rest[close.upperBound...] }
        let preauth = text.before(suffix: " [preauth]")
        text = preauth ?? text
        text = text.after(prefix: "error: ") ?? text.after(prefix: "fatal: ") ?? text
        for (prefix, reader) in readers {
            if let rest = text.after(prefix: prefix) { return reader(rest, preauth != nil) }
        }
        return .skipped(SSHDSkip.other)
    }

    /// Message prefixes and their readers, tried in order (the first match reads the line).
    private static let readers: [(String, @Sendable (Substring, Bool) -> SSHDReading)] = [
        ("Failed ", { rest, _ in failed(rest) }),
        ("Accepted ", { rest, _ in accepted(rest) }),
        ("Invalid user ", { rest, _ in named(rest) }),
        ("invalid user ", { rest, _ in named(rest) }),
        ("Illegal user ", { rest, _ in named(rest) }),
        ("illegal user ", { rest, _ in named(rest) }),
        ("ROOT LOGIN REFUSED FROM ", { rest, _ in rootRefused(rest) }),
        ("User ", { rest, _ in userNotAllowed(rest) }),
        ("PAM: ", { rest, _ in pamReport(rest) }),
        ("PAM ", { _, _ in .skipped(SSHDSkip.pam) }),
        ("maximum authentication attempts exceeded for ", { rest, _ in maximumTries(rest) }),
        ("Disconnecting: Too many authentication failures", { rest, _ in tooMany(rest) }),
        ("Disconnecting ", { rest, _ in disconnectingUser(rest) }),
        ("Disconnected from user ", { rest, preauth in preauth ? closedBy(rest, user: true, preauth: true) : signedOut(rest) }),
        ("Disconnected from ", { rest, preauth in closedBy(rest, user: false, preauth: preauth) }),
        ("Connection closed by ", { rest, preauth in closedBy(rest, user: false, preauth: preauth) }),
        ("Connection reset by ", { rest, preauth in closedBy(rest, user: false, preauth: preauth) }),
        ("Received disconnect from ", { rest, _ in receivedDisconnect(rest) }),
        ("Connection from ", { rest, _ in connectionFrom(rest) }),
        ("refused connect from ", { rest, _ in refusedConnect(rest) }),
        ("Did not receive identification string from ", { rest, _ in endingInAddress(rest, .noIdentification) }),
        ("Bad protocol version identification ", { rest, _ in endingInAddress(rest, .badProtocol) }),
        ("kex_exchange_identification: ", { rest, _ in kexIdentification(rest) }),
        ("banner exchange: Connection from ", { rest, _ in bannerExchange(rest) }),
        ("Unable to negotiate with ", { rest, _ in negotiateWith(rest) }),
        ("Unable to negotiate a ", { _, _ in .aborted(.negotiationFailed, user: nil, address: .connection, aggressive: true) }),
        ("no matching ", { _, _ in .aborted(.negotiationFailed, user: nil, address: .connection, aggressive: true) }),
        ("Read from socket failed: ", { _, _ in .aborted(.closedBeforeAuthentication, user: nil, address: .connection, aggressive: true) }),
        ("Timeout before authentication for ", { rest, _ in endingInAddress(rest, .timeout) }),
        ("SSH: Server;Ltype: ", { rest, _ in serverType(rest) }),
        ("pam_faillock(", { rest, _ in faillock(rest) }),
        ("pam_", { rest, _ in pamModule(rest) }),
        ("authentication failure; ", { rest, _ in pamFailure(rest) }),
        ("check pass; user unknown", { _, _ in .userUnknown })
    ]

    // MARK: Attempts

    /// `Failed METHOD for [invalid user ]USER from ADDR[ port P][ sshN][: INFO]`.
    private static func failed(_ rest: Substring) -> SSHDReading {
        let (method, target) = rest.splitAtFirstSpace()
        guard let target = target?.after(prefix: "for "), let found = attemptTarget(target) else {
            return .skipped(SSHDSkip.unreadableAttempt)
        }
        let invalid = found.invalid || found.user == "<invalid username>"
        // A known user's key or probe is no guess; the same from a name sshd refused is. Either
        // names the connection's address.
        if !invalid, method == "publickey" { return .connection(address: found.address, opens: false, closes: false, kind: SSHDSkip.publickeyOffered) }
        if !invalid, method == "none" { return .connection(address: found.address, opens: false, closes: false, kind: SSHDSkip.probe) }
        let user = found.user == "<invalid username>" ? nil : found.user
        return .attempt(
            stage: .failed, method: signInMethod(method), reason: invalid ? .unknownUser : .invalidPassword,
            user: user, address: .given(found.address))
    }

    /// `Accepted METHOD for USER from ADDR port P ssh2[: KEY]`.
    private static func accepted(_ rest: Substring) -> SSHDReading {
        let (method, target) = rest.splitAtFirstSpace()
        guard let target = target?.after(prefix: "for "), let found = attemptTarget(target) else {
            return .skipped(SSHDSkip.unreadableAttempt)
        }
        return .succeeded(method: signInMethod(method), user: found.user, address: found.address)
    }

    /// `Invalid user USER from ADDR[ port P]` (and `Illegal user`, older sshd's word).
    private static func named(_ rest: Substring) -> SSHDReading {
        guard let found = attemptTarget(rest) else { return .skipped(SSHDSkip.unreadableAttempt) }
        return .attempt(stage: .named, method: .password, reason: .unknownUser, user: found.user, address: .given(found.address))
    }

    /// `ROOT LOGIN REFUSED FROM ADDR[ port P]` (sshd before 3.x with `PermitRootLogin no`).
    private static func rootRefused(_ rest: Substring) -> SSHDReading {
        let (address, _) = rest.splitAtFirstSpace()
        guard !address.isEmpty else { return .skipped(SSHDSkip.unreadableAttempt) }
        return .attempt(stage: .named, method: .password, reason: .unknownUser, user: "root", address: .given(address))
    }

    /// `User USER from ADDR not allowed because REASON` (AllowUsers, DenyUsers, groups), or
    /// `User USER not allowed because account is locked` (no address: the connection's).
    private static func userNotAllowed(_ rest: Substring) -> SSHDReading {
        guard let because = rest.lastRange(of: " not allowed because ") else { return .skipped(SSHDSkip.other) }
        let head = rest[..<because.lowerBound]
        if let from = head.lastRange(of: " from ") {
            let address = head[from.upperBound...]
            if !address.isEmpty, address.utf8.firstIndex(of: UInt8(ascii: " ")) == nil {
                return .attempt(
                    stage: .named, method: .password, reason: .unknownUser, user: head[..<from.lowerBound], address: .given(address))
            }
        }
        return .attempt(stage: .named, method: .password, reason: .unknownUser, user: head, address: .connection)
    }

    /// What follows `PAM: ` (sshd's report of PAM's answer, after `error: `):
    /// `Authentication failure for [illegal user ]USER from ADDR[ via LOCAL]` (also `error`,
    /// `failed`, any case), or `User not known to the underlying authentication module for …`.
    private static func pamReport(_ rest: Substring) -> SSHDReading {
        var target: Substring?
        var unknown = false
        for prefix in [
            "Authentication failure for ", "authentication failure for ", "Authentication error for ", "authentication error for ",
            "Authentication failed for ", "authentication failed for "
        ] {
            if let found = rest.after(prefix: prefix) { target = found }
        }
        if target == nil, let found = rest.after(prefix: "User not known to the underlying authentication module for ") {
            target = found
            unknown = true
        }
        guard var target else { return .skipped(SSHDSkip.pam) }
        if let named = target.after(prefix: "illegal user ") ?? target.after(prefix: "invalid user ") {
            target = named
            unknown = true
        }
        // `from ADDR[ via LOCAL]`: the address is the token after the first ` from ` followed by
        // one token and then the end or ` via `.
        guard let found = pamTarget(target) else { return .skipped(SSHDSkip.unreadableAttempt) }
        return .attempt(
            stage: .pamReport, method: .password, reason: unknown ? .unknownUser : .invalidPassword, user: found.user,
            address: .given(found.address))
    }

    /// `USER from ADDR[ via LOCAL]`: the first ` from ` that one token and then the end (or
    /// ` via `) follow.
    private static func pamTarget(_ text: Substring) -> (user: Substring, address: Substring)? {
        var searchStart = text.startIndex
        while let from = text[searchStart...].firstRange(of: " from ") {
            let (address, after) = text[from.upperBound...].splitAtFirstSpace()
            if !address.isEmpty, after == nil || after?.after(prefix: "via ") != nil { return (text[..<from.lowerBound], address) }
            searchStart = text.index(after: from.lowerBound)
        }
        return nil
    }

    /// `PAM_MODULE(sshd:auth): authentication failure; logname= uid=0 euid=0 tty=ssh ruser=R rhost=H[ user=U]`.
    private static func pamModule(_ rest: Substring) -> SSHDReading {
        guard let close = rest.firstRange(of: "): ") else { return .skipped(SSHDSkip.pam) }
        let body = rest[close.upperBound...]
        if let failure = body.after(prefix: "authentication failure; ") { return pamFailure(failure) }
        if body.after(prefix: "check pass; user unknown") != nil { return .userUnknown }
        return .skipped(SSHDSkip.pam)
    }

    /// The fields of a PAM module's `authentication failure;` line: the user is `user=`, else
    /// `ruser=`; the address `rhost=` (empty: none, a local login).
    private static func pamFailure(_ fields: Substring) -> SSHDReading {
        var user: Substring?
        var remoteUser: Substring?
        var host: Substring?
        var rest: Substring? = fields
        while let text = rest {
            let (field, tail) = text.splitAtFirstSpace()
            rest = tail
            if let value = field.after(prefix: "user=") {
                user = value
            } else if let value = field.after(prefix: "ruser=") {
                remoteUser = value
            } else if let value = field.after(prefix: "rhost=") {
                host = value
            }
        }
        guard let host, !host.isEmpty else { return .skipped(SSHDSkip.pam) }
        let named = [user, remoteUser].lazy.compactMap { $0 }.first { !$0.isEmpty }
        return .attempt(stage: .pamModule, method: .password, reason: .invalidPassword, user: named, address: .given(host))
    }

    // MARK: Cuts and abuse

    /// `maximum authentication attempts exceeded for [invalid user ]USER from ADDR port P ssh2`.
    private static func maximumTries(_ rest: Substring) -> SSHDReading {
        guard let found = attemptTarget(rest) else { return .skipped(SSHDSkip.unreadableAttempt) }
        return .aborted(.tooManyFailures, user: found.user, address: .given(found.address), aggressive: false)
    }

    /// `Disconnecting: Too many authentication failures[ for USER]`: no address (the connection's).
    private static func tooMany(_ rest: Substring) -> SSHDReading {
        let user = rest.after(prefix: " for ").flatMap { $0.isEmpty ? nil : $0 }
        return .aborted(.tooManyFailures, user: user, address: .connection, aggressive: false)
    }

    /// `Disconnecting (invalid|authenticating) user USER ADDR port P: REASON`: newer sshd's form of
    /// the cut (`Too many authentication failures`), or a client that changed its user mid-way
    /// (`Change of username or service not allowed`); any other `Disconnecting …` is the end of a
    /// connection.
    private static func disconnectingUser(_ rest: Substring) -> SSHDReading {
        guard let named = rest.after(prefix: "invalid user ") ?? rest.after(prefix: "authenticating user ") ?? rest.after(prefix: "user "),
            let colon = named.firstRange(of: ": ")
        else { return .closed(kind: SSHDSkip.disconnect) }
        let reason = named[colon.upperBound...]
        let abort: SignInAbortReason
        if reason.after(prefix: "Change of username or service not allowed") != nil {
            abort = .userChanged
        } else if reason.after(prefix: "Too many authentication failures") != nil {
            abort = .tooManyFailures
        } else {
            return .closed(kind: SSHDSkip.disconnect)
        }
        guard let (user, address) = userThenAddress(named[..<colon.lowerBound]) else { return .skipped(SSHDSkip.unreadableAttempt) }
        return .aborted(abort, user: user, address: .given(address), aggressive: false)
    }

    /// `[authenticating user USER |invalid user USER ]ADDR[ port P]` after `Connection closed
    /// by`, `Connection reset by`, `Disconnected from`: before authentication (`[preauth]`) it is
    /// abuse that aggressive mode counts; after, the end of a session or a probe's connection.
    private static func closedBy(_ rest: Substring, user hasUser: Bool, preauth: Bool) -> SSHDReading {
        var text = rest
        var named = hasUser
        if let after = text.after(prefix: "authenticating user ") ?? text.after(prefix: "invalid user ") ?? text.after(prefix: "user ") {
            text = after
            named = true
        }
        let user: Substring?
        let address: Substring
        if named {
            guard let found = userThenAddress(text) else { return .closed(kind: SSHDSkip.disconnect) }
            (user, address) = (found.user, found.address)
        } else {
            guard let found = addressThenPort(text) else { return .closed(kind: SSHDSkip.disconnect) }
            (user, address) = (nil, found)
        }
        if preauth { return .aborted(.closedBeforeAuthentication, user: user, address: .given(address), aggressive: true) }
        return .connection(address: address, opens: false, closes: true, kind: SSHDSkip.disconnect)
    }

    /// `Disconnected from user USER ADDR port P` (a session ended; no `[preauth]`).
    private static func signedOut(_ rest: Substring) -> SSHDReading {
        guard let (user, _) = userThenAddress(rest) else { return .closed(kind: SSHDSkip.disconnect) }
        return .signedOut(user: user)
    }

    /// `Received disconnect from ADDR[ port P]:[ ]CODE: TEXT`: code 3 ending in `Auth fail` is a
    /// client that gave up on its own failures; code 14 `No [supported ]authentication methods
    /// available` is a client no method suits (aggressive); other codes (11, `Bye Bye`) the end.
    private static func receivedDisconnect(_ rest: Substring) -> SSHDReading {
        // `ADDR port P:CODE` or `ADDR: CODE` (an IPv6 address holds colons, never `: `).
        let address: Substring
        var reason: Substring
        if let port = rest.firstRange(of: " port ") {
            address = rest[..<port.lowerBound]
            guard let colon = rest[port.upperBound...].firstRange(of: ":"), rest[port.upperBound..<colon.lowerBound].isDigits else {
                return .closed(kind: SSHDSkip.disconnect)
            }
            reason = rest[colon.upperBound...]
        } else {
            guard let colon = rest.firstRange(of: ": ") else { return .closed(kind: SSHDSkip.disconnect) }
            address = rest[..<colon.lowerBound]
            reason = rest[colon.upperBound...]
        }
        guard !address.isEmpty, address.utf8.firstIndex(of: UInt8(ascii: " ")) == nil else { return .closed(kind: SSHDSkip.disconnect) }
        while let trimmed = reason.after(prefix: " ") { reason = trimmed }
        if let text = reason.after(prefix: "3:"), text.before(suffix: ": Auth fail") != nil || text.before(suffix: ":Auth fail") != nil {
            return .aborted(.clientGaveUp, user: nil, address: .given(address), aggressive: false)
        }
        if let text = reason.after(prefix: "14:"),
            text.firstRange(of: "No supported authentication methods available") != nil
                || text.firstRange(of: "No authentication methods available") != nil
        {
            return .aborted(.noAuthenticationMethods, user: nil, address: .given(address), aggressive: true)
        }
        return .connection(address: address, opens: false, closes: true, kind: SSHDSkip.disconnect)
    }

    /// `Connection from ADDR[ port P[ on LOCAL port Q]]`.
    private static func connectionFrom(_ rest: Substring) -> SSHDReading {
        let (address, _) = rest.splitAtFirstSpace()
        guard !address.isEmpty else { return .skipped(SSHDSkip.connection) }
        return .connection(address: address, opens: true, closes: false, kind: SSHDSkip.connection)
    }

    /// TCP wrappers: `refused connect from NAME (ADDR)`.
    private static func refusedConnect(_ rest: Substring) -> SSHDReading {
        guard let inner = rest.before(suffix: ")"), let open = inner.lastRange(of: " (") else { return .skipped(SSHDSkip.other) }
        let address = inner[open.upperBound...]
        guard !address.isEmpty else { return .skipped(SSHDSkip.other) }
        return .aborted(.refused, user: nil, address: .given(address), aggressive: false)
    }

    /// A message that ends in `from ADDR[ port P]`, read from the right (what comes before can
    /// hold the client's own text: an identification string, say).
    private static func endingInAddress(_ rest: Substring, _ reason: SignInAbortReason) -> SSHDReading {
        var head = rest
        if let (before, port) = rest.splitAtLastSpace(), port.isDigits, let cut = before.before(suffix: " port") { head = cut }
        let address: Substring
        if let from = head.lastRange(of: " from ") {
            address = head[from.upperBound...]
        } else if reason == .timeout || reason == .noIdentification {
            address = head
        } else {
            return .skipped(SSHDSkip.other)
        }
        guard !address.isEmpty, address.utf8.firstIndex(of: UInt8(ascii: " ")) == nil else { return .skipped(SSHDSkip.other) }
        return .aborted(reason, user: nil, address: .given(address), aggressive: true)
    }

    /// `kex_exchange_identification: …`: the client sent no (or no valid) identification.
    private static func kexIdentification(_ rest: Substring) -> SSHDReading {
        let bad = rest.firstRange(of: "invalid protocol identifier") != nil
        return .aborted(bad ? .badProtocol : .noIdentification, user: nil, address: .connection, aggressive: true)
    }

    /// `banner exchange: Connection from ADDR port P: invalid format`.
    private static func bannerExchange(_ rest: Substring) -> SSHDReading {
        guard let colon = rest.firstRange(of: ": "), let address = addressThenPort(rest[..<colon.lowerBound]) else {
            return .aborted(.bannerError, user: nil, address: .connection, aggressive: true)
        }
        return .aborted(.bannerError, user: nil, address: .given(address), aggressive: true)
    }

    /// `Unable to negotiate with ADDR port P: no matching … found. Their offer: …`.
    private static func negotiateWith(_ rest: Substring) -> SSHDReading {
        guard let colon = rest.firstRange(of: ": "), let address = addressThenPort(rest[..<colon.lowerBound]) else {
            return .skipped(SSHDSkip.other)
        }
        return .aborted(.negotiationFailed, user: nil, address: .given(address), aggressive: true)
    }

    /// `SSH: Server;Ltype: KIND;Remote: ADDR-PORT;…` (a patched sshd's connection report).
    private static func serverType(_ rest: Substring) -> SSHDReading {
        guard let remote = rest.firstRange(of: ";Remote: ") else { return .skipped(SSHDSkip.connection) }
        let field = rest[remote.upperBound...]
        let value = field.firstRange(of: ";").map { field[..<$0.lowerBound] } ?? field
        guard let dash = value.utf8.lastIndex(of: UInt8(ascii: "-")), value[value.index(after: dash)...].isDigits else {
            return .skipped(SSHDSkip.connection)
        }
        return .connection(address: value[..<dash], opens: false, closes: false, kind: SSHDSkip.connection)
    }

    /// `pam_faillock(sshd:auth): Consecutive login failures for user USER account temporarily locked`;
    /// any other pam_faillock line is PAM's.
    private static func faillock(_ rest: Substring) -> SSHDReading {
        guard let close = rest.firstRange(of: "): "),
            let named = rest[close.upperBound...].after(prefix: "Consecutive login failures for user "),
            let user = named.before(suffix: " account temporarily locked")
        else { return .skipped(SSHDSkip.pam) }
        return .throttled(user: user)
    }

    // MARK: Pieces

    /// `password` and `keyboard-interactive[/DEVICE]` ask for a password (through PAM or BSD
    /// auth); every other method (publickey, hostbased, gssapi-with-mic) is `other`.
    private static func signInMethod(_ name: Substring) -> SignInMethod {
        name == "password" || name == "keyboard-interactive" || name.after(prefix: "keyboard-interactive/") != nil
            ? .password : .other
    }

    /// `[invalid user ]USER from ADDR[ port P][ sshN][: INFO]`: the first ` from ` whose address
    /// is followed by what sshd writes after it. A user may hold ` from ` and even a whole
    /// `from ADDR port P ssh2`: that copy is followed by more of the name, not by the end or `: `.
    static func attemptTarget(_ target: Substring) -> (invalid: Bool, user: Substring, address: Substring)? {
        let named = target.after(prefix: "invalid user ") ?? target.after(prefix: "illegal user ")
        let text = named ?? target
        var searchStart = text.startIndex
        // An empty user: `invalid user  from ADDR` (two spaces) leaves ` from ` at the start.
        while let from = text[searchStart...].firstRange(of: " from ") {
            if suffixIsSSHD(text[from.upperBound...]) {
                return (named != nil, text[..<from.lowerBound], text[from.upperBound...].splitAtFirstSpace().head)
            }
            searchStart = text.index(after: from.lowerBound)
        }
        return nil
    }

    /// Whether `text` is `ADDR[ port P][ sshN][: INFO]` (or `ADDR[ port P] on …`), as sshd writes after ` from `.
    private static func suffixIsSSHD(_ text: Substring) -> Bool {
        let (address, afterAddress) = text.splitAtFirstSpace()
        guard !address.isEmpty, address.last != ":" else { return false }
        guard var rest = afterAddress else { return true }
        if let port = rest.after(prefix: "port ") {
            let (digits, afterPort) = port.splitAtFirstSpace()
            guard digits.isDigits || digits.before(suffix: ":")?.isDigits == true else { return false }
            if digits.last == ":" { return true }
            guard let afterPort else { return true }
            rest = afterPort
        }
        let (word, afterWord) = rest.splitAtFirstSpace()
        if word == "ssh1" || word == "ssh2" { return afterWord == nil }
        if let protocolWord = word.before(suffix: ":"), protocolWord == "ssh1" || protocolWord == "ssh2" { return true }
        return false
    }

    /// `USER ADDR port P` read from the right: the user keeps any spaces.
    static func userThenAddress(_ text: Substring) -> (user: Substring, address: Substring)? {
        guard let (head, port) = text.splitAtLastSpace(), port.isDigits, let beforePort = head.before(suffix: " port") else {
            guard let (user, address) = text.splitAtLastSpace(), !address.isEmpty else { return nil }
            return (user, address)
        }
        guard let (user, address) = beforePort.splitAtLastSpace(), !address.isEmpty else { return nil }
        return (user, address)
    }

    /// `ADDR[ port P]` and nothing else.
    static func addressThenPort(_ text: Substring) -> Substring? {
        let (address, rest) = text.splitAtFirstSpace()
        guard !address.isEmpty else { return nil }
        guard let rest else { return address }
        guard let port = rest.after(prefix: "port "), port.isDigits else { return nil }
        return address
    }
}
