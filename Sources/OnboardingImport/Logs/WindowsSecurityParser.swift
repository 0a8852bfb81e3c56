import OnboardingModel

/// Reads one Windows Security event as winlogbeat writes it (`@timestamp`, `winlog.event_id`,
/// `winlog.computer_name`, `winlog.event_data.TargetUserName`, `IpAddress`, `SubStatus`,
/// `Status`, `LogonType`) — the form ``WindowsEventXMLReader`` also gives the events of a
/// `wevtutil qe Security /f:xml` export — and maps logons (4624), failed logons (4625) and
/// lockouts (4740) to the vocabulary (docs/importers.md § Windows Security events has the table).
///
/// ```swift
/// let line = #"{"@timestamp":"2026-12-03T09:14:00.000Z","winlog":{"event_id":4740,"computer_name":"dc01","event_data":{"TargetUserName":"maria"}}}"#
/// // .event(AuthLogEvent(…, host: "dc01", user: "maria", payload: .accountLocked(source: .windows)))
/// ```
struct WindowsSecurityParser: JSONAuthLogParser {
    enum Skip {
        /// Another event id (4634 logoff, 4672 privileges, 4648 explicit credentials, …).
        static let otherEvent = "other event"
        /// A 4625 whose status is no credential check: a disabled or expired account, a logon
        /// outside the allowed hours or workstations, a password that must change, ….
        static let otherFailure = "logon failure without a credential check"
        /// A logon of the system itself (type 0), of a service (type 5), or of a computer
        /// account (a name ending in `$`): no person signing in.
        static let serviceLogon = "service or computer logon"
        /// An event of the XML export that could not be read (``WindowsEventXMLReader``).
        static let unreadableXML = "unreadable event XML"
        /// `event_id` missing or not a whole number.
        static let unreadableEventID = "unreadable event id"
    }

    /// The NTSTATUS codes of a 4625 (its `SubStatus`, or `Status` when `SubStatus` is `0x0`)
    /// that name a credential check, lower-case as matched.
    static let failureStatuses: [String: Outcome] = [
        "0xc000006a": .failed(.invalidPassword), // a wrong password for an existing user
        "0xc0000064": .failed(.unknownUser), // no such user
        // Refused because the account is locked out: an attempt the lock turned away, not the
        // lock itself (that is the domain controller's 4740).
        "0xc0000234": .throttled
    ]

    enum Outcome: Equatable {
        case succeeded
        case failed(SignInFailureReason)
        /// Refused by a lockout: retry after the event's own time (the event gives no end).
        case throttled
        case locked
    }

    func parse(_ element: UnsafeRawBufferPointer) -> AuthLogLine {
        guard let value = try? JSONValue.parse(bytes: Array(element)) else { return .skipped(AuthLogSkip.notJSON) }
        guard case .object = value else { return .skipped(AuthLogSkip.notARecord) }
        if value[WindowsEventXMLReader.errorMember] != nil { return .skipped(Skip.unreadableXML) }
        guard let winlog = value["winlog"], case .object = winlog else { return .skipped(AuthLogSkip.notARecord) }
        guard let eventID = Self.eventID(winlog["event_id"]) else { return .skipped(Skip.unreadableEventID) }
        guard [4624, 4625, 4740].contains(eventID) else { return .skipped(Skip.otherEvent) }
        let data = winlog["event_data"]
        func field(_ name: String) -> String? {
            guard let text = data?[name]?.stringValue, text != "-" else { return nil }
            return text
        }
        let logonType = field("LogonType")
        let userName = field("TargetUserName")
        if eventID != 4740, logonType == "0" || logonType == "5" || userName?.hasSuffix("$") == true {
            return .skipped(Skip.serviceLogon)
        }
        let address = field("IpAddress").flatMap { ClientAddress.canonical($0) }.flatMap { Self.loopback.contains($0) ? nil : $0 }
        // What the event is, decided before its time is read (a record of another kind is
        // counted as that kind, whatever its time).
        let outcome: Outcome
        switch eventID {
        case 4624: outcome = .succeeded
        case 4625:
            var status = field("SubStatus")?.lowercased()
            if status == nil || status == "0x0" || status == "0x00000000" { status = field("Status")?.lowercased() }
            guard let failure = status.flatMap({ Self.failureStatuses[$0] }) else { return .skipped(Skip.otherFailure) }
            outcome = failure
        default: outcome = .locked
        }
        guard let at = AuthLogFields.time(value["@timestamp"]) else { return .skipped(AuthLogSkip.unreadableTime) }
        let device = AuthLogFields.device(winlog["computer_name"])
        guard device != .unreadable else { return .skipped(AuthLogSkip.unreadableDevice) }
        let user = AuthLogFields.user(userName.map(JSONValue.string))
        guard user != .unreadable else { return .skipped(AuthLogSkip.unreadableUser) }
        let payload: Payload =
            switch outcome {
            case .succeeded: .signInSucceeded(method: Self.method(logonType: logonType), secondFactor: false, clientAddress: address)
            case .failed(let reason): .signInFailed(method: .password, reason: reason, clientAddress: address)
            case .throttled: .signInThrottled(method: .password, retryAfter: at, clientAddress: address)
            // 4740 names the locked account and the computer the attempts came from, not an
            // address; the domain's lockout duration, not the event, says when it ends.
            case .locked: .accountLocked(source: .windows, until: nil, clientAddress: nil)
            }
        return .event(AuthLogEvent(at: at, host: device.name, user: user.name, payload: payload))
    }

    /// The addresses of a logon at the machine itself (the console, a local service): they name
    /// no client, and counting every local attempt under one address would let one user's typos
    /// lock the machine's other users out by address. Canonical forms.
    static let loopback: Set<String> = ["127.0.0.1", "::1"]

    /// `winlog.event_id`: a number (winlogbeat 7) or a string of digits (winlogbeat 8).
    static func eventID(_ value: JSONValue?) -> Int? {
        let text: String
        switch value {
        case .number(let number)?: text = number
        case .string(let string)?: text = string
        default: return nil
        }
        guard text.utf8.count <= 5, let id = Int(text), id >= 0 else { return nil }
        return id
    }

    /// A password logon (interactive 2, unlock 7, network cleartext 8, remote interactive 10,
    /// cached 11) or another (a network logon with a Kerberos or NTLM ticket, a batch job).
    static func method(logonType: String?) -> SignInMethod {
        switch logonType {
        case "2"?, "7"?, "8"?, "10"?, "11"?: .password
        default: .other
        }
    }
}
