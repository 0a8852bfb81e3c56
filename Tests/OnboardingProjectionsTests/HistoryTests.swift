import Foundation
import Testing
import OnboardingModel
@testable import OnboardingProjections

/// The audit history: one attempt per sign-in outcome, sessions with their ends and durations,
/// and the device / since / until filters.
@Suite("History")
struct HistoryTests {
    /// Alice on her phone and a kiosk, with a record of Bob's mixed in.
    static func log() -> [Record] {
        var script = FlowScript(device: "phone-1")
        script.record(.signInStarted(method: .password), user: "alice", at: "09:00:00") // 1
        script.record(.signInFailed(method: .password, reason: .invalidPassword), user: "alice", at: "09:00:01") // 2
        script.record(.signInFailed(method: .password, reason: .networkUnavailable), user: "alice", at: "09:00:05") // 3
        script.record(.secondFactorRequired(method: .totp), user: "alice", at: "09:00:10") // 4
        script.record(.secondFactorFailed(method: .totp), user: "alice", at: "09:00:20") // 5
        script.record(.secondFactorSucceeded(method: .totp), user: "alice", at: "09:00:30") // 6
        script.record(.signInSucceeded(method: .password, secondFactor: true), user: "alice", at: "09:00:31") // 7
        script.record(.signInFailed(method: .password, reason: .invalidPassword), user: "bob", at: "09:30:00") // 8
        script.record(.signedOut(reason: .sessionExpired), user: "alice", at: "17:00:31") // 9
        script.record(
            .signInThrottled(method: .passcode, retryAfter: FlowTime.at("18:05:00")), user: "alice",
            at: "18:00:00", device: "kiosk-7") // 10
        script.record(
            .signInSucceeded(method: .passcode, secondFactor: false), user: "alice", at: "18:10:00",
            device: "kiosk-7") // 11
        script.record(
            .signInSucceeded(method: .biometric, secondFactor: false), user: "alice", at: "18:40:00",
            device: "kiosk-7") // 12
        script.record(.signInSucceeded(method: .apple, secondFactor: false), user: "alice", at: "19:00:00") // 13
        return script.records
    }

    static let attempts: [History.Attempt] = alice([
        .init(seq: 2, at: FlowTime.at("09:00:01"), device: "phone-1", method: .signIn(.password), outcome: .failed, reason: "invalid_password"),
        .init(seq: 3, at: FlowTime.at("09:00:05"), device: "phone-1", method: .signIn(.password), outcome: .failed, reason: "network_unavailable"),
        .init(seq: 5, at: FlowTime.at("09:00:20"), device: "phone-1", method: .secondFactor(.totp), outcome: .failed, reason: nil),
        .init(seq: 6, at: FlowTime.at("09:00:30"), device: "phone-1", method: .secondFactor(.totp), outcome: .succeeded, reason: nil),
        .init(seq: 7, at: FlowTime.at("09:00:31"), device: "phone-1", method: .signIn(.password), outcome: .succeeded, reason: nil),
        .init(seq: 10, at: FlowTime.at("18:00:00"), device: "kiosk-7", method: .signIn(.passcode), outcome: .throttled, reason: "locked"),
        .init(seq: 11, at: FlowTime.at("18:10:00"), device: "kiosk-7", method: .signIn(.passcode), outcome: .succeeded, reason: nil),
        .init(seq: 12, at: FlowTime.at("18:40:00"), device: "kiosk-7", method: .signIn(.biometric), outcome: .succeeded, reason: nil),
        .init(seq: 13, at: FlowTime.at("19:00:00"), device: "phone-1", method: .signIn(.apple), outcome: .succeeded, reason: nil)
    ])

    static func alice(_ attempts: [History.Attempt]) -> [History.Attempt] {
        attempts.map { attempt in
            var attempt = attempt
            attempt.user = "alice"
            return attempt
        }
    }

    static let sessions: [History.SignInSession] = [
        .init(
            device: "phone-1", start: FlowTime.at("09:00:31"), end: FlowTime.at("17:00:31"), method: .password, secondFactor: true,
            endReason: "session_expired", user: "alice", seq: 7),
        .init(
            device: "kiosk-7", start: FlowTime.at("18:10:00"), end: FlowTime.at("18:40:00"), method: .passcode, secondFactor: false,
            endReason: "replaced", user: "alice", seq: 11),
        .init(
            device: "kiosk-7", start: FlowTime.at("18:40:00"), end: nil, method: .biometric, secondFactor: false, endReason: nil,
            user: "alice", seq: 12),
        .init(
            device: "phone-1", start: FlowTime.at("19:00:00"), end: nil, method: .apple, secondFactor: false, endReason: nil,
            user: "alice", seq: 13)
    ]

    @Test("every attempt with its outcome, every session with its end")
    func whole() {
        let history = History.build(user: "alice", records: Self.log())
        #expect(history == History(user: "alice", attempts: Self.attempts, sessions: Self.sessions))
        #expect(history.sessions.map(\.durationMilliseconds) == [28_800_000, 1_800_000, nil, nil])
    }

    @Test("a device filter keeps that device's attempts and sessions")
    func deviceFilter() {
        let history = History.build(user: "alice", records: Self.log(), device: "kiosk-7")
        #expect(history == History(user: "alice", attempts: Array(Self.attempts[5...7]), sessions: Array(Self.sessions[1...2])))
    }

    @Test("since is inclusive and until exclusive")
    func timeFilters() {
        let morning = History.build(user: "alice", records: Self.log(), until: FlowTime.at("09:00:31"))
        #expect(morning == History(user: "alice", attempts: Array(Self.attempts[0...3]), sessions: []))

        let fromSuccess = History.build(user: "alice", records: Self.log(), since: FlowTime.at("09:00:31"), until: FlowTime.at("18:40:00"))
        #expect(
            fromSuccess
                == History(
                    user: "alice", attempts: Array(Self.attempts[4...6]),
                    sessions: [
                        Self.sessions[0],
                        .init(
                            device: "kiosk-7", start: FlowTime.at("18:10:00"), end: nil, method: .passcode, secondFactor: false, endReason: nil,
                            user: "alice", seq: 11)
                    ]))

        // The sign-out at 17:00:31 closes nothing: its sign-in lies before `since`.
        let evening = History.build(user: "alice", records: Self.log(), device: "phone-1", since: FlowTime.at("17:00:00"))
        #expect(evening == History(user: "alice", attempts: [Self.attempts[8]], sessions: [Self.sessions[3]]))
    }

    @Test("records of other users are left out")
    func otherUsers() {
        let bob = History.build(user: "bob", records: Self.log())
        #expect(
            bob
                == History(
                    user: "bob",
                    attempts: [
                        .init(
                            seq: 8, at: FlowTime.at("09:30:00"), device: "phone-1", method: .signIn(.password),
                            outcome: .failed, reason: "invalid_password", user: "bob")
                    ], sessions: []))
        #expect(History.build(user: "carol", records: Self.log()) == History(user: "carol"))
    }
}
