import Foundation
import Testing
import OnboardingModel
@testable import OnboardingProjections

/// Replays every worked timeline of docs/lockout.md (the tables after `<!-- timeline: POLICY
/// [second_factor] -->`) against the real engine, so the documentation cannot drift from it.
@Suite("Lockout: the worked timelines of docs/lockout.md")
struct LockoutDocTimelineTests {
    struct Row: Sendable {
        let line: Int
        let time: String
        let event: String
        let decision: String
    }

    struct Timeline: Sendable, CustomTestStringConvertible {
        let policy: String
        let factor: LockoutFactor
        let line: Int
        let rows: [Row]
        var testDescription: String { "\(policy) \(factor.rawValue), docs/lockout.md line \(line)" }
    }

    struct Document: Sendable {
        var timelines: [Timeline] = []
        /// The JSON blocks after `<!-- policy: NAME -->`.
        var policies: [String: String] = [:]
    }

    static let path = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs/lockout.md").path

    static func load() throws -> Document {
        let lines = try String(contentsOfFile: path, encoding: .utf8).components(separatedBy: "\n")
        var document = Document()
        var index = 0
        func marker(_ line: String, _ prefix: String) -> [String]? {
            guard line.hasPrefix("<!-- \(prefix): "), line.hasSuffix(" -->") else { return nil }
            return line.dropFirst(prefix.count + 7).dropLast(4).split(separator: " ").map(String.init)
        }
        while index < lines.count {
            defer { index += 1 }
            if let words = marker(lines[index], "timeline") {
                let start = index + 1
                var rows: [Row] = []
                var cursor = start + 2 // header and separator
                while cursor < lines.count, lines[cursor].hasPrefix("|") {
                    let cells = lines[cursor].split(separator: "|", omittingEmptySubsequences: false)
                        .dropFirst().dropLast().map { $0.trimmingCharacters(in: .whitespaces) }
                    if cells.count >= 3 {
                        rows.append(Row(line: cursor + 1, time: cells[0], event: cells[1], decision: cells[2]))
                    }
                    cursor += 1
                }
                let factor: LockoutFactor = words.count > 1 && words[1] == "second_factor" ? .secondFactor : .password
                document.timelines.append(Timeline(policy: words[0], factor: factor, line: start, rows: rows))
            } else if let words = marker(lines[index], "policy"), index + 1 < lines.count, lines[index + 1] == "```json" {
                var cursor = index + 2
                var json: [String] = []
                while cursor < lines.count, lines[cursor] != "```" {
                    json.append(lines[cursor])
                    cursor += 1
                }
                document.policies[words[0]] = json.joined(separator: "\n")
            }
        }
        return document
    }

    static let document = (try? load()) ?? Document()

