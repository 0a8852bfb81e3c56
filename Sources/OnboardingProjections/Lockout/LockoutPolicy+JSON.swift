import OnboardingModel

/// A custom policy file that cannot be used; names the JSON path and how to fix it.
public struct LockoutPolicyError: Error, Sendable, CustomStringConvertible {
    public let path: String
    public let message: String
    public var description: String { path.isEmpty ? message : "\(path): \(message)" }
}

extension LockoutPolicy {
    /// Limits on custom policies: windows and waits up to a year, counts up to a million; beyond
    /// that a policy is a typo, not a choice.
    static let maximumSeconds = 366 * 86_400
    static let maximumCount = 1_000_000
    static let maximumTiers = 8

    /// Reads a policy from JSON (schema in `docs/lockout.md`). Unknown keys are refused, so a
    /// misspelt option cannot be silently ignored.
    public static func parse(json text: String) throws(LockoutPolicyError) -> LockoutPolicy {
        let value: JSONValue
        do { value = try JSONValue.parse(text) } catch {
            throw LockoutPolicyError(path: "", message: "not valid JSON: \(error)")
        }
        var reader = PolicyReader()
        return try reader.policy(value)
    }

    /// The policy as JSON in the schema ``parse(json:)`` reads (members in a fixed order).
    public var json: String {
        var writer = JSONWriter()
        writer.append(jsonValue)
        return writer.text
    }

    public var jsonValue: JSONValue {
        func number(_ value: Int) -> JSONValue { .number(String(value)) }
        func rule(_ rule: FactorRule) -> JSONValue {
            var members: [JSONValue.Member] = []
            if let methods = rule.methods { members.append(.init("methods", .array(methods.map { .string($0.rawValue) }))) }
            members.append(
                .init(
                    "tiers",
                    .array(
                        rule.tiers.map { tier in
                            var fields: [JSONValue.Member] = [.init("limit", number(tier.limit)), .init("window_seconds", number(tier.windowSeconds))]
                            if let lock = tier.lockSeconds { fields.append(.init("lock_seconds", number(lock))) }
                            return .object(fields)
                        })))
            if let backoff = rule.backoff {
                var fields: [JSONValue.Member] = [
                    .init("threshold", number(backoff.threshold)),
                    .init("initial_wait_seconds", number(backoff.initialWaitSeconds)),
                    .init("growth", .string(backoff.growth.rawValue)),
                    .init("maximum_wait_seconds", number(backoff.maximumWaitSeconds))
                ]
                if let reset = backoff.resetAfterSeconds { fields.append(.init("reset_after_seconds", number(reset))) }
                if let quick = backoff.quickLoginMilliseconds { fields.append(.init("quick_login_milliseconds", number(quick))) }
                if let wait = backoff.quickLoginWaitSeconds { fields.append(.init("quick_login_wait_seconds", number(wait))) }
                members.append(.init("backoff", .object(fields)))
            }
            if let limit = rule.consecutiveLimit { members.append(.init("consecutive_limit", number(limit))) }
            if let count = rule.permanentAfterLockouts { members.append(.init("permanent_after_lockouts", number(count))) }
            return .object(members)
        }
        var members: [JSONValue.Member] = [
            .init("name", .string(name)),
            .init("password", rule(password)),
            .init("second_factor", rule(secondFactor)),
            .init(
                "clearing",
                .object([
                    .init("sign_in_succeeded", .string(clearing.signInSucceeded.rawValue)),
                    .init("password_changed", .string(clearing.passwordChanged.rawValue)),
                    .init("lockout_cleared", .string(clearing.lockoutCleared.rawValue)),
                    .init("passcode_reset_completed", .string(clearing.passcodeResetCompleted.rawValue))
                ]))
        ]
        if let address {
            guard case .object(var fields) = rule(address.rule) else { preconditionFailure("a rule prints as an object") }
            fields.insert(.init("scope", .string(address.scope.rawValue)), at: 0)
            fields.append(.init("cleared_by_success", .bool(address.clearedBySuccess)))
            members.append(.init("address", .object(fields)))
        }
        return .object(members)
    }
}

/// Strict reading of the policy schema, with the JSON path in every error.
private struct PolicyReader {
    func fail(_ path: String, _ message: String) -> LockoutPolicyError {
        LockoutPolicyError(path: path, message: message)
    }

