import Foundation
import Testing
import OnboardingModel
@testable import OnboardingProjections

// Helpers for the lockout tests: a scenario that feeds a `LockoutEngine` events at readable
// times, and a one-line summary of a decision that the tests and the timelines of
// docs/lockout.md share word for word. Every name starts with `Lockout` so nothing collides
// with the other projection tests in this target. Nothing here asserts; the tests do.

/// Times of the lockout tests: clock times on the day of the timelines in docs/lockout.md.
enum LockoutClock {
    /// 2026-11-29T16:00:00.000Z, the `t = 0` of every timeline.
    static let origin = Timestamp(millisecondsSince1970: 1_795_968_000_000)
    static let day = "2026-11-29"

    /// `"16:04:59.999"` (on the origin's day) or a full ISO-8601 time.
    static func time(_ text: String) -> Timestamp {
        let full = text.hasSuffix("Z") ? text : "\(day)T\(text)\(text.contains(".") ? "" : ".000")Z"
        do { return try Timestamp(iso8601: full) } catch { preconditionFailure("bad test time \(text)") }
    }

    /// The origin moved by `seconds` (fractions down to the millisecond).
    static func seconds(_ seconds: Double) -> Timestamp {
        origin.adding(milliseconds: Int64((seconds * 1000).rounded()))
    }

    /// A time as the timelines print it: `16:05:00.000` on the origin's day, else full ISO-8601.
    static func label(_ time: Timestamp) -> String {
        let iso = time.iso8601
        return iso.hasPrefix(day + "T") ? String(iso.dropFirst(day.count + 1).dropLast()) : iso
    }
}

/// A decision in the words of the timelines: `allowed (4 failures)`,
/// `locked until 16:05:00.000, wait 5 minutes (5 failures)`, `permanently locked (10 failures)`.
func lockoutSummary(_ decision: LockoutDecision) -> String {
    func failures(_ count: Int) -> String { "(\(count) failure\(count == 1 ? "" : "s"))" }
    switch decision {
    case .allowed(let count):
        return "allowed \(failures(count))"
    case .locked(let lock):
        return "locked until \(LockoutClock.label(lock.until)), wait "
            + "\(DurationWords.words(milliseconds: lock.durationMilliseconds)) \(failures(lock.failures))"
    case .permanentlyLocked(let lock):
        return "permanently locked \(failures(lock.failures))"
    }
}

/// A lockout engine and a log being written for it, one event at a time.
struct LockoutScenario {
    var engine: LockoutEngine
    private(set) var records: [Record] = []
    var user: String? = "alice"
    var device = "phone-1"
    /// The client address of the latest event that had one: what ``decide(at:_:user:device:)``
    /// asks about (the timelines' `from ADDRESS`).
    var address: String?

    init(_ policy: LockoutPolicy, acrossDevices: Bool = false) {
        engine = LockoutEngine(policy: policy, acrossDevices: acrossDevices)
    }

    var policy: LockoutPolicy { engine.policy }

    /// Appends an event for `user` (default: the scenario's) on `device` and applies it.
    mutating func record(_ payload: Payload, at time: Timestamp, user: String?? = .none, device: String? = nil) {
        let seq = UInt64(records.count + 1)
        let event = Event(
            id: UUID(uuidString: String(format: "00000000-0000-4000-8000-%012llx", seq))!,
            device: device ?? self.device, at: time, user: user ?? self.user,
            flow: nil, payload: payload)
        let record = Record(seq: seq, event: event, previousHash: .zero, hash: .zero)
        records.append(record)
        engine.apply(record)
    }

    /// A counted password-factor failure (with the policy's counted method by default).
    mutating func fail(
        at time: Timestamp, method: SignInMethod? = nil, reason: SignInFailureReason = .invalidPassword,
        user: String?? = .none, device: String? = nil, address: String? = nil
    ) {
        let method = method ?? (policy.password.methods?.first ?? .password)
        let reason = method == .passcode && reason == .invalidPassword ? .invalidPasscode : reason
        if let address { self.address = address }
        record(.signInFailed(method: method, reason: reason, clientAddress: address), at: time, user: user, device: device)
    }

    mutating func failSecondFactor(
        at time: Timestamp, method: SecondFactorMethod = .totp,
        user: String?? = .none, device: String? = nil
    ) {
        record(.secondFactorFailed(method: method), at: time, user: user, device: device)
    }

