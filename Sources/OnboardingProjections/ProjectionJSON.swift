import OnboardingModel

// The JSON forms of projection state that `onboard` prints and the sync server will serve.
// Members are written in a fixed order; docs/projections.md documents every field.

extension JSONValue {
    static func time(_ timestamp: Timestamp?) -> JSONValue { timestamp.map { .string($0.iso8601) } ?? .null }
    static func text(_ text: String?) -> JSONValue { text.map { .string($0) } ?? .null }
    static func integer<T: BinaryInteger>(_ value: T) -> JSONValue { .number(String(value)) }
}

extension LockoutDecision {
    /// `{"allowed", "failures", "locked_until", "permanent", "message"}`.
    public var jsonValue: JSONValue {
        switch self {
        case .allowed(let failures):
            return .object([
                .init("allowed", .bool(true)), .init("failures", .integer(failures)),
                .init("locked_until", .null), .init("permanent", .bool(false)), .init("message", .null)
            ])
        case .locked(let lock):
            return .object([
                .init("allowed", .bool(false)), .init("failures", .integer(lock.failures)),
                .init("locked_until", .time(lock.until)), .init("permanent", .bool(false)),
                .init("message", .string(lock.message))
            ])
        case .permanentlyLocked(let lock):
            return .object([
                .init("allowed", .bool(false)), .init("failures", .integer(lock.failures)),
                .init("locked_until", .null), .init("permanent", .bool(true)),
                .init("message", .string(lock.message)),
                .init("cleared_by", .array(lock.clearedBy.map { .string($0.rawValue) }))
            ])
        }
    }
}

extension LockoutEngine.Entry {
    /// `{"user", "device", "factor", "failures", "locked_until", "permanent"}` (docs/projections.md
    /// § `onboard lockout --json`).
    public var jsonValue: JSONValue {
        .object([
            .init("user", .text(key.user)), .init("device", .text(key.device)),
            .init("factor", .string(key.factor.rawValue)), .init("failures", .integer(failures)),
            .init("locked_until", .time(lockedUntil)), .init("permanent", .bool(permanent))
        ])
    }
}

extension DeviceState {
    public var jsonValue: JSONValue {
        let signedIn: JSONValue =
            signedIn.map { user in
                .object([
                    .init("user", .string(user.user)), .init("since", .time(user.since)),
                    .init("method", .string(user.method.rawValue)), .init("second_factor", .bool(user.secondFactor))
                ])
            } ?? .null
        return .object([
            .init("device", .string(device)), .init("signed_in", signedIn), .init("flow", flow.jsonValue),
            .init("sign_in_options", signInOptions?.jsonValue ?? .null)
        ])
    }
}

extension SignInOptions {
    /// `{"options", "platform", "shown_at", "guideline_4_8": [{"kind", "problem"}]}` (docs/projections.md
    /// § `onboard session --json`).
    public var jsonValue: JSONValue {
        .object([
            .init("options", .array(options.map { .string($0.rawValue) })),
            .init("platform", .text(platform?.rawValue)),
            .init("shown_at", .time(shownAt)),
            .init("guideline_4_8", .array(guideline48Findings.map(\.jsonValue)))
        ])
    }
}

extension Guideline48Finding {
    /// `{"kind", "problem"}`.
    public var jsonValue: JSONValue {
        .object([.init("kind", .string(kind)), .init("problem", .string(problem))])
    }
}

extension Flow {
    public var jsonValue: JSONValue {
        .object([
            .init("session", .text(id?.uuidString.lowercased())),
            .init("user", .text(user)),
            .init("screen", .string(screen.rawValue)),
            .init("state", .string(state.rawValue)),
            .init(
                "field_messages",
                .array(
                    fieldMessages.map {
                        .object([.init("field", .string($0.field)), .init("text", .string($0.text)), .init("severity", .string($0.severity.rawValue))])
                    })),
            .init(
                "system_message",
                systemMessage.map {
                    .object([.init("text", .string($0.text)), .init("severity", .string($0.severity.rawValue))])
                } ?? .null),
            .init(
                "resend",
                resend.map {
                    .object([
                        .init("available_at", .time($0.availableAt)), .init("available", .bool($0.isAvailable)),
                        .init("help", .string($0.help))
                    ])
                } ?? .null),
            .init("locked_until", .time(lockedUntil)),
            .init(
                "fields",
                .array(
                    fields.map { input in
                        .object([
                            .init("field", .string(input.field.rawValue)), .init("filled", .bool(input.filled)),
                            .init("valid", input.valid.map(JSONValue.bool) ?? .null)
                        ])
                    })),
            .init("identifier_kind", .text(identifierKind?.rawValue)),
            .init("biometric", .text(biometric?.rawValue)),
            .init("submit_enabled", .bool(submitEnabled))
        ])
    }
}

extension UserRow {
    public var jsonValue: JSONValue {
        .object([
            .init("id", .string(profile.id)),
            .init("display_name", .string(profile.displayName)),
            .init("subtitle", .text(profile.subtitle)),
            .init("image_ref", .text(profile.imageRef)),
            .init("initials", .string(profile.initials)),
            .init("passcode_policy", .string(profile.passcodePolicy.rawValue)),
            .init("passcode_min_length", .integer(profile.passcodeMinimumLength)),
            .init("has_passcode", .bool(profile.hasPasscode)),
            .init("biometric", .text(profile.biometric?.rawValue)),
            .init("last_sign_in", .time(profile.lastSignIn)),
            .init("added_at", .time(profile.addedAt)),
            .init("selected", .bool(isSelected)),
            .init("lockout", lockout.jsonValue)
        ])
    }
}

extension UsersView {
    public var jsonValue: JSONValue {
        .object([
            .init("device", .string(device)),
            .init("selected", selected?.jsonValue ?? .null),
            .init(
                "sections",
                .array(
                    sections.map {
                        .object([.init("title", .string($0.title)), .init("rows", .array($0.rows.map(\.jsonValue)))])
                    }))
        ])
    }
}

extension History.Attempt {
    public var jsonValue: JSONValue {
        .object([
            .init("seq", .integer(seq)), .init("at", .time(at)), .init("device", .string(device)),
            .init("factor", .string(factor.rawValue)), .init("method", .string(method.name)),
            .init("outcome", .string(outcome.rawValue)), .init("reason", .text(reason)), .init("user", .text(user))
        ])
    }
}

extension History.SignInSession {
    public var jsonValue: JSONValue {
        .object([
            .init("seq", .integer(seq)), .init("device", .string(device)), .init("start", .time(start)), .init("end", .time(end)),
            .init("duration_ms", durationMilliseconds.map { .integer($0) } ?? .null),
            .init("method", .string(method.rawValue)), .init("second_factor", .bool(secondFactor)),
            .init("end_reason", .text(endReason)), .init("user", .text(user))
        ])
    }
}

extension History {
    public var jsonValue: JSONValue {
        .object([
            .init("user", .text(user)), .init("attempts", .array(attempts.map(\.jsonValue))),
            .init("sessions", .array(sessions.map(\.jsonValue))), .init("next_cursor", .text(nextCursor?.token))
        ])
    }
}
