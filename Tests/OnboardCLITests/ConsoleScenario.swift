import Foundation
import OnboardingModel

/// The fleet the console's browser test looks at: device logs built from model events, imported
/// into real device stores with `onboard import`, and what the page must show of them (the
/// browser script compares the page with this, never with the server's own answers).
///
/// - josé ("José Álvarez") on kiosk-7 and phone-2: 80 attempts over 105 minutes (more than a
///   page), every outcome, password, passcode and biometric, sessions opened and signed out.
/// - bob on phone-2: five failed passwords in the last minute, so the server's cross-device
///   lockout (MediaWiki: 5 per 5 minutes) has him locked for the next four minutes.
/// - mallory, whose display name is `<img src=x onerror=alert(1)>`, and a user whose id is
///   `<svg onload=alert(2)>` (display name `"><script>alert(3)</script>`), on kiosk-7.
/// - carol on kiosk-7, forgotten on the server before the browser starts: her records read as
///   a pseudonym.
/// - spare-9: enrolled with two tokens, never synced (the token the page revokes).
struct ConsoleScenario {
    struct Attempt: Encodable {
        let at: String
        let device: String
        let seq: UInt64
        let user: String
        let outcome: String
        let factor: String
        let method: String
    }

    struct User: Encodable {
        let id: String
        let displayName: String
        let attempts: [Attempt]

        enum CodingKeys: String, CodingKey { case id, displayName = "display_name", attempts }
    }

    /// A device's log, seqs 1… in order.
    var logs: [String: [Event]] = [:]
    var users: [String: User] = [:]

    static let jose = "josé"
    static let bob = "bob"
    static let mallory = "mallory"
    static let hostileID = "<svg onload=alert(2)>"
    static let carol = "carol"
    static let devices = ["kiosk-7", "phone-2"]
    static let spareDevice = "spare-9"
    /// José's attempts: more than the console's page of 50, so "Load more" has a second page.
    static let joseAttempts = 80

    init(now: Timestamp) {
        // Whole minutes, so the chart's buckets line up with the attempts the same way every run.
        let start = Timestamp(millisecondsSince1970: (now.millisecondsSince1970 / 60_000 - 120) * 60_000)
        var events: [(String, Event)] = []
        func add(_ device: String, _ at: Timestamp, _ user: String, _ payload: Payload) {
            events.append((device, Event(id: UUID(), device: device, at: at, user: user, flow: nil, payload: payload)))
        }
        func second(_ count: Int64) -> Int64 { count * 1_000 }

        add("kiosk-7", start, Self.jose, .userAdded(displayName: "José Álvarez", passcodePolicy: .numeric, passcodeMinLength: 6))
        add(
            "phone-2", start.adding(milliseconds: second(2)), Self.jose,
            .userAdded(displayName: "José Álvarez", passcodePolicy: .numeric, passcodeMinLength: 6))
        add(
            "kiosk-7", start.adding(milliseconds: second(4)), Self.carol,
            .userAdded(displayName: "Carol Ersatz", passcodePolicy: .numeric, passcodeMinLength: 6))
        for index in 0..<3 {
            add(
                "kiosk-7", start.adding(milliseconds: second(15 + 10 * Int64(index))), Self.carol,
                .signInFailed(method: .password, reason: .invalidPassword))
        }
        add(
            "kiosk-7", start.adding(milliseconds: second(10)), Self.mallory,
            .userAdded(displayName: "<img src=x onerror=alert(1)>", passcodePolicy: .numeric, passcodeMinLength: 6))
        add("kiosk-7", start.adding(milliseconds: second(20)), Self.mallory, .signInFailed(method: .password, reason: .invalidPassword))
        add("kiosk-7", start.adding(milliseconds: second(30)), Self.mallory, .signInSucceeded(method: .password, secondFactor: false))
        add(
            "kiosk-7", start.adding(milliseconds: second(40)), Self.hostileID,
            .userAdded(displayName: "\"><script>alert(3)</script>", passcodePolicy: .numeric, passcodeMinLength: 6))
        add("kiosk-7", start.adding(milliseconds: second(50)), Self.hostileID, .signInFailed(method: .password, reason: .invalidPassword))

        var at = start.adding(milliseconds: second(60))
        for index in 0..<Self.joseAttempts {
            // Uneven gaps (15 s to 141 s, 78 s on average), so the chart has bursts and lulls.
            at = at.adding(milliseconds: second(15 + Int64(index * 7 % 10) * 14))
            let device = Self.devices[index % 2]
            switch index % 5 {
            case 0:
                add(device, at, Self.jose, .signInSucceeded(method: .password, secondFactor: index % 10 == 0))
                add(device, at.adding(milliseconds: second(30)), Self.jose, .signedOut(reason: .user))
            case 1: add(device, at, Self.jose, .signInFailed(method: .password, reason: .invalidPassword))
            case 2: add(device, at, Self.jose, .signInFailed(method: .passcode, reason: .invalidPasscode))
            case 3: add(device, at, Self.jose, .signInSucceeded(method: .biometric, secondFactor: false))
            default: add(device, at, Self.jose, .signInThrottled(method: .password, retryAfter: at.adding(milliseconds: second(60))))
            }
        }
        add("phone-2", start.adding(milliseconds: second(6)), Self.bob, .userAdded(displayName: "Bob Martin", passcodePolicy: .numeric, passcodeMinLength: 6))
        // Recent enough that the lock (from the first failure, 5 minutes) lasts through the test's
        // first minutes, where it clears it.
        for index in 0..<5 {
            add(
                "phone-2", now.adding(milliseconds: -second(30) + second(Int64(index))), Self.bob,
                .signInFailed(method: .password, reason: .invalidPassword))
        }

        var attempts: [String: [Attempt]] = [:]
        for device in Self.devices {
            let log = events.filter { $0.0 == device }.map(\.1).sorted { $0.at < $1.at }
            logs[device] = log
            for (offset, event) in log.enumerated() {
                guard let user = event.user, let attempt = Self.attempt(event, seq: UInt64(offset + 1), user: user) else { continue }
                attempts[user, default: []].append(attempt)
            }
        }
        let names = [
            Self.jose: "José Álvarez", Self.bob: "Bob Martin", Self.mallory: "<img src=x onerror=alert(1)>",
            Self.hostileID: "\"><script>alert(3)</script>", Self.carol: "Carol Ersatz"
        ]
        for (user, name) in names {
            users[user] = User(id: user, displayName: name, attempts: (attempts[user] ?? []).sorted { ($0.at, $0.device, $0.seq) < ($1.at, $1.device, $1.seq) })
        }
    }

    /// The history attempt an event is (docs/projections.md), or nil for other events.
    static func attempt(_ event: Event, seq: UInt64, user: String) -> Attempt? {
        let (outcome, factor, method): (String, String, SignInMethod)
        switch event.payload {
        case .signInFailed(let signIn, _, _): (outcome, factor, method) = ("failed", "password", signIn)
        case .signInSucceeded(let signIn, _, _): (outcome, factor, method) = ("succeeded", "password", signIn)
        case .signInThrottled(let signIn, _, _): (outcome, factor, method) = ("throttled", "password", signIn)
        default: return nil
        }
        return Attempt(
            at: event.at.iso8601, device: event.device, seq: seq, user: user, outcome: outcome, factor: factor,
            method: method.rawValue)
    }

    /// A device's log as canonical JSONL, as `onboard import` reads it.
    func jsonl(device: String) -> String {
        (logs[device] ?? []).enumerated().map { EventJSON.encode($1, seq: UInt64($0 + 1)) + "\n" }.joined()
    }
}
