import Foundation

/// Writes records as OCSF Authentication events (class 3002; an `account_locked` as an Account
/// Change, class 3001, activity Lock), one JSON object per record, for SIEM ingestion
/// (`onboard export --format ocsf`, see `docs/audit.md`).
///
/// Deterministic: the same record gives the same bytes (members in one fixed order, no
/// whitespace, the canonical escaping of ``JSONWriter``). Everything written comes from the
/// event, its seq and hash and the product: events never hold a secret, so neither does this.
///
/// ```swift
/// let encoder = OCSFEncoder(product: .init(version: "0.1.0"))
/// var line: [UInt8] = []
/// if encoder.appendLine(record, to: &line) { output.write(bytes: line) }
/// ```
public struct OCSFEncoder: Sendable {
    /// `metadata.product`: what reported the event.
    public struct Product: Sendable, Equatable {
        public var name: String
        public var vendorName: String
        public var version: String

        public init(name: String = "OnboardingStore", vendorName: String = "OnboardingStore", version: String) {
            self.name = name
            self.vendorName = vendorName
            self.version = version
        }
    }

    public var product: Product
    /// `service.name`: what the user signs in to. The class needs a `service` or a
    /// `dst_endpoint`; the log knows the app only as this product.
    public var serviceName: String
    /// Also write events that are not sign-in related, as activity Other (99).
    public var includesUnrelatedEvents: Bool

    public init(product: Product, serviceName: String? = nil, includesUnrelatedEvents: Bool = false) {
        self.product = product
        self.serviceName = serviceName ?? product.name
        self.includesUnrelatedEvents = includesUnrelatedEvents
    }

    /// How `record` is classified, or `nil` when it is skipped.
    public func classification(of record: Record) -> OCSFClassification? {
        includesUnrelatedEvents
            ? OCSFClassification(anyEvent: record.event.payload)
            : OCSFClassification(signInRelated: record.event.payload)
    }

    /// The OCSF event of `record`, or `nil` when it is skipped.
    public func event(_ record: Record) -> JSONValue? {
        guard let classification = classification(of: record) else { return nil }
        let event = record.event
        let isLock = classification.isAccountLock
        var members: [JSONValue.Member] = [
            .init("activity_id", number(isLock ? OCSFSchema.AccountChange.lockActivityID : classification.activity.rawValue)),
            .init("activity_name", .string(classification.activityName)),
            .init("category_uid", number(OCSFSchema.categoryUID)),
            .init("category_name", .string(OCSFSchema.categoryName)),
            .init("class_uid", number(isLock ? OCSFSchema.AccountChange.classUID : OCSFSchema.classUID)),
            .init("class_name", .string(isLock ? OCSFSchema.AccountChange.className : OCSFSchema.className)),
            .init("type_uid", number(isLock ? OCSFSchema.AccountChange.lockTypeUID : classification.activity.typeUID)),
            .init("type_name", .string(isLock ? OCSFSchema.AccountChange.lockTypeName : classification.activity.typeName)),
            .init("severity_id", number(classification.severity.rawValue)),
            .init("severity", .string(classification.severity.caption)),
            .init("status_id", number(classification.status.rawValue)),
            .init("status", .string(classification.statusName))
        ]
        if let detail = classification.statusDetail { members.append(.init("status_detail", .string(detail))) }
        members.append(.init("time", .number(String(event.at.millisecondsSince1970))))
        members.append(.init("message", .string(classification.message)))
        members.append(.init("metadata", metadata(record)))
        members.append(.init("user", user(event.user)))
        members.append(
            .init(
                "device",
                .object([
                    .init("type_id", number(OCSFSchema.unknownDeviceTypeID)),
                    .init("type", .string(OCSFSchema.unknownCaption)),
                    .init("uid", .string(event.device))
                ])))
        // The client address (docs/events.md § Client address) is the endpoint's `ip`; an erased
        // one is left out.
        var endpoint: [JSONValue.Member] = [.init("uid", .string(event.device))]
        if let address = event.payload.clientAddress, address != ClientAddress.erased { endpoint.append(.init("ip", .string(address))) }
        members.append(.init("src_endpoint", .object(endpoint)))
        // `service` belongs to the Authentication class; an Account Change has none.
        if !isLock { members.append(.init("service", .object([.init("name", .string(serviceName))]))) }
        if let isMFA = classification.isMFA { members.append(.init("is_mfa", .bool(isMFA))) }
        if let method = classification.signInMethod {
            let authProtocol = OCSFEncoder.authProtocol(method)
            members.append(.init("auth_protocol_id", number(authProtocol.rawValue)))
            members.append(
                .init(
                    "auth_protocol",
                    .string(
                        authProtocol == .other
                            ? OCSFEncoder.methodCaption(method)
                            : authProtocol.caption)))
            members.append(.init("logon_type_id", number(OCSFSchema.interactiveLogonTypeID)))
            members.append(.init("logon_type", .string(OCSFSchema.interactiveLogonType)))
        }
        members.append(.init("unmapped", unmapped(record)))
        return .object(members)
    }

