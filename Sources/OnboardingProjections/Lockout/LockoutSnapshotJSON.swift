import OnboardingModel

// The lockout engine's part of a projection snapshot (see SnapshotJSON.swift): the policy it
// folded under, the device scope, the seq and every key with its state.

extension LockoutEngine {
    static let snapshotKeys = ["policy", "acrossDevices", "seq", "keys", "addressKeys"]

    /// `{"policy", "acrossDevices", "seq", "keys", "addressKeys"?}`: keys sorted (`SnapshotKey.precedes(_:_:)`),
    /// so equal states write equal bytes whatever order the table holds them in; `addressKeys`
    /// only when the policy has an address rule and some key has state.
    public var snapshotValue: JSONValue {
        var members: [JSONValue.Member] = [
            .init("policy", policy.snapshotValue), .init("acrossDevices", .bool(acrossDevices)),
            .init("seq", .number(String(seq)))
        ]
        let sorted = keys.keysAndStates.sorted { SnapshotKey.precedes($0.key, $1.key) }
        members.append(
            .init(
                "keys",
                .array(
                    sorted.map { key, state in
                        let tierCount = policy.rule(for: key.factor).tiers.count
                        return SnapshotKey(key: key, state: state, extraWindows: keys.extraWindows(for: key, tierCount: tierCount)).snapshotValue
                    })))
        if let rule = policy.address, !addressKeys.isEmpty {
            let sortedAddresses = addressKeys.keysAndStates.sorted { SnapshotKey.precedes($0.key, $1.key) }
            members.append(
                .init(
                    "addressKeys",
                    .array(
                        sortedAddresses.map { key, state in
                            SnapshotKey(key: key, state: state, extraWindows: addressKeys.extraWindows(for: key, tierCount: rule.rule.tiers.count))
                                .snapshotValue
                        })))
        }
        return .object(members)
    }

    /// Reads ``snapshotValue``, checking every key against the policy (see `SnapshotKey`): a
    /// snapshot that does not fit is an error, so the store rebuilds the state.
    public init(snapshotValue value: JSONValue, path: String = "lockout") throws(SnapshotDecodingError) {
        let object = try SnapshotObject(value, path, allowed: Self.snapshotKeys)
        self.init(
            policy: try LockoutPolicy(snapshotValue: try object.required("policy"), path: object.path("policy")),
            acrossDevices: try object.bool("acrossDevices"))
        seq = try object.integer("seq")
        for (index, element) in try object.array("keys").enumerated() {
            let keyPath = "\(object.path("keys"))[\(index)]"
            let snapshotKey = try SnapshotKey(snapshotValue: element, path: keyPath)
            let key = snapshotKey.key
            guard (key.device == nil) == acrossDevices, keys[key] == nil else {
                throw SnapshotDecodingError(keyPath, "lockout key \(key) is repeated or has the wrong device scope")
            }
            let (state, extraWindows) = try snapshotKey.state(rule: policy.rule(for: key.factor), path: keyPath)
            keys[key] = state
            keys.setExtraWindows(extraWindows, for: key)
        }
        for (index, element) in (try object.optionalArray("addressKeys") ?? []).enumerated() {
            let keyPath = "\(object.path("addressKeys"))[\(index)]"
            let snapshotKey = try SnapshotKey(snapshotValue: element, path: keyPath)
            let key = snapshotKey.key
            guard let rule = policy.address, key.device != nil, key.factor == .password, (key.user == nil) == (rule.scope == .address),
                addressKeys[key] == nil
            else {
                throw SnapshotDecodingError(keyPath, "address key \(key) is repeated or does not fit the policy's address rule")
            }
            let (state, extraWindows) = try snapshotKey.state(rule: rule.rule, path: keyPath)
            addressKeys[key] = state
            addressKeys.setExtraWindows(extraWindows, for: key)
        }
    }
}

extension LockoutEngine.SnapshotKey {
    static let snapshotKeys = [
        "user", "device", "factor", "failures", "streak", "temporaryLockouts", "windows",
        "lastFailureAt", "lockedUntil", "lockTier", "lockDurationMilliseconds", "permanentSince"
    ]

