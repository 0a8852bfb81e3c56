import Foundation
import OnboardingModel

// SKELETON — the API the store and CLI use. Bodies to be implemented (helper), keep signatures.

/// Per device: the users onboarded on a shared device and who is selected (DESIGN.md §5 Multi-user).
public struct MultiUserProjection: Sendable, Hashable, Codable {
    public private(set) var devices: [String: DeviceUsers] = [:]

    public init() {}

    public mutating func apply(_ record: Record) {}

    /// The "Switch or Add User" screen for `device` at `at`: sections "Selected" and "All",
    /// filtered by `search` (case- and diacritic-insensitive over name and subtitle), each user's
    /// lock state from `lockout`.
    public func view(device: String, lockout: LockoutEngine, at: Timestamp, search: String? = nil) -> UsersView {
        UsersView(device: device, selected: nil, sections: [])
    }
}

/// The users of one device, in the order they were added.
public struct DeviceUsers: Sendable, Hashable, Codable {
    public var users: [UserProfile] = []
    /// The selected user: set by `user_selected`; by default the previous one.
    public var selected: String?
    public init() {}
}

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

    public init(id: String, displayName: String, subtitle: String?, imageRef: String?, initials: String,
                passcodePolicy: PasscodePolicy, passcodeMinimumLength: Int, hasPasscode: Bool,
                biometric: BiometricKind?, lastSignIn: Timestamp?, addedAt: Timestamp) {
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

/// One row of the user list.
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

public struct UsersView: Sendable, Hashable {
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
