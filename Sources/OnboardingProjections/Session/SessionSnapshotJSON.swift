import Foundation
import OnboardingModel

// The session's and the users' parts of a projection snapshot (see SnapshotJSON.swift).

extension SessionProjection {
    /// `{"devices": {name: device}, "resendWaitMilliseconds", "captchaPurposes": {name: purpose},
    /// "biometrics": {name: {user: kind}}, "captchaAlternativesAfterFailures", "captchaFailures":
    /// {name: {"session"?, "count"}}}`, every dictionary sorted by key.
    var snapshotValue: JSONValue {
        .object([
            .init("devices", SnapshotJSON.sorted(devices) { $0.snapshotValue }),
            .init("resendWaitMilliseconds", .number(String(resendWaitMilliseconds))),
            .init("captchaPurposes", SnapshotJSON.sorted(captchaPurposes) { .string($0.rawValue) }),
            .init("biometrics", SnapshotJSON.sorted(biometrics) { SnapshotJSON.sorted($0) { .string($0.rawValue) } }),
            .init("captchaAlternativesAfterFailures", .number(String(captchaAlternativesAfterFailures))),
            .init(
                "captchaFailures",
                SnapshotJSON.sorted(captchaFailures) { failures in
                    var members: [JSONValue.Member] = []
                    members.append("session", failures.flow.map { .string($0.uuidString) })
                    members.append(.init("count", .number(String(failures.count))))
                    return .object(members)
                })
        ])
    }

    /// `biometrics` is absent from snapshots of state version 5 (see ``OnboardingState/upgradeFromStateVersion5()``),
    /// `captchaAlternativesAfterFailures` and `captchaFailures` from those before version 7 (a
    /// pruned store's base: the default, and no failures counted).
    init(snapshotValue value: JSONValue, path: String) throws(SnapshotDecodingError) {
        let object = try SnapshotObject(
            value, path,
            allowed: ["devices", "resendWaitMilliseconds", "captchaPurposes", "biometrics", "captchaAlternativesAfterFailures", "captchaFailures"])
        let wait: Int64 = try object.integer("resendWaitMilliseconds")
        guard wait > 0 else { throw SnapshotDecodingError(object.path("resendWaitMilliseconds"), "must be positive") }
        var devices: [String: DeviceState] = [:]
        for member in try object.dictionary("devices") {
            devices[member.key] = try DeviceState(snapshotValue: member.value, path: "\(object.path("devices")).\(member.key)")
        }
        var purposes: [String: CaptchaPurpose] = [:]
        for member in try object.dictionary("captchaPurposes") {
            purposes[member.key] = try SnapshotJSON.name(member.value, "\(object.path("captchaPurposes")).\(member.key)")
        }
        var biometrics: [String: [String: BiometricKind]] = [:]
        for device in try object.optionalDictionary("biometrics") ?? [] {
            let devicePath = "\(object.path("biometrics")).\(device.key)"
            var kinds: [String: BiometricKind] = [:]
            for user in try SnapshotJSON.dictionary(device.value, devicePath) {
                kinds[user.key] = try SnapshotJSON.name(user.value, "\(devicePath).\(user.key)")
            }
            biometrics[device.key] = kinds
        }
        let threshold: Int = try object.optionalInteger("captchaAlternativesAfterFailures") ?? Self.defaultCaptchaAlternativesAfterFailures
        guard threshold > 0 else { throw SnapshotDecodingError(object.path("captchaAlternativesAfterFailures"), "must be positive") }
        var failures: [String: CaptchaFailures] = [:]
        for member in try object.optionalDictionary("captchaFailures") ?? [] {
            let entry = try SnapshotObject(member.value, "\(object.path("captchaFailures")).\(member.key)", allowed: ["session", "count"])
            let count: Int = try entry.integer("count")
            guard count > 0 else { throw SnapshotDecodingError(entry.path("count"), "must be positive") }
            failures[member.key] = CaptchaFailures(
                flow: try entry.optional("session").map { (value) throws(SnapshotDecodingError) in try SnapshotJSON.uuid(value, entry.path("session")) },
                count: count)
        }
        self.init(
            devices: devices, resendWaitMilliseconds: wait, captchaPurposes: purposes, biometrics: biometrics,
            captchaAlternativesAfterFailures: threshold, captchaFailures: failures)
    }
}

extension DeviceState {
    /// `{"device", "signedIn"?: {"user", "since", "method", "secondFactor"}, "flow",
    /// "signInOptions"?: {"options": [name], "platform"?, "shownAt"}}`.
    var snapshotValue: JSONValue {
        var members: [JSONValue.Member] = [.init("device", .string(device))]
        members.append(
            "signedIn",
            signedIn.map { user in
                .object([
                    .init("user", .string(user.user)), .init("since", .milliseconds(user.since)),
                    .init("method", .string(user.method.rawValue)), .init("secondFactor", .bool(user.secondFactor))
                ])
            })
        members.append(.init("flow", flow.snapshotValue))
        members.append("signInOptions", signInOptions?.snapshotValue)
        return .object(members)
    }

