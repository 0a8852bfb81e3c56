import Foundation
import HTTPServer
import OnboardingServer
import OnboardingStore

#if canImport(Glibc)
    import Glibc
#endif

/// `onboard serve`: the reference sync server.
enum ServeCommand {
    static let portOption = OptionSpec(name: "port", valueName: "N", help: "TCP port (default 8080; 0 picks a free one and prints it)")
    static let dataOption = OptionSpec(name: "data", valueName: "PATH", help: "the server's data directory (default ./onboard-server)")
    static let hostOption = OptionSpec(name: "host", valueName: "ADDRESS", help: "IPv4 address to listen on (default 127.0.0.1)")
    static let skewOption = OptionSpec(
        name: "max-clock-skew", valueName: "SECONDS",
        help: "refuse uploads holding events dated more than this after the server's clock (default 300)")
    /// A day: more would let any device lock users out for that long (docs/sync-protocol.md § Event times).
    static let maximumClockSkewSeconds = 86_400
    static let openReplicasOption = OptionSpec(
        name: "max-open-replicas", valueName: "N",
        help: "device replicas kept open at once (default: a quarter of the open-file limit / 3, at most 1024)")
    /// A million replicas would need three million descriptors: more than Linux lets a process have.
    static let maximumOpenReplicas = 1_000_000
    static let adminTokenFileOption = OptionSpec(
        name: "admin-token-file", valueName: "PATH",
        help: "with --database: where the first start writes the admin token (mode 0600; default ./onboard-admin.token)")
    static let tlsCertificateOption = OptionSpec(
        name: "tls-cert", valueName: "PEM",
        help: "serve HTTPS with this certificate chain (the server's first); needs --tls-key")
    static let tlsKeyOption = OptionSpec(name: "tls-key", valueName: "PEM", help: "the certificate's private key (unencrypted PEM)")
    static let ratePerTokenOption = OptionSpec(
        name: "rate-per-token", valueName: "R[/B]",
        help: "requests per second (and at once) one token may send, or off (default \(SyncServer.RateLimits.defaultPerToken))")
    static let rateFailedAuthOption = OptionSpec(
        name: "rate-failed-auth", valueName: "R[/B]",
        help: "requests with a missing or bad token one address may send, or off (default \(SyncServer.RateLimits.defaultFailedAuthenticationPerAddress))")
    static let rateAnonymousOption = OptionSpec(
        name: "rate-anonymous", valueName: "R[/B]",
        help:
            "requests needing no token (health, the console's files) one address may send, or off (default \(SyncServer.RateLimits.defaultAnonymousPerAddress))"
    )
    static let logFormatOption = OptionSpec(
        name: "log-format", valueName: "text|json",
        help: "stderr as text lines (default) or one JSON object per line")
    static let tokenLifetimeOption = OptionSpec(
        name: "token-lifetime", valueName: "DURATION",
        help: "how long the device and auditor tokens issued live: Nd, Nh, Nm, Ns or off (default \(TokenLifetime.describe(TokenLifetime.defaultMilliseconds)))"
    )
    static let trustedProxyOption = OptionSpec(
        name: "trusted-proxy", valueName: "ADDRESS[,ADDRESS…]",
        help: "reverse proxies whose X-Forwarded-For names the client (for the rate limits), held to no per-address connection limit")
    static let perAddressOption = OptionSpec(
        name: "connections-per-address", valueName: "N",
        help:
            "connections one client address may hold at once (default \(HTTPServer.Limits.defaultPerAddressConnectionLimit); behind a reverse proxy, the connection limit)"
    )

