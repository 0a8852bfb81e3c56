import OnboardingModel

/// What the parser knows of the line being applied.
struct SSHDLineContext {
    var at: Timestamp
    var host: String?
    var pid: String?
    var origin: SSHDOrigin
    /// rsyslog's `message repeated N times`: N attempts, each its own.
    var repeats: Int
    var mode: SSHDMode
}

/// The sshd connections of a log, by host and process, and what each has said so far: the
/// address, the attempt its next lines may belong to, and the events waiting for the rest of the
/// connection (docs/importers.md § One attempt, one event).
///
/// An event that waits is released when its connection shows how it went on, or when the log's
/// time has passed it by ``loginGraceSeconds`` (sshd cuts an unauthenticated connection by then:
/// `LoginGraceTime`), whichever comes first. What still waits at the log's end is not given: it
/// is reported as skipped, and a later import of the grown log gives it, with the id it would
/// have had, so that importing a log again as it grows never gives one line two contents.
///
/// Memory is bounded: at most ``maximumConnections`` connections and ``maximumHeld`` waiting
/// events each; a connection silent for ``forgetSeconds`` is taken as ended (its PID may be
/// reused) and releases what it held.
struct SSHDConnections: Sendable {
    /// Two lines of one guess (PAM's, then sshd's `Failed …`) are written within this much of
    /// each other; a later line of the same stage or a longer gap is another guess.
    static let attemptMilliseconds: Int64 = 2000
    static let forgetSeconds: Int64 = 600
    /// sshd's default `LoginGraceTime`: no connection stays unauthenticated longer.
    static let loginGraceSeconds: Int64 = 120
    static let maximumConnections = 8192
    static let maximumHeld = 64

    private struct Key: Hashable, Sendable {
        var host: String?
        var pid: String
    }

    /// An event that waits: a PAM module's failure (until the connection ends or goes on), or a
    /// line without an address (until the connection names one).
    private struct Held: Sendable {
        var event: SSHDEvent
        var pam: Bool
        var user: String?
        /// The log time after which it is released whatever else comes.
        var deadline: Int64
    }

    private struct Attempt: Sendable {
        var stage: SSHDStage
        var at: Timestamp
        var user: String?
        /// Whether the attempt's event was given; `false` while its only line is a held PAM failure.
        var counted: Bool
    }

    private struct Connection: Sendable {
        var address: String?
        var lastAt: Timestamp
        var attempt: Attempt?
        var held: [Held] = []
        var userUnknown = false
        var cut = false
    }

    private var table: [Key: Connection] = [:]
    /// The connections that hold events, by the deadline of what they held, in the order held.
    private var deadlines: [(deadline: Int64, key: Key?)] = []
    private var deadlineHead = 0

    // MARK: Applying a line

    mutating func apply(_ reading: SSHDReading, _ line: SSHDLineContext) -> SSHDLineReading {
        var out = SSHDLineReading()
        releaseExpired(at: line.at, into: &out)
        guard let pid = line.pid else {
            // No process to follow: the line stands alone, and nothing of it waits.
            var connection = Connection(lastAt: line.at)
            apply(reading, line, to: &connection, out: &out)
            release(&connection, pamOnly: false, into: &out)
            return out
        }
        let key = Key(host: line.host, pid: pid)
        var connection: Connection
        if let known = table.removeValue(forKey: key) {
            connection = known
            if line.at.millisecondsSince1970 - known.lastAt.millisecondsSince1970 > Self.forgetSeconds * 1000 {
                release(&connection, pamOnly: false, into: &out)
                connection = Connection(lastAt: line.at)
            }
        } else {
            connection = Connection(lastAt: line.at)
            if table.count >= Self.maximumConnections { evict(before: line.at, into: &out) }
        }
        apply(reading, line, to: &connection, out: &out)
        connection.lastAt = max(connection.lastAt, line.at)
        if let last = connection.held.last, last.event.line == line.origin.number { deadlines.append((last.deadline, key)) }
        table[key] = connection
        return out
    }

