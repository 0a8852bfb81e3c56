import Foundation
import OnboardingModel
import OnboardingProjections
import OnboardingWorkload

/// What the people at one simulated device do: flows of realistic events (docs/events.md) —
/// sign-ins with typos, second factors, lockouts met and reset, attacks on shared accounts,
/// sign-ups that begin before anyone has a user id, kiosk rosters, profile edits, admin clears.
/// Like the app, a flow asks the device's lockout before every attempt and records
/// `sign_in_throttled` when it says no.
///
/// ```swift
/// var script = DeviceScript(kind: .personal, device: "sim-d1", owner: "user-03")
/// let event = script.next(random: &random, at: now, users: pool) { user, factor in
///     try store.signInDecision(user: user, factor: factor, at: now)
/// }
/// ```
struct DeviceScript {
    /// What the device is, which decides the flows it sees.
    enum Kind: String, CaseIterable {
        /// One owner's phone: their sign-ins, resets, second factor, biometrics.
        case personal
        /// A shared terminal: a roster of staff added on the device, passcodes.
        case kiosk
        /// A public machine: sign-ups, many users, attackers trying shared accounts.
        case terminal
    }

    enum Step {
        case emit(Payload)
        case attempt(SignInMethod, succeeds: Bool, secondFactor: Bool)
        case code(succeeds: Bool)
        /// A sign-up reached the point where the account exists: later steps name `user`.
        case become(String)
    }

    let kind: Kind
    let device: String
    /// Users this device knows (its owner, its roster, its sign-ups).
    private(set) var residents: [String]
    private var plan: [Step] = []
    private var planIndex = 0
    private var user: String?
    private var session: UUID?
    private var createdUsers = 0
    /// Whether the first flow is a sign-up, so the first events name no user.
    private var beginsAnonymously: Bool

    /// Users whose sign-in asks for a second factor: one in three.
    static func hasSecondFactor(_ user: String) -> Bool { user.utf8.reduce(0) { $0 &+ Int($1) } % 3 == 0 }

    init(kind: Kind, device: String, residents: [String], beginsAnonymously: Bool) {
        self.kind = kind
        self.device = device
        self.residents = residents
        self.beginsAnonymously = beginsAnonymously
    }

    /// The next event of the current flow (a new flow starts when one ends).
    ///
    /// - Parameters:
    ///   - pool: every user of the simulation (attackers and visitors pick from it).
    ///   - decide: the device's lockout decision for a user and factor at `at`.
    mutating func next(
        random: inout SplitMix64, at: Timestamp, pool: [String],
        decide: (String?, LockoutFactor) -> LockoutDecision
    ) -> (event: Event, newUser: String?) {
        var newUser: String?
        while true {
            if planIndex >= plan.count { startFlow(random: &random, pool: pool) }
            let step = plan[planIndex]
            planIndex += 1
            let payload: Payload
            switch step {
            case .become(let name):
                user = name
                newUser = name
                residents.append(name)
                continue
            case .emit(let fixed):
                payload = fixed
            case let .attempt(method, succeeds, secondFactor):
                let decision = decide(user, .password)
                if !decision.isAllowed {
                    payload = Self.throttled(method, decision)
                    recover(random: &random, method: method)
                } else if succeeds {
                    payload = secondFactor ? .secondFactorRequired(method: .totp) : .signInSucceeded(method: method, secondFactor: false)
                } else {
                    let reason: SignInFailureReason =
                        switch method {
                        case .passcode: .invalidPasscode
                        case .biometric: .biometricFailed
                        default: user?.hasPrefix("leaked-") == true ? .unknownUser : .invalidPassword
                        }
                    payload = .signInFailed(method: method, reason: reason)
                }
            case .code(let succeeds):
                let decision = decide(user, .secondFactor)
                if !decision.isAllowed {
                    payload = Self.throttled(.password, decision)
                    planIndex = plan.count
                } else {
                    payload = succeeds ? .secondFactorSucceeded(method: .totp) : .secondFactorFailed(method: .totp)
                }
            }
            let event = Event(id: random.uuid(), device: device, at: at, user: user, flow: session, payload: payload)
            return (event, newUser)
        }
    }

    private static func throttled(_ method: SignInMethod, _ decision: LockoutDecision) -> Payload {
        if case .locked(let lock) = decision { return .signInThrottled(method: method, retryAfter: lock.until) }
        return .signInThrottled(method: method, retryAfter: Timestamp.maximum)
    }

    /// After meeting a lock, half the people reset their credential and try again; the rest
    /// give up for now.
    private mutating func recover(random: inout SplitMix64, method: SignInMethod) {
        guard random.chance(perMille: 500) else {
            planIndex = plan.count
            return
        }
        let reset: [Step] =
            method == .passcode
            ? [.emit(.passcodeResetStarted), .emit(.passcodeResetCompleted)]
            : [.emit(.passwordResetRequested(route: .email)), .emit(.temporaryPasswordSent), .emit(.passwordChanged(forced: true))]
        plan = reset + [.attempt(method, succeeds: true, secondFactor: false)]
        planIndex = 0
    }