    static let spec = CommandSpec(
        name: "serve",
        summary: "run the sync server (HTTP on libmicrohttpd, storage on LMDB or PostgreSQL)",
        arguments: "",
        details: [
            "Receives device logs (docs/sync-protocol.md), stores each device's log exactly, durable",
            "before acknowledging, keeps a lockout across devices and answers auditors. On first start",
            "it creates an admin token in DATA/admin.token. One access-log line per request on stderr",
            "(no tokens, bodies or queries; user ids as keyed pseudonyms, key in DATA/log.key; control",
            "characters escaped). Raises its open-file limit to the hard limit and sizes the connection",
            "limit to it; refuses to start when too few descriptors are left. SIGINT or SIGTERM: finish",
            "in-flight requests, close, exit 0. Limits: docs/sync-protocol.md.",
            "With --database URL (or $ONBOARD_DATABASE_URL) everything is kept in PostgreSQL instead",
            "(docs/server-storage.md): the schema is created or migrated at start, any number of",
            "servers may share the database, the admin token of a first start goes to",
            "--admin-token-file. Exit 64 for a URL that cannot be used, 69 for a database that",
            "cannot be reached or that a newer onboard migrated.",
            "With --tls-cert and --tls-key it serves HTTPS only (TLS 1.2 or 1.3); SIGHUP reads both",
            "files again and presents the new certificate from the next handshake on, dropping no",
            "connection (a file that cannot be used is logged and the old certificate kept).",
            "Rate limits (token buckets, docs/sync-protocol.md § Rate limits): per token, and per client",
            "address for failed authentications and for requests that need no token; over one, 429",
            "with Retry-After. R[/B] is the rate per second and the burst (twice the rate by default).",
            "--log-format json writes every stderr line as a JSON object: access lines {\"at\",\"kind\":",
            "\"access\",\"method\",\"path\",\"status\",\"bytes\",\"duration_ms\"}, the rest {\"at\",\"kind\",\"message\"}.",
            "Every option can also come from $ONBOARD_SERVE_<OPTION> (TLS_CERT for --tls-cert) or from",
            "--config FILE ($ONBOARD_SERVE_CONFIG): name = value lines; the command line wins, then the",
            "environment, then the file. --check-config checks it all, prints it and exits."
        ],
        options: [
            portOption, dataOption, ServerStorageChoice.databaseOption, adminTokenFileOption, hostOption, skewOption,
            perAddressOption, openReplicasOption, tlsCertificateOption, tlsKeyOption, ratePerTokenOption, rateFailedAuthOption,
            rateAnonymousOption, tokenLifetimeOption, trustedProxyOption, logFormatOption, ServeConfiguration.configOption, ServeConfiguration.checkOption
        ],
        argumentCount: 0...0,
        run: run)

    static func dataDirectory(_ invocation: Invocation) -> String { invocation.values["data"] ?? "./onboard-server" }