    @Test("the document has every timeline, at least one per preset")
    func inventory() throws {
        let document = try Self.load()
        #expect(document.timelines.count >= 17)
        for preset in LockoutPolicy.presets {
            #expect(document.timelines.contains { $0.policy == preset.name }, "\(preset.name)")
        }
        for timeline in document.timelines { #expect(timeline.rows.count >= 2, "\(timeline.testDescription)") }
        #expect(
            try LockoutPolicy.parse(json: try #require(document.policies["bank-app"]))
                == LockoutPolicy.parse(json: LockoutPolicyJSONTests.docExample))
    }

    @Test("every row reads what the engine decides", arguments: document.timelines)
    func replay(timeline: Timeline) throws {
        let policy =
            try LockoutPolicy.named(timeline.policy)
            ?? LockoutPolicy.parse(json: try #require(Self.document.policies[timeline.policy], "no policy \(timeline.policy)"))
        var scenario = LockoutScenario(policy)
        for row in timeline.rows {
            let location = "docs/lockout.md line \(row.line)"
            let times = row.time.components(separatedBy: " … ")
            let start = LockoutClock.time(times[0])
            guard let step = Self.parse(event: row.event) else {
                Issue.record("\(location): cannot read the event \"\(row.event)\"")
                continue
            }
            var time = start
            for index in 0..<step.count {
                switch step.spacing {
                case .apart(let milliseconds):
                    time = start.adding(milliseconds: Int64(index) * milliseconds)
                case .asLocksEnd:
                    if index > 0 { time = time.adding(milliseconds: 1000) }
                    if let until = scenario.lockedUntil(at: time, timeline.factor) { time = until }
                case let .perPeriod(count, period):
                    time = start.adding(milliseconds: Int64(index / count) * period + Int64(index % count) * 1000)
                }
                step.record(&scenario, time)
            }
            if times.count == 2 {
                #expect(time == LockoutClock.time(times[1]), "\(location): the last event is at \(LockoutClock.label(time))")
            }
            #expect(scenario.summary(at: time, timeline.factor) == row.decision, "\(location)")
        }
    }

    // MARK: Reading the event column

    enum Spacing {
        case apart(Int64)
        case asLocksEnd
        case perPeriod(Int, Int64)
    }

    struct Step {
        var count = 1
        var spacing = Spacing.apart(0)
        var record: (inout LockoutScenario, Timestamp) -> Void
    }

    /// `[N × ]EVENT[, SPACING]`: see "How to read the timelines" in docs/lockout.md.
    static func parse(event cell: String) -> Step? {
        var text = Substring(cell.replacingOccurrences(of: "`", with: ""))
        if text == "—" { return Step { _, _ in } }
        var count = 1
        var spacing = Spacing.apart(0)
        if let times = text.range(of: " × ") {
            guard let number = Int(text[..<times.lowerBound]) else { return nil }
            count = number
            text = text[times.upperBound...]
        }
        if let comma = text.range(of: ", ") {
            let rule = String(text[comma.upperBound...])
            text = text[..<comma.lowerBound]
            if rule == "as each lock ends" {
                spacing = .asLocksEnd
            } else if rule.hasSuffix(" apart"), let duration = milliseconds(String(rule.dropLast(6))) {
                spacing = .apart(duration)
            } else if let per = rule.range(of: " per "), let number = Int(rule[..<per.lowerBound]),
                let period = milliseconds(String(rule[per.upperBound...]))
            {
                spacing = .perPeriod(number, period)
            } else {
                return nil
            }
        }
        var words = text.split(separator: " ").map(String.init)
        // `… from ADDRESS` and `… as USER` (either, both, in that order).
        var user: String?? = .none
        var address: String?
        if words.count >= 2, words[words.count - 2] == "as" {
            user = .some(words[words.count - 1])
            words.removeLast(2)
        }
        if words.count >= 2, words[words.count - 2] == "from" {
            address = words[words.count - 1]
            words.removeLast(2)
        }
        guard let name = words.first else { return nil }
        let record: (inout LockoutScenario, Timestamp) -> Void
        switch (name, words.count) {
        case ("sign_in_failed", 3):
            guard let method = SignInMethod(rawValue: words[1]), let reason = SignInFailureReason(rawValue: words[2]) else { return nil }
            record = { $0.fail(at: $1, method: method, reason: reason, user: user, address: address) }
        case ("second_factor_failed", 2):
            guard let method = SecondFactorMethod(rawValue: words[1]) else { return nil }
            record = { $0.failSecondFactor(at: $1, method: method) }
        case ("sign_in_succeeded", 2):
            guard let method = SignInMethod(rawValue: words[1]) else { return nil }
            record = { $0.succeed(at: $1, method: method, user: user, address: address) }
        case ("sign_in_throttled", 1):
            record = { $0.throttled(at: $1) }
        case ("sign_in_aborted", 2):
            guard let reason = SignInAbortReason(rawValue: words[1]) else { return nil }
            record = { $0.abort(at: $1, reason: reason, user: user, address: address) }
        case ("password_changed", 1), ("lockout_cleared", 1), ("passcode_reset_completed", 1):
            guard let type = EventType(rawValue: name) else { return nil }
            record = { $0.clear(type, at: $1) }
        default:
            return nil
        }
        return Step(count: count, spacing: spacing, record: record)
    }

    /// `10 s`, `1 min`, `5 min`, `2 h`.
    static func milliseconds(_ text: String) -> Int64? {
        let parts = text.split(separator: " ")
        guard parts.count == 2, let number = Int64(parts[0]) else { return nil }
        switch parts[1] {
        case "s": return number * 1000
        case "min": return number * 60_000
        case "h": return number * 3_600_000
        default: return nil
        }
    }
}