    private mutating func startFlow(random: inout SplitMix64, pool: [String]) {
        plan = []
        planIndex = 0
        session = random.uuid()
        if beginsAnonymously {
            beginsAnonymously = false
            signUp(random: &random)
            return
        }
        let roll = random.below(1000)
        switch kind {
        case .personal:
            if roll < 600 {
                signIn(random: &random, user: residents[0], method: .password)
            } else if roll < 700 {
                signIn(random: &random, user: residents[0], method: .biometric)
            } else if roll < 780 {
                reset(random: &random, user: residents[0])
            } else if roll < 850 {
                profileEdit(random: &random, user: residents[0])
            } else if roll < 950 {
                attack(random: &random, user: pool[random.below(pool.count)])
            } else {
                anonymousNoise(random: &random)
            }
        case .kiosk:
            if roll < 120 || residents.count < 2 {
                addStaff(random: &random)
            } else if roll < 700 {
                signIn(random: &random, user: residents[random.below(residents.count)], method: .passcode)
            } else if roll < 800 {
                adminClear(user: residents[random.below(residents.count)])
            } else if roll < 880 {
                profileEdit(random: &random, user: residents[random.below(residents.count)])
            } else {
                attack(random: &random, user: residents[random.below(residents.count)])
            }
        case .terminal:
            if roll < 150 {
                signUp(random: &random)
            } else if roll < 550 {
                signIn(random: &random, user: pool[random.below(pool.count)], method: .password)
            } else if roll < 720 {
                attack(random: &random, user: pool[random.below(pool.count)])
            } else if roll < 800 {
                attackUnknown(random: &random)
            } else if roll < 880 {
                reset(random: &random, user: pool[random.below(pool.count)])
            } else if roll < 930 {
                adminClear(user: pool[random.below(pool.count)])
            } else {
                anonymousNoise(random: &random)
            }
        }
    }

    // MARK: Flows

    private mutating func signIn(random: inout SplitMix64, user name: String, method: SignInMethod) {
        user = name
        if kind == .kiosk { plan.append(.emit(.userSelected)) }
        plan.append(.emit(.signInStarted(method: method)))
        let roll = random.below(1000)
        let failures = roll < 550 ? 0 : roll < 850 ? 1 + random.below(2) : 3 + random.below(5)
        plan += Array(repeating: .attempt(method, succeeds: false, secondFactor: false), count: failures)
        let twoFactor = method == .password && Self.hasSecondFactor(name)
        plan.append(.attempt(method, succeeds: true, secondFactor: twoFactor))
        if twoFactor {
            if random.chance(perMille: 200) { plan.append(.code(succeeds: false)) }
            plan += [.code(succeeds: true), .emit(.signInSucceeded(method: .password, secondFactor: true))]
        }
        if random.chance(perMille: 500) { plan.append(.emit(.signedOut(reason: random.chance(perMille: 800) ? .user : .sessionExpired))) }
    }

    /// Someone who is not the user guesses: failures until the lock, then (sometimes) more.
    private mutating func attack(random: inout SplitMix64, user name: String) {
        user = name
        plan.append(.emit(.signInStarted(method: .password)))
        plan += Array(repeating: .attempt(.password, succeeds: false, secondFactor: false), count: 3 + random.below(8))
    }

    /// Credential stuffing: a user id from a leak that no one here has, each one new to the store.
    private mutating func attackUnknown(random: inout SplitMix64) {
        createdUsers += 1
        user = "leaked-\(device)-\(createdUsers)"
        plan = [.emit(.signInStarted(method: .password))]
        plan += Array(repeating: .attempt(.password, succeeds: false, secondFactor: false), count: 1 + random.below(3))
    }

    private mutating func signUp(random: inout SplitMix64) {
        user = nil
        createdUsers += 1
        let name = "\(device)-new\(createdUsers)"
        plan = [
            .emit(.accountCreationStarted), .emit(.fieldValidated(field: .username, result: .usernameAvailable)),
            .emit(.fieldValidated(field: .password, result: random.chance(perMille: 300) ? .passwordsDoNotMatch : .passwordsMatch)),
            .emit(.captchaPresented(purpose: .createAccount)), .emit(.captchaPassed),
            .become(name), .emit(.accountCreated), .emit(.signInSucceeded(method: .password, secondFactor: false))
        ]
        if random.chance(perMille: 400) { plan.append(.emit(.signedOut(reason: .user))) }
    }

    private mutating func addStaff(random: inout SplitMix64) {
        createdUsers += 1
        let name = "\(device)-staff\(createdUsers)"
        user = nil
        let numeric = random.chance(perMille: 700)
        plan = [
            .become(name),
            .emit(
                .userAdded(
                    displayName: "Staff \(createdUsers) of \(device)", subtitle: random.chance(perMille: 500) ? "Front desk" : nil,
                    imageRef: nil, passcodePolicy: numeric ? .numeric : .alphanumeric, passcodeMinLength: numeric ? 6 : 8)),
            .emit(.passcodeSet)
        ]
    }

    private mutating func reset(random: inout SplitMix64, user name: String) {
        user = name
        plan = [
            .emit(.passwordResetRequested(route: random.chance(perMille: 500) ? .email : .username)),
            .emit(.temporaryPasswordSent), .emit(.passwordChanged(forced: true)),
            .attempt(.password, succeeds: true, secondFactor: false)
        ]
    }

    private mutating func profileEdit(random: inout SplitMix64, user name: String) {
        user = name
        plan = [.emit(.userProfileUpdated(displayName: "\(name) (\(random.below(100)))", subtitle: nil, imageRef: nil))]
    }

    private mutating func adminClear(user name: String) {
        user = name
        plan = [.emit(.lockoutCleared(reason: .admin))]
    }

    private mutating func anonymousNoise(random: inout SplitMix64) {
        user = nil
        plan = [
            .emit(.captchaPresented(purpose: .signIn)), .emit(random.chance(perMille: 500) ? .captchaFailed : .captchaPassed),
            .emit(.captchaAlternativesViewed)
        ]
    }
}