    static func run(_ given: Invocation) throws(CLIError) -> Int32 {
        let (invocation, sources) = try ServeConfiguration.merge(given, options: spec.options)
        let port: UInt16
        if let text = invocation.values["port"] {
            guard let value = UInt16(text) else { throw .usage("onboard serve: --port must be 0…65535, got \"\(text)\"") }
            port = value
        } else {
            port = 8080
        }
        var limits = SyncHTTPHandler.limits
        if let perAddress = try invocation.positiveInteger("connections-per-address") {
            guard perAddress <= limits.connectionLimit else {
                throw .usage("onboard serve: --connections-per-address must be at most the connection limit, \(limits.connectionLimit); got \(perAddress)")
            }
            limits.perAddressConnectionLimit = perAddress
        }
        var trustedProxies: Set<String> = []
        if let text = invocation.values["trusted-proxy"] {
            switch TrustedProxies.parse(text) {
            case .failure(let invalid):
                throw .usage(
                    "onboard serve: --trusted-proxy takes IP addresses separated by commas (the proxy's address as this server sees it, e.g. 127.0.0.1); \(ErrorEcho.quoted(invalid.text)) is not one"
                )
            case .success(let addresses):
                trustedProxies = addresses
                limits.addressesWithoutPerAddressLimit = Set(addresses.compactMap(TrustedProxies.ipv4))
            }
        }
        let log: ServeLog
        switch invocation.values["log-format"] ?? "text" {
        case "text": log = ServeLog(json: false)
        case "json": log = ServeLog(json: true)
        case let other: throw .usage("onboard serve: --log-format must be text or json, got \"\(other)\"")
        }
        var tls: TLSConfiguration?
        switch (invocation.values["tls-cert"], invocation.values["tls-key"]) {
        case (nil, nil): tls = nil
        case (let certificate?, let key?): tls = TLSConfiguration(certificateFile: certificate, keyFile: key)
        case (nil, _?): throw .usage("onboard serve: --tls-key needs --tls-cert, the certificate it belongs to")
        case (_?, nil): throw .usage("onboard serve: --tls-cert needs --tls-key, the certificate's private key")
        }
        let choice = try ServerStorageChoice.resolve(invocation, command: "serve")
        if invocation.values["admin-token-file"] != nil, case .data = choice {
            throw .usage("onboard serve: --admin-token-file goes with --database (with --data the admin token is in DATA/admin.token)")
        }
        var options = try serverOptions(invocation)
        if invocation.has("check-config") {
            return try checkConfiguration(invocation, sources: sources, tls: tls, choice: choice)
        }
        // Before any file is opened: every connection and every replica is a descriptor, and the
        // usual soft limit (1,024) is far below the usual hard one.
        let descriptorLimit = HTTPServer.raiseFileDescriptorLimit()
        // Block the stop signals before any thread starts, so every thread inherits the mask and
        // only `sigwait` below receives them.
        var stopSignals = sigset_t()
        sigemptyset(&stopSignals)
        sigaddset(&stopSignals, SIGINT)
        sigaddset(&stopSignals, SIGTERM)
        sigaddset(&stopSignals, SIGHUP)
        pthread_sigmask(SIG_BLOCK, &stopSignals, nil)

        options.failureLog = { line in log.write("failure", line) }
        // Replicas and connections share the descriptors: by default a quarter for open replicas
        // (three each, never more than the default bound), kept out of the connection budget
        // together with the server's other files, so that neither can starve the other.
        let perReplica = SyncServer.Options.descriptorsPerReplica
        var overcommitted = false
        if let asked = try invocation.positiveInteger("max-open-replicas") {
            guard asked <= maximumOpenReplicas else {
                throw .usage("onboard serve: --max-open-replicas must be from 1 to \(maximumOpenReplicas), got \(asked)")
            }
            options.maximumOpenReplicas = asked
            // Taken as asked, but never allowed to leave the connections less than half.
            overcommitted = descriptorLimit > 0 && asked * perReplica + 64 > descriptorLimit / 2
        } else if descriptorLimit > 0 {
            options.maximumOpenReplicas = min(options.maximumOpenReplicas, max(1, descriptorLimit / 4 / perReplica))
        }
        let replicaDescriptors = options.maximumOpenReplicas * perReplica + 64
        limits.reservedFileDescriptors = max(
            limits.reservedFileDescriptors,
            overcommitted ? descriptorLimit / 2 : replicaDescriptors)
        if overcommitted {
            log.write(
                "warning",
                "onboard serve: warning: --max-open-replicas \(options.maximumOpenReplicas) needs about \(replicaDescriptors) file descriptors, more than half the open-file limit (\(descriptorLimit)); when they run out, requests get 503 — raise ulimit -n or lower --max-open-replicas"
            )
        }
        let server: SyncServer
        switch choice {
        case .data(let data):
            do { server = try SyncServer(dataDirectory: data, options: options) } catch {
                throw CLIError(ExitCode.cannotCreate, "onboard serve: cannot open data directory \(data): \(error)")
            }
        case .database(let url):
            do { server = try SyncServer(databaseURL: url, options: options) } catch {
                throw ServerStorageChoice.cliError(error, command: "serve")
            }
        }
        let accessLog: SyncServer.AccessLog
        do { accessLog = try server.makeAccessLog() } catch {
            server.close()
            throw CLIError(ExitCode.cannotCreate, "onboard serve: \(error)")
        }
        // The token itself goes only into its file (mode 0600), never to stdout or a log: those
        // may be a terminal's scrollback or a service's journal, which outlive and outreach it.
        var adminTokenNote: String?
        if let admin = server.createdAdminToken {
            switch choice {
            case .data(let data):
                adminTokenNote = "onboard serve: created the admin token in \(data)/admin.token (mode 0600)"
            case .database:
                let file = invocation.values["admin-token-file"] ?? "./onboard-admin.token"
                guard writeSecret(admin, to: file) else {
                    server.close()
                    throw CLIError(
                        ExitCode.cannotCreate,
                        "onboard serve: cannot create \(file) for the new admin token (it exists, or the directory is not writable); pass --admin-token-file PATH and restart — the database keeps the token's hash only, so issue another with onboard enroll --database"
                    )
                }
                adminTokenNote = "onboard serve: created the admin token in \(file) (mode 0600)"
            }
        }
        let http = HTTPServer(
            host: invocation.values["host"] ?? "127.0.0.1", port: port, limits: limits,
            handler: SyncHTTPHandler(server: server, trustedProxies: trustedProxies),
            accessLog: { entry in log.access(entry, accessLog) },
            warningLog: { warning in log.write("warning", "onboard serve: warning: \(warning)") }, responseHeaders: SyncHTTPHandler.responseHeaders,
            tls: tls)
        server.observe(http)
        do { try http.start() } catch {
            server.close()
            throw CLIError(error == HTTPServerError.invalidTLS ? ExitCode.config : ExitCode.unavailable, "onboard serve: \(error)")
        }
        var banner = Output.standardOutput()
        let scheme = tls == nil ? "http" : "https"
        switch choice {
        case .data(let data): banner.line("onboard serve: listening on \(scheme)://\(http.host):\(http.port), data in \(data)")
        case .database: banner.line("onboard serve: listening on \(scheme)://\(http.host):\(http.port), data in PostgreSQL at \(choice.displayName)")
        }
        if let certificate = http.certificate {
            banner.line("onboard serve: TLS certificate SHA-256 \(certificate.fingerprintText), expires \(Timestamp(certificate.expiresAt).iso8601)")
        }
        banner.line("onboard serve: server key \(server.signingKey.publicKey.hex) (devices pin it: onboard sync --server-key)")
        banner.line(
            "onboard serve: up to \(http.connectionLimit) connections, \(limits.perAddressConnectionLimit) per address, \(options.maximumOpenReplicas) open replicas (open-file limit \(descriptorLimit))"
        )
        if let adminTokenNote { banner.line(adminTokenNote) }
        for problem in server.unreadableReplicas {
            banner.line(
                "onboard serve: warning: the replica of \(problem); its records after the damage are left out of the cross-device views — run onboard audit --data \(choice.displayName)"
            )
        }
        banner.flush()
        var received: Int32 = 0
        while true {
            sigwait(&stopSignals, &received)
            guard received == SIGHUP else { break }
            reloadCertificate(http, log: log)
        }
        log.write("notice", "onboard serve: \(received == SIGINT ? "SIGINT" : "SIGTERM"): finishing in-flight requests")
        server.beginShutdown()
        http.stop()
        server.close()
        log.write("notice", "onboard serve: stopped cleanly")
        return ExitCode.success
    }

