import Foundation
import Testing
@testable import OnboardingModel
@testable import OnboardingProjections

/// The examples of docs/projections.md § Examples: events in, JSON out. Each ```jsonl block is a
/// log; each line starting "`onboard session --json --at T`" after it, and the ```json block that follows
/// that line, say what the session of the log's device is at T. The log is folded here as the
/// store folds it and the JSON compared member by member (whitespace inside the block is free).
@Suite("docs/projections.md examples: events in, JSON out")
struct ProjectionsDocExampleTests {
    static let heading = "## Examples: events in, JSON out"

    struct Check: CustomTestStringConvertible {
        var title: String
        var line: Int
        var events: [Event]
        var at: Timestamp
        var expected: JSONValue
        var testDescription: String { "\(title) at \(at.iso8601) (docs/projections.md:\(line))" }
    }

    static func checks() throws -> [Check] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/projections.md")
        let lines = try String(contentsOf: url, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let start = lines.firstIndex(of: heading) else { throw DocError("docs/projections.md has no \"\(heading)\" section") }
        var checks: [Check] = []
        var title = ""
        var events: [Event]?
        var at: Timestamp?
        var index = start + 1
        while index < lines.count, !(lines[index].hasPrefix("## ")) {
            let line = lines[index]
            if line.hasPrefix("### ") { title = String(line.dropFirst(4)) }
            if line == "```jsonl" || line == "```json" {
                let opened = index
                var body: [String] = []
                index += 1
                while index < lines.count, lines[index] != "```" {
                    body.append(lines[index])
                    index += 1
                }
                if line == "```jsonl" {
                    events = try body.filter { !$0.isEmpty }.map { text in
                        do { return try EventJSON.decode(line: text).event } catch { throw DocError("docs/projections.md:\(opened + 1): \(error)") }
                    }
                    at = nil
                } else {
                    guard let log = events, let time = at else {
                        throw DocError("docs/projections.md:\(opened + 1): a JSON block without a log and an --at line before it")
                    }
                    checks.append(Check(title: title, line: opened + 1, events: log, at: time, expected: try JSONValue.parse(body.joined(separator: "\n"))))
                    at = nil
                }
            } else if line.hasPrefix("`onboard session --json --at ") {
                let text = line.dropFirst("`onboard session --json --at ".count).prefix { $0 != "`" && $0 != " " }
                at = try Timestamp(iso8601: String(text))
            }
            index += 1
        }
        return checks
    }

    struct DocError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    @Test("the section has examples")
    func hasExamples() throws {
        #expect(try Self.checks().count >= 6)
    }

    @Test("each example's session JSON is what the fold gives at its time", arguments: try checks())
    func example(_ check: Check) {
        var state = OnboardingState(policy: .mediawiki)
        for (offset, event) in check.events.enumerated() {
            state.apply(Record(seq: UInt64(offset + 1), event: event, previousHash: .zero, hash: .zero))
        }
        let device = check.events.first?.device ?? "?"
        let shown = state.session.session(device: device, at: check.at, lockout: state.lockout)
        #expect(shown.jsonValue == check.expected, "docs/projections.md:\(check.line)")
    }
}
