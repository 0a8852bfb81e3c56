import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// `onboard serve --tls-cert --tls-key` and `onboard sync` over HTTPS, with certificates openssl
/// makes for the test (a private CA and two server certificates it signs), checked with clients
/// we did not write: curl, Python's `ssl` (OpenSSL) and `openssl x509`.
@Suite(.serialized, .slow) struct TLSServeTests {
    /// A private CA and what it signed, in `directory`.
    struct Certificates {
        let directory: TemporaryDirectory
        let authority: String
        var ca: String { directory.appending("\(authority).pem") }

        static func openssl(_ arguments: [String]) throws -> CLI.Result {
            let result = try CLI.run(arguments, executable: URL(fileURLWithPath: "/usr/bin/openssl"))
            guard result.status == 0 else { throw TestFailure("openssl \(arguments.first ?? ""): \(result.stderr)") }
            return result
        }

        init(_ directory: TemporaryDirectory, authority: String = "ca") throws {
            self.directory = directory
            self.authority = authority
            _ = try Self.openssl([
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", directory.appending("\(authority).key"), "-out", directory.appending("\(authority).pem"),
                "-days", "3", "-subj", "/CN=OnboardingStore test CA \(authority)"
            ])
        }

        /// A server certificate `name`.pem / `name`.key for 127.0.0.1 and localhost, signed by the CA.
        func server(_ name: String) throws {
            let extensions = try directory.write(
                "\(name).ext",
                """
                subjectAltName = IP:127.0.0.1, DNS:localhost
                basicConstraints = CA:FALSE
                keyUsage = digitalSignature
                extendedKeyUsage = serverAuth
                """)
            _ = try Self.openssl([
                "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", directory.appending("\(name).key"),
                "-out", directory.appending("\(name).csr"), "-subj", "/CN=localhost"
            ])
            _ = try Self.openssl([
                "x509", "-req", "-in", directory.appending("\(name).csr"), "-CA", directory.appending("\(authority).pem"),
                "-CAkey", directory.appending("\(authority).key"), "-CAcreateserial", "-out", directory.appending("\(name).pem"),
                "-days", "2", "-extfile", extensions
            ])
        }