    /// Appends the event of `record` and a line feed to `bytes`; returns `false` (and appends
    /// nothing) when the record is skipped.
    @discardableResult
    public func appendLine(_ record: Record, to bytes: inout [UInt8]) -> Bool {
        guard let value = event(record) else { return false }
        var writer = JSONWriter()
        writer.append(value)
        bytes.append(contentsOf: writer.bytes)
        bytes.append(0x0A)
        return true
    }

    /// An admin's clear of `user`'s lockout, done on the server (not in any device's log), as an
    /// OCSF Account Change (3001) event, activity Unlock: `id` and `sequence` are the action's,
    /// `actor` the admin by the id the server records them under, `user` as in the sign-in
    /// events, and the factor and reason in `unmapped`. No profile: there is no device.
    public func unlockEvent(
        id: UUID, sequence: UInt64, at: Timestamp, actor: String, user: String?, factor: String?,
        reason: String?
    ) -> JSONValue {
        var unmapped: [JSONValue.Member] = [.init("type", .string("lockout_cleared")), .init("factor", factor.map { .string($0) } ?? .null)]
        if let reason { unmapped.append(.init("reason", .string(reason))) }
        return .object([
            .init("activity_id", number(OCSFSchema.AccountChange.unlockActivityID)),
            .init("activity_name", .string(OCSFSchema.AccountChange.unlockCaption)),
            .init("category_uid", number(OCSFSchema.categoryUID)),
            .init("category_name", .string(OCSFSchema.categoryName)),
            .init("class_uid", number(OCSFSchema.AccountChange.classUID)),
            .init("class_name", .string(OCSFSchema.AccountChange.className)),
            .init("type_uid", number(OCSFSchema.AccountChange.unlockTypeUID)),
            .init("type_name", .string(OCSFSchema.AccountChange.unlockTypeName)),
            // Medium, as a device's own lockout_cleared: a lockout lifted early is worth a look.
            .init("severity_id", number(OCSFSchema.Severity.medium.rawValue)),
            .init("severity", .string(OCSFSchema.Severity.medium.caption)),
            .init("status_id", number(OCSFSchema.Status.success.rawValue)),
            .init("status", .string(OCSFSchema.Status.success.caption)),
            .init("time", .number(String(at.millisecondsSince1970))),
            .init(
                "message",
                .string(
                    factor.map { "lockout cleared by an admin for \($0 == "second_factor" ? "the second factor" : $0)" }
                        ?? "lockout cleared by an admin for every factor")),
            .init(
                "metadata",
                .object([
                    .init("version", .string(OCSFSchema.version)),
                    .init("product", productValue),
                    .init("uid", .string(id.uuidString.lowercased())),
                    .init("event_code", .string("lockout_cleared")),
                    .init("sequence", .number(String(sequence)))
                ])),
            .init(
                "actor",
                .object([
                    .init(
                        "user",
                        .object([
                            .init("type_id", number(OCSFSchema.AccountChange.adminUserTypeID)),
                            .init("type", .string(OCSFSchema.AccountChange.adminUserType)),
                            .init("uid", .string(actor))
                        ]))
                ])),
            .init("user", self.user(user)),
            .init("unmapped", .object(unmapped))
        ])
    }