    func object(_ value: JSONValue, _ path: String, allowed: [String]) throws(LockoutPolicyError) -> JSONValue.Members {
        switch value.strictObject(allowed: allowed) {
        case .members(let members): return members
        case .notAnObject(let kind): throw fail(path, "must be an object, got \(kind)")
        case .unknownKey(let key): throw fail(path, "unknown key \"\(key)\" (allowed: \(allowed.joined(separator: ", ")))")
        }
    }

    func integer(_ value: JSONValue?, _ path: String, minimum: Int, maximum: Int) throws(LockoutPolicyError) -> Int? {
        guard let value, value != .null else { return nil }
        guard case .number(let text) = value, let number = Int(text), number >= minimum, number <= maximum else {
            throw fail(path, "must be a whole number from \(minimum) to \(maximum)")
        }
        return number
    }

    func required(_ value: JSONValue?, _ path: String, minimum: Int, maximum: Int) throws(LockoutPolicyError) -> Int {
        guard let number = try integer(value, path, minimum: minimum, maximum: maximum) else { throw fail(path, "is required") }
        return number
    }

    mutating func policy(_ value: JSONValue) throws(LockoutPolicyError) -> LockoutPolicy {
        let root = try object(value, "policy", allowed: ["name", "password", "second_factor", "clearing", "address"])
        guard case .string(let name)? = root["name"], !name.isEmpty, name.utf8.count <= 64 else {
            throw fail("policy.name", "is required: a name of 1 to 64 bytes")
        }
        let password = try rule(root["password"], "policy.password", methodsAllowed: true)
        // Second-factor attempts carry second-factor methods (totp, sms, …), not sign-in methods,
        // so a `methods` filter there could never match: refuse it rather than ignore it.
        let secondFactor = try rule(root["second_factor"], "policy.second_factor", methodsAllowed: false)
        var clearing = LockoutPolicy.mediawiki.clearing
        if let value = root["clearing"] {
            let fields = try object(
                value, "policy.clearing",
                allowed: ["sign_in_succeeded", "password_changed", "lockout_cleared", "passcode_reset_completed"])
            func scope(_ key: String, _ fallback: LockoutPolicy.ClearScope) throws(LockoutPolicyError) -> LockoutPolicy.ClearScope {
                guard let raw = fields[key] else { return fallback }
                guard case .string(let text) = raw, let scope = LockoutPolicy.ClearScope(rawValue: text) else {
                    throw fail("policy.clearing.\(key)", "must be \"none\", \"counters\" or \"all\"")
                }
                return scope
            }
            clearing = LockoutPolicy.Clearing(
                signInSucceeded: try scope("sign_in_succeeded", clearing.signInSucceeded),
                passwordChanged: try scope("password_changed", clearing.passwordChanged),
                lockoutCleared: try scope("lockout_cleared", clearing.lockoutCleared),
                passcodeResetCompleted: try scope("passcode_reset_completed", clearing.passcodeResetCompleted))
        }
        var address: LockoutPolicy.AddressRule?
        if let value = root["address"] {
            let path = "policy.address"
            let fields = try object(value, path, allowed: ["scope", "cleared_by_success", "tiers", "backoff", "consecutive_limit", "permanent_after_lockouts"])
            let scopes = LockoutPolicy.AddressRule.Scope.allCases.map(\.rawValue)
            guard case .string(let text)? = fields["scope"], let scope = LockoutPolicy.AddressRule.Scope(rawValue: text) else {
                throw fail("\(path).scope", "is required: one of \(scopes.map { "\"\($0)\"" }.joined(separator: ", "))")
            }
            var clearedBySuccess = false
            if let flag = fields["cleared_by_success"] {
                guard case .bool(let value) = flag else { throw fail("\(path).cleared_by_success", "must be true or false") }
                clearedBySuccess = value
            }
            let ruleMembers = fields.list.filter { $0.key != "scope" && $0.key != "cleared_by_success" }
            let rule = try rule(.object(ruleMembers), path, methodsAllowed: false)
            address = LockoutPolicy.AddressRule(scope: scope, rule: rule, clearedBySuccess: clearedBySuccess)
        }
        return LockoutPolicy(name: name, password: password, secondFactor: secondFactor, clearing: clearing, address: address)
    }

    func rule(_ value: JSONValue?, _ path: String, methodsAllowed: Bool) throws(LockoutPolicyError) -> LockoutPolicy.FactorRule {
        guard let value else { return LockoutPolicy.FactorRule() }
        let fields = try object(
            value, path,
            allowed: (methodsAllowed ? ["methods"] : [])
                + ["tiers", "backoff", "consecutive_limit", "permanent_after_lockouts"])
        var rule = LockoutPolicy.FactorRule()
        if let methods = fields["methods"] {
            guard case .array(let items) = methods, !items.isEmpty else { throw fail("\(path).methods", "must be a non-empty array of sign-in methods") }
            var parsed: [SignInMethod] = []
            for (index, item) in items.enumerated() {
                guard case .string(let text) = item, let method = SignInMethod(rawValue: text) else {
                    throw fail("\(path).methods[\(index)]", "must be one of: \(SignInMethod.wireNames.joined(separator: ", "))")
                }
                parsed.append(method)
            }
            rule.methods = parsed
        }
        if let tiers = fields["tiers"] {
            guard case .array(let items) = tiers, items.count <= LockoutPolicy.maximumTiers else {
                throw fail("\(path).tiers", "must be an array of at most \(LockoutPolicy.maximumTiers) tiers")
            }
            for (index, item) in items.enumerated() {
                let tierPath = "\(path).tiers[\(index)]"
                let tier = try object(item, tierPath, allowed: ["limit", "window_seconds", "lock_seconds"])
                rule.tiers.append(
                    LockoutPolicy.Tier(
                        limit: try required(tier["limit"], "\(tierPath).limit", minimum: 1, maximum: LockoutPolicy.maximumCount),
                        windowSeconds: try required(tier["window_seconds"], "\(tierPath).window_seconds", minimum: 1, maximum: LockoutPolicy.maximumSeconds),
                        lockSeconds: try integer(tier["lock_seconds"], "\(tierPath).lock_seconds", minimum: 1, maximum: LockoutPolicy.maximumSeconds)))
            }
        }
        if let backoff = fields["backoff"] {
            let backoffPath = "\(path).backoff"
            let fields = try object(
                backoff, backoffPath,
                allowed: [
                    "threshold", "initial_wait_seconds", "growth", "maximum_wait_seconds",
                    "reset_after_seconds", "quick_login_milliseconds", "quick_login_wait_seconds"
                ])
            guard case .string(let growthText)? = fields["growth"], let growth = LockoutPolicy.Backoff.Growth(rawValue: growthText) else {
                throw fail("\(backoffPath).growth", "is required: \"doubling\" or \"linear\"")
            }
            let seconds = LockoutPolicy.maximumSeconds
            let parsed = LockoutPolicy.Backoff(
                threshold: try required(fields["threshold"], "\(backoffPath).threshold", minimum: 1, maximum: LockoutPolicy.maximumCount),
                initialWaitSeconds: try required(fields["initial_wait_seconds"], "\(backoffPath).initial_wait_seconds", minimum: 1, maximum: seconds),
                growth: growth,
                maximumWaitSeconds: try required(fields["maximum_wait_seconds"], "\(backoffPath).maximum_wait_seconds", minimum: 1, maximum: seconds),
                resetAfterSeconds: try integer(fields["reset_after_seconds"], "\(backoffPath).reset_after_seconds", minimum: 1, maximum: seconds),
                quickLoginMilliseconds: try integer(
                    fields["quick_login_milliseconds"], "\(backoffPath).quick_login_milliseconds", minimum: 1, maximum: 3_600_000),
                quickLoginWaitSeconds: try integer(fields["quick_login_wait_seconds"], "\(backoffPath).quick_login_wait_seconds", minimum: 1, maximum: seconds))
            guard (parsed.quickLoginMilliseconds == nil) == (parsed.quickLoginWaitSeconds == nil) else {
                throw fail(backoffPath, "quick_login_milliseconds and quick_login_wait_seconds go together")
            }
            guard parsed.maximumWaitSeconds >= parsed.initialWaitSeconds else {
                throw fail("\(backoffPath).maximum_wait_seconds", "must be at least initial_wait_seconds")
            }
            rule.backoff = parsed
        }
        rule.consecutiveLimit = try integer(fields["consecutive_limit"], "\(path).consecutive_limit", minimum: 1, maximum: LockoutPolicy.maximumCount)
        rule.permanentAfterLockouts = try integer(
            fields["permanent_after_lockouts"], "\(path).permanent_after_lockouts", minimum: 0, maximum: LockoutPolicy.maximumCount)
        return rule
    }
}
