import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// `onboard serve` as a real process under hostile conditions: too few file descriptors, slow and
/// idle clients, forged access-log lines. Blocking work runs on threads of its own, every wait is
/// bounded, and every server started is stopped (SIGTERM, then SIGKILL).
@Suite(.serialized, .slow) struct ServeLimitsTests {
    /// A running (or refusing) `onboard serve`, optionally under `ulimit -n`.
    final class Serve: @unchecked Sendable {
        let process = ChildProcess()
        let stdoutPath: String
        let stderrPath: String
        let data: String
        private(set) var port: UInt16 = 0

        /// Starts the server and waits (at most 20 s) for it to print its port or to exit.
        init(data: String, scratch: TemporaryDirectory, openFileLimit: Int? = nil, arguments: [String] = []) throws {
            self.data = data
            let name = UUID().uuidString.prefix(6)
            stdoutPath = scratch.appending("serve-\(name).out")
            stderrPath = scratch.appending("serve-\(name).err")
            _ = FileManager.default.createFile(atPath: stdoutPath, contents: nil)
            _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
            // `exec` keeps the shell's pid, so the Process is the server itself.
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            let limit = openFileLimit.map { "ulimit -n \($0) && " } ?? ""
            process.arguments = ["-c", "\(limit)exec \"$0\" \"$@\"", CLI.binary.path, "serve", "--port", "0", "--data", data] + arguments
            process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: stdoutPath))
            process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: stderrPath))
            try process.run()
            let deadline = Date().addingTimeInterval(20)
            while Date() < deadline, process.isRunning, port == 0 {
                if let range = stdout.range(of: "listening on http://127.0.0.1:") {
                    port = UInt16(stdout[range.upperBound...].prefix { $0.isNumber }) ?? 0
                } else {
                    Thread.sleep(forTimeInterval: 0.02)
                }
            }
        }

        var stdout: String { (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? "" }
        var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

        /// Waits for the process to exit by itself, at most `seconds`.
        func exited(within seconds: Double) -> Bool {
            let deadline = Date().addingTimeInterval(seconds)
            while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
            return !process.isRunning
        }

        /// SIGTERM, and SIGKILL if it has not exited 15 s later; returns the exit status.
        @discardableResult
        func stop() -> Int32 {
            if process.isRunning { kill(process.processIdentifier, SIGTERM) }
            if !exited(within: 15) {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                return -1
            }
            return process.terminationStatus
        }

        /// CPU time the server has used, in clock ticks (utime + stime of /proc/PID/stat).
        var cpuTicks: Int {
            let text = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8)) ?? ""
            // The command name may hold spaces; the fields after its closing parenthesis do not.
            guard let close = text.lastIndex(of: ")") else { return 0 }
            let fields = text[text.index(after: close)...].split(separator: " ")
            return fields.count > 13 ? (Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0) : 0
        }

        var adminToken: String {
            ((try? String(contentsOfFile: data + "/admin.token", encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        }

        /// One request on a new connection (Connection: close); the status, or nil without one
        /// within `timeout`.
        func request(
            _ method: String, _ path: String, body: String = "", from source: String = "127.0.0.1",
            timeout: Duration = .seconds(5)
        ) -> (status: Int, text: String)? {
            guard let socket = LoopbackClient.connect(port: port, from: source, timeout: timeout) else { return nil }
            defer { close(socket) }
            let head =
                "\(method) \(path) HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer \(adminToken)\r\n"
                + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n"
            LoopbackClient.send(socket, Array((head + body).utf8))
            let text = String(decoding: LoopbackClient.readToEnd(socket), as: UTF8.self)
            let parts = text.prefix { $0 != "\r" }.split(separator: " ")
            guard parts.count >= 2, let status = Int(parts[1]) else { return nil }
            return (status, text)
        }
    }

    /// Too few descriptors for a working connection limit: one clear line and exit 69 at once,
    /// not a server that listens and then cannot accept.
    @Test func serveRefusesToStartWithTooFewFileDescriptors() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let outcome = try await onOwnThread { () -> (exited: Bool, status: Int32, stderr: String) in
            let serve = try Serve(data: directory.appending("data"), scratch: directory, openFileLimit: 64)
            let exited = serve.exited(within: 10)
            let status = serve.stop()
            return (exited, status, serve.stderr)
        }
        #expect(outcome.exited, "onboard serve kept running with 64 descriptors: \(outcome.stderr)")
        #expect(outcome.status == 69)
        let lines = outcome.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(outcome.stderr)")
        #expect(lines.first?.hasPrefix("onboard serve: only ") == true)
        #expect(lines.first?.contains("file descriptors are left for connections (RLIMIT_NOFILE is 64") == true)
        #expect(lines.first?.contains("ulimit -n ") == true)
    }

    /// An operator who lets more replicas stay open than the descriptors allow
    /// (`--max-open-replicas` over the budget, which serve warns about) sees the replicas take the
    /// descriptors at run time: requests that need another replica get 503 with Retry-After and
    /// no path (they used to get 500 naming the replica's file), new clients get a prompt 503 —
    /// the spare descriptor is given up to accept and refuse them — the server does not spin, it
    /// says so in the log, and it serves again once descriptors are free. Restarted with the
    /// default bound, the same data serves every device.
    @Test func serveOutOfDescriptorsAnswers503WithoutSpinningAndServesAgainWithTheDefaultBound() async throws {
        #if os(Linux)
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let data = directory.appending("data")
            let report = try await onOwnThread { () -> DescriptorReport in
                var report = DescriptorReport()
                let serve = try Serve(data: data, scratch: directory, openFileLimit: 400, arguments: ["--max-open-replicas", "300"])
                defer { serve.stop() }
                guard serve.port != 0 else {
                    report.startFailure = serve.stderr
                    return report
                }
                // Enrol until the replicas have taken the descriptors (bounded: 300 devices).
                for index in 0..<300 {
                    var answer = serve.request("POST", "/v1/devices", body: #"{"device":"dev-\#(index)"}"#)
                    // The previous request's connection may not be closed on the server's side yet,
                    // so this connection found no descriptor (the accept-time 503, Retry-After 1):
                    // once it is closed, the same enrolment meets the replicas' limit instead.
                    for _ in 0..<10 where answer?.status == 503 && answer?.text.contains("Retry-After: 1\r\n") == true {
                        Thread.sleep(forTimeInterval: 0.1)
                        answer = serve.request("POST", "/v1/devices", body: #"{"device":"dev-\#(index)"}"#)
                    }
                    guard answer?.status == 201 else {
                        report.enrolmentRefusal = answer.map { ($0.status, $0.text) }
                        break
                    }
                    report.enrolled += 1
                }
                // Hold idle connections on whatever is left, so the next accept() has no descriptor.
                let held = SlowClients(port: serve.port, count: 6, sources: ["127.0.0.1"])
                defer { held.closeAll() }
                Thread.sleep(forTimeInterval: 0.3)
                let ticksBefore = serve.cpuTicks
                let clock = ContinuousClock()
                let start = clock.now
                // Two seconds of clients knocking (bounded: 40 probes of at most 2 s each).
                for _ in 0..<40 where clock.now - start < .seconds(2) {
                    let probeStart = clock.now
                    let answer = serve.request("GET", "/v1/health", from: "127.0.0.2", timeout: .seconds(2))
                    report.probes.append(answer.map { ($0.status, $0.text) })
                    report.slowestProbe = max(report.slowestProbe, clock.now - probeStart)
                    Thread.sleep(forTimeInterval: 0.05)
                }
                report.busyTicks = serve.cpuTicks - ticksBefore
                report.elapsed = clock.now - start
                held.closeAll()
                report.healthyAgain = (0..<50).contains { _ in
                    Thread.sleep(forTimeInterval: 0.1)
                    return serve.request("GET", "/v1/health", timeout: .seconds(2))?.status == 200
                }
                report.stderr = serve.stderr
                report.stopStatus = serve.stop()

                // The default bound sizes the open replicas to the descriptors: every device serves.
                let restart = try Serve(data: data, scratch: directory, openFileLimit: 400)
                defer { restart.stop() }
                report.restartBanner = restart.stdout
                for index in 0..<report.enrolled {
                    let answer = restart.request("GET", "/v1/devices/dev-\(index)/cursor")
                    if answer?.status == 200 { report.cursorsAfterRestart += 1 }
                }
                report.restartStatus = restart.stop()
                report.restartStderr = restart.stderr
                return report
            }
            #expect(report.startFailure == nil, "\(report.startFailure ?? "")")
            #expect(
                report.stderr.contains("warning: --max-open-replicas 300 needs about 964 file descriptors, more than half the open-file limit (400)"),
                "\(report.stderr.prefix(1000))")
            #expect(report.enrolled >= 50, "only \(report.enrolled) devices enrolled before descriptors ran out")
            let refusal = try #require(report.enrolmentRefusal, "300 enrolments never ran out of descriptors")
            #expect(refusal.status == 503 && refusal.text.lowercased().contains("retry-after: 5\r\n"), "\(refusal.text)")
            #expect(refusal.text.contains("file descriptors") && !refusal.text.contains(data), "no path, the resource named: \(refusal.text)")
            #expect(report.probes.count >= 10)
            #expect(report.probes.allSatisfy { $0 != nil }, "a client got no answer within 2 s")
            let refusals = report.probes.compactMap { $0 }.filter { $0.status == 503 }
            #expect(!refusals.isEmpty, "no client was told 503: \(report.probes.compactMap { $0?.status })")
            #expect(refusals.allSatisfy { $0.text.contains("Retry-After: 1\r\n") && $0.text.contains("out of file descriptors") })
            #expect(report.slowestProbe < .seconds(2))
            // 100 ticks a second: a busy-wait would burn about as many ticks as hundredths elapsed.
            let elapsedTicks = Int(report.elapsed / .milliseconds(10))
            #expect(report.busyTicks * 4 < elapsedTicks, "the server used \(report.busyTicks) of \(elapsedTicks) ticks while out of descriptors")
            #expect(report.healthyAgain, "the server did not serve again once descriptors were free")
            #expect(report.stderr.contains("onboard serve: warning: refused "), "\(report.stderr.suffix(2000))")
            #expect(report.stderr.contains("with 503: the process is out of file descriptors (RLIMIT_NOFILE 400)"))
            #expect(report.stderr.contains("503 (file descriptors): "), "the operator's log has the storage failure")
            #expect(report.stopStatus == 0)
            #expect(report.restartBanner.contains(" 33 open replicas (open-file limit 400)"), "\(report.restartBanner)")
            #expect(report.cursorsAfterRestart == report.enrolled, "\(report.cursorsAfterRestart) of \(report.enrolled): \(report.restartStderr.suffix(1000))")
            #expect(report.restartStatus == 0)
        #endif
    }

    struct DescriptorReport: Sendable {
        var startFailure: String?
        var enrolled = 0
        var enrolmentRefusal: (status: Int, text: String)?
        var restartBanner = ""
        var cursorsAfterRestart = 0
        var probes: [(status: Int, text: String)?] = []
        var slowestProbe = Duration.zero
        var busyTicks = 0
        var elapsed = Duration.zero
        var healthyAgain = false
        var stderr = ""
        var stopStatus: Int32 = -2
        var restartStatus: Int32 = -2
        var restartStderr = ""
    }

    /// The acceptance test through the real binary: /v1/health keeps answering while 70
    /// slowloris connections (one byte a second from 127.0.0.1) and 500 idle ones (from ten other
    /// addresses) are open. The server with 64 connection places answered none.
    @Test(.heavy) func healthProbesThroughOnboardServeSurviveSlowAndIdleClients() async throws {
        #if os(Linux)
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let outcome = try await onOwnThread { () -> (port: UInt16, probes: [ProbeSeries.Probe], held: Int) in
                let serve = try Serve(data: directory.appending("data"), scratch: directory)
                defer { serve.stop() }
                guard serve.port != 0 else { return (0, [], 0) }
                let tricklers = SlowClients(port: serve.port, count: 70, sources: ["127.0.0.1"])
                let idle = SlowClients(port: serve.port, count: 500, sources: (1...10).map { "127.0.1.\($0)" })
                defer { tricklers.closeAll(); idle.closeAll() }
                let probes = ProbeSeries(
                    port: serve.port, from: "127.0.0.2", path: "/v1/health", every: .milliseconds(250),
                    timeout: .seconds(2), for: .seconds(12))
                for _ in 0..<12 { // bounded: 12 s of one byte a second
                    tricklers.sendNextByte()
                    Thread.sleep(forTimeInterval: 1)
                }
                let held = tricklers.openCount + idle.openCount
                return (serve.port, probes.results(), held)
            }
            #expect(outcome.port != 0, "onboard serve did not start")
            #expect(outcome.probes.count >= 40)
            // 64 from the tricklers' address (its limit) and the 500 idle ones were all still held.
            #expect(outcome.held == 64 + 500)
            let rate = ProbeSeries.successRate(outcome.probes, in: .zero ..< .seconds(13))
            #expect(rate >= 0.9, "only \(rate) of the health probes were answered within 2 s")
        #endif
    }

    /// A client cannot forge access-log lines (percent-encoded or raw control characters, a space,
    /// a fake line after %0a) and the log names no user: ids are `u:` pseudonyms under the key in
    /// DATA/log.key (checked against Python's own BLAKE2b), the same after a restart.
    @Test func theAccessLogCannotBeForgedAndNamesNoUser() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let data = directory.appending("data")
        let forged = "2026-01-01T00:00:00.000Z GET /v1/health 200 15B 0ms"
        let runs = try await onOwnThread { () -> [String] in
            var logs: [String] = []
            for _ in 0..<2 {
                let serve = try Serve(data: data, scratch: directory)
                guard serve.port != 0 else { return [serve.stderr] }
                _ = serve.request("GET", "/v1/users/alice/history?token=obt_secret-in-a-query")
                _ = serve.request("GET", "/v1//users/%61lice/lockout")
                _ = serve.request("GET", "/v1/devices/x%0a" + forged.replacingOccurrences(of: " ", with: "%20") + "/cursor")
                _ = serve.request("GET", "/v1/devices/a\u{1}b\u{7f}c\u{1b}[31m/cursor")
                _ = serve.request("GET", "/v1/users/corp%2Fbob/history")
                _ = serve.request("GET", "/v1/users/" + String(repeating: "z", count: 3000) + "/history")
                _ = serve.request("GET", "/v1/devices/" + String(repeating: "y", count: 3000) + "/cursor")
                serve.stop()
                logs.append(serve.stderr)
            }
            return logs
        }
        #expect(runs.count == 2, "\(runs)")
        let key = data + "/log.key"
        var info = stat()
        #expect(stat(key, &info) == 0 && info.st_mode & 0o777 == 0o600 && info.st_size == 32)
        let alice = try Self.pythonPseudonym(key: key, user: "alice")
        let bob = try Self.pythonPseudonym(key: key, user: "corp/bob")
        for log in runs {
            let access = log.split(separator: "\n").filter { $0.first?.isNumber == true }
            #expect(access.count == 7, "\(log)")
            for line in access {
                #expect(line.split(separator: " ", omittingEmptySubsequences: false).count == 6, "\(line)")
                #expect(!line.utf8.contains { $0 < 0x20 || $0 >= 0x7F }, "\(line)")
                #expect(line.count < 700, "\(line.prefix(100))…")
            }
            #expect(!log.contains("alice") && !log.contains("bob") && !log.contains("obt_secret") && !log.contains("token="))
            #expect(!log.split(separator: "\n").contains { $0 == forged })
            #expect(access[0].contains(" GET /v1/users/u:\(alice)/history "), "\(access[0])")
            #expect(access[1].contains(" GET /v1//users/u:\(alice)/lockout "), "\(access[1])")
            #expect(access[2].contains(" GET /v1/devices/x%0a2026-01-01T00:00:00.000Z%20GET%20"), "\(access[2])")
            #expect(access[3].contains(" GET /v1/devices/a\\x01b\\x7fc\\x1b[31m/cursor "), "\(access[3])")
            #expect(access[4].contains(" GET /v1/users/u:\(bob)/history "), "\(access[4])")
            #expect(access[5].contains(" GET /v1/users/u:"), "\(access[5].prefix(200))")
            #expect(access[6].contains(" GET /v1/devices/yyyy") && access[6].contains("...(3019B) "), "\(access[6].prefix(200))")
        }
    }

    /// The pseudonym as another implementation computes it: Python's hashlib BLAKE2b.
    static func pythonPseudonym(key: String, user: String) throws -> String {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", "-c",
            "import hashlib, sys; k = open(sys.argv[1], 'rb').read(); print(hashlib.blake2b(sys.argv[2].encode(), digest_size=16, key=k).hexdigest()[:16])",
            key, user
        ]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard process.terminationStatus == 0, text.count == 16 else { throw TestFailure("python3 blake2b failed: \(text)") }
        return text
    }
}
