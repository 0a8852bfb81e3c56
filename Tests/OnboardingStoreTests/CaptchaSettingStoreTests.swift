import Foundation
import Testing
import OnboardingModel
import OnboardingProjections
@testable import OnboardingStore

/// `Options.captchaAlternativesAfterFailures` reaches the session projection, and a snapshot
/// folded under another setting is rebuilt on open, as one of another lockout policy is.
@Suite("Store: the CAPTCHA alternatives setting")
struct CaptchaSettingStoreTests {
    static func failures(_ count: Int) -> [Event] {
        let flow = UUID()
        return [Events.make(0, user: nil, session: flow, payload: .captchaPresented(purpose: .createAccount))]
            + (1...count).map { Events.make($0, user: nil, session: flow, payload: .captchaFailed) }
    }

    @Test func theSettingIsTheStoresAndAnotherOneRebuilds() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let alternatives = Message(SessionText.captchaAlternatives, .info)
        let five = storeOptions { $0.captchaAlternativesAfterFailures = 5 }
        let store = try OnboardingStore.open(at: directory.store, options: five)
        _ = try await store.append(Self.failures(3))
        #expect(try store.deviceState(device: Events.device).flow.systemMessage == nil, "three of five")
        store.close()

        // Reopened with the default (3): the snapshot taken under 5 is not used.
        let three = try OnboardingStore.open(at: directory.store, options: storeOptions())
        #expect(try three.projectionState().session.captchaAlternativesAfterFailures == 3)
        #expect(try three.deviceState(device: Events.device).flow.systemMessage == alternatives)
        #expect(try three.projectionState() == (try three.rebuildState(policy: .mediawiki)))
        three.close()
    }
}
