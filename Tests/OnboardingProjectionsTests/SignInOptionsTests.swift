import Foundation
import Testing
import OnboardingModel
@testable import OnboardingProjections

/// What a device's sign-in screen offered (`sign_in_options_shown`) in the session projection, and
/// the App Store Review Guideline 4.8 check on it (docs/projections.md § Sign-in options).
@Suite("Sign-in options and guideline 4.8")
struct SignInOptionsTests {
    static let device = "kiosk-7"

    static func findings(_ options: [SignInOption], _ platform: DevicePlatform?) -> [Guideline48Finding] {
        SignInOptions.guideline48Findings(options: options, platform: platform)
    }

    @Test("a third-party provider without Sign in with Apple is a finding on every platform, and when the platform is unknown")
    func appleMissing() {
        for platform in [nil] + DevicePlatform.allCases.map(Optional.some) {
            #expect(Self.findings([.google, .password], platform) == [.appleMissing(providers: [.google])], "\(String(describing: platform))")
        }
        #expect(Self.findings([.password, .facebook, .other, .biometric], .android) == [.appleMissing(providers: [.facebook, .other])])
        #expect(
            Guideline48Finding.appleMissing(providers: [.google]).problem
                == "a third-party provider (google) is offered without Sign in with Apple: offer Apple too (App Store Review Guideline 4.8)")
        #expect(
            Guideline48Finding.appleMissing(providers: [.facebook, .other]).problem
                == "third-party providers (facebook, other) are offered without Sign in with Apple: offer Apple too (App Store Review Guideline 4.8)")
    }

    @Test("on iOS Apple comes before every other provider; elsewhere, and without a platform, the order is free")
    func appleFirstOnIOS() {
        #expect(Self.findings([.google, .apple, .password], .ios) == [.appleNotFirst(before: [.google])])
        #expect(Self.findings([.microsoft, .github, .apple], .ios) == [.appleNotFirst(before: [.microsoft, .github])])
        #expect(
            Guideline48Finding.appleNotFirst(before: [.google]).problem
                == "Sign in with Apple is not the first provider on iOS (google comes before it): put Apple first")
        #expect(
            Guideline48Finding.appleNotFirst(before: [.microsoft, .github]).problem
                == "Sign in with Apple is not the first provider on iOS (microsoft, github come before it): put Apple first")
        for platform: DevicePlatform? in [.android, .web, .other, nil] {
            #expect(Self.findings([.google, .apple, .password], platform) == [], "\(String(describing: platform))")
        }
    }

    @Test("no provider at all, Apple alone, Apple first, and the password form above Apple are all fine")
    func fineScreens() {
        #expect(Self.findings([.password], .ios) == [])
        #expect(Self.findings([.passcode, .biometric], .ios) == [])
        #expect(Self.findings([.apple], .ios) == [])
        #expect(Self.findings([.apple], nil) == [])
        #expect(Self.findings([.apple, .google, .facebook, .password], .ios) == [])
        // Only the providers' order matters: the password form and the badge may sit anywhere.
        #expect(Self.findings([.password, .biometric, .apple, .google], .ios) == [])
    }

    @Test("the device keeps its last screen's options; flows, screens and other devices are untouched")
    func projectionKeepsTheLastScreen() {
        var script = FlowScript(device: Self.device)
        script.record(.signInStarted(method: .password, identifierKind: .email), user: nil, at: "16:00:00")
        let flow = script.deviceSession.flow
        #expect(flow.screen == .signIn && flow.state == .loading)

        script.record(.signInOptionsShown(options: [.google, .apple, .password], platform: .ios), user: nil, at: "16:00:05")
        let shown = SignInOptions(options: [.google, .apple, .password], platform: .ios, shownAt: FlowTime.at("16:00:05"))
        #expect(script.deviceSession == DeviceState(device: Self.device, flow: flow, signInOptions: shown))
        #expect(script.deviceSession.signInOptions?.guideline48Findings == [.appleNotFirst(before: [.google])])

        // A later screen replaces it; a sign-in keeps it.
        script.record(.signInOptionsShown(options: [.apple, .google, .biometric]), user: nil, at: "16:01:00")
        script.record(.signInSucceeded(method: .apple, secondFactor: false), user: "ann", at: "16:01:10")
        let again = SignInOptions(options: [.apple, .google, .biometric], platform: nil, shownAt: FlowTime.at("16:01:00"))
        #expect(script.deviceSession.signInOptions == again)
        #expect(script.deviceSession.signedIn?.user == "ann" && script.deviceSession.flow.screen == .signedIn)
        #expect(again.guideline48Findings == [])

        // Another device's screen is its own; a device that recorded none has none.
        script.record(.signInOptionsShown(options: [.facebook]), user: nil, at: "16:02:00", device: "phone-1")
        #expect(
            script.state.session.session(device: "phone-1")
                == DeviceState(
                    device: "phone-1", signInOptions: SignInOptions(options: [.facebook], platform: nil, shownAt: FlowTime.at("16:02:00"))))
        #expect(script.deviceSession.signInOptions == again)
        #expect(script.state.session.session(device: "tablet-2").signInOptions == nil)
    }

    @Test("`onboard session --json`'s sign_in_options: the options, platform, time and findings; null before any")
    func json() {
        let shown = SignInOptions(options: [.google, .apple, .password], platform: .ios, shownAt: FlowTime.at("16:00:05"))
        let state = DeviceState(device: Self.device, signInOptions: shown)
        #expect(
            state.jsonValue["sign_in_options"]
                == .object([
                    .init("options", .array([.string("google"), .string("apple"), .string("password")])),
                    .init("platform", .string("ios")),
                    .init("shown_at", .string("2026-11-29T16:00:05.000Z")),
                    .init(
                        "guideline_4_8",
                        .array([
                            .object([
                                .init("kind", .string("apple_not_first")),
                                .init(
                                    "problem",
                                    .string("Sign in with Apple is not the first provider on iOS (google comes before it): put Apple first"))
                            ])
                        ]))
                ]))
        #expect(DeviceState(device: Self.device).jsonValue["sign_in_options"] == .null)
        let unknown = DeviceState(device: Self.device, signInOptions: SignInOptions(options: [.google], platform: nil, shownAt: FlowTime.at("16:00:00")))
        #expect(unknown.jsonValue["sign_in_options"]?["platform"] == .null)
        #expect(unknown.jsonValue["sign_in_options"]?["guideline_4_8"]?.arrayCount == 1)
    }

    @Test("the snapshot keeps every device's options, and reads back to the same state")
    func snapshot() throws {
        var script = FlowScript(device: Self.device)
        script.record(.signInOptionsShown(options: [.apple, .github, .passcode], platform: .web), user: nil, at: "16:00:00")
        script.record(.signInOptionsShown(options: [.other]), user: nil, at: "16:00:01", device: "phone-1")
        script.record(.signInFailed(method: .password, reason: .invalidPassword), user: "ann", at: "16:00:02")
        let bytes = script.state.snapshotJSON
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.contains(#""signInOptions":{"options":["apple","github","passcode"],"platform":"web","shownAt":1795968000000}"#))
        #expect(text.contains(#""signInOptions":{"options":["other"],"shownAt":1795968001000}"#))
        #expect(try OnboardingState(snapshotJSON: bytes) == script.state)
    }

    @Test(
        "a snapshot with a hostile options list is refused, naming the member",
        arguments: [
            (#"[]"#, "must hold 1 to 16 options, got 0"),
            (#"["apple","apple"]"#, "repeats apple"),
            (#"["myspace"]"#, "is not a known SignInOption name"),
            (#""apple""#, "must be an array, got a string")
        ])
    func hostileSnapshot(options: String, message: String) throws {
        var script = FlowScript(device: Self.device)
        script.record(.signInOptionsShown(options: [.apple]), user: nil, at: "16:00:00")
        let text = String(decoding: script.state.snapshotJSON, as: UTF8.self)
            .replacingOccurrences(of: #""options":["apple"]"#, with: #""options":\#(options)"#)
        do {
            _ = try OnboardingState(snapshotJSON: Array(text.utf8))
            Issue.record("accepted \(options)")
        } catch {
            #expect(error.path.hasPrefix("state.session.devices.kiosk-7.signInOptions.options"), "\(error)")
            #expect(error.message == message)
        }
    }
}

extension JSONValue {
    fileprivate var arrayCount: Int? {
        if case .array(let elements) = self { return elements.count }
        return nil
    }
}
