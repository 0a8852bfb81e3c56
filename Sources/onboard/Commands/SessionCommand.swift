import OnboardingModel
import OnboardingProjections
import OnboardingStore

/// `onboard session`: who is signed in on a device and what its sign-in screen shows.
enum SessionCommand {
    static let spec = CommandSpec(
        name: "session",
        summary: "the signed-in user and the current screen, state and messages of a device",
        arguments: "",
        details: [
            "The screen as it shows at --at (default now): a lock whose end has passed is gone, a lock in force names the time left then.",
            "The JSON form is documented in docs/projections.md."
        ],
        options: [.store, .device, .at, .json],
        argumentCount: 0...0,
        run: run)

    static func run(_ invocation: Invocation) throws(CLIError) -> Int32 {
        let store = try OnboardTool.openStore(invocation, writable: false)
        defer { store.close() }
        let at = try invocation.time("at") ?? Clock.now()
        let session: DeviceState
        do { session = try store.deviceState(device: invocation.values["device"], at: at) } catch {
            throw CLIError(CLIError(error).exitCode, "onboard session: \(error.message)")
        }
        if invocation.has("json") {
            printJSON(session.jsonValue)
            return ExitCode.success
        }
        print(text(session, at: at))
        return ExitCode.success
    }

    /// `passcode filled (invalid), username empty`: what the app reported of the fields, never their content.
    static func fieldsText(_ fields: [FieldInput]) -> String {
        fields.map { input in
            "\(input.field.rawValue) \(input.filled ? "filled" : "empty")\(input.valid == false ? " (invalid)" : "")"
        }.joined(separator: ", ")
    }

    static func text(_ session: DeviceState, at: Timestamp) -> String {
        var lines = ["device     \(session.device)"]
        if let user = session.signedIn {
            lines.append("signed in  \(user.user) since \(user.since.iso8601) with \(user.method.rawValue)\(user.secondFactor ? " + second factor" : "")")
        } else {
            lines.append("signed in  nobody")
        }
        let flow = session.flow
        lines.append("screen     \(flow.screen.rawValue) (\(flow.state.rawValue))\(flow.user.map { " for \($0)" } ?? "")")
        for message in flow.fieldMessages {
            lines.append("  \(message.field): \(message.text) [\(message.severity.rawValue)]")
        }
        if let message = flow.systemMessage { lines.append("  \(message.text) [\(message.severity.rawValue)]") }
        if let until = flow.lockedUntil {
            let left = WaitWords.words(remainingMilliseconds: until.millisecondsSince1970 - at.millisecondsSince1970)
            lines.append("  locked until \(until.iso8601) (\(left) left at \(at.iso8601))")
        }
        if let resend = flow.resend {
            let timer = resend.isAvailable ? "resend available since \(resend.availableAt.iso8601)" : "resend from \(resend.availableAt.iso8601)"
            lines.append("  \(timer): \(resend.help)")
        }
        if !flow.fields.isEmpty { lines.append("fields     \(fieldsText(flow.fields))") }
        if let kind = flow.biometric { lines.append("biometric  \(kind.rawValue) (badge on the sign-in button)") }
        lines.append("submit     \(flow.submitEnabled ? "enabled" : "disabled")")
        if let shown = session.signInOptions { lines += optionsLines(shown) }
        return lines.joined(separator: "\n")
    }

    /// `options    apple, google, password (ios, shown 2026-11-29T16:00:00.000Z)` and one line
    /// per guideline 4.8 finding.
    static func optionsLines(_ shown: SignInOptions) -> [String] {
        let platform = shown.platform?.rawValue ?? "platform not recorded"
        var lines = ["options    \(shown.options.map(\.rawValue).joined(separator: ", ")) (\(platform), shown \(shown.shownAt.iso8601))"]
        for finding in shown.guideline48Findings { lines.append("  guideline 4.8: \(finding.problem)") }
        return lines
    }
}
