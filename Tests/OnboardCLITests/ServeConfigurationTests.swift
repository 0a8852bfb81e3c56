import Foundation
import Testing
import TestSupport

/// `onboard serve`'s settings from the command line, the environment (`ONBOARD_SERVE_<OPTION>`)
/// and a configuration file (`--config`), in that order, and `--check-config`.
@Suite(.slow) struct ServeConfigurationTests {
    @Test func theCommandLineWinsThenTheEnvironmentThenTheFile() async throws {
        try await onOwnThread {
            let scratch = try TemporaryDirectory()
            defer { scratch.remove() }
            let data = scratch.appending("data")
            let file = try scratch.write(
                "serve.conf",
                """
                # the sync server
                port = 1111
                data = "\(data)"
                rate-per-token = 50/100\r
                max-clock-skew = 60
                """)
            let cli = try CLI.run(["serve", "--config", file, "--check-config", "--port", "3333"], environment: ["ONBOARD_SERVE_PORT": "2222"])
            #expect(cli.status == 0, "\(cli.stderr)")
            #expect(cli.stdout.contains("port = 3333  (command line)"), "\(cli.stdout)")
            #expect(cli.stdout.contains("rate-per-token = 50/100  (file)") && cli.stdout.contains("max-clock-skew = 60  (file)"))
            #expect(cli.stdout.contains("the configuration is good"))
            let environment = try CLI.run(["serve", "--check-config"], environment: ["ONBOARD_SERVE_PORT": "2222", "ONBOARD_SERVE_CONFIG": file])
            #expect(environment.status == 0 && environment.stdout.contains("port = 2222  (environment)"), "\(environment.stdout) \(environment.stderr)")
            let fromFile = try CLI.run(["serve", "--config", file, "--check-config"])
            #expect(fromFile.status == 0 && fromFile.stdout.contains("port = 1111  (file)"), "\(fromFile.stdout)")
            #expect(!FileManager.default.fileExists(atPath: data), "--check-config creates nothing")
        }
    }

    @Test func aBadFileOrValueIsOneLineNamingWhere() async throws {
        try await onOwnThread {
            let scratch = try TemporaryDirectory()
            defer { scratch.remove() }
            let cases: [(String, Int32, String)] = [
                ("port = 8080\nprot = 9\n", 64, "serve.conf:2: unknown setting \"prot\""),
                ("port = 1\nport = 2\n", 64, "serve.conf:2: port is set twice"),
                ("tls-cert /x\n", 64, "serve.conf:1: expected name = value"),
                ("port =\n", 64, "serve.conf:1: port has no value"),
                ("port = 8\u{1B}[2J\n", 64, "serve.conf:1: a control character"),
                ("check-config = yes\n", 64, "unknown setting \"check-config\""),
                ("port = 99999\n", 64, "--port must be 0…65535"),
                ("rate-failed-auth = 0\n", 64, "--rate-failed-auth must be off or RATE[/BURST]"),
                ("tls-cert = /nonexistent/cert.pem\ntls-key = /nonexistent/key.pem\n", 78, "cannot read the certificate file")
            ]
            for (text, status, message) in cases {
                let file = try scratch.write("serve.conf", text)
                let result = try CLI.run(["serve", "--config", file, "--check-config", "--data", scratch.appending("data")])
                #expect(result.status == status && result.stderr.contains(message), "\(text.debugDescription): \(result.status) \(result.stderr)")
                #expect(result.stderr.split(separator: "\n").count == 1, "one line: \(result.stderr)")
            }
            let missing = try CLI.run(["serve", "--config", scratch.appending("none.conf"), "--check-config"])
            #expect(missing.status == 66 && missing.stderr.contains("cannot read the configuration file"), "\(missing.stderr)")
            let huge = try scratch.write("huge.conf", String(repeating: "# padding\n", count: 8_000))
            #expect(try CLI.run(["serve", "--config", huge, "--check-config"]).stderr.contains("larger than 64 KiB"))
        }
    }

    @Test func aDatabasePasswordIsNeverPrinted() async throws {
        try await onOwnThread {
            let result = try CLI.run(
                ["serve", "--check-config"], environment: ["ONBOARD_SERVE_DATABASE": "postgres://onboard:s3cr3t-pw@127.0.0.1:5432/onboard"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(!result.stdout.contains("s3cr3t-pw") && !result.stderr.contains("s3cr3t-pw"), "\(result.stdout)")
            #expect(result.stdout.contains("database = postgres://onboard"), "\(result.stdout)")
        }
    }

    @Test func aServerRunsOnWhatItsFileSays() async throws {
        try await onOwnThread {
            let scratch = try TemporaryDirectory()
            defer { scratch.remove() }
            let file = try scratch.write("serve.conf", "log-format = json\nrate-anonymous = 0.01/5\n")
            let server = try TLSServeTests.Server(["--config", file], scratch: scratch, scheme: "http")
            var statuses: [String] = []
            for _ in 0..<6 {
                statuses.append(try TLSServeTests.curl(["-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(server.port)/v1/health"]).stdout)
            }
            #expect(
                statuses == ["200", "200", "200", "200", "200", "429"], "the file's rate-anonymous = 0.01/5 (five at once, then one per 100 s): \(statuses)")
            #expect(server.stop() == 0)
            #expect(server.errors.split(separator: "\n").allSatisfy { $0.hasPrefix("{") }, "the file's log-format = json: \(server.errors)")
        }
    }
}