    /// `{"user"?, "device"?, "factor", "failures"?, "streak"?, "temporaryLockouts"?, "windows"?,
    /// "lastFailureAt"?, "lockedUntil"?, "lockTier"?, "lockDurationMilliseconds"?, "permanentSince"?}`.
    var snapshotValue: JSONValue {
        var members: [JSONValue.Member] = []
        members.append("user", user.map(JSONValue.string))
        members.append("device", device.map(JSONValue.string))
        members.append("factor", .string(factor.rawValue))
        members.append("failures", failures.map { .number(String($0)) })
        members.append("streak", streak.map { .number(String($0)) })
        members.append("temporaryLockouts", temporaryLockouts.map { .number(String($0)) })
        members.append(
            "windows",
            windows.map { windows in
                .array(
                    windows.map { window in
                        window.map { .array([.milliseconds($0.window.start), .number(String($0.window.count))]) } ?? .null
                    })
            })
        members.append("lastFailureAt", lastFailureAt.map(JSONValue.milliseconds))
        members.append("lockedUntil", lockedUntil.map(JSONValue.milliseconds))
        members.append("lockTier", lockTier.map { .number(String($0)) })
        members.append("lockDurationMilliseconds", lockDurationMilliseconds.map { .number(String($0)) })
        members.append("permanentSince", permanentSince.map(JSONValue.milliseconds))
        return .object(members)
    }

    init(snapshotValue value: JSONValue, path: String) throws(SnapshotDecodingError) {
        let object = try SnapshotObject(value, path, allowed: Self.snapshotKeys)
        user = try object.optionalString("user")
        device = try object.optionalString("device")
        factor = try object.name("factor")
        failures = try object.optionalInteger("failures")
        streak = try object.optionalInteger("streak")
        temporaryLockouts = try object.optionalInteger("temporaryLockouts")
        windows = try object.optionalArray("windows").map { (elements) throws(SnapshotDecodingError) in
            var windows: [SnapshotWindow?] = []
            for (index, element) in elements.enumerated() {
                let windowPath = "\(object.path("windows"))[\(index)]"
                if element == .null { windows.append(nil); continue }
                // A time, so its range is checked like every time a snapshot holds.
                let pair = try SnapshotJSON.array(element, windowPath)
                guard pair.count == 2 else { throw SnapshotDecodingError(windowPath, "must be [start, count ≥ 1]") }
                let start = try SnapshotJSON.time(pair[0], windowPath), count: Int32 = try SnapshotJSON.integer(pair[1], windowPath)
                guard count > 0 else { throw SnapshotDecodingError(windowPath, "must be [start, count ≥ 1]") }
                windows.append(SnapshotWindow(LockoutEngine.KeyState.Window(start: start, count: count)))
            }
            return windows
        }
        lastFailureAt = try object.optionalTime("lastFailureAt")
        lockedUntil = try object.optionalTime("lockedUntil")
        lockTier = try object.optionalInteger("lockTier")
        lockDurationMilliseconds = try object.optionalInteger("lockDurationMilliseconds")
        permanentSince = try object.optionalTime("permanentSince")
    }
}

extension LockoutPolicy {
    /// The policy as snapshots hold it (the Swift property names; not the custom policy schema
    /// of ``parse(json:)``): `{"name", "password", "secondFactor", "clearing", "address"?}`.
    var snapshotValue: JSONValue {
        var members: [JSONValue.Member] = [
            .init("name", .string(name)), .init("password", password.snapshotValue),
            .init("secondFactor", secondFactor.snapshotValue), .init("clearing", clearing.snapshotValue)
        ]
        members.append(
            "address",
            address.map { address in
                .object([
                    .init("scope", .string(address.scope.rawValue)), .init("rule", address.rule.snapshotValue),
                    .init("clearedBySuccess", .bool(address.clearedBySuccess))
                ])
            })
        return .object(members)
    }

    init(snapshotValue value: JSONValue, path: String) throws(SnapshotDecodingError) {
        let object = try SnapshotObject(value, path, allowed: ["name", "password", "secondFactor", "clearing", "address"])
        var address: AddressRule?
        if let rule = try object.optionalObject("address", allowed: ["scope", "rule", "clearedBySuccess"]) {
            address = AddressRule(
                scope: try rule.name("scope"), rule: try FactorRule(snapshotValue: try rule.required("rule"), path: rule.path("rule")),
                clearedBySuccess: try rule.bool("clearedBySuccess"))
        }
        let clearing = try object.object("clearing", allowed: ["signInSucceeded", "passwordChanged", "lockoutCleared", "passcodeResetCompleted"])
        self.init(
            name: try object.string("name"),
            password: try FactorRule(snapshotValue: try object.required("password"), path: object.path("password")),
            secondFactor: try FactorRule(snapshotValue: try object.required("secondFactor"), path: object.path("secondFactor")),
            clearing: Clearing(
                signInSucceeded: try clearing.name("signInSucceeded"), passwordChanged: try clearing.name("passwordChanged"),
                lockoutCleared: try clearing.name("lockoutCleared"),
                passcodeResetCompleted: try clearing.name("passcodeResetCompleted")),
            address: address)
    }
}