    private var productValue: JSONValue {
        .object([
            .init("name", .string(product.name)),
            .init("vendor_name", .string(product.vendorName)),
            .init("version", .string(product.version))
        ])
    }

    private func metadata(_ record: Record) -> JSONValue {
        var members: [JSONValue.Member] = [
            .init("version", .string(OCSFSchema.version)),
            .init("product", productValue),
            .init("profiles", .array(OCSFSchema.profiles.map(JSONValue.string))),
            .init("uid", .string(record.event.id.uuidString.lowercased()))
        ]
        if let session = record.event.flow {
            members.append(.init("correlation_uid", .string(session.uuidString.lowercased())))
        }
        members.append(.init("event_code", .string(record.event.type.rawValue)))
        members.append(.init("sequence", .number(String(record.seq))))
        return .object(members)
    }

    /// The account as both `name` and `uid` (the log's user is one identifier: an id, a user
    /// name or an email address). Without one, `type_id` Unknown and the empty `uid`: the class
    /// requires a `user` that names an account, a name or a uid, and inventing a name would
    /// mislead a search by name.
    private func user(_ user: String?) -> JSONValue {
        guard let user else {
            return .object([
                .init("type_id", number(OCSFSchema.unknownUserTypeID)),
                .init("type", .string(OCSFSchema.unknownCaption)),
                .init("uid", .string(OCSFSchema.unknownUserUID))
            ])
        }
        return .object([.init("name", .string(user)), .init("uid", .string(user))])
    }

    /// Our own fields: the event type, seq, record hash, and the payload fields as in the
    /// event's JSON form, so the original event can be told from the OCSF one.
    private func unmapped(_ record: Record) -> JSONValue {
        var members: [JSONValue.Member] = [
            .init("type", .string(record.event.type.rawValue)),
            .init("seq", .number(String(record.seq))),
            .init("hash", .string(record.hash.hex))
        ]
        let payload = record.event.payload
        for (spec, value) in zip(payload.type.fields, payload.fieldValues) {
            guard let value else { continue }
            let json: JSONValue =
                switch value {
                case .text(let text): .string(text)
                case .choice(let code):
                    if case .choice(let names) = spec.kind {
                        .string(names[Int(code)])
                    } else {
                        preconditionFailure("\(spec.name) is not a choice")
                    }
                case .flag(let flag): .bool(flag)
                case .instant(let instant): .string(instant.iso8601)
                case .count(let count): .number(String(count))
                case .choices(let codes):
                    if case .choices(let names, _) = spec.kind {
                        .array(codes.map { .string(names[Int($0)]) })
                    } else {
                        preconditionFailure("\(spec.name) is not a list of choices")
                    }
                }
            members.append(.init(spec.name, json))
        }
        return .object(members)
    }

    private func number(_ value: Int) -> JSONValue { .number(String(value)) }

    /// Social sign-in (Sign in with Apple, Google) runs on OpenID Connect; a password, passcode
    /// or biometric check is local to the app, which the schema has no protocol for; an
    /// `other` provider's protocol is not recorded.
    static func authProtocol(_ method: SignInMethod) -> OCSFSchema.AuthProtocol {
        switch method {
        case .apple, .google: .openID
        case .password, .passcode, .biometric: .other
        case .other: .unknown
        }
    }

    static func methodCaption(_ method: SignInMethod) -> String {
        switch method {
        case .password: "Password"
        case .passcode: "Passcode"
        case .biometric: "Biometric"
        case .apple: "Sign in with Apple"
        case .google: "Google"
        case .other: "Other"
        }
    }
}
