import Foundation
import OnboardingStore

/// The fixed world every target and the corpus generator share: one device, fixed keys, two live
/// users and one forgotten one, and an event of every type. Nothing here is random, so the seed
/// files `make-fuzz-corpus` writes are the bytes a target rebuilds in memory (the upload target's
/// replica holds exactly the records of the committed upload seeds).
///
/// ```swift
/// let events = FuzzFixtures.sampleEvents()            // every type, with and without a user
/// let users = FuzzFixtures.directory                  // opens their sealed fields
/// ```
public enum FuzzFixtures {
    public static let device = "kiosk-7"
    /// The docs' worked example uses 32 × 0x07 too (docs/format.md); any fixed value would do.
    public static let pseudonymKey = SecretKey(bytes: [UInt8](repeating: 0x07, count: SecretKey.byteCount))
    /// Live users and their keys: records naming them open and read by name.
    public static let liveUsers: [(name: String, key: SecretKey)] = [
        ("alice", SecretKey(bytes: [UInt8](repeating: 0x11, count: SecretKey.byteCount))),
        ("bob@example.org", SecretKey(bytes: [UInt8](repeating: 0x22, count: SecretKey.byteCount)))
    ]
    /// A user whose key is gone: records naming it read as the pseudonym literal, erased.
    public static let forgottenUser = "carol"

    /// The directory of a store holding `liveUsers` that forgot `forgottenUser`.
    public static let directory: UserDirectory = {
        var users = UserDirectory(pseudonymKey: pseudonymKey)
        for user in liveUsers { users.add(users.ref(of: user.name), name: user.name, key: user.key) }
        users.forget(users.ref(of: forgottenUser))
        return users
    }()

    public static func ref(of user: String) -> UserRef { directory.ref(of: user) }

    /// 2026-11-29T16:00:00.000Z, the day of the docs' examples.
    public static let start = Timestamp(millisecondsSince1970: 1_795_968_000_000)

    /// A fixed UUID per number (version 4 layout, so it reads like the ids apps send).
    public static func id(_ number: Int) -> UUID {
        let hex = String(number, radix: 16)
        let padded = String(repeating: "0", count: max(0, 12 - hex.count)) + hex
        return UUID(uuidString: "00000000-0000-4000-8000-\(padded)")!
    }

    /// The case of `E` numbered `index`, cycling, so successive samples cover every case.
    static func pick<E: WireEnum>(_ index: Int) -> E { E.allCases[index % E.allCases.count] }

