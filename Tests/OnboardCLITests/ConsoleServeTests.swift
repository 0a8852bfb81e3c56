import Foundation
import Testing
import TestSupport

/// The audit console from a real `onboard serve`, as a browser gets it: the page with no option
/// on either storage, with its security headers, and the console API's streamed exports read by
/// parsers someone else wrote (Python's csv module, the official OCSF schema).
@Suite(.serialized, .slow) struct ConsoleServeTests {
    typealias Node = SyncProcessTests.Server

    /// `curl -si`: the status, the headers (names lower-cased) and the body.
    static func fetch(_ url: String, token: String? = nil) throws -> (status: Int, headers: [String: String], body: String) {
        var arguments = ["-s", "-i", "--path-as-is", "--max-time", "60"]
        if let token { arguments += ["-H", "authorization: Bearer \(token)"] }
        let result = try CLI.run(arguments + [url], executable: URL(fileURLWithPath: "/usr/bin/curl"))
        guard let split = result.stdout.range(of: "\r\n\r\n") else { throw TestFailure("no HTTP answer from \(url): \(result.stderr)") }
        let head = result.stdout[..<split.lowerBound].split(separator: "\r\n")
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let status = Int(head.first?.split(separator: " ").dropFirst().first ?? "") ?? 0
        return (status, headers, String(result.stdout[split.upperBound...]))
    }

    static let policy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'"

    static func expectConsole(_ node: Node) throws {
        let page = try fetch(node.url + "/console/")
        #expect(page.status == 200, "\(page.body)")
        #expect(page.headers["content-type"] == "text/html; charset=utf-8")
        #expect(page.headers["content-security-policy"] == policy)
        #expect(page.headers["x-content-type-options"] == "nosniff")
        #expect(page.headers["set-cookie"] == nil)
        #expect(page.body.lowercased().contains("<html"))
        let redirect = try fetch(node.url + "/console")
        #expect(redirect.status == 301 && redirect.headers["location"] == "/console/")
        #expect(try fetch(node.url + "/console/../../etc/passwd").status == 404)
    }

