import Foundation
import Testing
import OnboardingModel
@testable import OnboardingProjections

/// The Wikipedia login design's user story: a user who cannot complete the CAPTCHA learns the
/// other ways to get an account without looking for them (docs/projections.md § The CAPTCHA's
/// alternatives).
@Suite("CAPTCHA: the alternatives after failures in a row")
struct CaptchaAlternativesTests {
    static let device = "wiki-phone"
    static let wrongCode = [FieldMessage(field: "captcha", SessionText.wrongCaptcha, .error)]
    static let alternatives = Message(SessionText.captchaAlternatives, .info)

    static func captcha(_ flow: UUID, _ state: ScreenState, wrong: Bool, alternatives: Bool) -> Flow {
        Flow(
            id: flow, screen: .captcha, state: state, fieldMessages: wrong ? wrongCode : [],
            systemMessage: alternatives ? Self.alternatives : nil)
    }

    @Test("sign-up: the third wrong answer in a row shows the alternatives under the error, and each new image keeps them")
    func signUpAfterThreeFailures() {
        var script = FlowScript(device: Self.device)
        let signUp = FlowID.make(1)
        script.record(.accountCreationStarted, user: nil, at: "16:00:00")
        script.record(.captchaPresented(purpose: .createAccount), user: nil, at: "16:00:10")
        script.record(.captchaFailed, user: nil, at: "16:00:20")
        script.record(.captchaPresented(purpose: .createAccount), user: nil, at: "16:00:21")
        script.record(.captchaFailed, user: nil, at: "16:00:30")
        #expect(script.deviceSession.flow == Self.captcha(signUp, .error, wrong: true, alternatives: false), "two misses: an unlucky image")
        script.record(.captchaPresented(purpose: .createAccount), user: nil, at: "16:00:31")
        #expect(script.deviceSession.flow == Self.captcha(signUp, .empty, wrong: false, alternatives: false))
        script.record(.captchaFailed, user: nil, at: "16:00:40")
        #expect(script.deviceSession.flow == Self.captcha(signUp, .error, wrong: true, alternatives: true))
        // A new image: still the same stuck user.
        script.record(.captchaPresented(purpose: .createAccount), user: nil, at: "16:00:41")
        #expect(script.deviceSession.flow == Self.captcha(signUp, .empty, wrong: false, alternatives: true))
        script.record(.fieldEdited(field: .captcha, filled: true, valid: nil), user: nil, at: "16:00:45")
        #expect(script.deviceSession.flow.systemMessage == Self.alternatives, "typing an answer keeps the offer")
        script.record(.captchaFailed, user: nil, at: "16:00:50")
        #expect(script.deviceSession.flow.systemMessage == Self.alternatives)
        #expect(script.deviceSession.flow.fieldMessages == Self.wrongCode)
    }

    @Test("sign-in: the same count; passing starts it again, and so does another flow")
    func signInCountResets() {
        var script = FlowScript(device: Self.device)
        let login = FlowID.make(1)
        for second in 0..<3 {
            script.record(.captchaPresented(purpose: .signIn), user: "alice", at: "16:00:\(10 + second * 10)")
            script.record(.captchaFailed, user: "alice", at: "16:00:\(15 + second * 10)")
        }
        #expect(script.deviceSession.flow.systemMessage == Self.alternatives)
        script.record(.captchaPresented(purpose: .signIn), user: "alice", at: "16:01:00")
        script.record(.captchaPassed, user: "alice", at: "16:01:05")
        #expect(script.deviceSession.flow == Flow(id: login, user: "alice", screen: .signIn, state: .empty))
        script.record(.captchaPresented(purpose: .signIn), user: "alice", at: "16:01:10")
        script.record(.captchaFailed, user: "alice", at: "16:01:15")
        #expect(script.deviceSession.flow.systemMessage == nil, "passed: the count starts again")
        script.record(.captchaFailed, user: "alice", at: "16:01:20")
        // Another flow: its first failure is its first.
        script.session = FlowID.make(2)
        script.record(.captchaPresented(purpose: .signIn), user: "alice", at: "16:02:00")
        script.record(.captchaFailed, user: "alice", at: "16:02:05")
        #expect(script.deviceSession.flow.systemMessage == nil, "a new flow starts the count again")
        // Its third in a row shows them.
        script.record(.captchaFailed, user: "alice", at: "16:02:10")
        script.record(.captchaFailed, user: "alice", at: "16:02:15")
        #expect(script.deviceSession.flow.systemMessage == Self.alternatives)
    }

    @Test("another setting: after one failure; it survives a snapshot, as the count does")
    func setting() throws {
        var one = OnboardingState(policy: .mediawiki, captchaAlternativesAfterFailures: 1)
        let flow = FlowID.make(1)
        func record(_ payload: Payload, _ seq: UInt64, into state: inout OnboardingState) {
            let event = Event(
                id: UUID(), device: Self.device, at: FlowTime.at("16:00:0\(seq)"), user: nil, flow: flow, payload: payload)
            state.apply(Record(seq: seq, event: event, previousHash: .zero, hash: .zero))
        }
        record(.captchaPresented(purpose: .createAccount), 1, into: &one)
        record(.captchaFailed, 2, into: &one)
        #expect(one.session.session(device: Self.device).flow.systemMessage == Self.alternatives)

        var three = OnboardingState(policy: .mediawiki)
        #expect(three.session.captchaAlternativesAfterFailures == SessionProjection.defaultCaptchaAlternativesAfterFailures)
        record(.captchaPresented(purpose: .createAccount), 1, into: &three)
        record(.captchaFailed, 2, into: &three)
        record(.captchaFailed, 3, into: &three)
        var reloaded = try OnboardingState(snapshotJSON: three.snapshotJSON)
        #expect(reloaded == three)
        record(.captchaFailed, 4, into: &reloaded)
        #expect(reloaded.session.session(device: Self.device).flow.systemMessage == Self.alternatives)
        let restored = try OnboardingState(snapshotJSON: one.snapshotJSON)
        #expect(restored.session.captchaAlternativesAfterFailures == 1)
    }
}