    /// `signInOptions` is absent from snapshots of state version 6 and before, and while the
    /// device has recorded none.
    init(snapshotValue value: JSONValue, path: String) throws(SnapshotDecodingError) {
        let object = try SnapshotObject(value, path, allowed: ["device", "signedIn", "flow", "signInOptions"])
        var signedIn: SignedInUser?
        if let user = try object.optionalObject("signedIn", allowed: ["user", "since", "method", "secondFactor"]) {
            signedIn = SignedInUser(
                user: try user.string("user"), since: try user.time("since"), method: try user.name("method"),
                secondFactor: try user.bool("secondFactor"))
        }
        self.init(
            device: try object.string("device"), signedIn: signedIn,
            flow: try Flow(snapshotValue: try object.required("flow"), path: object.path("flow")),
            signInOptions: try object.optional("signInOptions").map { (value) throws(SnapshotDecodingError) in
                try SignInOptions(snapshotValue: value, path: object.path("signInOptions"))
            })
    }
}

extension SignInOptions {
    var snapshotValue: JSONValue {
        var members: [JSONValue.Member] = [.init("options", .array(options.map { .string($0.rawValue) }))]
        members.append("platform", platform.map { .string($0.rawValue) })
        members.append(.init("shownAt", .milliseconds(shownAt)))
        return .object(members)
    }

    /// The event's rule holds here too: 1…``SignInOption/maximumShown`` known names, none twice.
    init(snapshotValue value: JSONValue, path: String) throws(SnapshotDecodingError) {
        let object = try SnapshotObject(value, path, allowed: ["options", "platform", "shownAt"])
        let elements = try object.array("options")
        guard (1...SignInOption.maximumShown).contains(elements.count) else {
            throw SnapshotDecodingError(object.path("options"), "must hold 1 to \(SignInOption.maximumShown) options, got \(elements.count)")
        }
        var options: [SignInOption] = []
        for (index, element) in elements.enumerated() {
            let option: SignInOption = try SnapshotJSON.name(element, "\(object.path("options"))[\(index)]")
            guard !options.contains(option) else { throw SnapshotDecodingError("\(object.path("options"))[\(index)]", "repeats \(option.rawValue)") }
            options.append(option)
        }
        self.init(options: options, platform: try object.optionalName("platform"), shownAt: try object.time("shownAt"))
    }
}

extension Flow {
    static let snapshotKeys = [
        "session", "user", "screen", "state", "fieldMessages", "systemMessage", "resend", "lockedUntil",
        "fields", "identifierKind", "biometric", "unlockScreen"
    ]

    /// `{"session"? (the flow id, an uppercase UUID), "user"?, "screen", "state", "fieldMessages":
    /// [{"field", "text", "severity"}], "systemMessage"?: {"text", "severity"}, "resend"?:
    /// {"availableAt", "help"}, "lockedUntil"?, "fields": [{"field", "filled", "valid"?}],
    /// "identifierKind"?, "biometric"?, "unlockScreen"?}` (`unlockScreen` since state version 7).
    var snapshotValue: JSONValue {
        var members: [JSONValue.Member] = []
        members.append("session", id.map { .string($0.uuidString) })
        members.append("user", user.map(JSONValue.string))
        members.append(.init("screen", .string(screen.rawValue)))
        members.append(.init("state", .string(state.rawValue)))
        members.append(
            .init(
                "fieldMessages",
                .array(
                    fieldMessages.map { message in
                        .object([
                            .init("field", .string(message.field)), .init("text", .string(message.text)), .init("severity", .string(message.severity.rawValue))
                        ])
                    })))
        members.append(
            "systemMessage",
            systemMessage.map { message in
                .object([.init("text", .string(message.text)), .init("severity", .string(message.severity.rawValue))])
            })
        members.append(
            "resend",
            resend.map { resend in
                .object([.init("availableAt", .milliseconds(resend.availableAt)), .init("help", .string(resend.help))])
            })
        members.append("lockedUntil", lockedUntil.map(JSONValue.milliseconds))
        members.append(
            .init(
                "fields",
                .array(
                    fields.map { input in
                        var fieldMembers: [JSONValue.Member] = [.init("field", .string(input.field.rawValue)), .init("filled", .bool(input.filled))]
                        fieldMembers.append("valid", input.valid.map(JSONValue.bool))
                        return .object(fieldMembers)
                    })))
        members.append("identifierKind", identifierKind.map { .string($0.rawValue) })
        members.append("biometric", biometric.map { .string($0.rawValue) })
        members.append("unlockScreen", unlockScreen.map { .string($0.rawValue) })
        return .object(members)
    }