    /// A device's log of `count` generated events synced to `node`: the device store's path.
    static func syncedDevice(_ node: Node, storage: [String], scratch: TemporaryDirectory, count: Int) throws -> String {
        let store = scratch.appending("device")
        let text = Corpus.jsonl(Corpus.generated(count: count, seed: 77))
        #expect(try CLI.run(["import", try scratch.write("events.jsonl", text), "--store", store, "--device", "kiosk-7"]).status == 0)
        let token = try CLI.run(["enroll"] + storage + ["--device", "kiosk-7"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let synced = try CLI.run(["sync", "--store", store, "--server", node.url, "--token", token, "--server-key", node.serverKey])
        #expect(synced.status == 0, "\(synced.stderr)")
        return store
    }

    /// `curl` to a file: the status and the file's path.
    static func download(_ url: String, token: String, to path: String) throws -> Int {
        let result = try CLI.run(
            ["-s", "--max-time", "120", "-o", path, "-w", "%{http_code}", "-H", "authorization: Bearer \(token)", url],
            executable: URL(fileURLWithPath: "/usr/bin/curl"))
        return Int(result.stdout) ?? 0
    }

    /// The device's OCSF export from `onboard serve` is valid OCSF 1.8.0 by the official schema,
    /// one event per attempt, each line the one `onboard export --format ocsf` writes for that
    /// record; its CSV export is read by Python's csv module, a row per attempt.
    static func expectExports(_ node: Node, storage: [String], scratch: TemporaryDirectory, adminTokenFile: String) async throws {
        let store = try syncedDevice(node, storage: storage, scratch: scratch, count: 3_000)
        let auditor = try CLI.run(["enroll"] + storage + ["--auditor"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let ocsf = scratch.appending("kiosk-7.ocsf.json")
        #expect(try download(node.url + "/v1/devices/kiosk-7/export?format=ocsf", token: auditor, to: ocsf) == 200)
        let lines = try String(contentsOfFile: ocsf, encoding: .utf8).split(separator: "\n").map(String.init)
        let report = try await OCSFValidator.validate(ocsf)
        #expect(report.status == 0, "\(report.output)")
        #expect(report.linesValidated == lines.count && !lines.isEmpty)
        let local = Set(try CLI.run(["export", "--store", store, "--format", "ocsf"]).stdout.split(separator: "\n").map(String.init))
        #expect(lines.allSatisfy(local.contains), "the same encoder, byte for byte")
        let history = try CLI.run(["history", "--store", store, "--device", "kiosk-7", "--format", "json"])
        let attempts = (try JSONSerialization.jsonObject(with: Data(history.stdout.utf8)) as? [String: Any])?["attempts"] as? [Any]
        #expect(lines.count == attempts?.count, "one event per attempt")

        let csv = scratch.appending("kiosk-7.csv")
        #expect(try download(node.url + "/v1/devices/kiosk-7/export?format=csv", token: auditor, to: csv) == 200)
        let count = try CLI.run(
            [
                "-c",
                "import csv, sys\nrows = list(csv.reader(open(sys.argv[1], newline='', encoding='utf-8'), strict=True))\nassert all(len(r) == 9 for r in rows)\nprint(len(rows) - 1)",
                csv
            ],
            executable: URL(fileURLWithPath: "/usr/bin/python3"))
        #expect(count.status == 0 && Int(count.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) == lines.count, "\(count.stderr)")

        // A user's export holds an admin's clear of their lockout among their attempts: in OCSF
        // an Account Change (3001) event, activity Unlock (12), valid by the official schema.
        let first = (attempts?.first as? [String: Any])?["user"] as? String
        let user = try #require(first, "the generated log has a user")
        let admin = try String(contentsOfFile: adminTokenFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let encoded = user.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? user
        let cleared = try CLI.run(
            [
                "-s", "--max-time", "60", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", "-H", "authorization: Bearer \(admin)",
                "-H", "content-type: application/json", "--data", #"{"factor":"password","reason":"helpdesk ticket 12"}"#,
                node.url + "/v1/users/\(encoded)/lockout/clear"
            ], executable: URL(fileURLWithPath: "/usr/bin/curl"))
        #expect(cleared.stdout == "200", "the clear answered \(cleared.stdout)")
        let userOCSF = scratch.appending("user.ocsf.json")
        #expect(try download(node.url + "/v1/users/\(encoded)/export?format=ocsf", token: auditor, to: userOCSF) == 200)
        let userReport = try await OCSFValidator.validate(userOCSF)
        #expect(userReport.status == 0, "\(userReport.output)")
        let events = try String(contentsOfFile: userOCSF, encoding: .utf8).split(separator: "\n").map {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] ?? [:]
        }
        let unlocks = events.filter { $0["class_uid"] as? Int == 3001 }
        #expect(unlocks.count == 1 && unlocks.first?["activity_id"] as? Int == 12 && unlocks.first?["type_uid"] as? Int == 300112, "\(unlocks)")
        #expect(((unlocks.first?["unmapped"] as? [String: Any])?["reason"] as? String) == "helpdesk ticket 12")
        #expect(((unlocks.first?["user"] as? [String: Any])?["uid"] as? String) == user)
        #expect(events.count > 1 && events.count - 1 == events.filter { $0["class_uid"] as? Int == 3002 }.count, "the rest are the user's attempts")
        #expect(userReport.linesValidated == events.count)
    }

    @Test func theExportsOfOnboardServeOnLMDBAreValidOCSFAndCSV() async throws {
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        let data = scratch.appending("data")
        let node = try Node(dataDirectory: data, scratch: scratch, name: "lmdb")
        defer { node.stop() }
        try await Self.expectExports(node, storage: ["--data", data], scratch: scratch, adminTokenFile: data + "/admin.token")
    }

    @Test(.enabled(if: TestDatabase.isEnabled, TestDatabase.skipNote)) func theExportsOfOnboardServeOnPostgreSQLAreValidOCSFAndCSV() async throws {
        let database = try TestDatabase.freshDatabase()
        defer { database.drop() }
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        let node = try Node(database: database.url, scratch: scratch, name: "pg")
        defer { node.stop() }
        try await Self.expectExports(node, storage: ["--database", database.url], scratch: scratch, adminTokenFile: scratch.appending("pg-admin.token"))
    }

    @Test func onboardServeOnLMDBServesTheConsoleWithNoOption() async throws {
        try await onOwnThread {
            let scratch = try TemporaryDirectory()
            defer { scratch.remove() }
            let node = try Node(dataDirectory: scratch.appending("data"), scratch: scratch, name: "lmdb")
            defer { node.stop() }
            try Self.expectConsole(node)
        }
    }

    @Test(.enabled(if: TestDatabase.isEnabled, TestDatabase.skipNote)) func onboardServeOnPostgreSQLServesTheConsoleWithNoOption() async throws {
        try await onOwnThread {
            try withFreshDatabase { url in
                let scratch = try TemporaryDirectory()
                defer { scratch.remove() }
                let node = try Node(database: try TestDatabase.url(database: url.parameters["dbname"]!), scratch: scratch, name: "pg")
                defer { node.stop() }
                try Self.expectConsole(node)
            }
        }
    }
}
