import Foundation
import OnboardingModel

/// Per device: the users onboarded on a shared device and who is selected (docs/projections.md,
/// the users projection and § `onboard users --json`; its events are docs/events.md § Multi-user
/// (shared devices)).
///
/// ```swift
/// var state = OnboardingState(policy: .localPasscode)
/// for record in log { state.apply(record) }
/// let view = state.users.view(device: "kiosk-7", lockout: state.lockout, at: now, search: "jose")
/// view.sections.map(\.title)   // ["Selected", "All"] (or just ["All"])
/// ```
///
/// Decisions where the design is silent:
/// - The selected user is whoever was picked (`user_selected`) or signed in (`sign_in_succeeded`)
///   last, while still on the device — a sign-in makes that user the current one, whom the sign-in
///   screen shows next. Before either, or after that user is removed, it defaults to the previous
///   user: the one with the latest sign-in, else the one added last.
/// - Events about users that are not on the device's list (never added, or removed) change
///   nothing; `user_added` for a listed user re-onboards them in place (same position).
/// - `user_forgotten` removes the user from every device's list (as `user_removed` does on one).
/// - `passcode_reset_started` does not clear `hasPasscode`: the old passcode stays valid until the
///   reset completes, and an abandoned reset must not leave the user without one.
public struct MultiUserProjection: Sendable, Hashable {
    public private(set) var devices: [String: DeviceUsers] = [:]

    public init() {}

    /// A state read from a snapshot (SessionSnapshotJSON.swift).
    init(devices: [String: DeviceUsers]) { self.devices = devices }

    public mutating func apply(_ record: Record) {
        let event = record.event
        // Every multi-user event is about the envelope's user.
        guard let user = event.user else { return }
        if case .userForgotten = event.payload {
            // Erasure reaches every device's list: the user (by now known by its pseudonym
            // literal, as the log is read after the key is gone) is removed wherever listed.
            for name in Array(devices.keys) {
                guard let index = devices[name]!.users.firstIndex(where: { $0.id == user }) else { continue }
                devices[name]!.users.remove(at: index)
                if devices[name]!.chosen == user { devices[name]!.chosen = nil }
            }
            return
        }
        switch event.payload {
        case .userAdded, .userProfileUpdated, .userSelected, .userRemoved, .passcodeSet, .passcodeChanged,
            .passcodeResetCompleted, .biometricEnabled, .biometricDisabled, .signInSucceeded:
            break
        default:
            return // most events (attempts, flows) change no user list: leave the device table alone
        }
        // Taken out of the dictionary while it changes, so the users array is not copied per event.
        let existed = devices[event.device] != nil
        var device = devices.removeValue(forKey: event.device) ?? DeviceUsers()
        var changed = false
        defer { if existed || changed { devices[event.device] = device } }
        let index = device.users.firstIndex { $0.id == user }

        switch event.payload {
        case let .userAdded(displayName, subtitle, imageRef, policy, minimumLength):
            if let index {
                device.users[index].displayName = displayName
                device.users[index].subtitle = subtitle
                device.users[index].imageRef = imageRef
                device.users[index].initials = UserProfile.initials(of: displayName)
                device.users[index].passcodePolicy = policy
                device.users[index].passcodeMinimumLength = minimumLength
            } else {
                device.users.append(
                    UserProfile(
                        id: user, displayName: displayName, subtitle: subtitle, imageRef: imageRef,
                        initials: UserProfile.initials(of: displayName), passcodePolicy: policy,
                        passcodeMinimumLength: minimumLength, hasPasscode: false, biometric: nil, lastSignIn: nil,
                        addedAt: event.at))
            }
        case let .userProfileUpdated(displayName, subtitle, imageRef):
            guard let index else { return }
            if let displayName {
                device.users[index].displayName = displayName
                device.users[index].initials = UserProfile.initials(of: displayName)
            }
            if let subtitle { device.users[index].subtitle = subtitle }
            if let imageRef { device.users[index].imageRef = imageRef }
        case .userSelected:
            guard index != nil else { return }
            device.chosen = user
        case .userRemoved:
            guard let index else { return }
            device.users.remove(at: index)
            if device.chosen == user { device.chosen = nil }
        case .passcodeSet, .passcodeChanged, .passcodeResetCompleted:
            guard let index else { return }
            device.users[index].hasPasscode = true
        case .biometricEnabled(let kind):
            guard let index else { return }
            device.users[index].biometric = kind
        case .biometricDisabled:
            guard let index else { return }
            device.users[index].biometric = nil
        case .signInSucceeded:
            guard let index else { return }
            device.users[index].lastSignIn = event.at
            device.chosen = user
        default:
            return
        }
        device.updateSelection()
        changed = true
    }

