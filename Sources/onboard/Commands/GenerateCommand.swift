#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import OnboardingModel
import OnboardingProjections
import OnboardingWorkload

/// `onboard generate`: a seeded, deterministic workload as canonical JSONL, or the lockout
/// effectiveness report of every preset.
enum GenerateCommand {
    static let eventsOption = OptionSpec(name: "events", valueName: "N", help: "how many events to write (10^4 … 10^7 typical)")
    static let seedOption = OptionSpec(name: "seed", valueName: "S", help: "the seed, a whole number 0…2^64-1 (default: 1)")
    static let scenarioOption = OptionSpec(
        name: "scenario", valueName: "NAME",
        help: "mixed (default), honest, brute_force, stuffing, spraying or shared_device")
    static let usersOption = OptionSpec(name: "users", valueName: "U", help: "honest accounts (default: 1000)")
    static let devicesOption = OptionSpec(name: "devices", valueName: "D", help: "personal devices; kiosks are a tenth (default: 200)")
    static let policyOption = OptionSpec(
        name: "policy", valueName: "NAME|FILE",
        help: "the lockout the simulated app enforces: mediawiki (default), keycloak, owasp, nist, local_passcode, fail2ban, or a policy JSON file")
    static let outputOption = OptionSpec(name: "output", valueName: "FILE", help: "write to FILE instead of stdout")
    static let noFormEventsOption = OptionSpec(
        name: "no-form-events", valueName: nil,
        help: "the sign-in traffic alone: no field_edited, reset starts and failures or sign-ups (the stream before they existed)")
    static let effectivenessOption = OptionSpec(
        name: "effectiveness", valueName: nil,
        help: "print the lockout effectiveness report of every preset instead of events")

    static let spec = CommandSpec(
        name: "generate",
        summary: "write a seeded, realistic workload of honest traffic and attacks as JSONL",
        arguments: "",
        details: [
            "The same seed and options always give the same bytes. Every party asks the lockout",
            "(--policy) before an attempt and records a refused one as sign_in_throttled. The output",
            "imports with `onboard import`. Honest flows also record their form input (fields filled,",
            "never their content), password resets started and failed, and sign-ups; the sign-in",
            "traffic is the same with --no-form-events. --effectiveness replays the attacks and honest",
            "traffic under every preset (global lockout, 2 simulated days) and prints what each let through."
        ],
        options: [
            eventsOption, seedOption, scenarioOption, usersOption, devicesOption, policyOption, noFormEventsOption,
            outputOption, effectivenessOption, .json
        ],
        argumentCount: 0...0,
        run: run)

    /// Show progress on a terminal from this many events on.
    static let progressThresholdEvents = 100_000

    static func run(_ invocation: Invocation) throws(CLIError) -> Int32 {
        let seed = try parseSeed(invocation)
        if invocation.has("effectiveness") {
            for name in ["events", "scenario", "users", "devices", "policy", "output"] where invocation.values[name] != nil {
                throw .usage("onboard generate: --\(name) does not apply to --effectiveness (it replays every preset at fixed sizes)")
            }
            if invocation.has("no-form-events") {
                throw .usage("onboard generate: --no-form-events does not apply to --effectiveness (no lockout counts form events: the report is the same)")
            }
            return effectiveness(seed: seed, json: invocation.has("json"))
        }
        if invocation.has("json") { throw .usage("onboard generate: --json only applies to --effectiveness") }
        guard let count = try invocation.positiveInteger("events") else {
            throw .usage("onboard generate: --events N is required (how many events to write)")
        }
        guard WorkloadSpec.eventCountRange.contains(count) else {
            throw .usage("onboard generate: --events must be at most \(WorkloadSpec.eventCountRange.upperBound), got \(count)")
        }
        var spec = WorkloadSpec(eventCount: count, seed: seed, formEvents: !invocation.has("no-form-events"))
        if let name = invocation.values["scenario"] {
            guard let scenario = WorkloadScenario(rawValue: name) else {
                let names = WorkloadScenario.allCases.map(\.rawValue).joined(separator: ", ")
                throw .usage("onboard generate: --scenario must be one of \(names), got \"\(name)\"")
            }
            spec.scenario = scenario
        }
        if let users = try invocation.positiveInteger("users") {
            guard WorkloadSpec.userCountRange.contains(users) else {
                throw .usage("onboard generate: --users must be at most \(WorkloadSpec.userCountRange.upperBound), got \(users)")
            }
            spec.userCount = users
        }
        if let devices = try invocation.positiveInteger("devices") {
            guard WorkloadSpec.deviceCountRange.contains(devices) else {
                throw .usage("onboard generate: --devices must be at most \(WorkloadSpec.deviceCountRange.upperBound), got \(devices)")
            }
            spec.deviceCount = devices
        }
        if let policy = invocation.values["policy"] {
            spec.policy = try LockoutCommand.loadPolicy(policy, command: "generate")
        }
        return try write(spec, to: invocation.values["output"])
    }

    static func parseSeed(_ invocation: Invocation) throws(CLIError) -> UInt64 {
        guard let text = invocation.values["seed"] else { return 1 }
        guard let seed = UInt64(text) else {
            throw .usage("onboard generate: --seed needs a whole number from 0 to 18446744073709551615, got \"\(text)\"")
        }
        return seed
    }

