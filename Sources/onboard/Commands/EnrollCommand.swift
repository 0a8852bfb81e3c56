import Foundation
import OnboardingModel
import OnboardingServer
import OnboardingStore

/// `onboard enroll`: issue a device (or auditor) token on the server's data directory.
enum EnrollCommand {
    static let deviceOption = OptionSpec(name: "device", valueName: "ID", help: "the device to enrol (its store's device id)")
    static let auditorOption = OptionSpec(name: "auditor", valueName: nil, help: "issue an auditor token instead (reads every history)")
    static let revokeOption = OptionSpec(name: "revoke", valueName: nil, help: "revoke every token of --device instead")
    static let publicKeyOption = OptionSpec(name: "public-key", valueName: "HEX",
                                            help: "the device's signing public key (onboard verify --store on the device prints it)")

    static let spec = CommandSpec(
        name: "enroll",
        summary: "issue a device or auditor token on a sync server's storage (or revoke)",
        arguments: "",
        details: [
            "Works on the data directory directly, also while `onboard serve` runs. The token is",
            "printed once; the server keeps only its hash. Over HTTP the admin token does the same",
            "(docs/sync-protocol.md). With --public-key the device's signing key is registered:",
            "from then on every upload must carry a head signed with it, and the key cannot be",
            "replaced. With --database URL (or $ONBOARD_DATABASE_URL) on a server's PostgreSQL.",
        ],
        options: [ServeCommand.dataOption, ServerStorageChoice.databaseOption, deviceOption, auditorOption, revokeOption, publicKeyOption],
        argumentCount: 0...0,
        run: run)

    static func run(_ invocation: Invocation) throws(CLIError) -> Int32 {
        let choice = try ServerStorageChoice.resolve(invocation, command: "enroll")
        let device = invocation.values["device"]
        guard invocation.has("auditor") != (device != nil) else {
            throw .usage("onboard enroll: give either --device ID or --auditor")
        }
        if let device {
            do { try Event.validate(deviceID: device) } catch { throw .usage("onboard enroll: --device \(error.message)") }
        }
        var publicKey: SigningPublicKey?
        if let text = invocation.values["public-key"] {
            guard device != nil, !invocation.has("revoke") else { throw .usage("onboard enroll: --public-key goes with --device (and not --revoke)") }
            guard let key = SigningPublicKey(hex: text) else { throw .usage("onboard enroll: --public-key must be 64 hex digits (an Ed25519 public key)") }
            publicKey = key
        }
        guard case .data(let data) = choice else { return try enrollInDatabase(choice, device: device, publicKey: publicKey, revoke: invocation.has("revoke")) }
        let tokens: TokenStore
        do { tokens = try TokenStore(directory: (data as NSString).appendingPathComponent("server")) } catch {
            throw CLIError(ExitCode.cannotCreate, "onboard enroll: cannot open \(data): \(error)")
        }
        defer { tokens.close() }
        do {
            if invocation.has("revoke") {
                guard let device else { throw CLIError.usage("onboard enroll: --revoke needs --device") }
                let count = try tokens.revoke(device: device)
                print("revoked \(count) token\(count == 1 ? "" : "s") of \(device)")
            } else if let device {
                if let publicKey {
                    do { try tokens.register(publicKey: publicKey, device: device) } catch let mismatch as TokenStore.KeyMismatch {
                        throw CLIError(ExitCode.dataError, "onboard enroll: \(mismatch)")
                    }
                }
                let serverKey = try OnboardingStore.signingKey(at: SyncServer.signingKeyPath(dataDirectory: data)).publicKey
                print(try tokens.issue(role: .device, device: device))
                Output.error("onboard enroll: pin the server's key on the device at its first sync: onboard sync --server-key \(serverKey.hex)")
            } else {
                print(try tokens.issue(role: .auditor))
            }
        } catch let error as CLIError {
            throw error
        } catch {
            throw CLIError(ExitCode.ioError, "onboard enroll: \(error)")
        }
        return ExitCode.success
    }

    /// The same on a server's PostgreSQL (the schema is created or migrated first; no admin
    /// token is made: the server makes one at its first start).
    static func enrollInDatabase(_ choice: ServerStorageChoice, device: String?, publicKey: SigningPublicKey?, revoke: Bool) throws(CLIError) -> Int32 {
        guard case .database(let url) = choice else { preconditionFailure("enrollInDatabase takes a database") }
        let server: SyncServer
        do { server = try SyncServer(databaseURL: url, options: SyncServer.Options(), createsAdminToken: false) } catch {
            throw ServerStorageChoice.cliError(error, command: "enroll")
        }
        defer { server.close() }
        do {
            if revoke {
                guard let device else { throw CLIError.usage("onboard enroll: --revoke needs --device") }
                let count = try server.storage.revokeTokens(device: device)
                print("revoked \(count) token\(count == 1 ? "" : "s") of \(device)")
            } else if let device {
                let token: String
                do { token = try server.enroll(device: device, publicKey: publicKey) } catch let mismatch as TokenStore.KeyMismatch {
                    throw CLIError(ExitCode.dataError, "onboard enroll: \(mismatch)")
                }
                print(token)
                Output.error("onboard enroll: pin the server's key on the device at its first sync: onboard sync --server-key \(server.signingKey.publicKey.hex)")
            } else {
                print(try server.issueToken(role: .auditor))
            }
        } catch let error as CLIError {
            throw error
        } catch {
            throw ServerStorageChoice.cliError(error, command: "enroll")
        }
        return ExitCode.success
    }
}
