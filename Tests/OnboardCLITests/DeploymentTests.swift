import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// The deployment files in deploy/, graded by the tools they are written for: the systemd unit by
/// `systemd-analyze verify` and `systemd-analyze security`, the nginx configuration by a real
/// nginx that proxies a real `onboard sync` into a real `onboard serve`.
@Suite(.serialized, .slow) struct DeploymentTests {
    static let deploy = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("deploy")

    static func file(_ name: String) throws -> String { try String(contentsOf: deploy.appendingPathComponent(name), encoding: .utf8) }

    static func tool(_ path: String) throws -> URL {
        guard FileManager.default.isExecutableFile(atPath: path) else { throw TestFailure("no \(path): run tools/setup.sh, which installs it") }
        return URL(fileURLWithPath: path)
    }

    @Test func theSystemdUnitVerifiesAndSystemdRatesItsExposureOK() async throws {
        try await onOwnThread {
            let scratch = try TemporaryDirectory()
            defer { scratch.remove() }
            let analyze = try Self.tool("/usr/bin/systemd-analyze")
            // The unit as installed, with ExecStart naming the binary under test.
            let unit = try Self.file("onboard-serve.service").replacingOccurrences(of: "/usr/local/bin/onboard", with: CLI.binary.path)
            let path = try scratch.write("onboard-serve.service", unit)
            let verified = try CLI.run(["verify", path], executable: analyze)
            #expect(verified.status == 0 && verified.stderr.isEmpty, "systemd-analyze verify: \(verified.stderr)")
            let security = try CLI.run(["security", "--offline=yes", "--no-pager", path], executable: analyze)
            let line = security.stdout.split(separator: "\n").first { $0.contains("Overall exposure level") }.map(String.init) ?? ""
            let level = line.split(separator: ":").last.flatMap { Double($0.split(separator: " ").first ?? "") }
            // systemd's scale: 0 is fully sandboxed, 10 not at all; below 2 it says "OK" (a
            // plain unit rates 9.6 "UNSAFE").
            #expect(level.map { $0 < 2.0 } == true && line.contains("OK"), "systemd-analyze security: \(line)\n\(security.stderr)")

            // What the unit runs is a configuration onboard accepts: serve.conf with the unit's environment.
            var environment: [String: String] = [:]
            for entry in unit.split(separator: "\n") where entry.hasPrefix("Environment=") {
                let assignment = entry.dropFirst("Environment=".count).split(separator: "=", maxSplits: 1).map(String.init)
                environment[assignment[0]] = assignment[1] == "/var/lib/onboard" ? scratch.appending("state") : assignment[1]
            }
            #expect(environment["ONBOARD_SERVE_DATA"] != nil)
            let arguments = try #require(unit.split(separator: "\n").first { $0.hasPrefix("ExecStart=") }).split(separator: " ").dropFirst()
                .map { $0 == "/etc/onboard/serve.conf" ? Self.deploy.appendingPathComponent("serve.conf").path : String($0) }
            let checked = try CLI.run(Array(arguments) + ["--check-config"], environment: environment)
            #expect(checked.status == 0, "onboard \(arguments.joined(separator: " ")) --check-config: \(checked.stderr)")
            #expect(
                checked.stdout.contains("token-lifetime = 90d  (file)") && checked.stdout.contains("data = \(scratch.appending("state"))  (environment)"),
                "\(checked.stdout)")
        }
    }

    /// nginx with deploy/nginx.conf, its ports, certificate and log paths substituted.
    final class Proxy {
        let process = ChildProcess()
        let httpsPort: UInt16
        let httpPort: UInt16
        let accessLog: String
        let errorLog: String

        init(upstreamPort: Int, certificate: String, key: String, scratch: TemporaryDirectory) throws {
            httpsPort = try LoopbackSockets.freePort()
            httpPort = try LoopbackSockets.freePort()
            accessLog = scratch.appending("nginx-access.log")
            errorLog = scratch.appending("nginx-error.log")
            let temporary = scratch.appending("nginx-temp")
            try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o777])
            var site = try DeploymentTests.file("nginx.conf")
            for (from, to) in [
                ("server 127.0.0.1:8080;", "server 127.0.0.1:\(upstreamPort);"),
                ("listen 443 ssl;", "listen 127.0.0.1:\(httpsPort) ssl;"), ("listen 80;", "listen 127.0.0.1:\(httpPort);"),
                ("listen [::]:443 ssl;", ""), ("listen [::]:80;", ""),
                ("/etc/onboard/tls/fullchain.pem", certificate), ("/etc/onboard/tls/key.pem", key),
                ("/var/log/nginx/onboard.access.log", accessLog)
            ] {
                guard site.contains(from) else { throw TestFailure("deploy/nginx.conf lost \(from)") }
                site = site.replacingOccurrences(of: from, with: to)
            }
            let main = try scratch.write(
                "nginx-main.conf",
                """
                pid \(scratch.appending("nginx.pid"));
                error_log \(errorLog) warn;
                worker_processes 1;
                events { worker_connections 256; }
                http {
                    client_body_temp_path \(temporary)/body;
                    proxy_temp_path \(temporary)/proxy;
                    fastcgi_temp_path \(temporary)/fastcgi;
                    uwsgi_temp_path \(temporary)/uwsgi;
                    scgi_temp_path \(temporary)/scgi;
                    \(site)
                }
                """)
            let nginx = try DeploymentTests.tool("/usr/sbin/nginx")
            let tested = try CLI.run(["-t", "-q", "-c", main, "-p", scratch.path], executable: nginx)
            guard tested.status == 0 else { throw TestFailure("nginx -t refused the configuration: \(tested.stderr)") }
            process.executableURL = nginx
            process.arguments = ["-c", main, "-p", scratch.path, "-g", "daemon off;"]
            process.standardError = FileHandle.nullDevice
            try process.run()
            let deadline = Date().addingTimeInterval(30)
            while Date() < deadline, (try? TLSServeTests.curl(["-o", "/dev/null", "http://127.0.0.1:\(httpPort)/"]))?.status != 0 {
                Thread.sleep(forTimeInterval: 0.05)
            }
        }

        func stop() {
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
        }
    }

    @Test func nginxWithTheSampleConfigurationCarriesASyncAndTheClientsAddress() async throws {
        try await onOwnThread {
            let scratch = try TemporaryDirectory()
            defer { scratch.remove() }
            let certificates = try TLSServeTests.Certificates(scratch)
            try certificates.server("proxy")
            let server = try TLSServeTests.Server(["--trusted-proxy", "127.0.0.1", "--rate-failed-auth", "0.01/3"], scratch: scratch, scheme: "http")
            defer { _ = server.stop() }
            let proxy = try Proxy(upstreamPort: server.port, certificate: scratch.appending("proxy.pem"), key: scratch.appending("proxy.key"), scratch: scratch)
            defer { proxy.stop() }
            let https = "https://127.0.0.1:\(proxy.httpsPort)"

            // A real sync through nginx's TLS, verified against the test CA.
            let enrolled = try CLI.run(["enroll", "--data", scratch.appending("data"), "--device", "kiosk-7"])
            let token = enrolled.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            let store = scratch.appending("kiosk.lmdb")
            for user in ["alice@example.org", "bob"] {
                #expect(
                    try CLI.run([
                        "record", #"{"type":"sign_in_failed","user":"\#(user)","method":"password","reason":"invalid_password"}"#,
                        "--store", store, "--device", "kiosk-7"
                    ]).status == 0)
            }
            let synced = try CLI.run(["sync", "--store", store, "--server", https, "--ca-file", certificates.ca, "--token", token])
            #expect(synced.status == 0 && synced.stdout.contains("the server holds seq 2"), "\(synced.stdout)\(synced.stderr)")
            // The plain port only redirects, which onboard sync never follows.
            let plain = try CLI.run(["sync", "--store", store, "--server", "http://127.0.0.1:\(proxy.httpPort)", "--token", token])
            #expect(plain.status == 78 && plain.stderr.contains("redirect"), "\(plain.stderr)")

            // The rate limits key on the address nginx appended: one address over its limit gets
            // 429, another (the same proxy) still gets 401, and a good token is still served.
            func status(_ token: String, from address: String) throws -> String {
                try TLSServeTests.curl([
                    "--cacert", certificates.ca, "-o", "/dev/null", "-w", "%{http_code}", "-H", "Authorization: Bearer \(token)",
                    "-H", "X-Forwarded-For: \(address)", "\(https)/v1/token"
                ]).stdout
            }
            let flood = try (0..<5).map { _ in try status("obt_bad", from: "198.51.100.1") }
            #expect(flood.prefix(3) == ["401", "401", "401"] && flood.last == "429", "\(flood)")
            #expect(try status("obt_bad", from: "198.51.100.2") == "401")
            #expect(try status(token, from: "198.51.100.1") == "200")

            // nginx's log holds no path, so no user id and no device; nor does either log hold the token.
            let nginxLog = (try? String(contentsOfFile: proxy.accessLog, encoding: .utf8)) ?? ""
            #expect(nginxLog.contains("POST 200") && !nginxLog.contains("/v1/") && !nginxLog.contains("alice"), "\(nginxLog)")
            #expect(!nginxLog.contains(token) && !server.errors.contains(token))
            #expect(server.errors.contains("POST /v1/devices/kiosk-7/events 200"), "\(server.errors)")
        }
    }
}
