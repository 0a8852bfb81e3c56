// Fuzzes a custom lockout policy file (docs/lockout.md § Custom policies):
// `LockoutPolicy.parse(json:)` of arbitrary bytes.
//
// Properties: nothing traps; a policy that parses round-trips through its JSON (`policy.json`
// parses to the same policy and is a fixed point); folding a fixed list of failures, clears and
// far-past and far-future times through `LockoutEngine(policy:)`, on a device and across
// devices, never traps, every decision and its message can be made at any time, and the
// engine's snapshot reads back to the same keys.
import Foundation
import FuzzEntry
import FuzzSupport
import OnboardingStore

private let target = "FuzzLockoutPolicy"

/// The fixed history folded under every policy: bursts, exact repeats, a clock that goes back,
/// both factors, clears of every kind, and the first and last instants an event may carry.
private let records: [Record] = {
    let alice = "alice", bob = "bob@example.org"
    let start = FuzzFixtures.start
    var events: [(Timestamp, String?, String, Payload)] = []
    for index in 0..<12 {
        let method: SignInMethod = index % 3 == 0 ? .passcode : .password
        events.append((start.adding(milliseconds: Int64(index) * 400), alice, "kiosk-7", .signInFailed(method: method, reason: .invalidPassword)))
    }
    events += [
        (start.adding(milliseconds: 4_400), alice, "kiosk-7", .signInFailed(method: .passcode, reason: .invalidPasscode)),
        (start.adding(milliseconds: 4_400), alice, "kiosk-8", .signInFailed(method: .biometric, reason: .biometricFailed)),
        (start.adding(milliseconds: -3_600_000), alice, "kiosk-7", .signInFailed(method: .password, reason: .invalidPassword)),
        (start, nil, "kiosk-7", .signInFailed(method: .password, reason: .unknownUser)),
        (start, bob, "kiosk-7", .secondFactorFailed(method: .totp)),
        (start.adding(milliseconds: 1), bob, "kiosk-7", .secondFactorFailed(method: .sms)),
        (start.adding(milliseconds: 2), bob, "kiosk-8", .secondFactorFailed(method: .recoveryCode)),
        (start.adding(milliseconds: 10_000), alice, "kiosk-7", .signInThrottled(method: .password, retryAfter: Timestamp.maximum)),
        (start.adding(milliseconds: 20_000), alice, "kiosk-7", .signInSucceeded(method: .password, secondFactor: false)),
        (start.adding(milliseconds: 21_000), alice, "kiosk-7", .signInFailed(method: .password, reason: .invalidPassword)),
        (start.adding(milliseconds: 22_000), alice, "kiosk-7", .passcodeResetCompleted),
        (start.adding(milliseconds: 23_000), bob, "kiosk-7", .passwordChanged(forced: true)),
        (start.adding(milliseconds: 24_000), alice, "kiosk-8", .lockoutCleared(reason: .admin)),
        (Timestamp.minimum, alice, "kiosk-7", .signInFailed(method: .password, reason: .invalidPassword)),
        (Timestamp.minimum, alice, "kiosk-7", .signInFailed(method: .password, reason: .invalidPassword)),
        (Timestamp.maximum, alice, "kiosk-7", .signInFailed(method: .password, reason: .invalidPassword)),
        (Timestamp.maximum, alice, "kiosk-7", .signInFailed(method: .password, reason: .invalidPassword)),
        (Timestamp.maximum, bob, "kiosk-7", .secondFactorFailed(method: .email)),
        (Timestamp.minimum, bob, "kiosk-8", .secondFactorFailed(method: .email))
    ]
    return events.enumerated().map { index, event in
        Record(
            seq: UInt64(index + 1),
            event: Event(id: FuzzFixtures.id(index + 1), device: event.2, at: event.0, user: event.1, flow: nil, payload: event.3),
            previousHash: .zero, hash: .zero)
    }
}()

private let decisionTimes: [Timestamp] = [
    Timestamp.minimum, FuzzFixtures.start, FuzzFixtures.start.adding(milliseconds: 366 * 86_400_000),
    Timestamp.maximum
]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzLockoutPolicy(_ start: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    let bytes = UnsafeRawBufferPointer(start: start, count: count)
    guard let text = String(validating: bytes, as: UTF8.self) else { return 0 }
    func fail(_ message: String) -> Never { FuzzCheck.fail(target, "\(message)\n  policy: \(FuzzCheck.hex(bytes))") }

    let policy: LockoutPolicy
    do { policy = try LockoutPolicy.parse(json: text) } catch { return 0 }
    let json = policy.json
    do {
        let again = try LockoutPolicy.parse(json: json)
        guard again == policy else { fail("policy.json parses to another policy\n  json: \(json)") }
        guard again.json == json else { fail("policy.json is not a fixed point\n  first:  \(json)\n  second: \(again.json)") }
    } catch {
        fail("policy.json does not parse: \(error)\n  json: \(json)")
    }

    for acrossDevices in [false, true] {
        var engine = LockoutEngine(policy: policy, acrossDevices: acrossDevices)
        for record in records {
            engine.apply(record)
            let event = record.event
            for factor in LockoutFactor.allCases {
                let key = engine.key(user: event.user, device: event.device, factor: factor)
                for at in decisionTimes + [event.at] { _ = engine.decide(key, at: at).message }
            }
        }
        for at in decisionTimes { _ = engine.entries(at: at) }
        do {
            var writer = JSONWriter()
            writer.append(engine.snapshotValue)
            let restored = try LockoutEngine(snapshotValue: try JSONValue.parse(bytes: writer.bytes))
            guard restored.hasSameKeys(as: engine) else { fail("the engine's snapshot reads back to other keys") }
        } catch {
            fail("the engine's snapshot does not read back: \(error)")
        }
    }
    return 0
}

/// See ``FuzzEntry``: SwiftPM's entry point for this executable, handed to libFuzzer's driver.
@_cdecl("FuzzLockoutPolicy_main")
public func fuzzLockoutPolicyMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    FuzzEntry.run(argc, argv, fuzzLockoutPolicy)
}