    /// The log has ended: what still waits is not given (a longer log may show how it went on),
    /// and is reported as skipped, one kind a line.
    mutating func finish() -> SSHDLineReading {
        var out = SSHDLineReading()
        // In line order: a dictionary's order differs from one table to the next.
        for line in table.values.flatMap({ $0.held.map(\.event.line) }).sorted() { out.skip(SSHDSkip.openAtTheEnd, line: line) }
        table = [:]
        deadlines = []
        deadlineHead = 0
        return out
    }

    /// Releases what connections held past its deadline: the connection cannot still be open.
    private mutating func releaseExpired(at: Timestamp, into out: inout SSHDLineReading) {
        let now = at.millisecondsSince1970
        while deadlineHead < deadlines.count, deadlines[deadlineHead].deadline < now {
            if let key = deadlines[deadlineHead].key, var connection = table[key] {
                let (expired, kept) = connection.held.partitioned { $0.deadline < now }
                if !expired.isEmpty {
                    connection.held = kept
                    out.events += expired.map(\.event)
                    if connection.attempt?.counted == false, !kept.contains(where: \.pam) { connection.attempt = nil }
                    table[key] = connection
                }
            }
            deadlineHead += 1
        }
        if deadlineHead > 4096, deadlineHead * 2 > deadlines.count {
            deadlines.removeFirst(deadlineHead)
            deadlineHead = 0
        }
    }

    private static func order(_ a: Key, _ b: Key) -> Bool { (a.host ?? "", a.pid) < (b.host ?? "", b.pid) }

    /// The event of a line. A user name the envelope refuses (empty, control characters, longer
    /// than a user id may be) is dropped and the attempt kept: a name must not hide a guess.
    private func event(_ payload: Payload, user: String?, _ line: SSHDLineContext, index: Int = 0) -> SSHDEvent {
        let user = user.flatMap { (try? Event.validate(userID: $0)) != nil ? $0 : nil }
        return SSHDEvent(
            event: AuthLogEvent(at: line.at, host: line.host, user: user, payload: payload),
            line: line.origin.number, index: index, origin: line.origin)
    }

    private mutating func apply(_ reading: SSHDReading, _ line: SSHDLineContext, to connection: inout Connection, out: inout SSHDLineReading) {
        if case .connection(_, opens: true, _, _) = reading {
            // sshd's first line of a process: whatever the PID did before was another connection.
            release(&connection, pamOnly: false, into: &out)
            connection = Connection(lastAt: line.at)
        }
        if let address = reading.address, let canonical = ClientAddress.canonical(address) {
            connection.address = canonical
            releaseWaitingForAddress(&connection, into: &out)
        }
        switch reading {
        case let .attempt(stage, method, reason, user, address):
            attempt(stage, method, reason, user: user.map(String.init), address: address, line, &connection, &out)
        case let .succeeded(method, user, address):
            let name = String(user)
            // A PAM module's failure before the same user's success: another module of the stack let them in.
            let (same, other) = connection.held.partitioned { $0.pam && ($0.user == nil || $0.user == name) }
            connection.held = other
            for held in same { out.skip(SSHDSkip.pamBeforeSuccess, line: held.event.line) }
            release(&connection, pamOnly: true, into: &out)
            connection.attempt = nil
            out.events.append(
                event(.signInSucceeded(method: method, secondFactor: false, clientAddress: ClientAddress.canonical(address)), user: name, line))
        case let .aborted(reason, user, address, aggressive):
            if aggressive, line.mode == .normal {
                if reason == .closedBeforeAuthentication { release(&connection, pamOnly: true, into: &out) }
                out.skip(SSHDSkip.preauthentication, line: line.origin.number)
                return
            }
            if reason == .tooManyFailures {
                if connection.cut, line.repeats == 1 {
                    out.skip(SSHDSkip.sameCut, line: line.origin.number)
                    return
                }
                connection.cut = true
            }
            if reason == .closedBeforeAuthentication { release(&connection, pamOnly: true, into: &out) }
            let (clientAddress, waits) = resolve(address, connection)
            for index in 0..<line.repeats {
                let found = event(.signInAborted(reason: reason, clientAddress: clientAddress), user: user.map(String.init), line, index: index)
                if waits {
                    hold(Held(event: found, pam: false, user: user.map(String.init), deadline: deadline(line)), in: &connection, out: &out)
                } else {
                    out.events.append(found)
                }
            }
        case .signedOut(let user):
            out.events.append(event(.signedOut(reason: .user), user: String(user), line))
        case .throttled(let user):
            out.events.append(
                event(.signInThrottled(method: .password, retryAfter: line.at, clientAddress: connection.address), user: String(user), line))
        case .userUnknown:
            connection.userUnknown = true
            out.skip(SSHDSkip.pam, line: line.origin.number)
        case let .connection(_, _, closes, kind):
            if closes { release(&connection, pamOnly: true, into: &out) }
            out.skip(kind, line: line.origin.number)
        case .closed(let kind):
            release(&connection, pamOnly: true, into: &out)
            out.skip(kind, line: line.origin.number)
        case .skipped(let kind):
            out.skip(kind, line: line.origin.number)
        }
    }