    /// The "Switch or Add User" screen for `device` at `at`: sections "Selected" and "All",
    /// filtered by `search` (case- and diacritic-insensitive over name and subtitle), each user's
    /// lock state from `lockout`.
    ///
    /// "Selected" is present when the selected user matches the search; "All" is always present
    /// (possibly empty, so the screen can say nothing matched) and lists every matching user in
    /// the order added, the selected one included. ``UsersView/selected`` ignores the search: the
    /// sign-in screen shows the selected user whatever the list is filtered by.
    public func view(device: String, lockout: LockoutEngine, at: Timestamp, search: String? = nil) -> UsersView {
        let users = devices[device] ?? DeviceUsers()
        let query = UserSearch(search)
        func row(_ profile: UserProfile) -> UserRow {
            UserRow(
                profile: profile, isSelected: profile.id == users.selected,
                lockout: lockout.decide(lockout.key(user: profile.id, device: device, factor: .password), at: at))
        }
        let selected = users.users.first { $0.id == users.selected }.map(row)
        var sections: [UsersView.Section] = []
        if let selected, query.matches(selected.profile) {
            sections.append(UsersView.Section(title: UsersView.selectedTitle, rows: [selected]))
        }
        sections.append(UsersView.Section(title: UsersView.allTitle, rows: users.users.filter(query.matches).map(row)))
        return UsersView(device: device, selected: selected, sections: sections)
    }
}

/// The users of one device, in the order they were added.
public struct DeviceUsers: Sendable, Hashable, Codable {
    public var users: [UserProfile] = []
    /// The selected user: set by `user_selected` (and by a sign-in); by default the previous one.
    public var selected: String?
    /// The user last picked or signed in, while still on the device; `selected` falls back from it.
    var chosen: String?

    public init() {}

    /// `chosen`, else the user who signed in last, else the user added last.
    mutating func updateSelection() {
        if let chosen, users.contains(where: { $0.id == chosen }) {
            selected = chosen
            return
        }
        var previous: UserProfile?
        for user in users {
            // `>=`: of equal sign-in times the one added later wins, as it does without sign-ins.
            if let time = user.lastSignIn, time >= (previous?.lastSignIn ?? time) { previous = user }
        }
        selected = previous?.id ?? users.last?.id
    }
}

/// One user onboarded on a device: what the user list and the sign-in screen show of them.
///
/// ```swift
/// profile.imageRef ?? profile.initials   // "avatars/alice.png", or "AM" for Alice Martin
/// ```
public struct UserProfile: Sendable, Hashable, Codable {
    public var id: String
    public var displayName: String
    public var subtitle: String?
    public var imageRef: String?
    /// Shown when there is no image: first letters of the first and last word, uppercased.
    public var initials: String
    public var passcodePolicy: PasscodePolicy
    public var passcodeMinimumLength: Int
    public var hasPasscode: Bool
    public var biometric: BiometricKind?
    public var lastSignIn: Timestamp?
    public var addedAt: Timestamp

    public init(
        id: String, displayName: String, subtitle: String?, imageRef: String?, initials: String,
        passcodePolicy: PasscodePolicy, passcodeMinimumLength: Int, hasPasscode: Bool,
        biometric: BiometricKind?, lastSignIn: Timestamp?, addedAt: Timestamp
    ) {
        self.id = id
        self.displayName = displayName
        self.subtitle = subtitle
        self.imageRef = imageRef
        self.initials = initials
        self.passcodePolicy = passcodePolicy
        self.passcodeMinimumLength = passcodeMinimumLength
        self.hasPasscode = hasPasscode
        self.biometric = biometric
        self.lastSignIn = lastSignIn
        self.addedAt = addedAt
    }
}

/// One row of the user list: the profile, the checkmark and the lock state.
///
/// ```swift
/// row.isSelected ? "✓" : ""; row.lockout.message ?? ""
/// ```
public struct UserRow: Sendable, Hashable {
    public var profile: UserProfile
    public var isSelected: Bool
    /// The password-factor decision at the time asked (passcode, password, biometric).
    public var lockout: LockoutDecision
    public init(profile: UserProfile, isSelected: Bool, lockout: LockoutDecision) {
        self.profile = profile
        self.isSelected = isSelected
        self.lockout = lockout
    }
}

/// The "Switch or Add User" screen: the selected user and the sections of the list.
public struct UsersView: Sendable, Hashable {
    /// The section titles of the "Switch or Add User" list (docs/projections.md § `onboard users --json`).
    public static let selectedTitle = "Selected"
    public static let allTitle = "All"

    public struct Section: Sendable, Hashable {
        /// "Selected" or "All".
        public var title: String
        public var rows: [UserRow]
        public init(title: String, rows: [UserRow]) {
            self.title = title
            self.rows = rows
        }
    }
    public var device: String
    public var selected: UserRow?
    public var sections: [Section]
    public init(device: String, selected: UserRow?, sections: [Section]) {
        self.device = device
        self.selected = selected
        self.sections = sections
    }
}
