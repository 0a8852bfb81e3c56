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
    static let disconnect = "disconnect"
    static let pam = "pam"
    static let other = "other sshd"
}

/// What an sshd message maps to, before it has a time and a host.
enum SSHDReading: Equatable {
    /// An event: its kind, the user as the line spells it, and the address text (any form).
    case event(SSHDEventKind, user: Substring, address: Substring?)
    case skipped(String)
}

/// The event an sshd message maps to.
enum SSHDEventKind: Equatable {
    case failed(SignInMethod, SignInFailureReason)
    /// `Invalid user …`: an attempt starts for a name sshd does not know.
    case started
    case succeeded(SignInMethod)
    /// The server cut the connection, or PAM locked the account.
    case throttled
    case signedOut

    /// The payload, at the line's time `at` (a throttle's `retryAfter`: the log gives no end).
    func payload(at: Timestamp, clientAddress: String?) -> Payload {
        switch self {
        case .failed(let method, let reason): .signInFailed(method: method, reason: reason, clientAddress: clientAddress)
        case .started: .signInStarted(method: .password, identifierKind: nil)
        case .succeeded(let method): .signInSucceeded(method: method, secondFactor: false, clientAddress: clientAddress)
        case .throttled: .signInThrottled(method: .password, retryAfter: at, clientAddress: clientAddress)
        case .signedOut: .signedOut(reason: .user)
        }
    }
}

/// Reads the message of one sshd line (after `sshd[PID]: `), by OpenSSH's own message texts
/// (docs/importers.md § OpenSSH sshd has the table). A trailing ` [preauth]` is dropped first.
///
/// One guess is one event: the `Failed …` line is the failure, so `Invalid user …` (which
/// precedes it) is only `sign_in_started`, and PAM's lines of the same attempt are skipped.
/// One cut is one throttle: sshd writes `error: maximum authentication attempts exceeded …`
/// (level ERROR) right before it disconnects with `Disconnecting … Too many authentication
/// failures` (level INFO), so a log that holds the second holds the first; the first is the
/// throttle, and every `Disconnecting …` line is a skipped `"disconnect"`, whatever its form.
enum SSHDMessage {
    static func read(_ message: Substring) -> SSHDReading {
        var text = message.before(suffix: "\r") ?? message
        let preauth = text.before(suffix: " [preauth]")
        text = preauth ?? text
        if let rest = text.after(prefix: "Failed ") { return failed(rest) }
        if let rest = text.after(prefix: "Accepted ") { return accepted(rest) }
        if let rest = text.after(prefix: "Invalid user ") { return invalidUser(rest) }
        if let rest = text.after(prefix: "error: maximum authentication attempts exceeded for ") { return maximumTries(rest) }
        if preauth == nil, let rest = text.after(prefix: "Disconnected from user ") { return signedOut(rest) }
        if isDisconnect(text) { return .skipped(SSHDSkip.disconnect) }
        if let rest = text.after(prefix: "pam_faillock(") { return faillock(rest) }
        if isPAM(text) { return .skipped(SSHDSkip.pam) }
        return .skipped(SSHDSkip.other)
    }

    /// `Failed METHOD for [invalid user ]USER from ADDR port P ssh2[: KEY]`.
    private static func failed(_ rest: Substring) -> SSHDReading {
        let (method, target) = rest.splitAtFirstSpace()
        if method == "none" { return .skipped(SSHDSkip.probe) }
        guard let target = target?.after(prefix: "for "), let attempt = attemptTarget(target) else {
            return .skipped(SSHDSkip.unreadableAttempt)
        }
        let reason: SignInFailureReason = attempt.invalid ? .unknownUser : .invalidPassword
        return .event(.failed(signInMethod(method), reason), user: attempt.user, address: attempt.address)
    }

    /// `Accepted METHOD for USER from ADDR port P ssh2[: KEY]`.
    private static func accepted(_ rest: Substring) -> SSHDReading {
        let (method, target) = rest.splitAtFirstSpace()
        guard let target = target?.after(prefix: "for "), let attempt = attemptTarget(target) else {
            return .skipped(SSHDSkip.unreadableAttempt)
        }
        return .event(.succeeded(signInMethod(method)), user: attempt.user, address: attempt.address)
    }