extension LockoutPolicy.Clearing {
    /// `{"signInSucceeded", "passwordChanged", "lockoutCleared", "passcodeResetCompleted"}`.
    var snapshotValue: JSONValue {
        .object([
            .init("signInSucceeded", .string(signInSucceeded.rawValue)), .init("passwordChanged", .string(passwordChanged.rawValue)),
            .init("lockoutCleared", .string(lockoutCleared.rawValue)),
            .init("passcodeResetCompleted", .string(passcodeResetCompleted.rawValue))
        ])
    }
}

extension LockoutPolicy.FactorRule {
    /// `{"methods"?, "tiers", "backoff"?, "consecutiveLimit"?, "permanentAfterLockouts"?}`; a tier
    /// is `{"limit", "windowSeconds", "lockSeconds"?}`, the back-off `{"threshold",
    /// "initialWaitSeconds", "growth", "maximumWaitSeconds", "resetAfterSeconds"?,
    /// "quickLoginMilliseconds"?, "quickLoginWaitSeconds"?}`.
    var snapshotValue: JSONValue {
        func number(_ value: Int) -> JSONValue { .number(String(value)) }
        var members: [JSONValue.Member] = []
        members.append("methods", methods.map { .array($0.map { .string($0.rawValue) }) })
        members.append(
            "tiers",
            .array(
                tiers.map { tier in
                    var tierMembers: [JSONValue.Member] = [.init("limit", number(tier.limit)), .init("windowSeconds", number(tier.windowSeconds))]
                    tierMembers.append("lockSeconds", tier.lockSeconds.map(number))
                    return .object(tierMembers)
                }))
        members.append(
            "backoff",
            backoff.map { backoff in
                var backoffMembers: [JSONValue.Member] = [
                    .init("threshold", number(backoff.threshold)), .init("initialWaitSeconds", number(backoff.initialWaitSeconds)),
                    .init("growth", .string(backoff.growth.rawValue)), .init("maximumWaitSeconds", number(backoff.maximumWaitSeconds))
                ]
                backoffMembers.append("resetAfterSeconds", backoff.resetAfterSeconds.map(number))
                backoffMembers.append("quickLoginMilliseconds", backoff.quickLoginMilliseconds.map(number))
                backoffMembers.append("quickLoginWaitSeconds", backoff.quickLoginWaitSeconds.map(number))
                return .object(backoffMembers)
            })
        members.append("consecutiveLimit", consecutiveLimit.map(number))
        members.append("permanentAfterLockouts", permanentAfterLockouts.map(number))
        return .object(members)
    }

    init(snapshotValue value: JSONValue, path: String) throws(SnapshotDecodingError) {
        let object = try SnapshotObject(value, path, allowed: ["methods", "tiers", "backoff", "consecutiveLimit", "permanentAfterLockouts"])
        var methods: [SignInMethod]?
        if let elements = try object.optionalArray("methods") {
            methods = []
            for (index, element) in elements.enumerated() { methods!.append(try SnapshotJSON.name(element, "\(object.path("methods"))[\(index)]")) }
        }
        var tiers: [LockoutPolicy.Tier] = []
        for (index, element) in try object.array("tiers").enumerated() {
            let tier = try SnapshotObject(element, "\(object.path("tiers"))[\(index)]", allowed: ["limit", "windowSeconds", "lockSeconds"])
            tiers.append(
                LockoutPolicy.Tier(
                    limit: try tier.integer("limit"), windowSeconds: try tier.integer("windowSeconds"),
                    lockSeconds: try tier.optionalInteger("lockSeconds")))
        }
        var backoff: LockoutPolicy.Backoff?
        if let fields = try object.optionalObject(
            "backoff",
            allowed: [
                "threshold", "initialWaitSeconds", "growth", "maximumWaitSeconds",
                "resetAfterSeconds", "quickLoginMilliseconds", "quickLoginWaitSeconds"
            ])
        {
            backoff = LockoutPolicy.Backoff(
                threshold: try fields.integer("threshold"), initialWaitSeconds: try fields.integer("initialWaitSeconds"),
                growth: try fields.name("growth"), maximumWaitSeconds: try fields.integer("maximumWaitSeconds"),
                resetAfterSeconds: try fields.optionalInteger("resetAfterSeconds"),
                quickLoginMilliseconds: try fields.optionalInteger("quickLoginMilliseconds"),
                quickLoginWaitSeconds: try fields.optionalInteger("quickLoginWaitSeconds"))
        }
        self.init(
            methods: methods, tiers: tiers, backoff: backoff, consecutiveLimit: try object.optionalInteger("consecutiveLimit"),
            permanentAfterLockouts: try object.optionalInteger("permanentAfterLockouts"))
    }
}
