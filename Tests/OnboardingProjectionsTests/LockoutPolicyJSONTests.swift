import Testing
import OnboardingModel
@testable import OnboardingProjections

/// Custom policy files: `LockoutPolicy.json` and the strict `LockoutPolicy.parse(json:)`.
@Suite("Lockout: policy JSON")
struct LockoutPolicyJSONTests {
    // MARK: Round trips

    @Test("every preset round-trips through json → parse(json:)", arguments: LockoutPolicy.presets)
    func roundTrip(preset: LockoutPolicy) throws {
        let parsed = try LockoutPolicy.parse(json: preset.json)
        #expect(parsed == preset)
        #expect(parsed.json == preset.json, "the printed form is stable")
    }

    @Test("printed presets are one line with members in a fixed order")
    func printedForm() {
        #expect(
            LockoutPolicy.mediawiki.json
                == #"{"name":"mediawiki","password":{"tiers":[{"limit":5,"window_seconds":300},{"limit":150,"window_seconds":172800}]},"second_factor":{"tiers":[{"limit":10,"window_seconds":60},{"limit":20,"window_seconds":600}]},"clearing":{"sign_in_succeeded":"all","password_changed":"all","lockout_cleared":"all","passcode_reset_completed":"all"},"address":{"scope":"address_and_user","tiers":[{"limit":5,"window_seconds":300},{"limit":150,"window_seconds":172800}],"cleared_by_success":true}}"#
        )
        #expect(
            LockoutPolicy.fail2ban.json
                == #"{"name":"fail2ban","password":{"tiers":[]},"second_factor":{"tiers":[]},"clearing":{"sign_in_succeeded":"none","password_changed":"none","lockout_cleared":"all","passcode_reset_completed":"none"},"address":{"scope":"address","tiers":[{"limit":5,"window_seconds":600,"lock_seconds":600}],"cleared_by_success":false}}"#
        )
        #expect(
            LockoutPolicy.localPasscode.json
                == #"{"name":"local_passcode","password":{"methods":["passcode"],"tiers":[],"consecutive_limit":10},"second_factor":{"tiers":[]},"clearing":{"sign_in_succeeded":"counters","password_changed":"counters","lockout_cleared":"all","passcode_reset_completed":"all"}}"#
        )
    }

    @Test("a policy using every key round-trips")
    func everyKey() throws {
        let policy = LockoutPolicy(
            name: "everything",
            password: .init(
                methods: [.password, .passcode, .biometric], tiers: [.init(limit: 3, windowSeconds: 60)],
                backoff: .init(
                    threshold: 5, initialWaitSeconds: 2, growth: .doubling, maximumWaitSeconds: 3600,
                    resetAfterSeconds: 86_400, quickLoginMilliseconds: 250, quickLoginWaitSeconds: 30),
                consecutiveLimit: 50, permanentAfterLockouts: 0),
            secondFactor: .init(tiers: [.init(limit: 1_000_000, windowSeconds: 31_622_400)]),
            clearing: .init(signInSucceeded: .none, passwordChanged: .counters, lockoutCleared: .all, passcodeResetCompleted: .none))
        #expect(try LockoutPolicy.parse(json: policy.json) == policy)
    }

    // MARK: The example of docs/lockout.md

    static let docExample = """
        {
          "name": "bank-app",
          "password": {
            "methods": ["password", "biometric"],
            "tiers": [
              {"limit": 5, "window_seconds": 900},
              {"limit": 20, "window_seconds": 86400}
            ],
            "consecutive_limit": 50
          },
          "second_factor": {
            "backoff": {
              "threshold": 3,
              "initial_wait_seconds": 30,
              "growth": "doubling",
              "maximum_wait_seconds": 3600,
              "reset_after_seconds": 86400
            },
            "permanent_after_lockouts": 5
          },
          "clearing": {
            "sign_in_succeeded": "counters",
            "password_changed": "all"
          }
        }
        """

    @Test("the example file of docs/lockout.md parses to what the doc says")
    func docExample() throws {
        let policy = try LockoutPolicy.parse(json: Self.docExample)
        #expect(
            policy
                == LockoutPolicy(
                    name: "bank-app",
                    password: .init(
                        methods: [.password, .biometric],
                        tiers: [.init(limit: 5, windowSeconds: 900), .init(limit: 20, windowSeconds: 86_400)],
                        consecutiveLimit: 50),
                    secondFactor: .init(
                        backoff: .init(
                            threshold: 3, initialWaitSeconds: 30, growth: .doubling, maximumWaitSeconds: 3600,
                            resetAfterSeconds: 86_400),
                        permanentAfterLockouts: 5),
                    clearing: .init(signInSucceeded: .counters, passwordChanged: .all, lockoutCleared: .all, passcodeResetCompleted: .all)))
        // Its second factor: waits of 30 s, 60 s, 120 s … from the third failure.
        var scenario = LockoutScenario(policy)
        let last = scenario.failRepeatedly(3, from: LockoutClock.origin, factor: .secondFactor)
        #expect(scenario.summary(at: last, .secondFactor) == "locked until 16:00:32.000, wait 30 seconds (3 failures)")
    }

    // MARK: Defaults

    @Test("only the name is required: empty rules, MediaWiki's clearing (all)")
    func defaults() throws {
        let policy = try LockoutPolicy.parse(json: #"{"name": "minimal"}"#)
        #expect(
            policy
                == LockoutPolicy(
                    name: "minimal", password: .init(), secondFactor: .init(),
                    clearing: LockoutPolicy.mediawiki.clearing))
        let partial = try LockoutPolicy.parse(json: #"{"name": "p", "clearing": {"sign_in_succeeded": "none"}}"#)
        #expect(partial.clearing == .init(signInSucceeded: .none, passwordChanged: .all, lockoutCleared: .all, passcodeResetCompleted: .all))
        let empty = try LockoutPolicy.parse(json: #"{"name": "e", "password": {}, "second_factor": {"tiers": []}, "clearing": {}}"#)
        #expect(empty == policy.renamed("e"))
    }

    @Test("null reads as absent for optional numbers")
    func nullIsAbsent() throws {
        let policy = try LockoutPolicy.parse(json: #"{"name": "n", "password": {"consecutive_limit": null, "permanent_after_lockouts": null}}"#)
        #expect(policy.password == .init())
    }

    @Test("boundaries of the ranges are accepted")
    func rangeEdges() throws {
        let json = #"""
            {"name": "\#(String(repeating: "n", count: 64))",
             "password": {"tiers": [{"limit": 1, "window_seconds": 1}, {"limit": 1000000, "window_seconds": 31622400},
                                    {"limit": 1, "window_seconds": 1}, {"limit": 1, "window_seconds": 1},
                                    {"limit": 1, "window_seconds": 1}, {"limit": 1, "window_seconds": 1},
                                    {"limit": 1, "window_seconds": 1}, {"limit": 1, "window_seconds": 1}],
                          "backoff": {"threshold": 1, "initial_wait_seconds": 1, "growth": "linear", "maximum_wait_seconds": 1,
                                      "quick_login_milliseconds": 3600000, "quick_login_wait_seconds": 31622400},
                          "consecutive_limit": 1, "permanent_after_lockouts": 0}}
            """#
        let policy = try LockoutPolicy.parse(json: json)
        #expect(policy.password.tiers.count == 8)
        #expect(policy.password.permanentAfterLockouts == 0)
    }

    // MARK: Errors name the path

    @Test(
        "bad files are refused with the JSON path and a fix",
        arguments: [
            // unknown keys
            (#"{"name": "x", "pasword": {}}"#, "policy", #"unknown key "pasword""#),
            (#"{"name": "x", "password": {"tier": []}}"#, "policy.password", #"unknown key "tier""#),
            (#"{"name": "x", "password": {"tiers": [{"limit": 5, "window": 300}]}}"#, "policy.password.tiers[0]", #"unknown key "window""#),
            (
                #"{"name": "x", "second_factor": {"backoff": {"threshold": 1, "initial_wait_seconds": 1, "growth": "linear", "maximum_wait_seconds": 1, "max_wait": 2}}}"#,
                "policy.second_factor.backoff", #"unknown key "max_wait""#
            ),
            (#"{"name": "x", "clearing": {"sign_in_success": "all"}}"#, "policy.clearing", #"unknown key "sign_in_success""#),
            // wrong types
            (#"[]"#, "policy", "must be an object"),
            (#"{"name": 5}"#, "policy.name", "is required"),
            (#"{"name": "x", "password": []}"#, "policy.password", "must be an object, got an array"),
            (#"{"name": "x", "password": {"tiers": {}}}"#, "policy.password.tiers", "must be an array"),
            (#"{"name": "x", "password": {"tiers": [5]}}"#, "policy.password.tiers[0]", "must be an object"),
            (#"{"name": "x", "password": {"consecutive_limit": "10"}}"#, "policy.password.consecutive_limit", "must be a whole number from 1 to 1000000"),
            (#"{"name": "x", "password": {"consecutive_limit": 2.5}}"#, "policy.password.consecutive_limit", "whole number"),
            (#"{"name": "x", "password": {"consecutive_limit": 10.0}}"#, "policy.password.consecutive_limit", "whole number"),
            (#"{"name": "x", "password": {"consecutive_limit": 1e1}}"#, "policy.password.consecutive_limit", "whole number"),
            (#"{"name": "x", "password": {"consecutive_limit": true}}"#, "policy.password.consecutive_limit", "whole number"),
            (#"{"name": "x", "clearing": {"lockout_cleared": true}}"#, "policy.clearing.lockout_cleared", #"must be "none", "counters" or "all""#),
            (#"{"name": "x", "clearing": {"lockout_cleared": "everything"}}"#, "policy.clearing.lockout_cleared", "must be"),
            (#"{"name": "x", "clearing": []}"#, "policy.clearing", "must be an object"),
            // missing or out of range
            (#"{"password": {}}"#, "policy.name", "is required"),
            (#"{"name": ""}"#, "policy.name", "1 to 64 bytes"),
            (#"{"name": "\#(String(repeating: "n", count: 65))"}"#, "policy.name", "1 to 64 bytes"),
            (
                #"{"name": "x", "password": {"backoff": {"threshold": 1, "initial_wait_seconds": 1, "maximum_wait_seconds": 1}}}"#,
                "policy.password.backoff.growth", #"is required: "doubling" or "linear""#
            ),
            (
                #"{"name": "x", "password": {"backoff": {"threshold": 1, "initial_wait_seconds": 1, "growth": "exponential", "maximum_wait_seconds": 1}}}"#,
                "policy.password.backoff.growth", "is required"
            ),
            (
                #"{"name": "x", "password": {"backoff": {"initial_wait_seconds": 1, "growth": "linear", "maximum_wait_seconds": 1}}}"#,
                "policy.password.backoff.threshold", "is required"
            ),
            (
                #"{"name": "x", "password": {"backoff": {"threshold": 1, "initial_wait_seconds": 60, "growth": "linear", "maximum_wait_seconds": 30}}}"#,
                "policy.password.backoff.maximum_wait_seconds", "must be at least initial_wait_seconds"
            ),
            (
                #"{"name": "x", "password": {"backoff": {"threshold": 1, "initial_wait_seconds": 1, "growth": "linear", "maximum_wait_seconds": 1, "quick_login_milliseconds": 500}}}"#,
                "policy.password.backoff", "quick_login_milliseconds and quick_login_wait_seconds go together"
            ),
            (
                #"{"name": "x", "password": {"backoff": {"threshold": 1, "initial_wait_seconds": 1, "growth": "linear", "maximum_wait_seconds": 1, "quick_login_milliseconds": 3600001, "quick_login_wait_seconds": 1}}}"#,
                "policy.password.backoff.quick_login_milliseconds", "from 1 to 3600000"
            ),
            (
                #"{"name": "x", "password": {"tiers": [{"limit": 0, "window_seconds": 300}]}}"#, "policy.password.tiers[0].limit",
                "must be a whole number from 1 to 1000000"
            ),
            (#"{"name": "x", "password": {"tiers": [{"limit": 1000001, "window_seconds": 300}]}}"#, "policy.password.tiers[0].limit", "from 1 to 1000000"),
            (#"{"name": "x", "password": {"tiers": [{"limit": -5, "window_seconds": 300}]}}"#, "policy.password.tiers[0].limit", "from 1 to 1000000"),
            (
                #"{"name": "x", "password": {"tiers": [{"limit": 5, "window_seconds": 300}, {"limit": 5}]}}"#, "policy.password.tiers[1].window_seconds",
                "is required"
            ),
            (
                #"{"name": "x", "password": {"tiers": [{"limit": 5, "window_seconds": 31622401}]}}"#, "policy.password.tiers[0].window_seconds",
                "from 1 to 31622400"
            ),
            (#"{"name": "x", "password": {"tiers": [{"limit": 5, "window_seconds": 0}]}}"#, "policy.password.tiers[0].window_seconds", "from 1 to 31622400"),
            (#"{"name": "x", "password": {"consecutive_limit": 0}}"#, "policy.password.consecutive_limit", "from 1 to 1000000"),
            (#"{"name": "x", "second_factor": {"permanent_after_lockouts": -1}}"#, "policy.second_factor.permanent_after_lockouts", "from 0 to 1000000"),
            (
                #"{"name": "x", "password": {"tiers": [\#(Array(repeating: #"{"limit": 1, "window_seconds": 1}"#, count: 9).joined(separator: ","))]}}"#,
                "policy.password.tiers", "at most 8 tiers"
            ),
            // methods
            (
                #"{"name": "x", "password": {"methods": ["passcode", "pin"]}}"#, "policy.password.methods[1]",
                "must be one of: password, passcode, biometric, apple, google, other"
            ),
            (#"{"name": "x", "password": {"methods": [1]}}"#, "policy.password.methods[0]", "must be one of"),
            (#"{"name": "x", "password": {"methods": []}}"#, "policy.password.methods", "non-empty array"),
            (#"{"name": "x", "password": {"methods": "passcode"}}"#, "policy.password.methods", "non-empty array")
        ])
    func refused(json: String, path: String, message: String) {
        do {
            let policy = try LockoutPolicy.parse(json: json)
            Issue.record("accepted: \(policy)")
        } catch {
            #expect(error.path == path)
            #expect(error.message.contains(message), "\(error.message)")
            #expect(error.description == "\(path): \(error.message)")
        }
    }

    @Test(
        "malformed JSON is refused with the column",
        arguments: [
            (#"{"name": "x""#, "column 13: unterminated object"),
            (#"{"name": "x",}"#, "malformed JSON at column"),
            (#"{"name": "x"} extra"#, "unexpected text after the value"),
            (#"{"name": "x", "name": "y"}"#, #"duplicate key "name""#),
            ("", "unexpected end of input"),
            (#"{name: "x"}"#, "malformed JSON at column 2")
        ])
    func malformed(json: String, message: String) {
        do {
            _ = try LockoutPolicy.parse(json: json)
            Issue.record("accepted")
        } catch {
            #expect(error.path == "")
            #expect(error.description.hasPrefix("not valid JSON: malformed JSON at column "), "\(error.description)")
            #expect(error.description.contains(message), "\(error.description)")
        }
    }
}

extension LockoutPolicy {
    func renamed(_ name: String) -> LockoutPolicy {
        var copy = self
        copy.name = name
        return copy
    }
}