    /// `Invalid user USER from ADDR port P`, or the old `Invalid user USER from ADDR`.
    private static func invalidUser(_ rest: Substring) -> SSHDReading {
        guard let found = userAndAddress(rest, portRequired: false) else {
            return .skipped(SSHDSkip.unreadableAttempt)
        }
        return .event(.started, user: found.user, address: found.address)
    }

    /// `error: maximum authentication attempts exceeded for [invalid user ]USER from ADDR port P ssh2`.
    private static func maximumTries(_ rest: Substring) -> SSHDReading {
        guard let attempt = attemptTarget(rest) else { return .skipped(SSHDSkip.unreadableAttempt) }
        return .event(.throttled, user: attempt.user, address: attempt.address)
    }

    /// `Disconnected from user USER ADDR port P` (a session ended; no `[preauth]`).
    private static func signedOut(_ rest: Substring) -> SSHDReading {
        guard let (head, port) = rest.splitAtLastSpace(), port.isDigits,
            let beforePort = head.before(suffix: " port"),
            let (user, _) = beforePort.splitAtLastSpace()
        else { return .skipped(SSHDSkip.disconnect) }
        return .event(.signedOut, user: user, address: nil)
    }

    /// `pam_faillock(sshd:auth): Consecutive login failures for user USER account temporarily locked`;
    /// any other pam_faillock line is PAM's.
    private static func faillock(_ rest: Substring) -> SSHDReading {
        guard let close = rest.firstRange(of: "): "),
            let named = rest[close.upperBound...].after(prefix: "Consecutive login failures for user "),
            let user = named.before(suffix: " account temporarily locked")
        else { return .skipped(SSHDSkip.pam) }
        return .event(.throttled, user: user, address: nil)
    }

    /// The end of a connection: it is no attempt, and the cut after too many failures is
    /// counted on the `maximum authentication attempts exceeded` line, never here.
    private static func isDisconnect(_ text: Substring) -> Bool {
        [
            "Disconnecting", "Disconnected from ", "Received disconnect from ", "Connection closed by ",
            "Connection reset by "
        ].contains { text.after(prefix: $0) != nil }
    }

    /// A PAM module's line, or sshd's report of what PAM said: the `Failed`/`Accepted` line of
    /// the same attempt is the event.
    private static func isPAM(_ text: Substring) -> Bool {
        ["pam_", "PAM ", "PAM: ", "error: PAM: "].contains { text.after(prefix: $0) != nil }
    }

    /// `password` and `keyboard-interactive[/DEVICE]` ask for a password (through PAM or BSD
    /// auth); every other method (publickey, hostbased, gssapi-with-mic) is `other`.
    private static func signInMethod(_ name: Substring) -> SignInMethod {
        name == "password" || name == "keyboard-interactive" || name.after(prefix: "keyboard-interactive/") != nil
            ? .password : .other
    }

    /// `[invalid user ]USER from ADDR port P[ ssh2[: INFO]]`: whether sshd named the user
    /// invalid, the user and the address.
    private static func attemptTarget(_ target: Substring) -> (invalid: Bool, user: Substring, address: Substring)? {
        let named = target.after(prefix: "invalid user ")
        let found = userAndAddress(named ?? target, portRequired: true) { afterPort in
            guard let afterPort else { return true }
            return afterPort == "ssh2" || afterPort.after(prefix: "ssh2:") != nil
        }
        guard let found else { return nil }
        return (named != nil, found.user, found.address)
    }

    /// `USER from ADDR port P[ REST]`, read from the right: the last ` from ` starts the
    /// suffix, so a user with spaces (or with ` from ` in it) keeps them. `afterPort` judges
    /// REST (`nil` when the port ends the text). Without `portRequired`, `USER from ADDR`
    /// (nothing after the address) also reads.
    private static func userAndAddress(
        _ text: Substring, portRequired: Bool,
        afterPort: (Substring?) -> Bool = { $0 == nil }
    )
        -> (user: Substring, address: Substring)?
    {
        guard let from = text.lastRange(of: " from ") else { return nil }
        let (address, afterAddress) = text[from.upperBound...].splitAtFirstSpace()
        guard !address.isEmpty else { return nil }
        guard let afterAddress else { return portRequired ? nil : (text[..<from.lowerBound], address) }
        guard let port = afterAddress.after(prefix: "port ") else { return nil }
        let (digits, rest) = port.splitAtFirstSpace()
        guard digits.isDigits, afterPort(rest) else { return nil }
        return (text[..<from.lowerBound], address)
    }
}