    /// A valid payload of `type`; `index` varies the choices, flags and optional fields.
    public static func payload(of type: EventType, index: Int) -> Payload {
        let retryAfter = start.adding(milliseconds: Int64(index) * 1000 + 300_000)
        switch type {
        case .userAdded:
            return .userAdded(
                displayName: index % 2 == 0 ? "Alice Example" : "Ünïcödé 名前", subtitle: index % 3 == 0 ? nil : "Front desk",
                imageRef: index % 2 == 0 ? "avatar://1" : nil, passcodePolicy: pick(index), passcodeMinLength: 4 + index % 8)
        case .userProfileUpdated:
            return .userProfileUpdated(
                displayName: index % 2 == 0 ? "Alice E." : nil, subtitle: "Back office",
                imageRef: index % 3 == 0 ? "avatar://2" : nil)
        case .userSelected: return .userSelected
        case .userRemoved: return .userRemoved(reason: pick(index))
        case .passcodeSet: return .passcodeSet
        case .passcodeChanged: return .passcodeChanged
        case .passcodeResetStarted: return .passcodeResetStarted
        case .passcodeResetCompleted: return .passcodeResetCompleted
        case .biometricEnabled: return .biometricEnabled(kind: pick(index))
        case .biometricDisabled: return .biometricDisabled
        case .signInStarted: return .signInStarted(method: pick(index), identifierKind: index % 2 == 0 ? nil : pick(index))
        case .signInFailed: return .signInFailed(method: pick(index), reason: pick(index))
        case .signInThrottled: return .signInThrottled(method: pick(index), retryAfter: retryAfter)
        case .secondFactorRequired: return .secondFactorRequired(method: pick(index))
        case .secondFactorFailed: return .secondFactorFailed(method: pick(index))
        case .secondFactorSucceeded: return .secondFactorSucceeded(method: pick(index))
        case .signInSucceeded: return .signInSucceeded(method: pick(index), secondFactor: index % 2 == 1)
        case .signedOut: return .signedOut(reason: pick(index))
        case .captchaPresented: return .captchaPresented(purpose: pick(index))
        case .captchaFailed: return .captchaFailed
        case .captchaPassed: return .captchaPassed
        case .captchaAlternativesViewed: return .captchaAlternativesViewed
        case .passwordResetRequested: return .passwordResetRequested(route: pick(index))
        case .temporaryPasswordSent: return .temporaryPasswordSent
        case .passwordChanged: return .passwordChanged(forced: index % 2 == 0)
        case .accountCreationStarted: return .accountCreationStarted
        case .fieldValidated: return .fieldValidated(field: pick(index), result: pick(index))
        case .accountCreationFailed: return .accountCreationFailed(field: index % 2 == 0 ? nil : pick(index), reason: pick(index))
        case .accountCreated: return .accountCreated
        case .lockoutCleared: return .lockoutCleared(reason: pick(index))
        case .userForgotten: return .userForgotten
        case .fieldEdited: return .fieldEdited(field: pick(index), filled: index % 2 == 0, valid: index % 3 == 0 ? nil : index % 3 == 1)
        case .accountCreationSubmitted: return .accountCreationSubmitted
        case .passwordResetStarted: return .passwordResetStarted
        case .passwordResetFailed: return .passwordResetFailed(reason: pick(index))
        case .userSwitchOpened: return .userSwitchOpened
        case .userSwitchClosed: return .userSwitchClosed
        case .signInOptionsShown:
            // Rotating through the options: Apple first, second, or missing, on each platform.
            let count = SignInOption.allCases.count
            let options = (0..<(1 + index % 4)).map { SignInOption.allCases[(index + $0) % count] }
            return .signInOptionsShown(options: options, platform: index % 5 == 4 ? nil : pick(index))
        case .signInAborted:
            // Every reason in turn, every other one from an address (schema 2), one of them IPv6.
            let address: String? = index % 2 == 1 ? nil : index % 4 == 0 ? "2001:db8::\(index % 100)" : "198.51.100.\(index % 250)"
            return .signInAborted(reason: pick(index), clientAddress: address)
        case .accountLocked:
            // Permanent (no end) every third one.
            return .accountLocked(source: pick(index), until: index % 3 == 2 ? nil : retryAfter)
        case .logImported:
            // Every other one skipped nothing (no kinds); the counts at 0 and at their largest.
            let skipped = index % 2 == 0 ? 0 : index
            return .logImported(
                format: pick(index), events: index % 3 == 0 ? Payload.maximumImportCount : index, appended: index % 3 == 1 ? 0 : index,
                skipped: skipped, skippedKinds: skipped == 0 ? nil : "\(skipped) not sshd",
                firstAt: start, lastAt: start.adding(milliseconds: Int64(index) * 1000))
        }
    }

    /// The event numbered `index` of `type`, on `device`, a second after the previous one.
    public static func event(_ type: EventType, index: Int, user: String?, session: Bool, device: String = device) -> Event {
        Event(
            id: id(index + 1), device: device, at: start.adding(milliseconds: Int64(index) * 1000), user: user,
            flow: session ? id(0x5E55_0000 + index % 3) : nil, payload: payload(of: type, index: index))
    }

    /// An event of every type: once without a user, and once naming each kind of user (live by
    /// name, forgotten, and `user_forgotten` by the forgotten user's pseudonym literal;
    /// `log_imported` names none).
    public static func sampleEvents() -> [Event] {
        var events: [Event] = []
        for type in EventType.allCases {
            let users: [String?] =
                switch type {
                case .userForgotten: [ref(of: forgottenUser).literal]
                case .logImported: [nil]
                default: [nil, liveUsers[0].name, liveUsers[1].name, forgottenUser]
                }
            for user in users {
                let index = events.count
                events.append(event(type, index: index, user: user, session: index % 2 == 0))
            }
        }
        return events
    }

    /// The seal a store holding `directory` writes `event` with (none without a user).
    public static func seal(for event: Event) -> UserSeal? {
        directory.seal(for: event.user)
    }
}
