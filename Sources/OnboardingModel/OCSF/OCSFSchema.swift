/// The parts of the OCSF schema (https://schema.ocsf.io) the audit export uses: the version it
/// targets, the Authentication class and the enum values it writes, each with its caption as the
/// schema spells it. The only place these numbers live; `docs/audit.md` lists the same values.
///
/// ```swift
/// OCSFSchema.version                      // "1.8.0"
/// OCSFSchema.Activity.logon.typeUID       // 300201
/// ```
public enum OCSFSchema {
    /// The OCSF schema version every exported event declares in `metadata.version`.
    public static let version = "1.8.0"

    /// Identity & Access Management.
    public static let categoryUID = 3
    public static let categoryName = "Identity & Access Management"
    /// Authentication: logon and logoff attempts and other stages of the authentication process.
    public static let classUID = 3002
    public static let className = "Authentication"
    /// `metadata.profiles`: `device` is an attribute of the host profile.
    public static let profiles = ["host"]

    /// `activity_id` of the Authentication class.
    public enum Activity: Int, Sendable, CaseIterable {
        case logon = 1
        case logoff = 2
        /// Not one of the class's activities; `activity_name` then says what happened.
        case other = 99

        public var caption: String {
            switch self {
            case .logon: "Logon"
            case .logoff: "Logoff"
            case .other: "Other"
            }
        }

        /// `type_uid` = `class_uid` × 100 + `activity_id`.
        public var typeUID: Int { OCSFSchema.classUID * 100 + rawValue }

        /// `type_name`: the schema's caption of `type_uid`, always the class and the activity's
        /// caption ("Authentication: Other"), never the name we give an Other activity: the
        /// OCSF validator flags a sibling that is not its enum value's caption, for every
        /// value but 99.
        public var typeName: String { "\(OCSFSchema.className): \(caption)" }
    }

    /// `status_id` of the base event.
    public enum Status: Int, Sendable, CaseIterable {
        case success = 1
        case failure = 2
        /// Neither (an attempt started, a step asked for); `status` then says what it is.
        case other = 99

        public var caption: String {
            switch self {
            case .success: "Success"
            case .failure: "Failure"
            case .other: "Other"
            }
        }
    }

    /// `severity_id` of the base event.
    public enum Severity: Int, Sendable, CaseIterable {
        case informational = 1
        case low = 2
        case medium = 3
        case high = 4

        public var caption: String {
            switch self {
            case .informational: "Informational"
            case .low: "Low"
            case .medium: "Medium"
            case .high: "High"
            }
        }
    }

    /// `auth_protocol_id` of the Authentication class.
    public enum AuthProtocol: Int, Sendable, CaseIterable {
        case unknown = 0
        case openID = 4
        case other = 99

        public var caption: String {
            switch self {
            case .unknown: "Unknown"
            case .openID: "OpenID"
            case .other: "Other"
            }
        }
    }

    /// Account Change (3001): a server action on an account: an admin's clear of a user's
    /// lockout (activity Unlock), an identity provider's lock of an account (activity Lock).
    public enum AccountChange {
        public static let classUID = 3001
        public static let className = "Account Change"
        public static let unlockActivityID = 12
        public static let unlockCaption = "Unlock"
        /// `type_uid` = `class_uid` × 100 + `activity_id`.
        public static let unlockTypeUID = classUID * 100 + unlockActivityID
        public static let unlockTypeName = "\(className): \(unlockCaption)"
        /// Activity Lock: an identity provider locked an account (`account_locked`).
        public static let lockActivityID = 9
        public static let lockCaption = "Lock"
        public static let lockTypeUID = classUID * 100 + lockActivityID
        public static let lockTypeName = "\(className): \(lockCaption)"
        /// `actor.user.type_id` of the admin who acted.
        public static let adminUserTypeID = 2
        public static let adminUserType = "Admin"
    }

    /// `logon_type_id` of the Authentication class: every sign-in this store records is made by
    /// a person at the device.
    public static let interactiveLogonTypeID = 2
    public static let interactiveLogonType = "Interactive"

    /// `device.type_id`: the event does not say what kind of device it came from.
    public static let unknownDeviceTypeID = 0
    /// `user.type_id` when the event has no user (before the account is known).
    public static let unknownUserTypeID = 0
    /// `user.uid` when the event has no user. The schema wants a `user` with an `account`, a
    /// `name` or a `uid`; no user id is ever empty, so the empty uid matches no real account
    /// (an invented name such as "Unknown" could) and reads as no id to a SIEM.
    public static let unknownUserUID = ""
    public static let unknownCaption = "Unknown"
}
