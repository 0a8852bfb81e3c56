import Foundation
import OnboardingModel
import OnboardingProjections
import OnboardingStore

/// `onboard lockout`: every key with counted failures under a policy, at a time.
enum LockoutCommand {
    static let policyOption = OptionSpec(
        name: "policy", valueName: "NAME|FILE",
        help: "mediawiki (default), keycloak, owasp, nist, local_passcode, fail2ban, or a policy JSON file")
    static let printPolicyOption = OptionSpec(
        name: "print-policy", valueName: nil,
        help: "print the policy as JSON (a starting point for a custom file) and exit")

    static let spec = CommandSpec(
        name: "lockout",
        summary: "lockout state of every key with counted failures, under a policy, at a time",
        arguments: "",
        details: [
            "Builds the lockout state from the whole log and evaluates it at --at: a lock is in force",
            "while that time is before its end. Keys are (user, device, factor); factor is password",
            "(password, passcode, biometric) or second_factor. docs/lockout.md explains the presets.",
            "JSON: [{\"user\", \"device\", \"factor\", \"failures\", \"locked_until\", \"permanent\"}]."
        ],
        options: [.store, policyOption, .at, .json, printPolicyOption],
        argumentCount: 0...0,
        run: run)

    static func run(_ invocation: Invocation) throws(CLIError) -> Int32 {
        let policy = try loadPolicy(invocation.values["policy"] ?? "mediawiki")
        if invocation.has("print-policy") {
            print(policy.json)
            return ExitCode.success
        }
        let at = try invocation.time("at") ?? Clock.now()
        let store = try OnboardTool.openStore(invocation, writable: false)
        defer { store.close() }
        let entries: [LockoutEngine.Entry]
        do {
            entries =
                policy == store.options.lockoutPolicy
                ? try store.lockoutEntries(at: at)
                : try store.rebuildState(policy: policy).lockout.entries(at: at)
        } catch {
            throw CLIError(CLIError(error).exitCode, "onboard lockout: \(error.message)")
        }
        if invocation.has("json") {
            printJSON(.array(entries.map(\.jsonValue)))
            return ExitCode.success
        }
        guard !entries.isEmpty else {
            print("no key has counted failures (policy \(policy.name), at \(at.iso8601))")
            return ExitCode.success
        }
        let rows = entries.map { entry in
            [
                entry.key.user ?? "(unknown)", entry.key.device ?? "(all)", entry.key.factor.rawValue, String(entry.failures),
                entry.permanent ? "permanently" : entry.lockedUntil.map { "until \($0.iso8601)" } ?? "no"
            ]
        }
        print("policy \(policy.name), at \(at.iso8601)")
        print(Table.render(header: ["USER", "DEVICE", "FACTOR", "FAILURES", "LOCKED"], rows: rows))
        return ExitCode.success
    }

    /// A preset by name, else a JSON file; errors name `command` and `option` (`onboard lab
    /// compare: --policies …`).
    static func loadPolicy(_ nameOrFile: String, command: String = "lockout", option: String = "--policy") throws(CLIError) -> LockoutPolicy {
        if let preset = LockoutPolicy.named(nameOrFile) { return preset }
        guard FileManager.default.fileExists(atPath: nameOrFile) else {
            let names = LockoutPolicy.presets.map(\.name).joined(separator: ", ")
            throw .usage("onboard \(command): \(option) \(nameOrFile) is neither a preset (\(names)) nor a file")
        }
        guard let data = FileManager.default.contents(atPath: nameOrFile) else {
            throw CLIError(ExitCode.noInput, "onboard \(command): cannot read policy file \(nameOrFile)")
        }
        do {
            return try LockoutPolicy.parse(json: String(decoding: data, as: UTF8.self))
        } catch {
            throw CLIError(ExitCode.dataError, "onboard \(command): policy file \(nameOrFile): \(error); see docs/lockout.md for the schema")
        }
    }
}

/// Prints one JSON value on a line.
func printJSON(_ value: JSONValue) {
    var writer = JSONWriter()
    writer.append(value)
    print(writer.text)
}

/// Plain-text tables with columns padded to their widest cell.
enum Table {
    static func render(header: [String], rows: [[String]]) -> String {
        let all = [header] + rows
        let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        return all.map { row in
            row.enumerated().map { column, cell in
                column == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[column] - cell.count)
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }
}
