import Foundation
import OnboardingModel

// SKELETON — the API the store and CLI use. Bodies to be implemented (helper), keep signatures.

/// Per device: who is signed in and what the sign-in flow shows now (DESIGN.md §5 Session).
public struct SessionProjection: Sendable, Hashable, Codable {
    public private(set) var devices: [String: DeviceSession] = [:]

    public init() {}

    /// `lockout` is the lockout state *after* this record was applied to it.
    public mutating func apply(_ record: Record, lockout: LockoutEngine) {}

    /// The device's session (the empty sign-in screen for a device never seen).
    public func session(device: String) -> DeviceSession {
        devices[device] ?? DeviceSession(device: device)
    }
}

/// One device's session state.
public struct DeviceSession: Sendable, Hashable, Codable {
    public var device: String
    public var signedIn: SignedInUser?
    public var flow: Flow

    public init(device: String, signedIn: SignedInUser? = nil, flow: Flow = Flow()) {
        self.device = device
        self.signedIn = signedIn
        self.flow = flow
    }
}

public struct SignedInUser: Sendable, Hashable, Codable {
    public var user: String
    public var since: Timestamp
    public var method: SignInMethod
    public var secondFactor: Bool

    public init(user: String, since: Timestamp, method: SignInMethod, secondFactor: Bool) {
        self.user = user
        self.since = since
        self.method = method
        self.secondFactor = secondFactor
    }
}

/// What the current onboarding flow shows.
public struct Flow: Sendable, Hashable, Codable {
    /// The flow instance (the events' `session`).
    public var session: UUID?
    /// The user the flow is about, when known.
    public var user: String?
    public var screen: Screen
    public var state: ScreenState
    /// Inline messages under fields, sorted by field name.
    public var fieldMessages: [FieldMessage]
    public var systemMessage: Message?
    /// On `reset_sent`: when a resend is allowed and what to do if no mail arrives.
    public var resend: ResendInfo?
    /// On `locked_out` with a temporary lock: when a new attempt is allowed.
    public var lockedUntil: Timestamp?

    public init(session: UUID? = nil, user: String? = nil, screen: Screen = .signIn, state: ScreenState = .empty,
                fieldMessages: [FieldMessage] = [], systemMessage: Message? = nil, resend: ResendInfo? = nil,
                lockedUntil: Timestamp? = nil) {
        self.session = session
        self.user = user
        self.screen = screen
        self.state = state
        self.fieldMessages = fieldMessages
        self.systemMessage = systemMessage
        self.resend = resend
        self.lockedUntil = lockedUntil
    }
}

public enum Screen: String, Sendable, Hashable, Codable, CaseIterable {
    case signIn = "sign_in", secondFactor = "second_factor", captcha, createAccount = "create_account",
         forgotPassword = "forgot_password", resetSent = "reset_sent", switchUser = "switch_user",
         signedIn = "signed_in", lockedOut = "locked_out"
}

public enum ScreenState: String, Sendable, Hashable, Codable, CaseIterable {
    case empty, loading, error, success
}

public enum Severity: String, Sendable, Hashable, Codable, CaseIterable {
    /// Red.
    case error
    /// Yellow.
    case warning
    /// Green.
    case success
    /// Neutral.
    case info
}

public struct Message: Sendable, Hashable, Codable {
    public var text: String
    public var severity: Severity
    public init(_ text: String, _ severity: Severity) {
        self.text = text
        self.severity = severity
    }
}

public struct FieldMessage: Sendable, Hashable, Codable {
    /// The field's name: `username`, `password`, `passcode`, `password_confirmation`,
    /// `second_factor_code`, `captcha`, `email`.
    public var field: String
    public var text: String
    public var severity: Severity
    public init(field: String, _ text: String, _ severity: Severity) {
        self.field = field
        self.text = text
        self.severity = severity
    }
}

public struct ResendInfo: Sendable, Hashable, Codable {
    public var availableAt: Timestamp
    public var help: String
    public init(availableAt: Timestamp, help: String) {
        self.availableAt = availableAt
        self.help = help
    }
}
