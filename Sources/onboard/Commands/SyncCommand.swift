import Foundation
import OnboardingModel
import OnboardingStore

/// `onboard sync`: upload everything the server has not acknowledged.
enum SyncCommand {
    static let serverOption = OptionSpec(name: "server", valueName: "URL", help: "the sync server, e.g. http://127.0.0.1:8080")
    static let tokenOption = OptionSpec(name: "token", valueName: "T", help: "this device's token (default: $ONBOARD_TOKEN)")
    static let statusOption = OptionSpec(name: "status", valueName: nil, help: "show what is pending instead of syncing")
    static let batchOption = OptionSpec(name: "batch", valueName: "N", help: "events per upload (default and maximum \(SyncLimits.maximumBatchEvents))")
    static let serverKeyOption = OptionSpec(
        name: "server-key", valueName: "HEX",
        help: "the server's public key (onboard enroll prints it); pinned in the store at the first sync")
    static let maxTimeOption = OptionSpec(
        name: "max-time", valueName: "SECONDS",
        help: "give up after this long (exit 75, what was acknowledged kept); default: no limit")
    static let caFileOption = OptionSpec(
        name: "ca-file", valueName: "PEM",
        help: "with https://: the CA the server's certificate must chain to (default: the system's CAs)")
    static let insecureHTTPOption = OptionSpec(
        name: "insecure-http", valueName: nil,
        help: "allow http:// to a host that is not loopback (the token and the log travel in clear)")
    /// The options of every command that talks to the sync server.
    static let connectionOptions = [serverOption, tokenOption, caFileOption, insecureHTTPOption]

    static let spec = CommandSpec(
        name: "sync",
        summary: "upload the events the sync server has not acknowledged, oldest first",
        arguments: "",
        details: [
            "Resumes from the server's acknowledged seq; stores the cursor after every acknowledged",
            "batch, retries with back-off, honours Retry-After (at most \(SyncLimits.maximumRetryAfterSeconds) s). Each request has a",
            "deadline of 30 s, connecting and the whole answer included; a request is tried at most",
            "\(SyncLimits.maximumAttempts) times, so a run that stops making progress ends within minutes (docs/sync-protocol.md).",
            "Redirects are never followed and the token goes only to --server. The server's forget",
            "requests are carried out only when signed with the pinned server key (--server-key).",
            "A progress bar on a terminal, a summary at the end.",
            "Exit 69 when the server cannot be reached, 65 when it refuses the log (a fork or a broken",
            "chain), 75 when --max-time passed, 76 when the server breaks the protocol (nothing of that",
            "answer is acted on), 77 when the token is refused or the server key is not the pinned one,",
            "78 when the server answers with a redirect.",
            "https:// is verified against the system's CAs, or --ca-file's; http:// is refused for any",
            "host but loopback (127.0.0.0/8, ::1, localhost) unless --insecure-http is given."
        ],
        options: [.store] + connectionOptions + [statusOption, batchOption, serverKeyOption, maxTimeOption],
        argumentCount: 0...0,
        run: run)

    static func run(_ invocation: Invocation) throws(CLIError) -> Int32 {
        let batch = try invocation.positiveInteger("batch") ?? SyncLimits.maximumBatchEvents
        guard batch <= SyncLimits.maximumBatchEvents else {
            throw .usage("onboard sync: --batch must be at most \(SyncLimits.maximumBatchEvents)")
        }
        if invocation.has("status") {
            let store = try OnboardTool.openStore(invocation, writable: false)
            defer { store.close() }
            do {
                let head = try store.head().seq
                let cursor = try store.syncCursor()
                print("device \(store.deviceID): head seq \(head), acknowledged by the server up to seq \(cursor), \(head - min(cursor, head)) pending")
            } catch {
                throw CLIError(CLIError(error).exitCode, "onboard sync: \(error.message)")
            }
            return ExitCode.success
        }
        guard let (transport, token) = try connection(invocation) else {
            throw .usage("onboard sync: --server URL is required, e.g. --server http://127.0.0.1:8080")
        }
        var serverKey: SigningPublicKey?
        if let text = invocation.values["server-key"] {
            guard let key = SigningPublicKey(hex: text) else {
                throw .usage("onboard sync: --server-key must be 64 hex digits (the key onboard enroll and onboard serve print)")
            }
            serverKey = key
        }
        let maxTime = try invocation.positiveInteger("max-time")
        let store = try OnboardTool.openStore(invocation, writable: true)
        defer { store.close() }
        let client = SyncClient(store: store, transport: transport, token: token, batchEvents: batch, serverKey: serverKey)
        let showProgress = Output.standardErrorIsTerminal
        let started = Date()
        let outcome = runBlocking { () async throws(SyncError) -> SyncSummary in
            try await client.run(timeLimit: maxTime.map { .seconds($0) }) { progress in
                guard showProgress, progress.headSeq > 0 else { return }
                FileHandle.standardError.write(Data(bar(progress).utf8))
            }
        }
        if showProgress { FileHandle.standardError.write(Data("\n".utf8)) }
        let seconds = max(Date().timeIntervalSince(started), 0.001)
        switch outcome {
        case .success(let summary):
            let rate = Int(Double(summary.appended + summary.duplicates) / seconds)
            print(
                "synced \(store.deviceID): \(summary.appended) appended, \(summary.duplicates) already on the server, \(summary.batches) batches, \(summary.retries) retries; the server holds seq \(summary.acknowledgedSeq) (\(rate) events/s)"
            )
            for pseudonym in summary.forgottenOnRequest {
                print(
                    "forgot \(pseudonym) as the server asked (user_forgotten recorded and uploaded); run onboard forget-user \(pseudonym) later to compact the store file"
                )
            }
            for failure in summary.forgetFailures {
                Output.error("onboard sync: the server asked to forget \(failure)")
            }
            if summary.unknownForgetRequests > 0 {
                Output.error("onboard sync: the server asked to forget \(summary.unknownForgetRequests) users this store never held; ignored")
            }
            if let refused = summary.forgetRequestsRefused {
                Output.error("onboard sync: warning: \(refused)")
            }
            return ExitCode.success
        case .failure(let error):
            throw CLIError(exitCode(of: error), "onboard sync: \(error.message)")
        }
    }

