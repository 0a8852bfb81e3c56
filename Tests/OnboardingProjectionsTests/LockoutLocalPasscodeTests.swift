import Testing
import OnboardingModel
@testable import OnboardingProjections

/// The `local_passcode` preset: 10 consecutive wrong passcodes disable a user's passcode on the
/// device until the forgot-passcode flow completes.
@Suite("Lockout: local_passcode preset")
struct LockoutLocalPasscodeTests {
    static let passcodeMessage = "Your passcode is disabled after too many failed attempts. Use “Forgot Passcode?” to set a new one."

    @Test("parameters: passcode attempts only, 10 consecutive; second factor never locks")
    func parameters() {
        let policy = LockoutPolicy.localPasscode
        #expect(policy.password == .init(methods: [.passcode], consecutiveLimit: 10))
        #expect(policy.secondFactor == .init())
        #expect(
            policy.clearing
                == .init(
                    signInSucceeded: .counters, passwordChanged: .counters, lockoutCleared: .all,
                    passcodeResetCompleted: .all))
    }

    @Test("worked timeline: only passcode failures count; the 10th disables the passcode until Forgot Passcode")
    func timeline() {
        var scenario = LockoutScenario(.localPasscode)
        var steps: [LockoutStep] = [
            LockoutStep("16:00:00", .fail(.password, .invalidPassword), "allowed (0 failures)"),
            LockoutStep("16:00:10", .fail(.biometric, .biometricFailed), "allowed (0 failures)")
        ]
        for minute in 1...9 {
            steps.append(
                LockoutStep(
                    String(format: "16:%02d:00", minute), .fail(.passcode, .invalidPasscode),
                    "allowed (\(minute) failure\(minute == 1 ? "" : "s"))"))
        }
        steps += [
            LockoutStep("16:10:00", .fail(.passcode, .invalidPasscode), "permanently locked (10 failures)"),
            LockoutStep("16:11:00", .succeed(.biometric), "permanently locked (10 failures)"),
            LockoutStep("16:12:00", .clear(.passwordChanged), "permanently locked (10 failures)"),
            LockoutStep("16:13:00", .clear(.passcodeResetCompleted), "allowed (0 failures)"),
            LockoutStep("16:14:00", .fail(.passcode, .invalidPasscode), "allowed (1 failure)")
        ]
        scenario.play(steps)
    }

    @Test("the message sends the user to Forgot Passcode")
    func message() {
        var scenario = LockoutScenario(.localPasscode)
        let last = scenario.failRepeatedly(10, from: LockoutClock.origin)
        #expect(scenario.decide(at: last).message == Self.passcodeMessage)
        guard case .permanentlyLocked(let lock) = scenario.decide(at: last) else { Issue.record("not permanent"); return }
        #expect(lock.clearedBy == [.lockoutCleared, .passcodeResetCompleted])
    }

    @Test(
        "methods other than passcode never count, whatever the reason",
        arguments: [SignInMethod.password, .biometric, .apple, .google, .other])
    func otherMethods(method: SignInMethod) {
        var scenario = LockoutScenario(.localPasscode)
        for (index, reason) in [SignInFailureReason.invalidPassword, .invalidPasscode, .unknownUser, .biometricFailed].enumerated() {
            for repeatIndex in 0..<20 { scenario.fail(at: LockoutClock.seconds(Double(index * 20 + repeatIndex)), method: method, reason: reason) }
        }
        #expect(scenario.engine.keyCount == 0)
        #expect(scenario.decide(at: LockoutClock.seconds(100)) == .allowed(failures: 0))
    }

    @Test("a wrong passcode of an unknown user counts under the nobody key")
    func unknownUser() {
        var scenario = LockoutScenario(.localPasscode)
        for second in 0..<10 { scenario.fail(at: LockoutClock.seconds(Double(second)), reason: .unknownUser, user: .some(nil)) }
        #expect(scenario.decide(at: LockoutClock.seconds(9), user: .some(nil)).message == Self.passcodeMessage)
    }

    @Test("passcode_reset_completed clears only that device; lockout_cleared every device")
    func reach() {
        var scenario = LockoutScenario(.localPasscode)
        for second in 0..<10 {
            scenario.fail(at: LockoutClock.seconds(Double(second)), device: "kiosk-1")
            scenario.fail(at: LockoutClock.seconds(Double(second)), device: "kiosk-2")
        }
        let time = LockoutClock.seconds(20)
        scenario.clear(.passcodeResetCompleted, at: time, device: "kiosk-1")
        #expect(scenario.decide(at: time, device: "kiosk-1") == .allowed(failures: 0))
        #expect(scenario.decide(at: time, device: "kiosk-2").message == Self.passcodeMessage)
        scenario.clear(.lockoutCleared, at: time, device: "admin")
        #expect(scenario.decide(at: time, device: "kiosk-2") == .allowed(failures: 0))
    }

    @Test("consecutive: a sign-in in between (any method) restarts the count")
    func successResets() {
        var scenario = LockoutScenario(.localPasscode)
        scenario.failRepeatedly(9, from: LockoutClock.origin)
        scenario.succeed(at: LockoutClock.seconds(10), method: .biometric)
        let last = scenario.failRepeatedly(9, from: LockoutClock.seconds(11))
        #expect(scenario.decide(at: last) == .allowed(failures: 9))
    }

    @Test("second-factor failures are counted (they show in entries) but never lock")
    func secondFactorNeverLocks() {
        var scenario = LockoutScenario(.localPasscode)
        let last = scenario.failRepeatedly(1000, from: LockoutClock.origin, factor: .secondFactor)
        #expect(scenario.decide(at: last, .secondFactor) == .allowed(failures: 1000))
        #expect(scenario.decide(at: last) == .allowed(failures: 0))
    }
}
