import Foundation
import OnboardingModel
import OnboardingStore

/// `onboard token`: what the sync server says of a token, and its rotation.
enum TokenCommand {
    static let rotateOption = OptionSpec(
        name: "rotate", valueName: nil,
        help: "issue a new token of the same role and device and print it (the old one stays valid until its expiry)")

    static let spec = CommandSpec(
        name: "token",
        summary: "show a sync server token's role, device and expiry, or rotate it (--rotate)",
        arguments: "",
        details: [
            "Asks the server (GET /v1/token) what the token is and when it expires. With --rotate the",
            "server issues a new token of the same role and device with a lifetime of its own",
            "(POST /v1/token); it is printed on stdout, once, and the old token keeps working until",
            "its own expiry or a revoke, so a device switches to the new one with no downtime. Tokens",
            "last 90 days unless the server says otherwise (onboard serve --token-lifetime); an",
            "expired token cannot be rotated (ask the admin: onboard enroll). The admin token is",
            "rotated on the server machine: onboard enroll --rotate-admin.",
            "Exit 69 when the server cannot be reached, 77 when the token is refused or expired."
        ],
        options: SyncCommand.connectionOptions + [rotateOption],
        argumentCount: 0...0,
        run: run)

    static func run(_ invocation: Invocation) throws(CLIError) -> Int32 {
        guard let (transport, token) = try SyncCommand.connection(invocation) else {
            throw .usage("onboard token: --server URL is required, e.g. --server http://127.0.0.1:8080")
        }
        let client = SyncTokenClient(transport: transport, token: token)
        let rotate = invocation.has("rotate")
        let outcome = runBlocking { () async throws(SyncError) -> (TokenStatus, IssuedToken?) in
            let status = try await client.status()
            return (status, rotate ? try await client.rotate() : nil)
        }
        let now = Timestamp.now
        switch outcome {
        case .failure(let error):
            throw CLIError(SyncCommand.exitCode(of: error), "onboard token: \(error.message)")
        case .success(let (status, nil)):
            print("\(describe(status)): \(expiry(status.expiresAt, now: now))")
        case .success(let (status, issued?)):
            print(issued.token)
            Output.error(
                "onboard token: issued a new \(status.role) token\(status.device.map { " of \($0)" } ?? "") (\(expiry(issued.expiresAt, now: now))); the old one (id \(status.id)) stays valid until \(status.expiresAt?.iso8601 ?? "revoked") — switch to the new one now"
            )
        }
        return ExitCode.success
    }

    /// `device token 3f2a… of kiosk-7`
    static func describe(_ status: TokenStatus) -> String {
        "\(status.role) token \(status.id)" + (status.device.map { " of \($0)" } ?? "")
    }

    /// `expires 2027-03-01T12:00:00.000Z (in 89 days)`, or `never expires`.
    static func expiry(_ time: Timestamp?, now: Timestamp) -> String {
        guard let time else { return "never expires" }
        let days = (time.millisecondsSince1970 - now.millisecondsSince1970 + 43_200_000) / 86_400_000
        return "expires \(time.iso8601) (" + (days >= 1 ? "in \(days) day\(days == 1 ? "" : "s")" : "within a day") + ")"
    }
}