    /// The transport to `--server` and the device token (`--token` or `$ONBOARD_TOKEN`), for the
    /// commands that talk to the sync server (`sync`, `prune`); nil without `--server`.
    static func connection(_ invocation: Invocation) throws(CLIError) -> (any SyncTransport, String)? {
        let command = invocation.command.name
        guard let text = invocation.values["server"] else { return nil }
        guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https" else {
            throw .usage("onboard \(command): --server \"\(text)\" is not an http:// or https:// address, e.g. --server http://127.0.0.1:8080")
        }
        guard let token = invocation.values["token"] ?? invocation.environment["ONBOARD_TOKEN"], !token.isEmpty else {
            throw .usage("onboard \(command): a token is required: --token T or $ONBOARD_TOKEN (from onboard enroll)")
        }
        let caFile = invocation.values["ca-file"]
        if url.scheme == "http" {
            if caFile != nil { throw .usage("onboard \(command): --ca-file goes with an https:// server; \(text) is plain http://") }
            // The token and every event would cross the network in clear: only the machine itself
            // is trusted with that unless the user says otherwise.
            guard isLoopback(url.host ?? "") || invocation.has("insecure-http") else {
                throw .usage(
                    "onboard \(command): refusing to send the token over plain http:// to \(url.host ?? "?"), which is not this machine; use https://, or pass --insecure-http on a network you trust"
                )
            }
        }
        do { return (try SyncTransports.make(baseURL: url, caFile: caFile), token) } catch {
            throw .usage("onboard \(command): --server: \(error.message)")
        }
    }

    /// Whether `host` (as a URL gives it) is this machine: `localhost`, 127.0.0.0/8 or ::1.
    static func isLoopback(_ host: String) -> Bool {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if bare.lowercased() == "localhost" { return true }
        var v4 = in_addr()
        if inet_pton(AF_INET, bare, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, bare, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } == [UInt8](repeating: 0, count: 15) + [1] }
        return false
    }

    /// The documented exit status of a failed run (README, "Exit statuses").
    static func exitCode(of error: SyncError) -> Int32 {
        // Exhaustive: a new code needs its own decision (docs/sync-protocol.md § Errors in an app).
        switch error.code {
        case .fork, .chainBroken, .historyRewritten, .badSignature, .serverAhead, .refused: ExitCode.dataError
        case .unauthorized, .tokenExpired, .forbidden, .serverKeyMismatch: ExitCode.noPermission
        case .badResponse: ExitCode.protocolError
        case .redirected: ExitCode.config
        case .timeLimit: ExitCode.tempFail
        case .store: ExitCode.ioError
        case .unavailable, .busy: ExitCode.unavailable
        }
    }

    /// `sync [██████░░░░]  61%  61,000/100,000 events`
    static func bar(_ progress: SyncProgress) -> String {
        let fraction = Double(progress.acknowledgedSeq) / Double(max(progress.headSeq, 1))
        let filled = Int(fraction * 30)
        return "\rsync [" + String(repeating: "█", count: filled) + String(repeating: "░", count: 30 - filled) + "] "
            + String(format: "%3d%%  %d/%d events", Int(fraction * 100), progress.acknowledgedSeq, progress.headSeq)
    }
}
