import Foundation
import Testing
import OnboardingModel
@testable import OnboardingProjections

/// The projection snapshot's JSON (docs/format.md § `snapshots`): its exact bytes, and the bytes
/// the store wrote before the snapshot had a codec of its own (Swift's synthesized `Codable`),
/// which every store pruned then keeps as its `pruned_base` and must still read.
@Suite("Projection snapshots: golden bytes and the snapshots written before")
struct SnapshotJSONTests {
    /// The log the old-format fixtures were folded from: every part of the state has something
    /// (lockout and address keys, a lock, a CAPTCHA purpose, a badge, a reset timer, two devices).
    static func fixtureState(_ policy: LockoutPolicy) -> OnboardingState {
        var script = FlowScript(policy: policy, device: "kiosk-1")
        script.record(
            .userAdded(displayName: "Ann Lee", subtitle: "Ward 3", imageRef: "a/b.png", passcodePolicy: .numeric, passcodeMinLength: 4),
            user: "ann", at: "10:00:00")
        script.record(.biometricEnabled(kind: .face), user: "ann", at: "10:00:01")
        script.record(.captchaPresented(purpose: .createAccount), user: nil, at: "10:00:02")
        script.record(.signInStarted(method: .password, identifierKind: .email), user: "ann", at: "10:00:03")
        script.record(.fieldEdited(field: .email, filled: true, valid: true), user: "ann", at: "10:00:04")
        script.record(.fieldEdited(field: .password, filled: true), user: "ann", at: "10:00:05")
        for second in 16..<22 {
            script.record(.signInFailed(method: .password, reason: .invalidPassword, clientAddress: "192.0.2.7"), user: "ann", at: "10:00:\(second)")
        }
        script.record(.signInFailed(method: .passcode, reason: .invalidPasscode), user: "ann", at: "10:00:22")
        script.record(.temporaryPasswordSent, user: "ann", at: "10:00:23")
        script.record(.signInSucceeded(method: .apple, secondFactor: true), user: "bob", at: "10:00:24", device: "kiosk-2")
        return script.state
    }