    /// The server's options that come straight from the command line (no side effects: shared
    /// with `--check-config`).
    static func serverOptions(_ invocation: Invocation) throws(CLIError) -> SyncServer.Options {
        var options = SyncServer.Options()
        if let text = invocation.values["max-clock-skew"] {
            guard let seconds = Int(text), (0...maximumClockSkewSeconds).contains(seconds) else {
                throw .usage("onboard serve: --max-clock-skew must be a whole number of seconds from 0 to \(maximumClockSkewSeconds), got \"\(text)\"")
            }
            options.maximumClockSkewMilliseconds = Int64(seconds) * 1000
        }
        options.rateLimits.perToken = try rate(invocation, "rate-per-token", default: options.rateLimits.perToken)
        options.rateLimits.failedAuthenticationPerAddress = try rate(
            invocation, "rate-failed-auth",
            default: options.rateLimits.failedAuthenticationPerAddress)
        options.rateLimits.anonymousPerAddress = try rate(invocation, "rate-anonymous", default: options.rateLimits.anonymousPerAddress)
        options.tokenLifetimeMilliseconds = try tokenLifetime(invocation, command: "serve")
        if let asked = try invocation.positiveInteger("max-open-replicas"), asked > maximumOpenReplicas {
            throw .usage("onboard serve: --max-open-replicas must be from 1 to \(maximumOpenReplicas), got \(asked)")
        }
        options.productVersion = OnboardTool.version
        return options
    }