    static func write(_ spec: WorkloadSpec, to path: String?) throws(CLIError) -> Int32 {
        var descriptor = STDOUT_FILENO
        if let path {
            descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            guard descriptor >= 0 else {
                throw CLIError(ExitCode.cannotCreate, "onboard generate: cannot create \(path): \(String(cString: strerror(errno)))")
            }
        }
        defer { if path != nil { close(descriptor) } }
        var output = Output(descriptor: descriptor)
        let showProgress = Output.standardErrorIsTerminal && spec.eventCount >= progressThresholdEvents
        let step = max(1, spec.eventCount / 100)
        var line: [UInt8] = []
        var written = 0
        for event in WorkloadGenerator(spec: spec) {
            line.removeAll(keepingCapacity: true)
            EventJSON.encode(event, seq: nil, into: &line)
            line.append(0x0A)
            output.write(bytes: line)
            written += 1
            if showProgress, written % step == 0 {
                Output.progress("onboard generate: \(written * 100 / spec.eventCount)% (\(written) of \(spec.eventCount) events)")
            }
        }
        output.flush()
        if showProgress { Output.progress(nil) }
        return ExitCode.success
    }

    static func effectiveness(seed: UInt64, json: Bool) -> Int32 {
        let parameters = LockoutEffectiveness.Parameters(seed: seed)
        let rows = LockoutEffectiveness.report(parameters)
        if json {
            printJSON(.array(rows.map(jsonValue)))
            return ExitCode.success
        }
        print("Lockout effectiveness: \(parameters.userCount) users, \(parameters.days) simulated days, seed \(seed),")
        print(
            "global lockout (user, factor); brute force 1 try/\(parameters.bruteForceIntervalMilliseconds) ms, stuffing 1/\(parameters.stuffingIntervalMilliseconds) ms, spraying 1/\(parameters.sprayingIntervalMilliseconds) ms"
        )
        let table = rows.map { row in
            [
                row.policy, format(row.bruteForceGuessesPerDay), format(row.stuffingGuessesPerAccountPerDay),
                format(row.sprayingGuessesPerAccountPerDay),
                "\(row.honestUsersLockedOut)/\(row.honestUsers) (\(format(row.honestLockedOutShare * 100))%)",
                row.medianTimeToLockMilliseconds.map(formatDuration) ?? "never", row.bruteForcePermanentlyLocked ? "yes" : "no"
            ]
        }
        print(
            Table.render(
                header: [
                    "POLICY", "BRUTE/DAY", "STUFFING/ACCT/DAY", "SPRAYING/ACCT/DAY", "HONEST LOCKED OUT",
                    "MEDIAN TIME TO LOCK", "PERMANENT"
                ], rows: table))
        return ExitCode.success
    }

    static func jsonValue(_ row: LockoutEffectiveness.Row) -> JSONValue {
        .object([
            .init("policy", .string(row.policy)),
            .init("brute_force_guesses_per_day", .number(decimal(row.bruteForceGuessesPerDay))),
            .init("stuffing_guesses_per_account_per_day", .number(decimal(row.stuffingGuessesPerAccountPerDay))),
            .init("spraying_guesses_per_account_per_day", .number(decimal(row.sprayingGuessesPerAccountPerDay))),
            .init("attack_attempts_throttled", .number(String(row.attackAttemptsThrottled))),
            .init("honest_users", .number(String(row.honestUsers))),
            .init("honest_users_locked_out", .number(String(row.honestUsersLockedOut))),
            .init("honest_locked_out_share", .number(decimal(row.honestLockedOutShare))),
            .init("median_time_to_lock_ms", row.medianTimeToLockMilliseconds.map { .number(String($0)) } ?? .null),
            .init("brute_force_permanently_locked", .bool(row.bruteForcePermanentlyLocked)),
            .init("events", .number(String(row.events)))
        ])
    }

    /// A JSON number with at most four decimals (enough for shares and rates, and stable).
    static func decimal(_ value: Double) -> String {
        let scaled = (value * 10_000).rounded()
        let whole = Int(scaled) / 10_000, fraction = abs(Int(scaled) % 10_000)
        guard fraction != 0 else { return String(whole) }
        var digits = String(fraction)
        digits = String(repeating: "0", count: 4 - digits.count) + digits
        while digits.hasSuffix("0") { digits.removeLast() }
        return "\(whole).\(digits)"
    }

    /// One decimal below 100, whole numbers above.
    static func format(_ value: Double) -> String {
        if value >= 100 { return String(Int(value.rounded())) }
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }

    static func formatDuration(_ milliseconds: Int64) -> String {
        if milliseconds < 60_000 { return "\(milliseconds / 1000) s" }
        if milliseconds < 3_600_000 { return "\(milliseconds / 60_000) min" }
        return format(Double(milliseconds) / 3_600_000) + " h"
    }
}

extension Output {
    /// Overwrites the progress line on stderr (a terminal); `nil` clears it.
    static func progress(_ text: String?) {
        var output = Output(descriptor: STDERR_FILENO)
        output.write("\r\u{1B}[K" + (text ?? ""))
        output.flush()
    }
}