    /// One line of a failed attempt: joined to the connection's open attempt when it is a later
    /// stage of it, else a new attempt.
    private mutating func attempt(
        _ stage: SSHDStage, _ method: SignInMethod, _ given: SignInFailureReason, user: String?, address: SSHDAddress,
        _ line: SSHDLineContext, _ connection: inout Connection, _ out: inout SSHDLineReading
    ) {
        var reason = given
        if stage == .pamModule, connection.userUnknown { reason = .unknownUser }
        if stage >= .pamModule { connection.userUnknown = false }
        let (clientAddress, waits) = resolve(address, connection)
        if line.repeats == 1, let open = connection.attempt, open.stage < stage,
            open.stage == .named || line.at.millisecondsSince1970 - open.at.millisecondsSince1970 <= Self.attemptMilliseconds,
            open.user == nil || user == nil || open.user == user
        {
            let name = user ?? open.user
            connection.attempt = stage == .failed ? nil : Attempt(stage: stage, at: line.at, user: name, counted: true)
            guard !open.counted, let index = connection.held.lastIndex(where: { $0.pam }) else {
                out.skip(SSHDSkip.sameAttempt, line: line.origin.number)
                return
            }
            // The attempt's PAM failure waited; this later line of it confirms it, and says more.
            let earlier = connection.held.remove(at: index)
            out.skip(SSHDSkip.sameAttempt, line: earlier.event.line)
            let failedReason = reason == .unknownUser || earlier.event.event.failureReason == .unknownUser ? SignInFailureReason.unknownUser : reason
            out.events.append(
                event(.signInFailed(method: method, reason: failedReason, clientAddress: clientAddress ?? connection.address), user: name, line))
            return
        }
        if stage == .pamModule {
            // Another user's PAM failure on the same connection: the earlier ones were guesses.
            let (others, same) = connection.held.partitioned { $0.pam && $0.user != user }
            connection.held = same
            out.events += others.map(\.event)
            let found = event(.signInFailed(method: method, reason: reason, clientAddress: clientAddress), user: user, line)
            hold(Held(event: found, pam: true, user: user, deadline: deadline(line)), in: &connection, out: &out)
            connection.attempt = Attempt(stage: stage, at: line.at, user: user, counted: false)
            return
        }
        for index in 0..<line.repeats {
            let found = event(.signInFailed(method: method, reason: reason, clientAddress: clientAddress), user: user, line, index: index)
            if waits {
                hold(Held(event: found, pam: false, user: user, deadline: deadline(line)), in: &connection, out: &out)
            } else {
                out.events.append(found)
            }
        }
        connection.attempt = stage == .failed || line.repeats > 1 ? nil : Attempt(stage: stage, at: line.at, user: user, counted: true)
    }