        /// `openssl x509 -fingerprint -sha256` of `name`.pem: `AB:CD:…`.
        func fingerprint(_ name: String) throws -> String {
            let text = try Self.openssl(["x509", "-noout", "-fingerprint", "-sha256", "-in", directory.appending("\(name).pem")]).stdout
            return String(text.split(separator: "=").last ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    /// `onboard serve` with TLS, its stdout and stderr in files.
    final class Server {
        let process = ChildProcess()
        let port: Int
        let output: String
        let log: String

        init(_ arguments: [String], scratch: TemporaryDirectory, scheme: String = "https") throws {
            output = scratch.appending("serve.out")
            log = scratch.appending("serve.err")
            for path in [output, log] { _ = FileManager.default.createFile(atPath: path, contents: nil) }
            process.executableURL = CLI.binary
            // `--data scratch/data` unless the server is to keep its data in PostgreSQL.
            process.arguments = ["serve", "--port", "0"] + (arguments.contains("--database") ? [] : ["--data", scratch.appending("data")]) + arguments
            process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
            process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
            try process.run()
            let deadline = Date().addingTimeInterval(60)
            var found: Int?
            while found == nil && Date() < deadline {
                let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
                if let range = text.range(of: "listening on \(scheme)://127.0.0.1:") {
                    found = Int(text[range.upperBound...].prefix { $0.isNumber })
                } else {
                    Thread.sleep(forTimeInterval: 0.05)
                }
            }
            guard let found else {
                kill(process.processIdentifier, SIGKILL)
                throw TestFailure("onboard serve did not report an \(scheme):// port: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
            }
            port = found
        }

        var banner: String { (try? String(contentsOfFile: output, encoding: .utf8)) ?? "" }
        var errors: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
        var serverKey: String {
            guard let range = banner.range(of: "server key ") else { return "" }
            return String(banner[range.upperBound...].prefix { $0.isHexDigit })
        }

        /// SIGHUP, then waits (a minute at most) for the `count`th reload line on stderr.
        func reload(expecting count: Int) {
            kill(process.processIdentifier, SIGHUP)
            let deadline = Date().addingTimeInterval(60)
            while errors.components(separatedBy: "SIGHUP:").count - 1 < count && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        }

        func stop() -> Int32 {
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
            return process.terminationStatus
        }
    }

    static func curl(_ arguments: [String]) throws -> CLI.Result {
        try CLI.run(["-s", "--max-time", "30"] + arguments, executable: URL(fileURLWithPath: "/usr/bin/curl"))
    }

    /// Python's ssl module (OpenSSL) on a kept-alive connection across a certificate reload:
    /// prints JSON with the certificate fingerprints it saw and the statuses it got.
    static let keepAliveScript = #"""
        import hashlib, http.client, json, os, signal, ssl, sys, time
        port, ca, pid, log = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
        def fingerprint(connection):
            der = connection.sock.getpeercert(binary_form=True)
            return ":".join("%02X" % b for b in hashlib.sha256(der).digest())
        def connect():
            context = ssl.create_default_context(cafile=ca)
            connection = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=30)
            connection.connect()
            return connection
        def health(connection):
            connection.request("GET", "/v1/health")
            answer = connection.getresponse()
            answer.read()
            return answer.status
        kept = connect()
        before = [fingerprint(kept), health(kept)]
        with open(sys.argv[5], "rb") as source, open(sys.argv[6], "wb") as target: target.write(source.read())
        with open(sys.argv[7], "rb") as source, open(sys.argv[8], "wb") as target: target.write(source.read())
        os.kill(pid, signal.SIGHUP)
        deadline = time.time() + 60
        while "reloaded the TLS certificate" not in open(log).read() and time.time() < deadline: time.sleep(0.05)
        after_kept = health(kept)
        fresh = connect()
        print(json.dumps({"before": before, "kept_after_reload": after_kept, "kept_fingerprint": fingerprint(kept),
                          "fresh": [fingerprint(fresh), health(fresh)], "protocol": fresh.sock.version()}))
        """#

    /// A handshake limited to one TLS version: prints `ok <version>` or `refused <reason>`.
    static let versionScript = #"""
        import socket, ssl, sys
        port, ca, version = int(sys.argv[1]), sys.argv[2], sys.argv[3]
        context = ssl.create_default_context(cafile=ca)
        chosen = getattr(ssl.TLSVersion, version)
        context.set_ciphers("DEFAULT:@SECLEVEL=0")
        context.minimum_version = chosen
        context.maximum_version = chosen
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=30) as raw:
                with context.wrap_socket(raw, server_hostname="localhost") as tls:
                    print("ok", tls.version())
        except (ssl.SSLError, OSError) as error:
            print("refused", error)
        """#

    @Test func theServerSpeaksTLSOneTwoAndUpOnlyAndReloadsOnSIGHUPWithoutDroppingAConnection() async throws {
        try await onOwnThread {
            let scratch = try TemporaryDirectory()
            defer { scratch.remove() }
            let certificates = try Certificates(scratch)
            try certificates.server("first")
            try certificates.server("second")
            // The server reads the files at these paths; a renewal replaces them in place.
            let certificate = scratch.appending("served.pem"), key = scratch.appending("served.key")
            try FileManager.default.copyItem(atPath: scratch.appending("first.pem"), toPath: certificate)
            try FileManager.default.copyItem(atPath: scratch.appending("first.key"), toPath: key)
            let server = try Server(["--tls-cert", certificate, "--tls-key", key], scratch: scratch)
            let first = try certificates.fingerprint("first"), second = try certificates.fingerprint("second")
            #expect(server.banner.contains("TLS certificate SHA-256 \(first)"), "\(server.banner)")
            // The admin token of the first start is in its 0600 file only, never on stdout or stderr.
            let admin = try String(contentsOfFile: scratch.appending("data/admin.token"), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(admin.hasPrefix("obt_") && !server.banner.contains(admin) && !server.errors.contains(admin))
            #expect(server.banner.contains("created the admin token in \(scratch.appending("data"))/admin.token (mode 0600)"))
            let mode = try FileManager.default.attributesOfItem(atPath: scratch.appending("data/admin.token"))[.posixPermissions] as? Int
            #expect(mode == 0o600)

            // curl (its own TLS stack) verifies the chain against the test CA, by address and by name.
            for host in ["127.0.0.1", "localhost"] {
                let health = try Self.curl(["--cacert", certificates.ca, "-o", "/dev/null", "-w", "%{http_code}", "https://\(host):\(server.port)/v1/health"])
                #expect(health.stdout == "200", "\(host): \(health.stderr)")
            }
            let untrusted = try Self.curl(["-o", "/dev/null", "-w", "%{http_code}", "https://127.0.0.1:\(server.port)/v1/health"])
            #expect(untrusted.status == 60, "curl without the CA must refuse the certificate: \(untrusted.status)")
            let plain = try Self.curl(["-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(server.port)/v1/health"])
            #expect(plain.stdout != "200", "plain HTTP on the TLS port")

            // TLS 1.2 and 1.3 are taken; 1.0 and 1.1 are not.
            for (version, taken) in [("TLSv1", false), ("TLSv1_1", false), ("TLSv1_2", true), ("TLSv1_3", true)] {
                let result = try CLI.run(
                    ["-c", Self.versionScript, String(server.port), certificates.ca, version],
                    executable: URL(fileURLWithPath: "/usr/bin/python3"))
                #expect(result.stdout.hasPrefix(taken ? "ok" : "refused"), "\(version): \(result.stdout) \(result.stderr)")
            }

            // A reload: a connection opened before it keeps working; a new one gets the new certificate.
            let script = try CLI.run(
                [
                    "-c", Self.keepAliveScript, String(server.port), certificates.ca, String(server.process.processIdentifier),
                    server.log, scratch.appending("second.pem"), certificate, scratch.appending("second.key"), key
                ],
                executable: URL(fileURLWithPath: "/usr/bin/python3"))
            #expect(script.status == 0, "\(script.stderr)")
            let seen = try JSONSerialization.jsonObject(with: Data(script.stdout.utf8)) as? [String: Any] ?? [:]
            #expect(seen["before"] as? [AnyHashable] == [first as AnyHashable, 200 as AnyHashable], "\(seen)")
            #expect(seen["kept_after_reload"] as? Int == 200, "the kept-alive connection was dropped by the reload: \(seen)")
            #expect(seen["kept_fingerprint"] as? String == first)
            #expect(seen["fresh"] as? [AnyHashable] == [second as AnyHashable, 200 as AnyHashable], "\(seen)")
            #expect(server.errors.contains("SIGHUP: reloaded the TLS certificate, SHA-256 \(second)"), "\(server.errors)")

            // A broken renewal is refused and the certificate in use stays.
            try "not a certificate\n".write(toFile: certificate, atomically: true, encoding: .utf8)
            server.reload(expecting: 2)
            #expect(server.errors.contains("SIGHUP: kept the TLS certificate in use"), "\(server.errors)")
            let still = try Self.curl(["--cacert", certificates.ca, "-o", "/dev/null", "-w", "%{http_code}", "https://127.0.0.1:\(server.port)/v1/health"])
            #expect(still.stdout == "200")
            #expect(server.stop() == 0)
            #expect(!server.errors.contains(scratch.appending("first.key")), "no key path in the log")
        }
    }

    @Test func syncVerifiesTheServersCertificateAndRefusesPlainHTTPBeyondLoopback() async throws {
        try await onOwnThread {
            let scratch = try TemporaryDirectory()
            defer { scratch.remove() }
            let certificates = try Certificates(scratch)
            try certificates.server("server")
            let other = try Certificates(try TemporaryDirectory(), authority: "other")
            let server = try Server(["--tls-cert", scratch.appending("server.pem"), "--tls-key", scratch.appending("server.key")], scratch: scratch)
            defer { _ = server.stop() }
            let store = scratch.appending("device")
            #expect(
                try CLI.run([
                    "import", try scratch.write("events.jsonl", Corpus.jsonl(Corpus.generated(count: 500, seed: 5))),
                    "--store", store, "--device", "kiosk-7"
                ]).status == 0)
            let token = try CLI.run(["enroll", "--data", scratch.appending("data"), "--device", "kiosk-7"]).stdout
                .trimmingCharacters(in: .whitespacesAndNewlines)
            let url = "https://127.0.0.1:\(server.port)"

            // No --ca-file: the system's CAs do not know the test CA; nothing is sent.
            let untrusted = try CLI.run(["sync", "--store", store, "--server", url, "--token", token, "--max-time", "60"])
            #expect(untrusted.status == 69, "\(untrusted.stderr)")
            #expect(untrusted.stderr.contains("not trusted") && untrusted.stderr.contains("--ca-file"), "\(untrusted.stderr)")
            // Another CA's file: refused too.
            let wrong = try CLI.run(["sync", "--store", store, "--server", url, "--token", token, "--ca-file", other.ca, "--max-time", "60"])
            #expect(wrong.status == 69 && wrong.stderr.contains("not trusted"), "\(wrong.stderr)")
            #expect(!untrusted.stderr.contains(token) && !wrong.stderr.contains(token))
            #expect(try CLI.run(["sync", "--status", "--store", store]).stdout.contains("acknowledged by the server up to seq 0"))

            // The right CA: the whole log goes over TLS.
            let synced = try CLI.run([
                "sync", "--store", store, "--server", url, "--token", token, "--ca-file", certificates.ca,
                "--server-key", server.serverKey
            ])
            #expect(synced.status == 0, "\(synced.stderr)")
            #expect(synced.stdout.contains("500 appended"), "\(synced.stdout)")
            let byName = try CLI.run([
                "sync", "--store", store, "--server", "https://localhost:\(server.port)", "--token", token,
                "--ca-file", certificates.ca
            ])
            #expect(byName.status == 0 && byName.stdout.contains("0 appended"), "\(byName.stderr)")

            // A CA file that is not there, and one for a plain http:// server.
            let missing = try CLI.run(["sync", "--store", store, "--server", url, "--token", token, "--ca-file", scratch.appending("nope.pem")])
            #expect(missing.status == 64 && missing.stderr.contains("cannot be read"), "\(missing.stderr)")
            let mixed = try CLI.run(["sync", "--store", store, "--server", "http://127.0.0.1:1", "--token", token, "--ca-file", certificates.ca])
            #expect(mixed.status == 64 && mixed.stderr.contains("--ca-file goes with an https:// server"), "\(mixed.stderr)")

            // Plain http:// to anything but this machine is refused before connecting...
            for host in ["192.0.2.1", "sync.example", "[2001:db8::1]", "127.0.0.1.example"] {
                let refused = try CLI.run(["sync", "--store", store, "--server", "http://\(host):8080", "--token", token])
                #expect(refused.status == 64 && refused.stderr.contains("refusing to send the token over plain http://"), "\(host): \(refused.stderr)")
            }
            for command in [["prune", "--store", store, "--before", "2000-01-01T00:00:00Z"]] {
                let refused = try CLI.run(command + ["--server", "http://192.0.2.1:8080", "--token", token])
                #expect(refused.status == 64 && refused.stderr.contains("refusing to send the token"), "\(refused.stderr)")
            }
            // ...unless the user says so (then it is tried: here an address nobody answers, cut short).
            let insisted = try CLI.run([
                "sync", "--store", store, "--server", "http://192.0.2.1:8080", "--token", token, "--insecure-http",
                "--max-time", "1"
            ])
            #expect(insisted.status != 64 && !insisted.stderr.contains("refusing"), "\(insisted.stderr)")
        }
    }

    @Test func unusableCertificatesAreRefusedAtStartNamingTheFile() async throws {
        try await onOwnThread {
            let scratch = try TemporaryDirectory()
            defer { scratch.remove() }
            let certificates = try Certificates(scratch)
            try certificates.server("a")
            try certificates.server("b")
            let data = ["--data", scratch.appending("data"), "--port", "0"]
            var cases: [([String], Int32, String)] = [
                (["--tls-cert", scratch.appending("a.pem")], 64, "--tls-cert needs --tls-key"),
                (["--tls-key", scratch.appending("a.key")], 64, "--tls-key needs --tls-cert"),
                (["--tls-cert", scratch.appending("missing.pem"), "--tls-key", scratch.appending("a.key")], 78, "cannot read the certificate file"),
                (["--tls-cert", scratch.appending("a.pem"), "--tls-key", scratch.appending("b.key")], 78, "does not belong to the certificate"),
                (["--tls-cert", scratch.appending("a.key"), "--tls-key", scratch.appending("a.key")], 78, "no usable PEM certificate"),
                (["--tls-cert", scratch.appending("a.pem"), "--tls-key", scratch.appending("a.pem")], 78, "no usable unencrypted PEM private key")
            ]
            let huge = try scratch.write("huge.pem", String(repeating: "A", count: 2 << 20))
            cases.append((["--tls-cert", huge, "--tls-key", scratch.appending("a.key")], 78, "is larger than 1 MiB"))
            for (arguments, status, message) in cases {
                let result = try CLI.run(["serve"] + data + arguments)
                #expect(result.status == status && result.stderr.contains(message), "\(arguments): \(result.status) \(result.stderr)")
                #expect(result.stderr.split(separator: "\n").count == 1, "one line: \(result.stderr)")
            }
            // Expired: signed by the CA (`openssl ca`, which takes explicit dates) for a day of 2020.
            _ = try Certificates.openssl([
                "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", scratch.appending("old.key"),
                "-out", scratch.appending("old.csr"), "-subj", "/CN=localhost"
            ])
            _ = try scratch.write("index.txt", "")
            _ = try scratch.write("serial", "1000\n")
            let configuration = try scratch.write(
                "ca.cnf",
                """
                [ ca ]
                default_ca = test
                [ test ]
                database = \(scratch.appending("index.txt"))
                new_certs_dir = \(scratch.path)
                serial = \(scratch.appending("serial"))
                default_md = sha256
                policy = anything
                [ anything ]
                commonName = supplied
                """)
            _ = try Certificates.openssl([
                "ca", "-batch", "-notext", "-config", configuration, "-cert", certificates.ca, "-keyfile", scratch.appending("ca.key"),
                "-in", scratch.appending("old.csr"), "-out", scratch.appending("old.pem"),
                "-startdate", "20200101000000Z", "-enddate", "20200102000000Z"
            ])
            let expired = try CLI.run(["serve"] + data + ["--tls-cert", scratch.appending("old.pem"), "--tls-key", scratch.appending("old.key")])
            #expect(expired.status == 78 && expired.stderr.contains("expired at 2020-01-02"), "\(expired.stderr)")
        }
    }

    /// Every line `onboard serve --log-format json` writes to stderr is one JSON object (read by
    /// Python's json module), user ids pseudonymised, no query, no token, control bytes escaped.
    @Test func theJSONLogHasOneObjectPerLineAndNothingSecret() async throws {
        try await onOwnThread {
            let scratch = try TemporaryDirectory()
            defer { scratch.remove() }
            #expect(try CLI.run(["serve", "--data", scratch.appending("bad"), "--log-format", "xml"]).status == 64)
            let server = try Server(["--log-format", "json"], scratch: scratch, scheme: "http")
            let base = "http://127.0.0.1:\(server.port)"
            _ = try Self.curl(["-o", "/dev/null", "-H", "authorization: Bearer obt_not_a_token", base + "/v1/users/alice/history?since=2026-01-01T00:00:00Z"])
            _ = try Self.curl(["-o", "/dev/null", base + "/v1/health"])
            // A request line with an escape sequence and a line feed encoded in it.
            let raw = try CLI.run(
                [
                    "-c",
                    """
                    import socket, sys
                    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
                    s.sendall(b"GET /v1/users/%1b%5b31m%0abob/lockout HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n")
                    print(s.recv(100)[:12])
                    """, String(server.port)
                ], executable: URL(fileURLWithPath: "/usr/bin/python3"))
            #expect(raw.status == 0, "\(raw.stderr)")
            #expect(server.stop() == 0)
            let admin = try String(contentsOfFile: scratch.appending("data/admin.token"), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            let check = try CLI.run(
                [
                    "-c",
                    """
                    import json, sys
                    kinds = {}
                    for line in open(sys.argv[1], encoding="utf-8"):
                        entry = json.loads(line)
                        kinds[entry["kind"]] = kinds.get(entry["kind"], 0) + 1
                        if entry["kind"] == "access":
                            assert set(entry) == {"at", "kind", "method", "path", "status", "bytes", "duration_ms"}, entry
                            assert isinstance(entry["status"], int) and isinstance(entry["duration_ms"], int), entry
                    print(json.dumps(kinds, sort_keys=True))
                    """, server.log
                ], executable: URL(fileURLWithPath: "/usr/bin/python3"))
            #expect(check.status == 0, "not one JSON object per line: \(check.stderr)")
            #expect(check.stdout.contains(#""access": 3"#) && check.stdout.contains(#""notice": 2"#), "\(check.stdout)")
            let log = server.errors
            #expect(!log.contains("alice") && !log.contains("bob") && !log.contains("since=") && !log.contains("obt_not_a_token") && !log.contains(admin))
            #expect(log.contains(#""path":"/v1/users/u:"#), "\(log)")
            #expect(!log.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" }, "a raw control character in the log")
        }
    }
}