    mutating func succeed(
        at time: Timestamp, method: SignInMethod = .password, user: String?? = .none, device: String? = nil,
        address: String? = nil
    ) {
        if let address { self.address = address }
        record(.signInSucceeded(method: method, secondFactor: false, clientAddress: address), at: time, user: user, device: device)
    }

    /// A `sign_in_aborted`: a server cut the client off before it signed in (sshd's pre-authentication abuse).
    mutating func abort(
        at time: Timestamp, reason: SignInAbortReason = .tooManyFailures, user: String?? = .none, device: String? = nil,
        address: String? = nil
    ) {
        if let address { self.address = address }
        record(.signInAborted(reason: reason, clientAddress: address), at: time, user: user, device: device)
    }

    mutating func throttled(at time: Timestamp) {
        let until: Timestamp =
            switch decide(at: time) {
            case .locked(let lock): lock.until
            default: time
            }
        record(.signInThrottled(method: .password, retryAfter: until), at: time)
    }

    /// One of the four clearing events.
    mutating func clear(_ type: EventType, at time: Timestamp, user: String?? = .none, device: String? = nil) {
        let payload: Payload =
            switch type {
            case .signInSucceeded: .signInSucceeded(method: .password, secondFactor: false)
            case .passwordChanged: .passwordChanged(forced: false)
            case .lockoutCleared: .lockoutCleared(reason: .admin)
            case .passcodeResetCompleted: .passcodeResetCompleted
            default: preconditionFailure("\(type.rawValue) is not a clearing event")
            }
        record(payload, at: time, user: user, device: device)
    }

    func key(_ factor: LockoutFactor = .password, user: String?? = .none, device: String? = nil) -> LockoutKey {
        engine.key(user: user ?? self.user, device: device ?? self.device, factor: factor)
    }

    func decide(at time: Timestamp, _ factor: LockoutFactor = .password, user: String?? = .none, device: String? = nil) -> LockoutDecision {
        engine.decide(key(factor, user: user, device: device), address: address, at: time)
    }

    func summary(at time: Timestamp, _ factor: LockoutFactor = .password, user: String?? = .none, device: String? = nil) -> String {
        lockoutSummary(decide(at: time, factor, user: user, device: device))
    }

    /// The end of the temporary lock in force at `time`, if any.
    func lockedUntil(at time: Timestamp, _ factor: LockoutFactor = .password) -> Timestamp? {
        if case .locked(let lock) = decide(at: time, factor) { return lock.until }
        return nil
    }

    /// Fails the password factor `count` times, `spacing` seconds apart from `start`, each
    /// attempt at the later of its planned time and the end of a lock in force (the moment an
    /// app would let it through). Returns the time of the last attempt.
    @discardableResult
    mutating func failRepeatedly(
        _ count: Int, from start: Timestamp, spacing: Double = 1,
        factor: LockoutFactor = .password
    ) -> Timestamp {
        var time = start
        for index in 0..<count {
            if index > 0 { time = time.adding(milliseconds: Int64((spacing * 1000).rounded())) }
            if let until = lockedUntil(at: time, factor) { time = until }
            if factor == .password { fail(at: time) } else { failSecondFactor(at: time) }
        }
        return time
    }
}

/// What the generic tests need to know about a preset: how its password factor first locks.
struct LockoutPresetProfile: Sendable, CustomTestStringConvertible {
    let policy: LockoutPolicy
    /// Counted failures, `spacing` seconds apart from t = 0, that first lock the password factor.
    let limit: Int
    let spacing: Double
    /// Seconds after t = 0 at which that first lock ends; `nil`: it is permanent.
    let firstLockEnds: Double?
    /// The same for the second factor (failures `spacing` apart); `nil` limit: it never locks.
    let secondFactorLimit: Int?
    let secondFactorLockEnds: Double?

    var testDescription: String { policy.name }