    private func deadline(_ line: SSHDLineContext) -> Int64 {
        line.at.millisecondsSince1970 + Self.loginGraceSeconds * 1000
    }

    /// The address a line's event carries, and whether it must wait for the connection's.
    private func resolve(_ address: SSHDAddress, _ connection: Connection) -> (String?, waits: Bool) {
        switch address {
        case .given(let text): (ClientAddress.canonical(text), false)
        case .connection: (connection.address, connection.address == nil)
        }
    }

    private func hold(_ held: Held, in connection: inout Connection, out: inout SSHDLineReading) {
        if connection.held.count >= Self.maximumHeld { out.events.append(connection.held.removeFirst().event) }
        connection.held.append(held)
    }

    private func releaseWaitingForAddress(_ connection: inout Connection, into out: inout SSHDLineReading) {
        guard let address = connection.address else { return }
        let (waiting, pam) = connection.held.partitioned { !$0.pam }
        connection.held = pam
        out.events += waiting.map { held in
            var event = held.event
            event.event.payload = event.event.payload.withClientAddress(address)
            return event
        }
    }

    /// Releases the held events: the PAM failures (and, unless `pamOnly`, the lines still
    /// waiting for an address, which keep none).
    private func release(_ connection: inout Connection, pamOnly: Bool, into out: inout SSHDLineReading) {
        let (released, kept) = connection.held.partitioned { $0.pam || !pamOnly }
        connection.held = kept
        out.events += released.map(\.event)
        if connection.attempt?.counted == false { connection.attempt = nil }
    }

    /// Makes room: connections silent for ``forgetSeconds`` end; if that is not enough, the
    /// older half.
    private mutating func evict(before at: Timestamp, into out: inout SSHDLineReading) {
        let limit = at.millisecondsSince1970 - Self.forgetSeconds * 1000
        var stale = table.filter { $0.value.lastAt.millisecondsSince1970 < limit }.map(\.key)
        if stale.count < Self.maximumConnections / 4 {
            stale = table.sorted { ($0.value.lastAt, $0.key.host ?? "", $0.key.pid) < ($1.value.lastAt, $1.key.host ?? "", $1.key.pid) }.prefix(
                Self.maximumConnections / 2
            ).map(\.key)
        }
        for key in stale.sorted(by: Self.order) {
            var connection = table.removeValue(forKey: key)!
            release(&connection, pamOnly: false, into: &out)
        }
    }
}

extension SSHDReading {
    /// The address text the line names, if any.
    var address: Substring? {
        switch self {
        case .attempt(_, _, _, _, .given(let text)), .aborted(_, _, .given(let text), _): text
        case .succeeded(_, _, let text), .connection(let text, _, _, _): text
        default: nil
        }
    }
}

extension AuthLogEvent {
    var failureReason: SignInFailureReason? {
        if case .signInFailed(_, let reason, _) = payload { return reason }
        return nil
    }
}

extension Payload {
    /// The payload with `address` as its client address, for the events that carry one.
    func withClientAddress(_ address: String) -> Payload {
        switch self {
        case let .signInFailed(method, reason, _): .signInFailed(method: method, reason: reason, clientAddress: address)
        case let .signInAborted(reason, _): .signInAborted(reason: reason, clientAddress: address)
        case let .signInThrottled(method, retryAfter, _): .signInThrottled(method: method, retryAfter: retryAfter, clientAddress: address)
        default: self
        }
    }
}

extension Array {
    /// The elements that satisfy `belongs`, and the others, each in order.
    func partitioned(_ belongs: (Element) -> Bool) -> ([Element], [Element]) {
        var yes: [Element] = []
        var no: [Element] = []
        for element in self {
            if belongs(element) { yes.append(element) } else { no.append(element) }
        }
        return (yes, no)
    }
}