    /// `JSONEncoder().encode(fixtureState(policy))` as the build before this codec wrote it
    /// (members in hash order, `/` escaped): generated once with that build, never to be regenerated.
    static let oldSnapshots: [(policy: LockoutPolicy, json: String)] = [
        (
            .mediawiki,
            #"{"lockout":{"seq":15,"keys":[{"temporaryLockouts":1,"factor":"password","failures":5,"lockDurationMilliseconds":300000,"user":"ann","windows":[[1795946416000,5],[1795946416000,5]],"lastFailureAt":1795946420000,"lockTier":0,"device":"kiosk-1","lockedUntil":1795946716000}],"addressKeys":[{"temporaryLockouts":1,"factor":"password","failures":5,"lockDurationMilliseconds":300000,"user":"ann","windows":[[1795946416000,5],[1795946416000,5]],"lastFailureAt":1795946420000,"lockTier":0,"device":"192.0.2.7","lockedUntil":1795946716000}],"acrossDevices":false,"policy":{"password":{"tiers":[{"limit":5,"windowSeconds":300},{"limit":150,"windowSeconds":172800}]},"clearing":{"passwordChanged":"all","passcodeResetCompleted":"all","lockoutCleared":"all","signInSucceeded":"all"},"address":{"scope":"address_and_user","rule":{"tiers":[{"windowSeconds":300,"limit":5},{"windowSeconds":172800,"limit":150}]},"clearedBySuccess":true},"secondFactor":{"tiers":[{"windowSeconds":60,"limit":10},{"windowSeconds":600,"limit":20}]},"name":"mediawiki"}},"seq":15,"session":{"biometrics":{"kiosk-1":{"ann":"face"}},"devices":{"kiosk-1":{"flow":{"systemMessage":{"text":"Temporary password sent via email","severity":"success"},"state":"success","fieldMessages":[],"resend":{"availableAt":1795946483000,"help":"Didn't get the email? Check your spam folder. You can send it again when the timer ends."},"screen":"reset_sent","user":"ann","session":"00000000-0000-4000-8000-000000000001","identifierKind":"email","fields":[],"biometric":"face"},"device":"kiosk-1"},"kiosk-2":{"signedIn":{"since":1795946424000,"method":"apple","secondFactor":true,"user":"bob"},"flow":{"user":"bob","state":"success","fieldMessages":[],"screen":"signed_in","fields":[],"session":"00000000-0000-4000-8000-000000000001"},"device":"kiosk-2"}},"captchaPurposes":{"kiosk-1":"create_account"},"resendWaitMilliseconds":60000},"users":{"devices":{"kiosk-1":{"selected":"ann","users":[{"hasPasscode":false,"addedAt":1795946400000,"biometric":"face","passcodeMinimumLength":4,"initials":"AL","imageRef":"a\/b.png","id":"ann","passcodePolicy":"numeric","subtitle":"Ward 3","displayName":"Ann Lee"}]}}}}"#
        ),
        (
            .keycloak,
            #"{"lockout":{"acrossDevices":false,"seq":15,"policy":{"clearing":{"passcodeResetCompleted":"counters","lockoutCleared":"all","signInSucceeded":"counters","passwordChanged":"counters"},"name":"keycloak","password":{"backoff":{"initialWaitSeconds":60,"growth":"linear","threshold":30,"resetAfterSeconds":43200,"quickLoginWaitSeconds":60,"quickLoginMilliseconds":1000,"maximumWaitSeconds":900},"tiers":[]},"secondFactor":{"backoff":{"initialWaitSeconds":60,"growth":"linear","threshold":30,"resetAfterSeconds":43200,"quickLoginWaitSeconds":60,"quickLoginMilliseconds":1000,"maximumWaitSeconds":900},"tiers":[]}},"keys":[{"lastFailureAt":1795946422000,"factor":"password","streak":7,"user":"ann","device":"kiosk-1","failures":7}]},"session":{"biometrics":{"kiosk-1":{"ann":"face"}},"resendWaitMilliseconds":60000,"devices":{"kiosk-1":{"device":"kiosk-1","flow":{"user":"ann","screen":"reset_sent","systemMessage":{"severity":"success","text":"Temporary password sent via email"},"fields":[],"fieldMessages":[],"state":"success","identifierKind":"email","session":"00000000-0000-4000-8000-000000000001","resend":{"help":"Didn't get the email? Check your spam folder. You can send it again when the timer ends.","availableAt":1795946483000},"biometric":"face"}},"kiosk-2":{"signedIn":{"secondFactor":true,"user":"bob","since":1795946424000,"method":"apple"},"device":"kiosk-2","flow":{"user":"bob","state":"success","session":"00000000-0000-4000-8000-000000000001","screen":"signed_in","fieldMessages":[],"fields":[]}}},"captchaPurposes":{"kiosk-1":"create_account"}},"seq":15,"users":{"devices":{"kiosk-1":{"users":[{"subtitle":"Ward 3","passcodeMinimumLength":4,"initials":"AL","addedAt":1795946400000,"hasPasscode":false,"displayName":"Ann Lee","passcodePolicy":"numeric","id":"ann","biometric":"face","imageRef":"a\/b.png"}],"selected":"ann"}}}}"#
        ),
        (
            .owasp,
            #"{"seq":15,"lockout":{"keys":[{"streak":3,"temporaryLockouts":3,"factor":"password","failures":3,"lockDurationMilliseconds":4000,"user":"ann","lockTier":-2,"lastFailureAt":1795946419000,"device":"kiosk-1","lockedUntil":1795946423000}],"policy":{"clearing":{"signInSucceeded":"counters","passwordChanged":"all","lockoutCleared":"all","passcodeResetCompleted":"counters"},"name":"owasp","password":{"permanentAfterLockouts":3,"tiers":[],"backoff":{"initialWaitSeconds":1,"maximumWaitSeconds":86400,"threshold":1,"growth":"doubling"}},"secondFactor":{"permanentAfterLockouts":3,"tiers":[],"backoff":{"maximumWaitSeconds":86400,"growth":"doubling","threshold":1,"initialWaitSeconds":1}}},"acrossDevices":false,"seq":15},"session":{"captchaPurposes":{"kiosk-1":"create_account"},"biometrics":{"kiosk-1":{"ann":"face"}},"devices":{"kiosk-1":{"device":"kiosk-1","flow":{"systemMessage":{"text":"Temporary password sent via email","severity":"success"},"state":"success","fieldMessages":[],"resend":{"help":"Didn't get the email? Check your spam folder. You can send it again when the timer ends.","availableAt":1795946483000},"screen":"reset_sent","user":"ann","session":"00000000-0000-4000-8000-000000000001","identifierKind":"email","fields":[],"biometric":"face"}},"kiosk-2":{"signedIn":{"user":"bob","since":1795946424000,"method":"apple","secondFactor":true},"device":"kiosk-2","flow":{"fieldMessages":[],"state":"success","fields":[],"user":"bob","session":"00000000-0000-4000-8000-000000000001","screen":"signed_in"}}},"resendWaitMilliseconds":60000},"users":{"devices":{"kiosk-1":{"users":[{"hasPasscode":false,"addedAt":1795946400000,"biometric":"face","passcodeMinimumLength":4,"initials":"AL","imageRef":"a\/b.png","id":"ann","displayName":"Ann Lee","subtitle":"Ward 3","passcodePolicy":"numeric"}],"selected":"ann"}}}}"#
        ),
        (
            .localPasscode,
            #"{"lockout":{"acrossDevices":false,"keys":[{"user":"ann","lastFailureAt":1795946422000,"device":"kiosk-1","factor":"password","failures":1}],"seq":15,"policy":{"password":{"methods":["passcode"],"consecutiveLimit":10,"tiers":[]},"clearing":{"passwordChanged":"counters","passcodeResetCompleted":"all","lockoutCleared":"all","signInSucceeded":"counters"},"secondFactor":{"tiers":[]},"name":"local_passcode"}},"session":{"resendWaitMilliseconds":60000,"biometrics":{"kiosk-1":{"ann":"face"}},"captchaPurposes":{"kiosk-1":"create_account"},"devices":{"kiosk-1":{"device":"kiosk-1","flow":{"biometric":"face","user":"ann","state":"success","fields":[],"identifierKind":"email","screen":"reset_sent","session":"00000000-0000-4000-8000-000000000001","fieldMessages":[],"systemMessage":{"text":"Temporary password sent via email","severity":"success"},"resend":{"help":"Didn't get the email? Check your spam folder. You can send it again when the timer ends.","availableAt":1795946483000}}},"kiosk-2":{"device":"kiosk-2","flow":{"fieldMessages":[],"state":"success","fields":[],"user":"bob","session":"00000000-0000-4000-8000-000000000001","screen":"signed_in"},"signedIn":{"user":"bob","since":1795946424000,"method":"apple","secondFactor":true}}}},"users":{"devices":{"kiosk-1":{"users":[{"imageRef":"a\/b.png","hasPasscode":false,"initials":"AL","id":"ann","addedAt":1795946400000,"subtitle":"Ward 3","displayName":"Ann Lee","passcodePolicy":"numeric","passcodeMinimumLength":4,"biometric":"face"}],"selected":"ann"}}},"seq":15}"#
        ),
        (
            .nist,
            #"{"lockout":{"policy":{"name":"nist","password":{"tiers":[],"consecutiveLimit":100},"secondFactor":{"tiers":[],"consecutiveLimit":100},"clearing":{"passcodeResetCompleted":"counters","lockoutCleared":"all","passwordChanged":"all","signInSucceeded":"counters"}},"acrossDevices":false,"seq":15,"keys":[{"failures":7,"factor":"password","user":"ann","lastFailureAt":1795946422000,"device":"kiosk-1"}]},"users":{"devices":{"kiosk-1":{"users":[{"imageRef":"a\/b.png","id":"ann","displayName":"Ann Lee","passcodeMinimumLength":4,"biometric":"face","hasPasscode":false,"addedAt":1795946400000,"subtitle":"Ward 3","passcodePolicy":"numeric","initials":"AL"}],"selected":"ann"}}},"seq":15,"session":{"biometrics":{"kiosk-1":{"ann":"face"}},"captchaPurposes":{"kiosk-1":"create_account"},"resendWaitMilliseconds":60000,"devices":{"kiosk-2":{"flow":{"fieldMessages":[],"state":"success","fields":[],"user":"bob","session":"00000000-0000-4000-8000-000000000001","screen":"signed_in"},"signedIn":{"user":"bob","since":1795946424000,"method":"apple","secondFactor":true},"device":"kiosk-2"},"kiosk-1":{"flow":{"biometric":"face","state":"success","user":"ann","systemMessage":{"text":"Temporary password sent via email","severity":"success"},"screen":"reset_sent","resend":{"help":"Didn't get the email? Check your spam folder. You can send it again when the timer ends.","availableAt":1795946483000},"identifierKind":"email","session":"00000000-0000-4000-8000-000000000001","fieldMessages":[],"fields":[]},"device":"kiosk-1"}}}}"#
        ),
        (
            .fail2ban,
            #"{"seq":15,"session":{"devices":{"kiosk-1":{"device":"kiosk-1","flow":{"fields":[],"fieldMessages":[],"state":"success","session":"00000000-0000-4000-8000-000000000001","screen":"reset_sent","resend":{"availableAt":1795946483000,"help":"Didn't get the email? Check your spam folder. You can send it again when the timer ends."},"identifierKind":"email","systemMessage":{"severity":"success","text":"Temporary password sent via email"},"biometric":"face","user":"ann"}},"kiosk-2":{"signedIn":{"method":"apple","secondFactor":true,"since":1795946424000,"user":"bob"},"device":"kiosk-2","flow":{"state":"success","screen":"signed_in","fieldMessages":[],"fields":[],"session":"00000000-0000-4000-8000-000000000001","user":"bob"}}},"resendWaitMilliseconds":60000,"biometrics":{"kiosk-1":{"ann":"face"}},"captchaPurposes":{"kiosk-1":"create_account"}},"users":{"devices":{"kiosk-1":{"users":[{"imageRef":"a\/b.png","hasPasscode":false,"displayName":"Ann Lee","biometric":"face","passcodePolicy":"numeric","passcodeMinimumLength":4,"initials":"AL","subtitle":"Ward 3","addedAt":1795946400000,"id":"ann"}],"selected":"ann"}}},"lockout":{"policy":{"secondFactor":{"tiers":[]},"clearing":{"signInSucceeded":"none","passwordChanged":"none","lockoutCleared":"all","passcodeResetCompleted":"none"},"password":{"tiers":[]},"name":"fail2ban","address":{"clearedBySuccess":false,"scope":"address","rule":{"tiers":[{"lockSeconds":600,"limit":5,"windowSeconds":600}]}}},"seq":15,"keys":[{"failures":6,"factor":"password","device":"kiosk-1","lastFailureAt":1795946422000,"user":"ann"}],"addressKeys":[{"windows":[[1795946416000,5]],"device":"192.0.2.7","lastFailureAt":1795946420000,"failures":5,"factor":"password","lockedUntil":1795947020000,"lockTier":0,"temporaryLockouts":1,"lockDurationMilliseconds":600000}],"acrossDevices":false}}"#
        )
    ]