    /// `--token-lifetime` as given, or the default (90 days).
    static func tokenLifetime(_ invocation: Invocation, command: String) throws(CLIError) -> Int64? {
        guard let text = invocation.values["token-lifetime"] else { return TokenLifetime.defaultMilliseconds }
        guard let lifetime = TokenLifetime.parse(text) else {
            throw .usage(
                "onboard \(command): --token-lifetime must be a positive whole number of days, hours, minutes or seconds (90d, 12h, 30m, 45s; at most 3650d) or off, got \(ErrorEcho.quoted(text))"
            )
        }
        return lifetime
    }

    /// `--check-config`: the TLS files read and checked, then every setting in force printed
    /// with where it came from (a database URL without its password); nothing is served.
    static func checkConfiguration(
        _ invocation: Invocation, sources: [String: ServeConfiguration.Source], tls: TLSConfiguration?,
        choice: ServerStorageChoice
    ) throws(CLIError) -> Int32 {
        var out = Output.standardOutput()
        if let tls {
            do {
                let certificate = try HTTPServer.checkCertificate(tls)
                out.line("onboard serve: TLS certificate SHA-256 \(certificate.fingerprintText), expires \(Timestamp(certificate.expiresAt).iso8601)")
            } catch {
                throw CLIError(ExitCode.config, "onboard serve: \(error)")
            }
        }
        for option in spec.options where option.valueName != nil {
            guard let value = invocation.values[option.name] else { continue }
            let shown = option.name == ServerStorageChoice.databaseOption.name ? choice.displayName : value
            out.line("  \(option.name) = \(shown)  (\(sources[option.name]?.rawValue ?? "command line"))")
        }
        out.line("onboard serve: the configuration is good (storage: \(choice.displayName))")
        out.flush()
        return ExitCode.success
    }

    /// A rate option: `off`, or `RATE[/BURST]`.
    static func rate(_ invocation: Invocation, _ name: String, default fallback: RequestRate?) throws(CLIError) -> RequestRate? {
        guard let text = invocation.values[name] else { return fallback }
        if text == "off" { return nil }
        guard let rate = RequestRate(text) else {
            throw .usage(
                "onboard serve: --\(name) must be off or RATE[/BURST] (requests per second, and at once), e.g. 100/400, with 0 < RATE ≤ 1000000 and 1 ≤ BURST ≤ 1000000; got \"\(text)\""
            )
        }
        return rate
    }

    /// SIGHUP: the certificate and key files read again; on any problem the one in use stays.
    static func reloadCertificate(_ http: HTTPServer, log: ServeLog) {
        guard http.tls != nil else {
            log.write("notice", "onboard serve: SIGHUP: nothing to reload (no --tls-cert); ignored")
            return
        }
        do {
            let certificate = try http.reloadCertificate()
            log.write(
                "notice",
                "onboard serve: SIGHUP: reloaded the TLS certificate, SHA-256 \(certificate.fingerprintText), expires \(Timestamp(certificate.expiresAt).iso8601)"
            )
        } catch {
            log.write("warning", "onboard serve: SIGHUP: kept the TLS certificate in use: \(error)")
        }
    }

    /// Writes `secret` and a newline to a new file `path` with mode 0600, durably; `false` when
    /// the file exists or cannot be made (it is never overwritten).
    static func writeSecret(_ secret: String, to path: String) -> Bool {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard descriptor >= 0 else { return false }
        let bytes = Array((secret + "\n").utf8)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        let synced = fsync(descriptor) == 0
        close(descriptor)
        guard written == bytes.count, synced else {
            unlink(path)
            return false
        }
        return true
    }
}

/// `onboard serve`'s stderr: text lines, or one JSON object per line (`--log-format json`).
struct ServeLog: Sendable {
    let json: Bool

    /// A line about the server itself (`kind` `notice`, `warning` or `failure`).
    func write(_ kind: String, _ message: String) {
        let at = Clock.now().iso8601
        guard json else {
            Output.error(kind == "failure" ? "\(at) \(message)" : message)
            return
        }
        Output.error(
            String(
                decoding: SyncWire.encode(
                    .object([
                        .init("at", .string(at)), .init("kind", .string(kind)),
                        .init("message", .string(message))
                    ])), as: UTF8.self))
    }

    func access(_ entry: HTTPAccessLogEntry, _ log: SyncServer.AccessLog) {
        let at = Clock.now().iso8601
        Output.error(json ? log.jsonLine(for: entry, at: at) : log.line(for: entry, at: at))
    }
}