    static let mediawiki = LockoutPresetProfile(
        policy: .mediawiki, limit: 5, spacing: 1, firstLockEnds: 300,
        secondFactorLimit: 10, secondFactorLockEnds: 60)
    /// Failures 1 s apart: not closer than Keycloak's quick-login interval.
    static let keycloak = LockoutPresetProfile(
        policy: .keycloak, limit: 30, spacing: 1, firstLockEnds: 29 + 60,
        secondFactorLimit: 30, secondFactorLockEnds: 29 + 60)
    static let owasp = LockoutPresetProfile(
        policy: .owasp, limit: 1, spacing: 1, firstLockEnds: 1,
        secondFactorLimit: 1, secondFactorLockEnds: 1)
    static let nist = LockoutPresetProfile(
        policy: .nist, limit: 100, spacing: 1, firstLockEnds: nil,
        secondFactorLimit: 100, secondFactorLockEnds: nil)
    static let localPasscode = LockoutPresetProfile(
        policy: .localPasscode, limit: 10, spacing: 1, firstLockEnds: nil,
        secondFactorLimit: nil, secondFactorLockEnds: nil)

    static let all: [LockoutPresetProfile] = [.mediawiki, .keycloak, .owasp, .nist, .localPasscode]

    /// The time of the `index`-th failure (from 0) when none of the first `limit` waits.
    func time(ofFailure index: Int) -> Timestamp { LockoutClock.seconds(Double(index) * spacing) }

    /// A scenario in which the first `count` failures have been recorded.
    func scenario(failures count: Int, acrossDevices: Bool = false) -> LockoutScenario {
        var scenario = LockoutScenario(policy, acrossDevices: acrossDevices)
        for index in 0..<count { scenario.fail(at: time(ofFailure: index)) }
        return scenario
    }

    /// A scenario locked by exactly `limit` failures, and the time of the last of them.
    func locked(acrossDevices: Bool = false) -> (LockoutScenario, Timestamp) {
        (scenario(failures: limit, acrossDevices: acrossDevices), time(ofFailure: limit - 1))
    }

    /// What the password factor's first lock looks like, for `#expect`.
    func isFirstLock(_ decision: LockoutDecision) -> Bool {
        switch (decision, firstLockEnds) {
        case (.locked(let lock), let end?): lock.until == LockoutClock.seconds(end) && lock.failures == limit
        case (.permanentlyLocked(let lock), nil): lock.failures == limit
        default: false
        }
    }
}

/// One row of a worked timeline (docs/lockout.md prints the same rows): at `time`, do `action`,
/// then the key's decision at that same time reads `expected` (see ``lockoutSummary(_:)``).
struct LockoutStep: Sendable {
    enum Action: Sendable {
        case fail(SignInMethod, SignInFailureReason)
        case failSecondFactor
        case throttled
        case clear(EventType)
        case succeed(SignInMethod)
        /// Only ask for the decision.
        case check
    }

    let time: String
    let action: Action
    let expected: String

    init(_ time: String, _ action: Action, _ expected: String) {
        self.time = time
        self.action = action
        self.expected = expected
    }

    static func fail(_ time: String, _ expected: String) -> LockoutStep {
        LockoutStep(time, .fail(.password, .invalidPassword), expected)
    }

    static func check(_ time: String, _ expected: String) -> LockoutStep { LockoutStep(time, .check, expected) }
}

extension LockoutScenario {
    /// Plays `steps` and checks the decision for `factor` after each one.
    mutating func play(
        _ steps: [LockoutStep], factor: LockoutFactor = .password,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        for (index, step) in steps.enumerated() {
            let time = LockoutClock.time(step.time)
            switch step.action {
            case let .fail(method, reason): fail(at: time, method: method, reason: reason)
            case .failSecondFactor: failSecondFactor(at: time)
            case .throttled: throttled(at: time)
            case .clear(let type): clear(type, at: time)
            case .succeed(let method): succeed(at: time, method: method)
            case .check: break
            }
            let actual = summary(at: time, factor)
            #expect(actual == step.expected, "row \(index + 1) at \(step.time)", sourceLocation: sourceLocation)
        }
    }
}

extension LockoutEngine {
    /// The engine's part of a projection snapshot, as bytes (the store writes it inside the state's).
    var snapshotBytes: [UInt8] {
        var writer = JSONWriter()
        writer.append(snapshotValue)
        return writer.bytes
    }

    init(snapshotBytes bytes: [UInt8]) throws {
        try self.init(snapshotValue: try JSONValue.parse(bytes: bytes))
    }
}
