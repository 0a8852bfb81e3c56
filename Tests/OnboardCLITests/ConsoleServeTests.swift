import Foundation
import Testing

/// The audit console from a real `onboard serve`, as a browser gets it: the page with no option
/// on either storage, with its security headers, and the console API's streamed exports read by
/// parsers someone else wrote (Python's csv module, the official OCSF schema).
@Suite(.serialized) struct ConsoleServeTests {
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

    static let policy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'"

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

    @Test func onboardServeOnLMDBServesTheConsoleWithNoOption() throws {
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        let node = try Node(dataDirectory: scratch.appending("data"), scratch: scratch, name: "lmdb")
        defer { node.stop() }
        try Self.expectConsole(node)
    }

    @Test(.enabled(if: TestDatabase.isEnabled, TestDatabase.skipNote)) func onboardServeOnPostgreSQLServesTheConsoleWithNoOption() throws {
        try withFreshDatabase { url in
            let scratch = try TemporaryDirectory()
            defer { scratch.remove() }
            let node = try Node(database: try TestDatabase.url(database: url.parameters["dbname"]!), scratch: scratch, name: "pg")
            defer { node.stop() }
            try Self.expectConsole(node)
        }
    }
}