    /// An empty state under `mediawiki`, as the old build wrote it (the base a prune of nothing leaves).
    static let oldEmptySnapshot =
        #"{"seq":0,"users":{"devices":{}},"session":{"resendWaitMilliseconds":60000,"captchaPurposes":{},"devices":{},"biometrics":{}},"lockout":{"acrossDevices":false,"policy":{"name":"mediawiki","password":{"tiers":[{"limit":5,"windowSeconds":300},{"limit":150,"windowSeconds":172800}]},"clearing":{"passwordChanged":"all","passcodeResetCompleted":"all","lockoutCleared":"all","signInSucceeded":"all"},"address":{"clearedBySuccess":true,"scope":"address_and_user","rule":{"tiers":[{"windowSeconds":300,"limit":5},{"windowSeconds":172800,"limit":150}]}},"secondFactor":{"tiers":[{"limit":10,"windowSeconds":60},{"limit":20,"windowSeconds":600}]}},"seq":0,"keys":[]}}"#

    @Test("a snapshot written by the build before reads back as the state it was folded from", arguments: 0..<6)
    func oldSnapshotReads(_ index: Int) throws {
        let (policy, json) = Self.oldSnapshots[index]
        let decoded = try OnboardingState(snapshotJSON: Array(json.utf8))
        #expect(decoded == Self.fixtureState(policy))
        #expect(try OnboardingState(snapshotJSON: decoded.snapshotJSON) == decoded)
    }

