import OnboardingModel
import OnboardingProjections
import OnboardingStore

/// `onboard users`: the shared device's "Switch or Add User" list.
enum UsersCommand {
    static let searchOption = OptionSpec(
        name: "search", valueName: "TEXT",
        help: "only users whose name or subtitle contains TEXT (case and accents ignored)")

    static let spec = CommandSpec(
        name: "users",
        summary: "the users onboarded on a device, the selected one first, with lock state",
        arguments: "",
        details: ["Sections \"Selected\" and \"All\", as the Switch or Add User screen shows them."],
        options: [.store, .device, searchOption, .at, .json],
        argumentCount: 0...0,
        run: run)

    static func run(_ invocation: Invocation) throws(CLIError) -> Int32 {
        let at = try invocation.time("at") ?? Clock.now()
        let store = try OnboardTool.openStore(invocation, writable: false)
        defer { store.close() }
        let view: UsersView
        do { view = try store.users(device: invocation.values["device"], at: at, search: invocation.values["search"]) } catch {
            throw CLIError(CLIError(error).exitCode, "onboard users: \(error.message)")
        }
        if invocation.has("json") {
            printJSON(view.jsonValue)
            return ExitCode.success
        }
        var output: [String] = []
        for section in view.sections {
            output.append("\(section.title):")
            if section.rows.isEmpty { output.append("  (none)") }
            let rows = section.rows.map { row in
                [
                    row.isSelected ? "▸" : " ", row.profile.imageRef == nil ? "(\(row.profile.initials))" : "[image]",
                    row.profile.displayName, row.profile.subtitle ?? "", row.profile.id,
                    row.lockout.isAllowed ? "" : (row.lockout.message ?? "locked")
                ]
            }
            if !rows.isEmpty {
                output.append(
                    Table.render(header: ["", "", "NAME", "SUBTITLE", "ID", "LOCK"], rows: rows)
                        .split(separator: "\n").dropFirst().map { "  " + $0 }.joined(separator: "\n"))
            }
        }
        print(output.joined(separator: "\n"))
        return ExitCode.success
    }
}