    /// `fields`, `identifierKind` and `biometric` are absent from snapshots of state version 5.
    init(snapshotValue value: JSONValue, path: String) throws(SnapshotDecodingError) {
        let object = try SnapshotObject(value, path, allowed: Self.snapshotKeys)
        var fieldMessages: [FieldMessage] = []
        for (index, element) in try object.array("fieldMessages").enumerated() {
            let message = try SnapshotObject(element, "\(object.path("fieldMessages"))[\(index)]", allowed: ["field", "text", "severity"])
            fieldMessages.append(FieldMessage(field: try message.string("field"), try message.string("text"), try message.name("severity")))
        }
        var systemMessage: Message?
        if let message = try object.optionalObject("systemMessage", allowed: ["text", "severity"]) {
            systemMessage = Message(try message.string("text"), try message.name("severity"))
        }
        var resend: ResendInfo?
        if let info = try object.optionalObject("resend", allowed: ["availableAt", "help"]) {
            resend = ResendInfo(availableAt: try info.time("availableAt"), help: try info.string("help"))
        }
        var fields: [FieldInput] = []
        for (index, element) in (try object.optionalArray("fields") ?? []).enumerated() {
            let input = try SnapshotObject(element, "\(object.path("fields"))[\(index)]", allowed: ["field", "filled", "valid"])
            fields.append(FieldInput(field: try input.name("field"), filled: try input.bool("filled"), valid: try input.optionalBool("valid")))
        }
        let unlockScreen: Screen? = try object.optionalName("unlockScreen")
        self.init(
            id: try object.optional("session").map { (value) throws(SnapshotDecodingError) in try SnapshotJSON.uuid(value, object.path("session")) },
            user: try object.optionalString("user"), screen: try object.name("screen"), state: try object.name("state"),
            fieldMessages: fieldMessages, systemMessage: systemMessage, resend: resend, lockedUntil: try object.optionalTime("lockedUntil"),
            fields: fields, identifierKind: try object.optionalName("identifierKind"), biometric: try object.optionalName("biometric"))
        self.unlockScreen = unlockScreen
    }
}

extension MultiUserProjection {
    /// `{"devices": {name: {"users": [profile], "selected"?, "chosen"?}}}`, sorted by device; a
    /// profile is `{"id", "displayName", "subtitle"?, "imageRef"?, "initials", "passcodePolicy",
    /// "passcodeMinimumLength", "hasPasscode", "biometric"?, "lastSignIn"?, "addedAt"}`.
    var snapshotValue: JSONValue {
        .object([
            .init(
                "devices",
                SnapshotJSON.sorted(devices) { device in
                    var members: [JSONValue.Member] = [.init("users", .array(device.users.map(\.snapshotValue)))]
                    members.append("selected", device.selected.map(JSONValue.string))
                    members.append("chosen", device.chosen.map(JSONValue.string))
                    return .object(members)
                })
        ])
    }

    init(snapshotValue value: JSONValue, path: String) throws(SnapshotDecodingError) {
        let object = try SnapshotObject(value, path, allowed: ["devices"])
        var devices: [String: DeviceUsers] = [:]
        for member in try object.dictionary("devices") {
            let device = try SnapshotObject(member.value, "\(object.path("devices")).\(member.key)", allowed: ["users", "selected", "chosen"])
            var users = DeviceUsers()
            for (index, element) in try device.array("users").enumerated() {
                users.users.append(try UserProfile(snapshotValue: element, path: "\(device.path("users"))[\(index)]"))
            }
            users.selected = try device.optionalString("selected")
            users.chosen = try device.optionalString("chosen")
            devices[member.key] = users
        }
        self.init(devices: devices)
    }
}

extension UserProfile {
    static let snapshotKeys = [
        "id", "displayName", "subtitle", "imageRef", "initials", "passcodePolicy", "passcodeMinimumLength",
        "hasPasscode", "biometric", "lastSignIn", "addedAt"
    ]

    var snapshotValue: JSONValue {
        var members: [JSONValue.Member] = [.init("id", .string(id)), .init("displayName", .string(displayName))]
        members.append("subtitle", subtitle.map(JSONValue.string))
        members.append("imageRef", imageRef.map(JSONValue.string))
        members.append(.init("initials", .string(initials)))
        members.append(.init("passcodePolicy", .string(passcodePolicy.rawValue)))
        members.append(.init("passcodeMinimumLength", .number(String(passcodeMinimumLength))))
        members.append(.init("hasPasscode", .bool(hasPasscode)))
        members.append("biometric", biometric.map { .string($0.rawValue) })
        members.append("lastSignIn", lastSignIn.map(JSONValue.milliseconds))
        members.append(.init("addedAt", .milliseconds(addedAt)))
        return .object(members)
    }

    init(snapshotValue value: JSONValue, path: String) throws(SnapshotDecodingError) {
        let object = try SnapshotObject(value, path, allowed: Self.snapshotKeys)
        self.init(
            id: try object.string("id"), displayName: try object.string("displayName"), subtitle: try object.optionalString("subtitle"),
            imageRef: try object.optionalString("imageRef"), initials: try object.string("initials"),
            passcodePolicy: try object.name("passcodePolicy"), passcodeMinimumLength: try object.integer("passcodeMinimumLength"),
            hasPasscode: try object.bool("hasPasscode"), biometric: try object.optionalName("biometric"),
            lastSignIn: try object.optionalTime("lastSignIn"), addedAt: try object.time("addedAt"))
    }
}
