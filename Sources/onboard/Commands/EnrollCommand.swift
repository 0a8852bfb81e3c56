import Foundation
import OnboardingModel
import OnboardingServer
import OnboardingStore

/// `onboard enroll`: issue a device (or auditor) token on the server's data directory.
enum EnrollCommand {
    static let deviceOption = OptionSpec(name: "device", valueName: "ID", help: "the device to enrol (its store's device id)")
    static let auditorOption = OptionSpec(name: "auditor", valueName: nil, help: "issue an auditor token instead (reads every history)")
    static let revokeOption = OptionSpec(name: "revoke", valueName: nil, help: "revoke every token of --device (or with --auditor every auditor token) instead")
    static let publicKeyOption = OptionSpec(
        name: "public-key", valueName: "HEX",
        help: "the device's signing public key (onboard verify --store on the device prints it)")
    static let rotateAdminOption = OptionSpec(
        name: "rotate-admin", valueName: nil,
        help: "replace the admin token: the new one goes to its file (mode 0600), the old one stops working at once")
    static let adminTokenFileOption = OptionSpec(
        name: "admin-token-file", valueName: "PATH",
        help: "with --rotate-admin and --database: where the new admin token goes (mode 0600; default ./onboard-admin.token)")

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
            "Device and auditor tokens expire after --token-lifetime (90 days by default); the expiry",
            "is printed on stderr. --rotate-admin replaces the admin token in one transaction: the new",
            "token is written only to DATA/admin.token (or --admin-token-file with --database), mode",
            "0600, never to stdout; the old one is refused from then on, by every running server."
        ],
        options: [
            ServeCommand.dataOption, ServerStorageChoice.databaseOption, deviceOption, auditorOption, revokeOption, publicKeyOption,
            ServeCommand.tokenLifetimeOption, rotateAdminOption, adminTokenFileOption
        ],
        argumentCount: 0...0,
        run: run)

    static func run(_ invocation: Invocation) throws(CLIError) -> Int32 {
        let choice = try ServerStorageChoice.resolve(invocation, command: "enroll")
        if invocation.has("rotate-admin") { return try rotateAdmin(invocation, choice: choice) }
        if invocation.values["admin-token-file"] != nil { throw .usage("onboard enroll: --admin-token-file goes with --rotate-admin") }
        let lifetime = try ServeCommand.tokenLifetime(invocation, command: "enroll")
        if invocation.values["token-lifetime"] != nil, invocation.has("revoke") {
            throw .usage("onboard enroll: --token-lifetime goes with issuing a token, not --revoke")
        }
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
        guard case .data(let data) = choice else {
            return try enrollInDatabase(choice, device: device, publicKey: publicKey, revoke: invocation.has("revoke"), lifetime: lifetime)
        }
        let expiresAt = TokenLifetime.expiry(issuedAt: Timestamp.now, lifetimeMilliseconds: lifetime)
        let tokens: TokenStore
        do { tokens = try TokenStore(directory: (data as NSString).appendingPathComponent("server")) } catch {
            throw CLIError(ExitCode.cannotCreate, "onboard enroll: cannot open \(data): \(error)")
        }
        defer { tokens.close() }
        do {
            if invocation.has("revoke") {
                let count = try device.map { try tokens.revoke(device: $0) } ?? tokens.revokeAuditors()
                print("revoked \(count) token\(count == 1 ? "" : "s") of \(device ?? "the auditors")")
            } else if let device {
                if let publicKey {
                    do { try tokens.register(publicKey: publicKey, device: device) } catch let mismatch as TokenStore.KeyMismatch {
                        throw CLIError(ExitCode.dataError, "onboard enroll: \(mismatch)")
                    }
                }
                let serverKey = try OnboardingStore.signingKey(at: SyncServer.signingKeyPath(dataDirectory: data)).publicKey
                print(try tokens.issue(role: .device, device: device, expiresAt: expiresAt))
                Output.error("onboard enroll: pin the server's key on the device at its first sync: onboard sync --server-key \(serverKey.hex)")
                noteExpiry(expiresAt)
            } else {
                print(try tokens.issue(role: .auditor, expiresAt: expiresAt))
                noteExpiry(expiresAt)
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
    static func enrollInDatabase(
        _ choice: ServerStorageChoice, device: String?, publicKey: SigningPublicKey?, revoke: Bool,
        lifetime: Int64?
    ) throws(CLIError) -> Int32 {
        guard case .database(let url) = choice else { preconditionFailure("enrollInDatabase takes a database") }
        let server: SyncServer
        var options = SyncServer.Options()
        options.tokenLifetimeMilliseconds = lifetime
        do { server = try SyncServer(databaseURL: url, options: options, createsAdminToken: false) } catch {
            throw ServerStorageChoice.cliError(error, command: "enroll")
        }
        defer { server.close() }
        do {
            if revoke {
                let count = try device.map { try server.storage.revokeTokens(device: $0) } ?? server.storage.revokeAuditorTokens()
                print("revoked \(count) token\(count == 1 ? "" : "s") of \(device ?? "the auditors")")
            } else if let device {
                let token: String
                do { token = try server.enroll(device: device, publicKey: publicKey) } catch let mismatch as TokenStore.KeyMismatch {
                    throw CLIError(ExitCode.dataError, "onboard enroll: \(mismatch)")
                }
                print(token)
                Output.error(
                    "onboard enroll: pin the server's key on the device at its first sync: onboard sync --server-key \(server.signingKey.publicKey.hex)")
                noteExpiry(server.expiry(of: .device))
            } else {
                print(try server.issueToken(role: .auditor))
                noteExpiry(server.expiry(of: .auditor))
            }
        } catch let error as CLIError {
            throw error
        } catch {
            throw ServerStorageChoice.cliError(error, command: "enroll")
        }
        return ExitCode.success
    }

    /// The expiry of the token just printed, on stderr.
    static func noteExpiry(_ expiresAt: Timestamp?) {
        Output.error(
            "onboard enroll: the token " + (expiresAt.map { "expires at \($0.iso8601); rotate it before then (onboard token --rotate)" } ?? "never expires"))
    }

    /// Writing the scratch file of `--rotate-admin` failed.
    struct ScratchFailure: Error { let message: String }

    /// `--rotate-admin`: a new admin token into its file, the old ones revoked in the same commit.
    static func rotateAdmin(_ invocation: Invocation, choice: ServerStorageChoice) throws(CLIError) -> Int32 {
        let others = ["device", "auditor", "revoke", "public-key", "token-lifetime"].filter { invocation.values[$0] != nil || invocation.has($0) }
        guard others.isEmpty else {
            throw .usage("onboard enroll: --rotate-admin takes no --\(others[0]) (the admin token neither expires nor names a device)")
        }
        let file: String
        switch choice {
        case .data(let data):
            if invocation.values["admin-token-file"] != nil {
                throw .usage("onboard enroll: --admin-token-file goes with --database (with --data the admin token is in DATA/admin.token)")
            }
            guard FileManager.default.fileExists(atPath: (data as NSString).appendingPathComponent("server")) else {
                throw CLIError(ExitCode.noInput, "onboard enroll: \(data) holds no sync server (no server/ directory); pass the --data of onboard serve")
            }
            file = (data as NSString).appendingPathComponent("admin.token")
        case .database:
            file = invocation.values["admin-token-file"] ?? "./onboard-admin.token"
        }
        // The new token goes to a scratch file (mode 0600, fsynced) inside the transaction, before
        // its commit; the rename over the old file follows the commit. A failure before the commit
        // changes nothing; the only window is the rename, whose failure names the scratch file.
        let scratch = file + ".new"
        unlink(scratch)
        let write = { (token: String) throws -> Void in
            let descriptor = open(scratch, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else { throw ScratchFailure(message: "cannot create \(scratch) (\(String(cString: strerror(errno))))") }
            let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
            do {
                try handle.write(contentsOf: Data((token + "\n").utf8))
                try handle.synchronize()
            } catch {
                throw ScratchFailure(message: "cannot write \(scratch) (\(error.localizedDescription))")
            }
        }
        let rotated: (token: String, revoked: Int)
        do {
            switch choice {
            case .data(let data):
                let tokens = try TokenStore(directory: (data as NSString).appendingPathComponent("server"))
                defer { tokens.close() }
                rotated = try tokens.rotateAdmin(beforeCommit: write)
            case .database(let url):
                let server = try SyncServer(databaseURL: url, options: SyncServer.Options(), createsAdminToken: false)
                defer { server.close() }
                rotated = try server.rotateAdminToken(beforeCommit: write)
            }
        } catch let failure as ScratchFailure {
            unlink(scratch)
            throw CLIError(ExitCode.cannotCreate, "onboard enroll: \(failure.message) for the new admin token; nothing was rotated")
        } catch {
            unlink(scratch)
            throw ServerStorageChoice.cliError(error, command: "enroll")
        }
        guard rename(scratch, file) == 0 else {
            throw CLIError(
                ExitCode.ioError,
                "onboard enroll: the admin token was rotated, but \(scratch) could not be renamed to \(file) (\(String(cString: strerror(errno)))); the new token is in \(scratch) — move it there by hand"
            )
        }
        Output.error(
            "onboard enroll: rotated the admin token: the new one is in \(file) (mode 0600); \(rotated.revoked) old admin token\(rotated.revoked == 1 ? "" : "s") revoked"
        )
        return ExitCode.success
    }
}