    @Test("the old empty snapshot reads")
    func oldEmptySnapshotReads() throws {
        #expect(try OnboardingState(snapshotJSON: Array(Self.oldEmptySnapshot.utf8)) == OnboardingState(policy: .mediawiki))
    }

    @Test("a small snapshot's exact bytes")
    func goldenBytes() throws {
        var script = FlowScript(policy: .localPasscode, device: "kiosk-1")
        script.record(
            .userAdded(displayName: "Ann Lee", subtitle: nil, imageRef: nil, passcodePolicy: .numeric, passcodeMinLength: 4),
            user: "ann", at: "10:00:00")
        script.record(.signInFailed(method: .passcode, reason: .invalidPasscode), user: "ann", at: "10:00:01")
        let text = String(decoding: script.state.snapshotJSON, as: UTF8.self)
        #expect(text == Self.goldenSnapshot)
        #expect(try OnboardingState(snapshotJSON: Array(text.utf8)) == script.state)
    }

    /// Every key spelled as docs/format.md § `snapshots` lists it; absent optionals left out.
    static let goldenSnapshot =
        #"{"seq":2,"lockout":{"policy":{"name":"local_passcode","password":{"methods":["passcode"],"tiers":[],"consecutiveLimit":10},"secondFactor":{"tiers":[]},"clearing":{"signInSucceeded":"counters","passwordChanged":"counters","lockoutCleared":"all","passcodeResetCompleted":"all"}},"acrossDevices":false,"seq":2,"keys":[{"user":"ann","device":"kiosk-1","factor":"password","failures":1,"lastFailureAt":1795946401000}]},"session":{"devices":{"kiosk-1":{"device":"kiosk-1","flow":{"session":"00000000-0000-4000-8000-000000000001","user":"ann","screen":"sign_in","state":"error","fieldMessages":[{"field":"passcode","text":"Invalid passcode","severity":"error"}],"fields":[]}}},"resendWaitMilliseconds":60000,"captchaPurposes":{},"biometrics":{},"captchaAlternativesAfterFailures":3,"captchaFailures":{}},"users":{"devices":{"kiosk-1":{"users":[{"id":"ann","displayName":"Ann Lee","initials":"AL","passcodePolicy":"numeric","passcodeMinimumLength":4,"hasPasscode":false,"addedAt":1795946400000}],"selected":"ann"}}}}"#

    @Test("equal states give equal bytes, whatever order their dictionaries hold")
    func deterministic() throws {
        let state = Self.fixtureState(.mediawiki)
        let again = try OnboardingState(snapshotJSON: state.snapshotJSON)
        #expect(again.snapshotJSON == state.snapshotJSON)
    }

    @Test(
        "a snapshot with an unknown member, a wrong kind or an out-of-range number is refused, naming the member",
        arguments: [
            (#"{"seq":0,"lockout":{},"session":{},"users":{},"extra":1}"#, "state has unknown member \"extra\""),
            (#"{"seq":-1}"#, "state.seq must be an integer"),
            (#"[]"#, "state must be an object, got an array")
        ])
    func refused(json: String, message: String) {
        #expect { try OnboardingState(snapshotJSON: Array(json.utf8)) } throws: { error in
            "\(error)".hasPrefix(message)
        }
    }
}
